"""HTTP of the analytics report. Thin handlers: validate, call one function, reply.

| method | path                                              | what |
|--------|---------------------------------------------------|------|
| GET    | /analytics                                         | the sweeps, a form to start one |
| GET    | /analytics/<sweep_id>                              | one sweep's report (query: metric, metric2, x, y, cell, f.<axis>) |
| GET    | /analytics/runs/<run_key>/replay                   | open a sweep run in the replay (a scenario link) |
| GET    | /analytics/api/sweeps                              | sweeps with their progress, the running job |
| POST   | /analytics/api/sweeps                              | start a sweep: body = a sweep document (202) |
| GET    | /analytics/api/sweeps/<sweep_id>                   | the report's data (cells, numbers, distributions) |
| GET    | /analytics/api/sweeps/<sweep_id>/progress          | runs done / total, the job's rate and time left |
| POST   | /analytics/api/sweeps/<sweep_id>/analyze           | run the analysis job again (202) |
| GET    | /analytics/api/sweeps/<sweep_id>/cells/<cell>/runs | a cell's runs, worst first, with replay links |
| GET    | /analytics/api/questions                           | questions asked of every stored run (re-simulation) |
"""
from flask import Blueprint, abort, current_app, jsonify, redirect, render_template, request

from app.errors import UserError
from app.i18n.job_text import localized_job
from app.store import db as store_db
from app.sweeps import repo, spec

bp = Blueprint("analytics", __name__)
WEB_LIMITS = {"max_runs": 20_000, "max_cells": 1024, "max_duration_ms": 600_000}


class AnalyticsExtension:
    def __init__(self, app):
        self.app = app
        self._jobs = None

    @property
    def engine(self):
        runs = self.app.extensions.get("isrlab_runs")
        if runs is not None:
            return runs.engine
        if not hasattr(self, "_engine"):
            self._engine = store_db.open_store(store_db.configured_url(self.app.config))
        return self._engine

    @property
    def jobs(self):
        if self._jobs is None:
            from .jobs import Jobs
            self._jobs = Jobs(self.app.config.get("ANALYTICS_DB_URL") or store_db.configured_url(self.app.config))
        return self._jobs


def init_app(app):
    app.extensions["isrlab_analytics"] = AnalyticsExtension(app)
    app.register_blueprint(bp)
    return app


def _ext():
    return current_app.extensions["isrlab_analytics"]


def _sweep_id_or_404(sweep_id):
    if not spec.SWEEP_ID.match(sweep_id):
        abort(404)
    return sweep_id


def _limits():
    return {**WEB_LIMITS, **(current_app.config.get("ANALYTICS_LIMITS") or {})}


# -- pages -------------------------------------------------------------------------------------------------
@bp.get("/analytics")
def analytics_index():
    return render_template("analytics.html", sweep_id="")


@bp.get("/analytics/<sweep_id>")
def analytics_report(sweep_id):
    _sweep_id_or_404(sweep_id)
    if repo.get_sweep(_ext().engine, sweep_id) is None:
        abort(404)
    return render_template("analytics.html", sweep_id=sweep_id)


@bp.get("/analytics/runs/<run_key>/replay")
def replay_run(run_key):
    run = repo.get_run(_ext().engine, run_key)
    if run is None:
        abort(404)
    from app.replay.links import LinkError, encode_scenario
    try:
        code = encode_scenario(_titled(run), run["engine_version"])
    except LinkError as exc:
        raise UserError(exc.field, exc.message, exc.allowed, 413)
    return redirect(f"/l/{code}", code=302)


def _titled(run):
    """The run's scenario named after what it is (its sweep, cell and seed) instead of the sweep
    base's "untitled", with a description of the run: the replay's title and story say it."""
    sweep = repo.get_sweep(_ext().engine, run["sweep_id"]) or {"name": run["sweep_id"]}
    cell = next((c for c in repo.cells_of(_ext().engine, run["sweep_id"]) if c["cell_id"] == run["cell_id"]), None)
    label = cell["label"] if cell else f"#{run['cell_id']}"
    name = f"Sweep {run['sweep_id']}, cell {label}, seed {run['seed']}"
    faults = f"{run['faults']} fault(s) drawn" if run["faults"] else "no fault drawn (this run tested nothing)"
    story = (f"Run {run['run_no']} of the sweep “{sweep['name']}” ({run['sweep_id']}): cell {label}, seed "
             f"{run['seed']}, fault profile {cell['profile'] if cell else '?'}; {faults} between "
             f"{run['fault_start_ms'] / 1000:g} s and {run['fault_end_ms'] / 1000:g} s, then the cluster heals. "
             f"Outcome: {run['lost']} acknowledged record(s) lost, {run['failed']} failed, of {run['records_sent']} "
             f"sent; {run['violations']} invariant violation(s); "
             + ("converged after healing." if run["converged"] else "not converged after healing."))
    return {**run["scenario"], "name": name[:200], "description": story}


