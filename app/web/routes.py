"""HTTP: the page, the scenario library, the era tables, rooms as JSON and as scenario files."""
import json

from flask import Response, abort, current_app, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

from engine import eras
from engine.scenario import OPS

from ..runner import USER_ERRORS, AppError, error_reply
from ..runner.limits import ROOM_ID
from ..runner.room import replayable
from . import bp


def _runner():
    return current_app.extensions["isrlab"]["runner"]


@bp.get("/")
def index():
    return render_template("index.html", room_id="", default_scenario=current_app.config["DEFAULT_SCENARIO"])


@bp.get("/r/<room_id>")
def room_page(room_id):
    if not ROOM_ID.match(room_id):
        abort(404)
    return render_template("index.html", room_id=room_id,
                           default_scenario=current_app.config["DEFAULT_SCENARIO"])


@bp.get("/healthz")
def healthz():
    runner = _runner()
    return jsonify(ok=True, rooms=len(runner.rooms), stats=runner.stats)


@bp.get("/api/library")
def api_library():
    out = []
    for name, doc in _runner().library.items():
        topics = doc.get("topics") or []
        out.append({"id": name, "name": doc.get("name", name), "description": doc.get("description", ""),
                    "kafka_version": doc.get("kafka_version", "2.6"), "brokers": doc.get("brokers", 3),
                    "duration_ms": doc.get("duration_ms", 60000),
                    "topics": [t.get("name") for t in topics]})
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
    return jsonify(versions=list(eras.VERSIONS), config=config, ops=list(OPS), limits=limits)


@bp.post("/api/rooms")
def api_create_room():
    body = request.get_json(silent=True)
    if not isinstance(body, dict) or not (set(body) <= {"library", "scenario"}):
        return jsonify(error_reply(AppError("body", "expected a JSON object",
                                            '{"library": name} or {"scenario": {...}}'))), 400
    try:
        room = _runner().create(scenario=body.get("scenario"), library_name=body.get("library"),
                                owner=request.remote_addr)
    except USER_ERRORS as exc:
        return jsonify(error_reply(exc)), 400
    return jsonify(ok=True, room=room.id, url=f"/r/{room.id}"), 201


@bp.get("/api/rooms/<room_id>")
def api_room(room_id):
    try:
        room = _runner().require(room_id)
    except USER_ERRORS as exc:
        return jsonify(error_reply(exc)), 404
    with room.lock:
        return jsonify(ok=True, **room.describe(), command_list=room.commands)


@bp.get("/api/rooms/<room_id>/scenario.json")
def api_room_scenario(room_id):
    """The live session as a scenario: the room's scenario with every live command merged in."""
    try:
        room = _runner().require(room_id)
    except USER_ERRORS as exc:
        return jsonify(error_reply(exc)), 404
    with room.lock:
        doc, _dropped = replayable(room.sim)
    body = json.dumps(doc, indent=2)
    return Response(body, mimetype="application/json",
                    headers={"Content-Disposition": f'attachment; filename="isrlab-{room_id}.json"'})


@bp.app_errorhandler(HTTPException)
def http_error(exc):
    if request.path.startswith("/api/"):
        return jsonify(ok=False, error={"field": None, "message": exc.description, "allowed": None}), exc.code
    return exc
