"""HTTP for saved runs, replay, shareable links and compare (blueprint ``runs``).

Pages: ``/runs`` (list, search, filter, rename, delete), ``/runs/<id>`` and ``/s/<slug>`` (replay
of a saved run), ``/l/<code>`` (replay of the scenario a link carries), ``/compare``.
API (JSON; errors are ``{"ok": false, "error": {"field", "message", "allowed"}}``):

| method + path                        | does |
|--------------------------------------|------|
| GET    /api/runs                     | list: q, era, outcome, scenario, source, limit, offset (+ facets) |
| POST   /api/runs                     | save a live room {room, title?} or a scenario {scenario, title?} |
| GET    /api/runs/<id>                | one run: summary, scenario, links |
| PATCH  /api/runs/<id>                | rename {title} |
| DELETE /api/runs/<id>                | delete |
| GET    /api/runs/<id>/events         | history: start, limit |
| GET    /api/runs/<id>/export         | the run as a JSON file |
| POST   /api/runs/import              | a run from such a file (re-simulated, not trusted) |
| GET    /api/replay/<rid>/frame       | a replay frame: t | event | step=forward/back; cursor, base |
| GET    /api/replay/<rid>/timeline    | the run's story events and violations (for the scrubber) |
| POST   /api/replay/<rid>/fork        | continue live from t {t_ms, keep_timeline?, kafka_version?, config?} |
| POST   /api/links                    | a link: {scenario} or {run}, with t_ms?, partition?, broker? |
| GET    /api/links/<code>             | what a scenario link holds |
| POST   /api/compare                  | first divergence of {a, b}: each {run} {library} {scenario} or {variant} (of a) |

``rid`` is a saved run's id, or ``sc:<digest>`` for a scenario replay opened from a link.
Handlers are thin: check the input, call the store / replay service, reply.
"""
import json
import logging
import re
import threading
import time

from flask import Blueprint, Response, abort, current_app, jsonify, render_template, request, url_for

from engine.scenario import ScenarioError, load
from engine.simulation import ENGINE_VERSION, Simulation

from .. import links as linkcodec
from ..replay_compare import compare as compare_runs
from ..replay_frames import ReplayViewer
from ..replay_save import capture_live, capture_result, save_captured, summary_of_sim
from ..replay_service import ReplayError, ReplayService, snapshot_key
from ..runner import AppError
from ..runner.limits import check_scenario, retarget
from ..runner.live_view import partition_detail
from ..store import db as store_db
from ..store import runs as store_runs
from ..store.errors import StoreError

log = logging.getLogger(__name__)
bp = Blueprint("runs", __name__)
USER_ERRORS = (StoreError, ReplayError, AppError, ScenarioError, linkcodec.LinkError)
RID = re.compile(r"^(?:[1-9][0-9]{0,17}|sc:[0-9a-f]{24})$")
TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
SLUG = re.compile(r"^[A-Za-z0-9_-]{1,16}$")
IMPORT_MAX_BYTES = 64 * 1024 * 1024
EXPORT_FORMAT = "isrlab-run"


# -- the extension -------------------------------------------------------------------------------------
class RunsExtension:
    """The store and the replay service of one app, opened on first use (the schema is upgraded
    then, or at start with ``warm_up``)."""

    def __init__(self, config):
        self.config = config
        self._lock = threading.Lock()
        self._engine = None
        self._service = None
        self.forks = {}          # live room id -> (parent run id, t_ms): a save records its origin

    @property
    def engine(self):
        if self._engine is None:
            with self._lock:
                if self._engine is None:
                    self._engine = store_db.open_store(store_db.configured_url(self.config))
        return self._engine

    @property
    def service(self):
        if self._service is None:
            engine = self.engine
            with self._lock:
                if self._service is None:
                    key = snapshot_key(store_db.configured_instance_path(self.config), self.config.get("SNAPSHOT_KEY"))
                    self._service = ReplayService(
                        engine, key, max_seekers=self.config.get("REPLAY_MAX_RUNS", 3),
                        worker_processes=self.config.get("REPLAY_WORKER_PROCESSES", False))
        return self._service

    def close(self):
        if self._service is not None:
            self._service.close()
        if self._engine is not None:
            self._engine.dispose()


