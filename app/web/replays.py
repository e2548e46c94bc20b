"""Replay (``/runs/<id>``, ``/replay/<rid>``, ``/api/replay/<rid>/...``): pages, frames at a
moment, one partition in detail, the scrubber's timeline, and fork into a live room.

| method + path                        | does |
|--------------------------------------|------|
| GET    /api/replay/<rid>/frame       | a replay frame: t | event | step=forward/back; cursor, base |
| GET    /api/replay/<rid>/inspect     | one partition at the cursor's moment |
| GET    /api/replay/<rid>/timeline    | the run's story events and violations (for the scrubber) |
| GET    /api/replay/<rid>/series      | one partition's HW, LEO and ISR size over the run (the time chart) |
| GET    /api/replay/<rid>/metrics     | Kafka's metrics (MBean names) over the run (the Metrics tab) |
| POST   /api/replay/<rid>/fork        | continue live from t {t_ms, keep_timeline?, kafka_version?, config?} |

``rid`` is a saved run's id, or ``sc:<digest>`` for a scenario replay opened from a link.
"""
import json
import time

from flask import Response, current_app, jsonify, render_template, request, url_for
from flask_babel import gettext
from markupsafe import escape

from engine.simulation import ENGINE_VERSION

from ..replay import engines
from ..replay import links as linkcodec
from ..replay.frames import ReplayViewer
from ..replay.seek import gc_paused
from ..replay.metrics import cached_metrics, metrics_series, peek_metrics
from ..replay.series import cached_series, partition_series, peek_series
from ..runner import AppError
from ..jobwork import budgets_of, simulation_at
from ..runner.limits import retarget
from ..runner.live_view import partition_detail
from ..store import runs as store_runs
from .blueprint import bp
from .common import (MAX_RUN_ID, TOKEN, USER_ERRORS, charge, checked_scenario, describe_error, error_page, ext, focus_or_error,
                     int_arg, job_reply, json_body, replay_key, submit)
from .security import CSP


@bp.get("/runs/<int:run_id>")
def replay_page(run_id):
    run = store_runs.get_run(ext().engine, run_id) if 0 < run_id <= MAX_RUN_ID else None
    if run is None:
        return error_page("No such run", f"There is no saved run {run_id} (it may have been deleted).", 404)
    return replay_page_of(run, focus_or_error(run["scenario"], run["end_ms"]))


@bp.get("/replay/<rid>")
def replay_any_page(rid):
    """The replay page of a saved run or of a scenario replay open on this server (compare)."""
    try:
        key = replay_key(rid)
        run = ext().service.run(key)
    except USER_ERRORS as exc:
        return error_page("Nothing to replay", describe_error(exc), 404)
    if isinstance(key, int):
        return replay_page_of(run, focus_or_error(run["scenario"], run["end_ms"]))
    page = {"id": key, "title": run["scenario"]["name"], "scenario": run["scenario"], "end_ms": run["end_ms"],
            "duration_ms": run["duration_ms"], "engine_version": run["engine_version"], "slug": None,
            "kafka_version": run["scenario"]["kafka_version"],
            "code": linkcodec.encode_scenario(run["scenario"], run["engine_version"])}
    return replay_page_of(page, focus_or_error(run["scenario"], run["end_ms"]))


def replay_page_of(run, focus):
    """The live page's own markup, driven by the replay module instead of the live socket."""
    live = render_template("index.html", room_id="", default_scenario=current_app.config["DEFAULT_SCENARIO"])
    data = {"run": run["id"], "saved": isinstance(run["id"], int), "title": run["title"],
            "slug": run.get("slug"), "code": run.get("code"), "end_ms": run["end_ms"],
            "duration_ms": run["duration_ms"], "kafka_version": run["kafka_version"],
            "engine_version": run.get("engine_version"), "server_engine_version": ENGINE_VERSION,
            # the behaviour it re-simulates under (docs/model.md §19), and a note when inexact
            "replay_engine_version": engines.run_as(run.get("engine_version")),
            "engine_note": engines.note(run.get("engine_version")),
            "focus": focus, "embed": request.args.get("embed") == "1",
            "scenario_name": (run.get("scenario") or {}).get("name")}
    text = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    main_js = url_for("static", filename="js/main.js")
    bar_label = escape(gettext("Replay"))        # outside the f-string: pybabel does not read inside one
    replacements = [
        (f'src="{main_js}"', f'src="{url_for("static", filename="js/replay/main.js")}"'),
        ("</head>", f'<link rel="stylesheet" href="{url_for("static", filename="css/replay.css")}">\n'
                    f'<script type="application/json" id="replay-data">{text}</script>\n</head>'),
        ("</header>", f'</header>\n<section id="replay-bar" class="replay-bar" aria-label="{bar_label}"></section>'),
        ("<body ", '<body data-mode="replay" '),
    ]
    for old, new in replacements:
        if old not in live:
            raise RuntimeError(f"the live page changed: {old!r} not found; update app/web/replays.py")
        live = live.replace(old, new, 1)
    response = Response(live, mimetype="text/html")
    if data["embed"]:                      # the compare page shows two replays in frames of its own
        response.headers["Content-Security-Policy"] = CSP.replace("frame-ancestors 'none'", "frame-ancestors 'self'")
        response.headers["X-Frame-Options"] = "SAMEORIGIN"
    return response