# -- JSON --------------------------------------------------------------------------------------------------
@bp.get("/analytics/api/sweeps")
def api_sweeps():
    running = _ext().jobs.running()
    engine = _ext().engine
    sweeps = repo.list_sweeps(engine)
    analysed = _analysed_ids(engine)
    for s in sweeps:                      # the page folds this into the sweep's one status
        s["analysed"] = s["id"] in analysed
    return jsonify(ok=True, sweeps=sweeps, job=localized_job(running.to_dict()) if running else None,
                   limits=_limits(), axes=_axis_kinds(), profiles=sorted(spec.BUILTIN_PROFILES))


def _analysed_ids(engine):
    from sqlalchemy import select

    from app.store.db import reading
    from app.sweeps.tables import analytics_cells
    with reading(engine) as conn:
        return set(conn.execute(select(analytics_cells.c.sweep_id).distinct()).scalars())


def _axis_kinds():
    """The grid axes the sweep form offers, each with the kind of its values ("int", "bool",
    "text" or the list of choices), so the form can type what is typed into it."""
    from engine import eras
    out = []
    for axis in spec.allowed_axes():
        if axis == "kafka_version":
            kind = list(eras.VERSIONS)
        elif axis == spec.FAULTS_AXIS:
            kind = "text"
        elif axis in spec.SCENARIO_AXES:
            kind = "int"
        else:
            raw = eras.CONFIG[axis][0]
            kind = ("int" if raw in ("int", "int?") else "bool" if raw == "bool" else ["0", "1", "all"]
                    if raw == "acks" else "text" if raw == "str" else raw.split(":", 1)[1].split("|"))
        out.append([axis, kind])
    return out


@bp.post("/analytics/api/sweeps")
def api_start_sweep():
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise UserError("body", "expected a sweep document (JSON object)", "see the example on /analytics")
    try:
        sweep = spec.validate(body, _limits())
    except spec.SweepError as exc:
        raise UserError(exc.field, exc.message, exc.allowed)
    existing = repo.get_sweep(_ext().engine, sweep["id"])
    if existing is not None and existing["doc_sha256"] != _digest(sweep):
        raise UserError("id", f"sweep {sweep['id']!r} already exists with a different document", "another id")
    from .jobs import Busy
    try:
        job = _ext().jobs.start_sweep(body, sweep["id"])
    except Busy as exc:
        raise UserError("job", str(exc), "wait for it to finish", 409)
    return jsonify(ok=True, sweep_id=sweep["id"], job=localized_job(job.to_dict()), report=f"/analytics/{sweep['id']}",
                   progress=f"/analytics/api/sweeps/{sweep['id']}/progress"), 202


def _digest(sweep):
    import hashlib
    return hashlib.sha256(spec.canonical(sweep).encode()).hexdigest()


@bp.get("/analytics/api/sweeps/<sweep_id>")
def api_report(sweep_id):
    _sweep_id_or_404(sweep_id)
    data = repo.report(_ext().engine, sweep_id)
    if data is None:
        raise UserError("sweep_id", f"no sweep {sweep_id!r}", None, 404)
    job = _ext().jobs.latest(sweep_id)
    return jsonify(ok=True, job=localized_job(job.to_dict()) if job else None, **data)


@bp.get("/analytics/api/sweeps/<sweep_id>/progress")
def api_progress(sweep_id):
    _sweep_id_or_404(sweep_id)
    sweep = repo.get_sweep(_ext().engine, sweep_id)
    job = _ext().jobs.latest(sweep_id)
    if sweep is None and job is None:
        raise UserError("sweep_id", f"no sweep {sweep_id!r}", None, 404)
    stored = repo.count_runs(_ext().engine, sweep_id) if sweep else 0
    return jsonify(ok=True, sweep_id=sweep_id, status=sweep["status"] if sweep else "starting",
                   runs_done=stored, runs_total=sweep["runs_total"] if sweep else None,
                   job=localized_job(job.to_dict()) if job else None)


@bp.post("/analytics/api/sweeps/<sweep_id>/analyze")
def api_analyze(sweep_id):
    _sweep_id_or_404(sweep_id)
    if repo.get_sweep(_ext().engine, sweep_id) is None:
        raise UserError("sweep_id", f"no sweep {sweep_id!r}", None, 404)
    from .jobs import Busy
    try:
        job = _ext().jobs.start_analysis(sweep_id)
    except Busy as exc:
        raise UserError("job", str(exc), "wait for it to finish", 409)
    return jsonify(ok=True, job=localized_job(job.to_dict())), 202


@bp.get("/analytics/api/sweeps/<sweep_id>/cells/<int(max=2147483647):cell_id>/runs")
def api_cell_runs(sweep_id, cell_id):
    _sweep_id_or_404(sweep_id)
    limit = request.args.get("limit", "20")
    if not limit.isdigit() or not 1 <= int(limit) <= 500:
        raise UserError("limit", f"{limit[:20]!r} is out of range", "an integer from 1 to 500")
    if cell_id > 10 ** 6:
        raise UserError("cell_id", "is out of range", "a cell of the sweep")
    runs = repo.cell_runs(_ext().engine, sweep_id, cell_id, int(limit))
    for r in runs:
        r["replay"] = f"/analytics/runs/{r['run_key']}/replay"
    return jsonify(ok=True, runs=runs)


@bp.get("/analytics/api/questions")
def api_questions():
    return jsonify(ok=True, questions=repo.questions(_ext().engine))
