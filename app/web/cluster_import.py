"""``POST /api/import/describe``: pasted output of Kafka's tools -> a scenario of that cluster and
the notes on what it could not keep (engine/scenario/import_cluster.py; docs/api.md). Nothing is
started here: the page shows the notes and loads the scenario as it loads any other.

Same-origin and bounded like every POST (``app.web.guards``), with a larger body than the
default: each pasted text may be up to 1 MB (``MAX_TEXT_BYTES``), and the scenario must fit this
server's limits (``check_scenario``); a refusal for size is HTTP 413 and names the limit.
"""
from flask import current_app, jsonify

from engine.scenario.import_cluster import import_cluster
from engine.scenario.import_text import MAX_TEXT_BYTES, ImportRefused

from ..i18n.import_notes import localized_notes
from ..runner import AppError
from ..runner.limits import check_scenario
from .blueprint import bp
from .common import json_body

PATH = "/api/import/describe"
#: three texts of MAX_TEXT_BYTES at most, escaped in JSON (a tab or newline is two characters)
BODY_BYTES = 3 * MAX_TEXT_BYTES
TEXTS = ("describe", "api_versions", "quorum")


@bp.post(PATH)
def api_import_describe():
    body = json_body(TEXTS + ("kafka_version", "name"), ("describe", "kafka_version"))
    for key in TEXTS + ("kafka_version", "name"):
        if body.get(key) is not None and not isinstance(body[key], str):
            raise AppError(key, "is not text", "a string")
    try:
        scenario, notes = import_cluster(body["describe"], body["kafka_version"], api_versions=body.get("api_versions"),
                                         quorum=body.get("quorum"), name=(body.get("name") or "")[:200] or None)
    except ImportRefused as exc:
        if exc.too_large:
            raise AppError(exc.field, exc.message, exc.allowed, status=413) from None
        raise
    check_scenario(scenario, current_app.config, "live")
    summary = {"brokers": len(scenario["brokers"]), "topics": len(scenario["topics"]),
               "partitions": sum(t["partitions"] for t in scenario["topics"])}
    # the notes in the reader's language; the scenario (its description quotes them) stays as written
    return jsonify(ok=True, scenario=scenario, notes=localized_notes(notes), summary=summary)