@bp.get("/api/replay/<rid>/frame")
def api_replay_frame(rid):
    key = replay_key(rid)
    args = request.args
    for name in args:
        if name not in ("t", "event", "step", "cursor", "base", "playing"):
            raise AppError(name[:40], "unknown parameter", "t, event, step, cursor, base, playing")
    t_ms, event = int_arg("t"), int_arg("event", 0, 10 ** 9)
    step = args.get("step") or None
    if step not in (None, "forward", "back"):
        raise AppError("step", f"{step[:20]!r} is not a step", "forward or back")
    if sum(x is not None for x in (t_ms, event, step)) > 1:
        raise AppError("t", "give one of t, event or step", "one of them")
    cursor = args.get("cursor") or None
    if cursor is not None and not TOKEN.match(cursor):
        raise AppError("cursor", "is malformed", "a cursor token from an earlier reply")
    base = int_arg("base", 0, 10 ** 12, 0)
    playing = args.get("playing") == "1"
    service = ext().service
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
def api_replay_inspect(rid):
    """One partition at the cursor's moment, with the last 200 records of each replica."""
    key = replay_key(rid)
    partition = request.args.get("partition", "")
    cursor = request.args.get("cursor") or None
    if cursor is not None and not TOKEN.match(cursor):
        raise AppError("cursor", "is malformed", "a cursor token from an earlier reply")

    def look(sim, _cur):
        keys = [sim.key(topic, p) for topic, spec in sim.topics.items() for p in range(spec["partitions"])]
        if partition not in keys:
            raise AppError("partition", f"{partition[:60]!r} is not a partition of this run", ", ".join(keys[:20]))
        return partition_detail(sim, partition)

    detail, token = ext().service.position(key, cursor=cursor, look=look, stay=True)
    return jsonify(ok=True, partition=detail, cursor=token)


@bp.get("/api/replay/<rid>/series")
def api_replay_series(rid):
    """Partition ``partition``'s replicas' LEO and HW and its ISR size at ~300 moments of the run,
    with faults, elections and truncations as marks (one re-simulation, then cached)."""
    key = replay_key(rid)
    partition = request.args.get("partition", "")[:200]
    seeker = ext().service.seeker(key)
    hit = peek_series(seeker, partition)
    if hit is not None:
        return jsonify(ok=True, **hit)

    def work(job):                      # a re-simulation: on the job pool, never in the request
        job.report(stage="sampling the run")
        with gc_paused():
            series = cached_series(seeker, partition, lambda: partition_series(seeker, partition, stopped=job.stopped))
        if series is None:
            raise AppError("partition", f"{partition[:60]!r} is not a partition of this run", "a key such as orders-0")
        return series
    return job_reply(submit("series", work))


@bp.get("/api/replay/<rid>/metrics")
def api_replay_metrics(rid):
    """Kafka's metrics of the run at ~600 moments (one re-simulation, then cached)."""
    key = replay_key(rid)
    seeker = ext().service.seeker(key)
    hit = peek_metrics(seeker)
    if hit is not None:
        return jsonify(ok=True, **hit)

    def work(job):                      # a re-simulation: on the job pool, never in the request
        job.report(stage="sampling the run")
        with gc_paused():
            return cached_metrics(seeker, lambda: metrics_series(seeker, stopped=job.stopped))
    return job_reply(submit("metrics", work))


@bp.get("/api/replay/<rid>/timeline")
def api_replay_timeline(rid):
    key = replay_key(rid)
    service = ext().service
    run = service.run(key)
    if run["saved"]:
        ticks = store_runs.event_times(ext().engine, key)
        violations = [[v["t_ms"], v["invariant"], v.get("topic"), v.get("partition")]
                      for v in store_runs.run_violations(ext().engine, key)]
    else:
        seeker = service.seeker(key)
        sim = seeker.at_time(seeker.end_ms)
        ticks = [(e["t_ms"], e["type"]) for e in sim.history]
        violations = [[v["t_ms"], v["invariant"], v.get("topic"), v.get("partition")] for v in sim.violations]
    story = [[i, t, ty] for i, (t, ty) in enumerate(ticks) if ty != "high_watermark"]
    return jsonify(ok=True, end_ms=run["end_ms"], events=len(ticks), story=story[-20000:], violations=violations)


@bp.post("/api/replay/<rid>/fork")
def api_replay_fork(rid):
    key = replay_key(rid)
    body = json_body(("t_ms", "keep_timeline", "kafka_version", "config"), ("t_ms",))
    service = ext().service
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
    scenario = checked_scenario(doc, "fork")
    charge("fork")                            # a fork is a live room: it counts like one
    runner, limits, address, forks = current_app.extensions["isrlab"]["runner"], budgets_of(current_app.config), \
        request.remote_addr, ext().forks

    def fork(job):
        # the same moment, by deterministic re-simulation (in a worker process), before the room
        # is visible to anyone; the simulation comes back whole and the room continues it
        job.report(stage="simulating")
        # under the run's engine version: a fork of an old run continues as that engine would
        at = job.offload(simulation_at, scenario, t_ms, limits, "fork", run["replay_engine_version"])
        room = runner.create(scenario=scenario, owner=address, prepare=lambda _fresh: at,
                             engine_version=run["replay_engine_version"], paused=True)
        if isinstance(key, int):
            forks[room.id] = (key, t_ms)
        return {"room": room.id, "url": f"/r/{room.id}", "t_ms": room.now_ms(), "notes": notes}
    return job_reply(submit("fork", fork, scenario), 201)