def init_app(app):
    """Register the blueprint and the extension (called by ``create_app``)."""
    app.extensions["isrlab_runs"] = RunsExtension(app.config)
    app.register_blueprint(bp)
    return app


def warm_up(app):
    """Open the store now (upgrading a fresh database) instead of on first use."""
    return app.extensions["isrlab_runs"].engine


def _ext():
    return current_app.extensions["isrlab_runs"]


def _fail(exc, status=400):
    return jsonify(ok=False, error=exc.to_dict()), status


def _body(allowed, required=()):
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise AppError("body", "expected a JSON object", "{" + ", ".join(allowed) + "}")
    for key in body:
        if key not in allowed:
            raise AppError(str(key)[:40], "unknown field", ", ".join(allowed))
    for key in required:
        if key not in body:
            raise AppError(key, "missing", f"a {key}")
    return body


def _int_arg(name, lo=0, hi=10 ** 12, default=None):
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    if not (raw.isdigit() and len(raw) <= 13) or not lo <= int(raw) <= hi:
        raise AppError(name, f"{raw[:20]!r} is not a whole number from {lo} to {hi}", f"{lo} to {hi}")
    return int(raw)


def _rid(raw):
    if not isinstance(raw, str) or not RID.match(raw):
        raise ReplayError("run", f"{str(raw)[:40]!r} is not a run", "a saved run's id, or a link's replay")
    return raw if raw.startswith("sc:") else int(raw)


def _scenario(doc):
    """A scenario from a user, validated like every input: the server's limits, then the engine."""
    check_scenario(doc, current_app.config)
    return load(doc)


def api(fn):
    """User errors become JSON replies naming the field; nothing else escapes as a 500 page."""
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except USER_ERRORS as exc:
            return _fail(exc, getattr(exc, "status", 400))
    run.__name__ = fn.__name__
    return run


def _run_links(run):
    return {"page": f"/runs/{run['id']}", "short": linkcodec.run_link(run["slug"])}


# -- pages -----------------------------------------------------------------------------------------------
@bp.get("/runs")
def runs_page():
    return render_template("runs.html")


@bp.get("/runs/<int:run_id>")
def replay_page(run_id):
    run = store_runs.get_run(_ext().engine, run_id)
    if run is None:
        return _error_page("No such run", f"There is no saved run {run_id} (it may have been deleted).", 404)
    return _replay_page(run, _focus_or_error(run["scenario"], run["end_ms"]))


@bp.get("/s/<slug>")
def short_link(slug):
    if not SLUG.match(slug):
        return _error_page("Not a link", "This short link is malformed.", 404)
    run = store_runs.get_run(_ext().engine, slug=slug)
    if run is None:
        return _error_page("No such run", "This link points to a run that does not exist (any more).", 404)
    return _replay_page(run, _focus_or_error(run["scenario"], run["end_ms"]))


@bp.get("/l/<code>")
def scenario_link(code):
    try:
        decoded = linkcodec.decode_scenario(code)
        scenario = _scenario(decoded["scenario"])
    except USER_ERRORS as exc:
        return _error_page("This link cannot be opened", _describe(exc), 400)
    focus = _focus_or_error(scenario, scenario["duration_ms"])
    key = _ext().service.register_scenario(scenario)
    run = {"id": key, "title": scenario["name"], "scenario": scenario, "end_ms": scenario["duration_ms"],
           "duration_ms": scenario["duration_ms"], "engine_version": decoded["engine_version"], "slug": None,
           "kafka_version": scenario["kafka_version"], "code": code}
    return _replay_page(run, focus)


@bp.get("/compare")
def compare_page():
    return render_template("compare.html")


def _describe(exc):
    d = exc.to_dict()
    text = f"{d['field']}: {d['message']}" if d.get("field") else d["message"]
    return text + (f" (allowed: {d['allowed']})" if d.get("allowed") else "")


def _focus_or_error(scenario, end_ms):
    try:
        return linkcodec.parse_focus(request.args, scenario, end_ms)
    except linkcodec.LinkError as exc:
        abort(Response(render_template("runs_error.html", title="This link cannot be opened",
                                       message=_describe(exc)), status=400))


