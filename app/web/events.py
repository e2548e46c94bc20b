"""Socket.IO events. Everything a browser sends is untrusted: each handler checks the payload's
shape (an object with known keys), the connection's rate, then calls one runner function and
replies through the acknowledgement: ``{"ok": true, ...}`` or ``{"ok": false, "error": {"field",
"message", "allowed"}}``. A bad request never stops the simulation.

| event        | payload                                   | does |
|--------------|-------------------------------------------|------|
| join         | {room}                                    | watch a room (frames follow) |
| create       | {library} or {scenario} (or {})           | new room, joined |
| load         | {library} or {scenario}                   | replace the room's simulation |
| control      | {action, value?}                          | play, pause, step, speed, restart, replay, pause_on_violation, pause_at, run_to |
| command      | {op, ...}  (a timeline operation)         | apply it now (recorded for replay) |
| reconfigure  | {kafka_version?, config?}                 | restart under another era/config, replaying commands |
| inspect      | {partition}                               | one partition with its last 200 records per replica |
| ledger       | {status?, producer?, partition?, error?, page?} | a page (50, newest first) of the record ledger |
| resync       | {}                                        | next frame is a full one |
| leave        | {}                                        | stop watching |
"""
import functools
import logging

from flask import current_app, request
from flask_socketio import join_room, leave_room

from ..runner import USER_ERRORS, AppError, error_reply
from .inputs import INVALID_EVENT
from .transport import NAMESPACE, channel

log = logging.getLogger(__name__)


def _ext():
    return current_app.extensions["isrlab"]


def _payload(data, allowed, required=()):
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise AppError("payload", "is not a JSON object", "{" + ", ".join(allowed) + "}")
    for key in data:
        if key not in allowed:
            raise AppError(str(key)[:40], "unknown field", ", ".join(allowed) or "no fields")
    for key in required:
        if key not in data:
            raise AppError(key, "missing", f"a {key}")
    return data


def handler(name, limited=True):
    """Wrap an event handler: rate limit, user errors as replies, no exception escapes."""
    def wrap(fn):
        @functools.wraps(fn)
        def run(data=None, *extra):
            try:
                if limited and not _ext()["limiter"].allow(request.sid):
                    rate = current_app.config["COMMANDS_PER_S"]
                    raise AppError("rate", "too many requests: slow down",
                                   f"{rate:g} per second (bursts of {current_app.config['COMMAND_BURST']})")
                if extra:
                    raise AppError("payload", "expected one argument", "one JSON object")
                reply = fn(data)
                return {"ok": True, **(reply or {})}
            except USER_ERRORS as exc:
                return error_reply(exc)
            except Exception:  # noqa: BLE001
                log.exception("event %s failed", name)
                return {"ok": False, "error": {"field": None, "message": "internal error", "allowed": None}}
        return run
    return wrap


def _now():
    return _ext()["runner"].clock()


def _join(room_id):
    runner = _ext()["runner"]
    room, left = runner.join(room_id, request.sid)
    if left and left != room.id:
        leave_room(channel(left))
    join_room(channel(room.id))
    # the runner may have sent this viewer its first (full) frame to the room's channel before the
    # socket joined the channel (a room worker's tick runs while the join's answer travels back):
    # ask again, so the next frame this viewer gets is a full one whatever happened meanwhile
    runner.resync(request.sid)
    return room.describe()


def _current_room():
    room = _ext()["runner"].room_of(request.sid)
    if room is None:
        raise AppError("room", "you are not watching a room", "join or create one first")
    return room


def _source_fields(data):
    if "library" in data and "scenario" in data:
        raise AppError("payload", "give a library name or a scenario, not both", "library or scenario")
    return data.get("library"), data.get("scenario")


@handler("join")
def on_join(data):
    data = _payload(data, ("room",), ("room",))
    return {"room": _join(data["room"])}


