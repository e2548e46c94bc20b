"""Saved runs (``/runs`` and ``/api/runs``): list, save, read, rename, delete, export, import.

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
"""
import json
import re
import time

from flask import Response, current_app, jsonify, render_template, request

from ..jobwork import budgets_of, saved_run_rows
from ..replay.save import save_captured, save_prepared
from ..runner import AppError
from ..store import runs as store_runs
from .blueprint import bp
from .common import (charge, checked_run_id, checked_scenario, ext, get_run_or_404, int_arg, job_reply, json_body,
                     no_such_run, run_links, submit)

EXPORT_FORMAT = "isrlab-run"


@bp.get("/runs")
def runs_page():
    return render_template("runs.html")


@bp.get("/api/runs")
def api_list_runs():
    args = request.args
    for key in args:
        if key not in ("q", "era", "outcome", "scenario", "source", "limit", "offset", "order", "facets"):
            raise AppError(key[:40], "unknown parameter", "q, era, outcome, scenario, source, limit, offset, order, facets")
    started = time.perf_counter()
    page = store_runs.list_runs(ext().engine, q=args.get("q"), era=args.get("era") or None,
                                outcome=args.get("outcome") or None, scenario=args.get("scenario") or None,
                                source=args.get("source") or None, limit=int_arg("limit", 1, 500, 50),
                                offset=int_arg("offset", 0, 10 ** 9, 0), order=args.get("order", "newest"))
    for run in page["runs"]:
        run["links"] = run_links(run)
    if args.get("facets") == "1":
        page["facets"] = store_runs.facets(ext().engine)
    page["query_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return jsonify(ok=True, **page)


@bp.post("/api/runs")
def api_save_run():
    body = json_body(("room", "scenario", "title"))
    store = ext()
    title = body.get("title")
    if title is not None:
        store_runs.check_title(title)
    if ("room" in body) == ("scenario" in body):
        raise AppError("body", "give either a live room or a scenario", '{"room": id} or {"scenario": {...}}')
    charge("save")
    if "room" in body:
        if not isinstance(body["room"], str):
            raise AppError("room", "is not a room id", "the id of a live room")
        room = current_app.extensions["isrlab"]["runner"].require(body["room"])
        captured = room.capture()                  # list copies under the room's lock: milliseconds
        parent = store.forks.get(room.id)
        saved = save_captured(store.engine, captured, title=title, source="fork" if parent else "live",
                              parent_run_id=parent[0] if parent else None, fork_t_ms=parent[1] if parent else None)
        return jsonify(ok=True, **_saved_reply(store, saved)), 201
    scenario = checked_scenario(body["scenario"], "save")
    limits = budgets_of(current_app.config)

    def simulate_and_save(job):                    # on a job worker: the request answers in < 1 s
        job.report(stage="simulating")             # in a worker process, off the server's GIL
        prepared = job.offload(saved_run_rows, scenario, scenario["duration_ms"], limits, "save", title, "link")
        job.report(stage="saving")
        return _saved_reply(store, save_prepared(store.engine, prepared))
    return job_reply(submit("save", simulate_and_save, scenario), 201)


def _saved_reply(store, saved):
    store.service.prepare(saved["id"])             # the seek index, in the background
    run = store_runs.get_run(store.engine, saved["id"])
    return {"id": run["id"], "slug": run["slug"], "title": run["title"], "save_ms": saved["save_ms"],
            "dropped_ops": saved.get("dropped_ops", 0), "links": run_links(run)}


@bp.get("/api/runs/<int:run_id>")
def api_get_run(run_id):
    run = get_run_or_404(run_id)
    run["links"] = run_links(run)
    return jsonify(ok=True, run=run)


@bp.patch("/api/runs/<int:run_id>")
def api_rename_run(run_id):
    body = json_body(("title",), ("title",))
    title = store_runs.rename_run(ext().engine, checked_run_id(run_id), body["title"])
    if title is None:
        raise no_such_run(run_id)
    return jsonify(ok=True, id=run_id, title=title)


@bp.delete("/api/runs/<int:run_id>")
def api_delete_run(run_id):
    if not store_runs.delete_run(ext().engine, checked_run_id(run_id)):
        raise no_such_run(run_id)
    ext().service.forget(run_id)
    return jsonify(ok=True, deleted=run_id)


@bp.get("/api/runs/<int:run_id>/events")
def api_run_events(run_id):
    get_run_or_404(run_id)
    start = int_arg("start", 0, 10 ** 9, 0)
    limit = int_arg("limit", 1, 5000, 500)
    events = store_runs.run_events(ext().engine, run_id, start=start, limit=limit)
    return jsonify(ok=True, start=start, events=events)


@bp.get("/api/runs/<int:run_id>/export")
def api_export_run(run_id):
    run = get_run_or_404(run_id)
    engine = ext().engine
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
def api_import_run():
    # the body may be up to guards.RUN_FILE_MAX_BYTES (64 MB): the request guard raises the bound
    body = json_body(("format", "version", "title", "source", "created_ms", "engine_version", "end_ms", "finished",
                  "summary", "scenario", "events", "violations"), ("format", "version", "scenario"))
    if body["format"] != EXPORT_FORMAT or body["version"] != 1:
        raise AppError("format", "is not an ISR Lab run file", f'"format": "{EXPORT_FORMAT}", "version": 1')
    scenario = checked_scenario(body["scenario"], "import")
    end_ms = body.get("end_ms", scenario["duration_ms"])
    if isinstance(end_ms, bool) or not isinstance(end_ms, int) or not 0 <= end_ms <= scenario["duration_ms"]:
        raise AppError("end_ms", f"{str(end_ms)[:20]} is not a time of this run", f"0 to {scenario['duration_ms']}")
    title = body.get("title") or scenario["name"]
    store_runs.check_title(title)
    charge("import")
    store, limits, events = ext(), budgets_of(current_app.config), body.get("events")
    made_by = body.get("engine_version")
    if made_by is not None and (not isinstance(made_by, str) or len(made_by) > 32):
        raise AppError("engine_version", "is not an engine version", 'e.g. "1.1.0"')

    def resimulate_and_save(job):                  # the file is re-simulated (in a worker process), not trusted
        job.report(stage="simulating")
        # as the engine that made it: a run exported by engine 1.1.0 re-simulates as 1.1.0 did
        prepared = job.offload(saved_run_rows, scenario, end_ms, limits, "import", title, "import", events,
                               made_by)
        job.report(stage="saving")
        return {**_saved_reply(store, save_prepared(store.engine, prepared)),
                "history_matches": prepared["history_matches"]}
    return job_reply(submit("import", resimulate_and_save, scenario), 201)
