"""What the page needs to know about this server: health, the scenario library, the eras'
config keys and limits; and the JSON error reply for HTTP errors under ``/api/``."""
from flask import current_app, jsonify, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from engine import eras
from engine.scenario.document import OPS

from ..guides import BY_STORY
from ..i18n.errors import localized
from .blueprint import bp
from .era_notes import era_notes


def _runner():
    return current_app.extensions["isrlab"]["runner"]


@bp.get("/healthz")
def healthz():
    runner = _runner()
    return jsonify(ok=True, rooms=len(runner.rooms), stats=runner.stats)


@bp.get("/api/library")
def api_library():
    out = []
    for name, doc in _runner().library.items():
        topics = doc.get("topics") or []
        entry = {"id": name, "name": doc.get("name", name), "description": doc.get("description", ""),
                 "kafka_version": doc.get("kafka_version", "2.6"), "brokers": doc.get("brokers", 3),
                 "duration_ms": doc.get("duration_ms", 60000),
                 "topics": [t.get("name") for t in topics]}
        if name in BY_STORY:       # told step by step (app/guides): the picker marks it
            entry["walkthrough"] = BY_STORY[name].id
        if doc.get("racks"):       # the number of zones its brokers stand in (docs/model.md §21)
            entry["racks"] = len(set(doc["racks"].values()))
        out.append(entry)
    return jsonify(scenarios=out)


@bp.get("/api/eras")
def api_eras():
    """The config keys of each era with their defaults, for the config editor and new-cluster form."""
    config = {}
    for key, (kind, scope, defaults, low) in eras.CONFIG.items():
        config[key] = {"kind": kind, "scope": scope, "min": low,
                       "defaults": {v: defaults[v] for v in eras.VERSIONS},
                       "known": [v for v in eras.VERSIONS if key in eras.known_keys(v)],
                       "dynamic": key in ("min.insync.replicas", "unclean.leader.election.enable")}
    limits = {k: current_app.config[k] for k in ("MAX_BROKERS", "MAX_PARTITIONS", "MAX_CLIENTS",
                                                  "MAX_PRODUCE_COUNT", "MAX_RATE_PER_S", "MAX_DURATION_MS")}
    return jsonify(versions=list(eras.VERSIONS), notes=era_notes(), config=config, ops=list(OPS), limits=limits)


@bp.app_errorhandler(HTTPException)
def http_error(exc):
    if request.path.startswith("/api/"):
        return jsonify(ok=False, error=localized(_http_error_body(exc))), exc.code
    return exc


def _http_error_body(exc):
    """The one error shape for Werkzeug's own refusals; a body over the size limit names the limit."""
    if isinstance(exc, RequestEntityTooLarge):
        limit = request.max_content_length
        allowed = f"at most {limit:,} bytes in one request" if limit else None
        return {"field": "body", "message": "the request body is larger than this server accepts",
                "allowed": allowed}
    return {"field": None, "message": exc.description, "allowed": None}