@handler("create")
def on_create(data):
    data = _payload(data, ("library", "scenario"))
    library_name, scenario = _source_fields(data)
    _ext()["quotas"].charge(request.remote_addr, "room")
    room = _ext()["runner"].create(scenario=scenario, library_name=library_name, owner=request.remote_addr)
    return {"room": _join(room.id)}


@handler("load")
def on_load(data):
    data = _payload(data, ("library", "scenario"))
    library_name, scenario = _source_fields(data)
    if library_name is None and scenario is None:
        raise AppError("payload", "nothing to load", "library or scenario")
    room = _current_room()
    doc, source = _ext()["runner"].scenario_for(library_name, scenario)
    return {"room": room.load(doc, _now(), source)}


@handler("control")
def on_control(data):
    data = _payload(data, ("action", "value"), ("action",))
    return _current_room().control(data["action"], _now(), data.get("value"))


@handler("command")
def on_command(data):
    return {"command": _current_room().apply(data, current_app.config)}


@handler("reconfigure")
def on_reconfigure(data):
    data = _payload(data, ("kafka_version", "config"))
    if "kafka_version" not in data and "config" not in data:
        raise AppError("payload", "nothing to change", "kafka_version and/or config")
    return _current_room().reconfigure(data.get("kafka_version"), data.get("config"), _now(),
                                       current_app.config)


@handler("inspect")
def on_inspect(data):
    data = _payload(data, ("partition",), ("partition",))
    return {"partition": _current_room().inspect(data["partition"])}


LEDGER_STATUSES = ("acked", "failed", "pending", "unacknowledged", "lost")


@handler("ledger")
def on_ledger(data):
    data = _payload(data, ("status", "producer", "partition", "error", "page"))
    filters = {}
    for name in ("status", "producer", "partition", "error"):
        value = data.get(name)
        if value in (None, ""):
            continue
        if not isinstance(value, str) or len(value) > 200:
            raise AppError(name, "is not a short string", "text of at most 200 characters")
        filters[name] = value
    if filters.get("status") not in (None, *LEDGER_STATUSES):
        raise AppError("status", f"{filters['status'][:20]!r} is not a record status", ", ".join(LEDGER_STATUSES))
    page = data.get("page", 0)
    if isinstance(page, bool) or not isinstance(page, int) or not 0 <= page <= 10000:
        raise AppError("page", "is not a page number", "0 to 10000")
    return _current_room().ledger(filters, page)


@handler("resync", limited=False)
def on_resync(data):
    _payload(data, ())
    _ext()["runner"].resync(request.sid)
    return {}


@handler("leave", limited=False)
def on_leave(data):
    _payload(data, ())
    left = _ext()["runner"].leave(request.sid)
    if left:
        leave_room(channel(left))
    return {"left": left}


def on_unknown(event, *args):
    """Any event this server does not know gets an answer naming what exists (not silence); a
    packet whose JSON was refused (``inputs.SocketJSON``) gets the reason."""
    if event == INVALID_EVENT and args and isinstance(args[0], dict):
        return {"ok": False, "error": args[0]}
    return error_reply(AppError("event", f"{str(event)[:40]!r} is not an event of this server",
                                ", ".join(EVENTS)))


def on_disconnect(*_args):
    ext = _ext()
    ext["runner"].leave(request.sid)
    ext["limiter"].forget(request.sid)


EVENTS = {"join": on_join, "create": on_create, "load": on_load, "control": on_control,
          "command": on_command, "reconfigure": on_reconfigure, "inspect": on_inspect, "ledger": on_ledger,
          "resync": on_resync, "leave": on_leave}


def register_events(socketio):
    """Attach the handlers to this app's SocketIO object."""
    for name, fn in EVENTS.items():
        socketio.on_event(name, fn, namespace=NAMESPACE)
    socketio.on_event("disconnect", on_disconnect, namespace=NAMESPACE)
    socketio.on_event("*", on_unknown, namespace=NAMESPACE)