def _error_page(title, message, status):
    return render_template("runs_error.html", title=title, message=message), status


def _replay_page(run, focus):
    """The live page's own markup, driven by the replay module instead of the live socket."""
    live = render_template("index.html", room_id="", default_scenario=current_app.config["DEFAULT_SCENARIO"])
    data = {"run": run["id"], "saved": isinstance(run["id"], int), "title": run["title"],
            "slug": run.get("slug"), "code": run.get("code"), "end_ms": run["end_ms"],
            "duration_ms": run["duration_ms"], "kafka_version": run["kafka_version"],
            "engine_version": run.get("engine_version"), "server_engine_version": ENGINE_VERSION,
            "focus": focus, "embed": request.args.get("embed") == "1"}
    text = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    main_js = url_for("static", filename="js/main.js")
    replacements = [
        (f'src="{main_js}"', f'src="{url_for("static", filename="js/replay/main.js")}"'),
        ("</head>", f'<link rel="stylesheet" href="{url_for("static", filename="css/replay.css")}">\n'
                    f'<script type="application/json" id="replay-data">{text}</script>\n</head>'),
        ("</header>", '</header>\n<section id="replay-bar" class="replay-bar" aria-label="Replay"></section>'),
        ("<body ", '<body data-mode="replay" '),
    ]
    for old, new in replacements:
        if old not in live:
            raise RuntimeError(f"the live page changed: {old!r} not found; update app/web/runs_routes.py")
        live = live.replace(old, new, 1)
    response = Response(live, mimetype="text/html")
    if data["embed"]:                      # the compare page shows two replays in frames of its own
        from ..factory import CSP
        response.headers["Content-Security-Policy"] = CSP.replace("frame-ancestors 'none'", "frame-ancestors 'self'")
        response.headers["X-Frame-Options"] = "SAMEORIGIN"
    return response


