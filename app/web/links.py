"""Shareable links: ``/l/<code>`` (a scenario carried in the link), ``/s/<slug>`` (a saved run),
``POST /api/links`` to make either, ``GET /api/links/<code>`` to read one. Both kinds take
``?t=<ms>&p=<topic-partition>&b=<broker>`` to open at a moment (``app.replay.links``)."""
from flask import jsonify

from ..i18n import LANGS, lang_tag
from ..replay import links as linkcodec
from ..runner import AppError
from ..store import runs as store_runs
from .blueprint import bp
from .common import (SLUG, USER_ERRORS, checked_scenario, describe_error, error_page, ext,
                     focus_or_error, get_run_or_404, json_body)
from .replays import replay_page_of


@bp.get("/s/<slug>")
def short_link(slug):
    if not SLUG.match(slug):
        return error_page("Not a link", "This short link is malformed.", 404)
    run = store_runs.get_run(ext().engine, slug=slug)
    if run is None:
        return error_page("No such run", "This link points to a run that does not exist (any more).", 404)
    return replay_page_of(run, focus_or_error(run["scenario"], run["end_ms"]))


@bp.get("/l/<code>")
def scenario_link(code):
    try:
        decoded = linkcodec.decode_scenario(code)
        scenario = checked_scenario(decoded["scenario"], "link")
    except USER_ERRORS as exc:
        return error_page("This link cannot be opened", describe_error(exc), 400)
    focus = focus_or_error(scenario, scenario["duration_ms"])
    key = ext().service.register_scenario(scenario, engine_version=decoded["engine_version"])
    run = {"id": key, "title": scenario["name"], "scenario": scenario, "end_ms": scenario["duration_ms"],
           "duration_ms": scenario["duration_ms"], "engine_version": decoded["engine_version"], "slug": None,
           "kafka_version": scenario["kafka_version"], "code": code}
    return replay_page_of(run, focus)


def _focus_from_body(body, scenario, end_ms):
    args = {}
    for field, name in (("t_ms", "t"), ("partition", "p"), ("broker", "b")):
        value = body.get(field)
        if value is not None:
            args[name] = str(value) if not isinstance(value, bool) else "x"
    focus = linkcodec.parse_focus(args, scenario, end_ms)
    return focus["t_ms"], focus["partition"], focus["broker"]


def _lang_of(body):
    """The language the link opens in (``"lang": "zh-CN"`` or ``"en"``), or None: the reader's own."""
    if body.get("lang") is None:
        return None
    tag = lang_tag(body["lang"])
    if tag is None:
        raise AppError("lang", f"{str(body['lang'])[:20]!r} is not a language of ISR Lab", " or ".join(LANGS))
    return tag


@bp.post("/api/links")
def api_make_link():
    body = json_body(("scenario", "run", "t_ms", "partition", "broker", "lang"))
    lang = _lang_of(body)
    if ("scenario" in body) == ("run" in body):
        raise AppError("body", "give either a scenario or a run", '{"scenario": {...}} or {"run": id}')
    if "run" in body:
        if isinstance(body["run"], bool) or not isinstance(body["run"], int):
            raise AppError("run", "is not a run id", "the id of a saved run")
        run = get_run_or_404(body["run"])
        focus = _focus_from_body(body, run["scenario"], run["end_ms"])
        return jsonify(ok=True, kind="run", url=linkcodec.run_link(run["slug"], *focus, lang=lang)), 201
    scenario = checked_scenario(body["scenario"], "link")
    focus = _focus_from_body(body, scenario, scenario["duration_ms"])
    code = linkcodec.encode_scenario(scenario)
    return jsonify(ok=True, kind="scenario", code=code, url=linkcodec.scenario_link(code, *focus, lang=lang),
                   chars=len(code)), 201


@bp.get("/api/links/<code>")
def api_read_link(code):
    decoded = linkcodec.decode_scenario(code)
    scenario = checked_scenario(decoded["scenario"], "link")
    return jsonify(ok=True, scenario=scenario, engine_version=decoded["engine_version"])
