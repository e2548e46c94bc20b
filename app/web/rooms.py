"""Live rooms over HTTP: the live page (``/``, ``/r/<room>``), creating a room, a room as JSON
and as the scenario file that replays its session. (A room's frames and commands travel over
Socket.IO: ``app.web.events``.)"""
import json

from flask import Response, abort, current_app, jsonify, render_template, request

from ..runner import AppError
from ..runner.limits import ROOM_ID
from .blueprint import bp


def _runner():
    return current_app.extensions["isrlab"]["runner"]


@bp.get("/")
def index():
    """The live page. ``?story=<library name>`` opens that story in the new room (a walkthrough's
    link: ``/?story=isr-shrink-slow-follower&lang=zh-CN``); an unknown name opens the default."""
    story = request.args.get("story")
    if not isinstance(story, str) or story not in _runner().library:
        story = current_app.config["DEFAULT_SCENARIO"]
    return render_template("index.html", room_id="", default_scenario=story)


@bp.get("/r/<room_id>")
def room_page(room_id):
    if not ROOM_ID.match(room_id):
        abort(404)
    return render_template("index.html", room_id=room_id,
                           default_scenario=current_app.config["DEFAULT_SCENARIO"])


@bp.post("/api/rooms")
def api_create_room():
    body = request.get_json(silent=True)
    if not isinstance(body, dict) or not (set(body) <= {"library", "scenario"}):
        raise AppError("body", "expected a JSON object", '{"library": name} or {"scenario": {...}}')
    current_app.extensions["isrlab"]["quotas"].charge(request.remote_addr, "room")
    room = _runner().create(scenario=body.get("scenario"), library_name=body.get("library"),
                            owner=request.remote_addr)
    return jsonify(ok=True, room=room.id, url=f"/r/{room.id}"), 201


@bp.get("/api/rooms/<room_id>")
def api_room(room_id):
    return jsonify(ok=True, **_runner().require(room_id).info())


@bp.get("/api/rooms/<room_id>/scenario.json")
def api_room_scenario(room_id):
    """The live session as a scenario: the room's scenario with every live command merged in."""
    doc = _runner().require(room_id).replay_document()
    body = json.dumps(doc, indent=2)
    return Response(body, mimetype="application/json",
                    headers={"Content-Disposition": f'attachment; filename="isrlab-{room_id}.json"'})


@bp.get("/api/rooms/<room_id>/series")
def api_room_series(room_id):
    """Partition ``partition``'s LEO, HW and ISR size since the start of the room's run (bounded:
    app/runner/series.py), so a page that reloads charts the history it did not see."""
    room = _runner().require(room_id)
    key = request.args.get("partition", "")[:300]
    run, series = room.series_of(key)   # run: the "run" of the frames the page draws
    if series is None:
        raise AppError("partition", f"{key[:60]!r} is not a partition of this room (yet)", "a key such as orders-0")
    return jsonify(ok=True, run=run, **series)


@bp.get("/api/rooms/<room_id>/metrics")
def api_room_metrics(room_id):
    """Kafka's metrics of the room's run so far, sampled (bounded: app/runner/metrics.py), so a
    page that joins or reloads graphs what came before its frames."""
    run, metrics = _runner().require(room_id).metrics_now()
    return jsonify(ok=True, run=run, **metrics)