# -- runs ------------------------------------------------------------------------------------------------
@bp.get("/api/runs")
@api
def api_list_runs():
    args = request.args
    for key in args:
        if key not in ("q", "era", "outcome", "scenario", "source", "limit", "offset", "order", "facets"):
            raise AppError(key[:40], "unknown parameter", "q, era, outcome, scenario, source, limit, offset, order, facets")
    started = time.perf_counter()
    page = store_runs.list_runs(_ext().engine, q=args.get("q"), era=args.get("era") or None,
                                outcome=args.get("outcome") or None, scenario=args.get("scenario") or None,
                                source=args.get("source") or None, limit=_int_arg("limit", 1, 500, 50),
                                offset=_int_arg("offset", 0, 10 ** 9, 0), order=args.get("order", "newest"))
    for run in page["runs"]:
        run["links"] = _run_links(run)
    if args.get("facets") == "1":
        page["facets"] = store_runs.facets(_ext().engine)
    page["query_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return jsonify(ok=True, **page)


@bp.post("/api/runs")
@api
def api_save_run():
    body = _body(("room", "scenario", "title"))
    ext = _ext()
    title = body.get("title")
    if title is not None:
        store_runs.check_title(title)
    if ("room" in body) == ("scenario" in body):
        raise AppError("body", "give either a live room or a scenario", '{"room": id} or {"scenario": {...}}')
    if "room" in body:
        if not isinstance(body["room"], str):
            raise AppError("room", "is not a room id", "the id of a live room")
        room = current_app.extensions["isrlab"]["runner"].require(body["room"])
        with room.lock:
            captured = capture_live(room.sim)
        parent = ext.forks.get(room.id)
        saved = save_captured(ext.engine, captured, title=title, source="fork" if parent else "live",
                              parent_run_id=parent[0] if parent else None, fork_t_ms=parent[1] if parent else None)
    else:
        scenario = _scenario(body["scenario"])
        sim = Simulation(scenario)
        saved = save_captured(ext.engine, capture_result(sim, sim.run()), title=title, source="link")
    ext.service.prepare(saved["id"])        # the seek index, in the background
    run = store_runs.get_run(ext.engine, saved["id"])
    return jsonify(ok=True, id=run["id"], slug=run["slug"], title=run["title"], save_ms=saved["save_ms"],
                   dropped_ops=saved["dropped_ops"], links=_run_links(run)), 201


def _get_run(run_id):
    run = store_runs.get_run(_ext().engine, run_id)
    if run is None:
        raise ReplayError("run", f"no saved run {run_id}", "the id of a saved run", 404)
    return run


@bp.get("/api/runs/<int:run_id>")
@api
def api_get_run(run_id):
    run = _get_run(run_id)
    run["links"] = _run_links(run)
    return jsonify(ok=True, run=run)


@bp.patch("/api/runs/<int:run_id>")
@api
def api_rename_run(run_id):
    body = _body(("title",), ("title",))
    title = store_runs.rename_run(_ext().engine, run_id, body["title"])
    if title is None:
        raise ReplayError("run", f"no saved run {run_id}", "the id of a saved run", 404)
    return jsonify(ok=True, id=run_id, title=title)


@bp.delete("/api/runs/<int:run_id>")
@api
def api_delete_run(run_id):
    if not store_runs.delete_run(_ext().engine, run_id):
        raise ReplayError("run", f"no saved run {run_id}", "the id of a saved run", 404)
    _ext().service.forget(run_id)
    return jsonify(ok=True, deleted=run_id)


@bp.get("/api/runs/<int:run_id>/events")
@api
def api_run_events(run_id):
    _get_run(run_id)
    start = _int_arg("start", 0, 10 ** 9, 0)
    limit = _int_arg("limit", 1, 5000, 500)
    events = store_runs.run_events(_ext().engine, run_id, start=start, limit=limit)
    return jsonify(ok=True, start=start, events=events)


@bp.get("/api/runs/<int:run_id>/export")
@api
def api_export_run(run_id):
    run = _get_run(run_id)
    engine = _ext().engine
    doc = {"format": EXPORT_FORMAT, "version": 1, "title": run["title"], "source": run["source"],
           "created_ms": run["created_ms"], "engine_version": run["engine_version"], "end_ms": run["end_ms"],
           "finished": run["finished"],
           "summary": {k: run[k] for k in ("records_total", "acked_count", "failed_count", "lost_count",
                                           "violations_count", "events_count", "outcome")},
           "scenario": run["scenario"], "events": store_runs.run_events(engine, run_id),
           "violations": store_runs.run_violations(engine, run_id)}
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", run["title"]).strip("-")[:60] or "run"
    return Response(json.dumps(doc, separators=(",", ":")), mimetype="application/json",
                    headers={"Content-Disposition": f'attachment; filename="isrlab-run-{run_id}-{name}.json"'})


@bp.post("/api/runs/import")
@api
def api_import_run():
    request.max_content_length = IMPORT_MAX_BYTES
    body = _body(("format", "version", "title", "source", "created_ms", "engine_version", "end_ms", "finished",
                  "summary", "scenario", "events", "violations"), ("format", "version", "scenario"))
    if body["format"] != EXPORT_FORMAT or body["version"] != 1:
        raise AppError("format", "is not an ISR Lab run file", f'"format": "{EXPORT_FORMAT}", "version": 1')
    scenario = _scenario(body["scenario"])
    end_ms = body.get("end_ms", scenario["duration_ms"])
    if isinstance(end_ms, bool) or not isinstance(end_ms, int) or not 0 <= end_ms <= scenario["duration_ms"]:
        raise AppError("end_ms", f"{str(end_ms)[:20]} is not a time of this run", f"0 to {scenario['duration_ms']}")
    title = body.get("title") or scenario["name"]
    store_runs.check_title(title)
    sim = Simulation(scenario)
    if end_ms >= scenario["duration_ms"]:
        captured = capture_result(sim, sim.run())
    else:
        sim.advance_to(end_ms)
        captured = {"scenario": scenario, "events": list(sim.history), "violations": list(sim.violations),
                    "summary": summary_of_sim(sim), "end_ms": end_ms, "finished": False, "dropped_ops": 0}
    events = body.get("events")
    matches = None
    if isinstance(events, list):
        matches = json.dumps(events, sort_keys=True) == json.dumps(captured["events"], sort_keys=True)
    saved = save_captured(_ext().engine, captured, title=title, source="import")
    _ext().service.prepare(saved["id"])
    run = store_runs.get_run(_ext().engine, saved["id"])
    return jsonify(ok=True, id=run["id"], slug=run["slug"], title=run["title"], history_matches=matches,
                   links=_run_links(run)), 201


# -- replay --------------------------------------------------------------------------------------------
@bp.get("/api/replay/<rid>/frame")
@api
def api_replay_frame(rid):
    key = _rid(rid)
    args = request.args
    for name in args:
        if name not in ("t", "event", "step", "cursor", "base", "playing"):
            raise AppError(name[:40], "unknown parameter", "t, event, step, cursor, base, playing")
    t_ms, event = _int_arg("t"), _int_arg("event", 0, 10 ** 9)
    step = args.get("step") or None
    if step not in (None, "forward", "back"):
        raise AppError("step", f"{step[:20]!r} is not a step", "forward or back")
    if sum(x is not None for x in (t_ms, event, step)) > 1:
        raise AppError("t", "give one of t, event or step", "one of them")
    cursor = args.get("cursor") or None
    if cursor is not None and not TOKEN.match(cursor):
        raise AppError("cursor", "is malformed", "a cursor token from an earlier reply")
    base = _int_arg("base", 0, 10 ** 12, 0)
    playing = args.get("playing") == "1"
    service = _ext().service
    run = service.run(key)
    label = f"replay:{key}"

    def look(sim, cur):
        viewer = cur.extra.get("viewer")
        fresh = viewer is None or cur.token != cursor     # a new cursor: the client gets a full frame
        if viewer is None:
            viewer = cur.extra["viewer"] = ReplayViewer(label)
        end = service.seeker(key).end_ms
        clock = {"room": label, "run": viewer.frames.run + 1, "t_ms": sim.now_ms, "duration_ms": end,
                 "finished": sim.now_ms >= end, "playing": playing and sim.now_ms < end,
                 "paused_reason": "finished" if sim.now_ms >= end else (None if playing else "user"),
                 "speed": 1.0, "actual_speed": 0.0, "behind": False, "pause_on_violation": False,
                 "history_len": len(sim.history), "violations": len(sim.violations),
                 "commands": 0, "viewers": 1, "notice": None,
                 "source": {"kind": "replay", "run": key}}
        text = viewer.frame(sim, clock, 0 if fresh else base, time.time() * 1000)
        return {"t_ms": sim.now_ms, "history_len": len(sim.history), "frame": text}

    out, token = service.position(key, t_ms=t_ms, event=event, step=step, cursor=cursor, look=look)
    body = "".join(('{"ok":true,"cursor":', json.dumps(token), ',"t_ms":', str(out["t_ms"]),
                    ',"history_len":', str(out["history_len"]), ',"end_ms":', str(run["end_ms"]),
                    ',"frame":', out["frame"], "}"))
    return Response(body, mimetype="application/json")


@bp.get("/api/replay/<rid>/inspect")
@api
def api_replay_inspect(rid):
    """One partition at the cursor's moment, with the last 200 records of each replica."""
    key = _rid(rid)
    partition = request.args.get("partition", "")
    cursor = request.args.get("cursor") or None
    if cursor is not None and not TOKEN.match(cursor):
        raise AppError("cursor", "is malformed", "a cursor token from an earlier reply")

    def look(sim, _cur):
        keys = [sim.key(topic, p) for topic, spec in sim.topics.items() for p in range(spec["partitions"])]
        if partition not in keys:
            raise AppError("partition", f"{partition[:60]!r} is not a partition of this run", ", ".join(keys[:20]))
        return partition_detail(sim, partition)

    detail, token = _ext().service.position(key, cursor=cursor, look=look, stay=True)
    return jsonify(ok=True, partition=detail, cursor=token)


@bp.get("/replay/<rid>")
def replay_any_page(rid):
    """The replay page of a saved run or of a scenario replay open on this server (compare)."""
    try:
        key = _rid(rid)
        run = _ext().service.run(key)
    except USER_ERRORS as exc:
        return _error_page("Nothing to replay", _describe(exc), 404)
    if isinstance(key, int):
        return _replay_page(run, _focus_or_error(run["scenario"], run["end_ms"]))
    page = {"id": key, "title": run["scenario"]["name"], "scenario": run["scenario"], "end_ms": run["end_ms"],
            "duration_ms": run["duration_ms"], "engine_version": ENGINE_VERSION, "slug": None,
            "kafka_version": run["scenario"]["kafka_version"], "code": linkcodec.encode_scenario(run["scenario"])}
    return _replay_page(page, _focus_or_error(run["scenario"], run["end_ms"]))


@bp.get("/api/replay/<rid>/timeline")
@api
def api_replay_timeline(rid):
    key = _rid(rid)
    service = _ext().service
    run = service.run(key)
    if run["saved"]:
        ticks = store_runs.event_times(_ext().engine, key)
        violations = [[v["t_ms"], v["invariant"], v.get("topic"), v.get("partition")]
                      for v in store_runs.run_violations(_ext().engine, key)]
    else:
        seeker = service.seeker(key)
        sim = seeker.at_time(seeker.end_ms)
        ticks = [(e["t_ms"], e["type"]) for e in sim.history]
        violations = [[v["t_ms"], v["invariant"], v.get("topic"), v.get("partition")] for v in sim.violations]
    story = [[i, t, ty] for i, (t, ty) in enumerate(ticks) if ty != "high_watermark"]
    return jsonify(ok=True, end_ms=run["end_ms"], events=len(ticks), story=story[-20000:], violations=violations)


@bp.post("/api/replay/<rid>/fork")
@api
def api_replay_fork(rid):
    key = _rid(rid)
    body = _body(("t_ms", "keep_timeline", "kafka_version", "config"), ("t_ms",))
    service = _ext().service
    run = service.run(key)
    t_ms = body["t_ms"]
    if isinstance(t_ms, bool) or not isinstance(t_ms, int) or not 0 <= t_ms <= run["end_ms"]:
        raise AppError("t_ms", f"{str(t_ms)[:20]} is not a moment of this run", f"0 to {run['end_ms']}")
    keep = body.get("keep_timeline", True)
    if not isinstance(keep, bool):
        raise AppError("keep_timeline", "is not a boolean", "true or false")
    doc = json.loads(json.dumps(run["scenario"]))
    if not keep:
        doc["timeline"] = [op for op in doc["timeline"] if op["at_ms"] <= t_ms]
    notes = []
    if body.get("kafka_version") is not None:
        if not isinstance(body["kafka_version"], str):
            raise AppError("kafka_version", "is not a version", "e.g. 0.10 or 2.6")
        doc, dropped = retarget(doc, body["kafka_version"])
        if dropped:
            notes.append("dropped config keys this era does not know: " + ", ".join(dropped))
    if body.get("config") is not None:
        if not isinstance(body["config"], dict):
            raise AppError("config", "is not an object", "config key -> value")
        doc["config"] = {k: v for k, v in {**doc.get("config", {}), **body["config"]}.items() if v is not None}
    scenario = _scenario(doc)
    runner = current_app.extensions["isrlab"]["runner"]
    room = runner.create(scenario=scenario)
    with room.lock:
        room.control("pause", runner.clock())
        room.sim.advance_to(t_ms)             # the same moment, by deterministic re-simulation
    if isinstance(key, int):
        _ext().forks[room.id] = (key, t_ms)
    return jsonify(ok=True, room=room.id, url=f"/r/{room.id}", t_ms=room.sim.now_ms, notes=notes), 201


# -- links -------------------------------------------------------------------------------------------------
def _focus_from_body(body, scenario, end_ms):
    args = {}
    for field, name in (("t_ms", "t"), ("partition", "p"), ("broker", "b")):
        value = body.get(field)
        if value is not None:
            args[name] = str(value) if not isinstance(value, bool) else "x"
    focus = linkcodec.parse_focus(args, scenario, end_ms)
    return focus["t_ms"], focus["partition"], focus["broker"]


@bp.post("/api/links")
@api
def api_make_link():
    body = _body(("scenario", "run", "t_ms", "partition", "broker"))
    if ("scenario" in body) == ("run" in body):
        raise AppError("body", "give either a scenario or a run", '{"scenario": {...}} or {"run": id}')
    if "run" in body:
        if isinstance(body["run"], bool) or not isinstance(body["run"], int):
            raise AppError("run", "is not a run id", "the id of a saved run")
        run = _get_run(body["run"])
        focus = _focus_from_body(body, run["scenario"], run["end_ms"])
        return jsonify(ok=True, kind="run", url=linkcodec.run_link(run["slug"], *focus)), 201
    scenario = _scenario(body["scenario"])
    focus = _focus_from_body(body, scenario, scenario["duration_ms"])
    code = linkcodec.encode_scenario(scenario)
    return jsonify(ok=True, kind="scenario", code=code, url=linkcodec.scenario_link(code, *focus),
                   chars=len(code)), 201


@bp.get("/api/links/<code>")
@api
def api_read_link(code):
    decoded = linkcodec.decode_scenario(code)
    scenario = _scenario(decoded["scenario"])
    return jsonify(ok=True, scenario=scenario, engine_version=decoded["engine_version"])


# -- compare -------------------------------------------------------------------------------------------------
def _side(spec, field, base=None):
    service = _ext().service
    if not isinstance(spec, dict) or len(spec) != 1:
        raise AppError(field, "is not one run",
                       '{"run": id}, {"library": name}, {"scenario": {...}} or {"variant": {...}}')
    (kind, value), = spec.items()
    if kind == "run":
        if isinstance(value, str) and RID.match(value):
            value = _rid(value)
        if not (isinstance(value, int) and not isinstance(value, bool)) and not isinstance(value, str):
            raise AppError(f"{field}.run", "is not a run id", "the id of a saved run")
        run = service.run(value)
        return value, run
    if kind == "library":
        lib = current_app.extensions["isrlab"]["runner"].library
        if not isinstance(value, str) or value not in lib:
            raise AppError(f"{field}.library", f"{str(value)[:60]!r} is not a library scenario", ", ".join(lib))
        kind, value = "scenario", lib[value]
    if kind == "scenario":
        scenario = _scenario(value)
        key = service.register_scenario(scenario)
        return key, service.run(key)
    if kind == "variant":
        if base is None:
            raise AppError(f"{field}.variant", "needs a first run to vary", '"a" as a run or a scenario')
        if not isinstance(value, dict) or not set(value) <= {"kafka_version", "config", "acks", "seed"}:
            raise AppError(f"{field}.variant", "is not a variant", "kafka_version, config, acks, seed")
        doc = json.loads(json.dumps(base["scenario"]))
        if "kafka_version" in value:
            doc, _dropped = retarget(doc, value["kafka_version"])
        if "config" in value:
            if not isinstance(value["config"], dict):
                raise AppError(f"{field}.variant.config", "is not an object", "config key -> value")
            doc["config"] = {**doc.get("config", {}), **value["config"]}
        if "acks" in value:
            for client in doc.get("clients", []):
                if client.get("type") == "producer":
                    client["acks"] = value["acks"]
        if "seed" in value:
            doc["seed"] = value["seed"]
        doc["duration_ms"] = min(doc["duration_ms"], base["end_ms"]) if base.get("saved") else doc["duration_ms"]
        doc["timeline"] = [op for op in doc["timeline"] if op["at_ms"] <= doc["duration_ms"]]
        scenario = _scenario(doc)
        key = service.register_scenario(scenario)
        return key, service.run(key)
    raise AppError(field, f"{kind[:20]!r} is not a kind of run", "run, library, scenario or variant")


@bp.post("/api/compare")
@api
def api_compare():
    body = _body(("a", "b"), ("a", "b"))
    key_a, run_a = _side(body["a"], "a")
    key_b, run_b = _side(body["b"], "b", base=run_a)
    service = _ext().service
    started = time.perf_counter()
    result = compare_runs(service.seeker(key_a), service.seeker(key_b))
    result["wall_ms"] = round((time.perf_counter() - started) * 1000)

    def describe(key, run):
        sc = run["scenario"]
        return {"rid": key if isinstance(key, str) else str(key), "title": run.get("title") or sc["name"],
                "kafka_version": sc["kafka_version"], "end_ms": run["end_ms"], "seed": sc["seed"],
                "config": sc.get("config", {}),
                "acks": sorted({str(c.get("acks")) for c in sc.get("clients", []) if c.get("type") == "producer"})}

    return jsonify(ok=True, a=describe(key_a, run_a), b=describe(key_b, run_b), **result)
