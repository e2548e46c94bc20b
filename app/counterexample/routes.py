"""HTTP for "Can this lose data?": POST /api/search starts a search, GET polls it, DELETE cancels it.

Input is untrusted: the scenario is validated by the engine's loader, the property and the
budgets against their allowed values; every error names the field.
"""
import os
import re
import threading
import time

from flask import Blueprint, current_app, jsonify, request

from app.errors import UserError
from app.i18n.job_text import localized_job
from app.runner.limits import check_budget
from engine.tools.faults import normalise_profile
from engine.scenario.document import ScenarioError, load
from engine.tools.search import INVARIANTS, PROPERTIES, validate_property

from .finder import find
from .jobs import Cancelled, SearchJobs
from .service import hunt

bp = Blueprint("counterexample", __name__)
MAX_RUNS = 5000
MAX_BUDGET_S = 900
JOB_ID = re.compile(r"^[A-Za-z0-9_-]{8,20}$")


def _int_field(body, name, default, lo, hi):
    value = body.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ScenarioError(name, f"{value!r} is out of range", f"an integer from {lo} to {hi}")
    return value


def parse_request(body):
    if not isinstance(body, dict):
        raise ScenarioError("body", "is not a JSON object", "a JSON object")
    unknown = set(body) - {"scenario", "property", "runs", "budget_s", "profile"}
    if unknown:
        raise ScenarioError(sorted(unknown)[0], "unknown field", "scenario, property, runs, budget_s, profile")
    if isinstance(body.get("scenario"), dict):        # each searched run is bounded like any run
        check_budget(body["scenario"], current_app.config, "search_run")
    scenario = load(body.get("scenario"))
    prop = validate_property(body.get("property") or {"name": "no_acked_loss"})
    profile = body.get("profile")
    if profile is not None:
        try:
            profile = normalise_profile({k: tuple(v) for k, v in dict(profile).items()})
        except (TypeError, ValueError) as exc:
            raise ScenarioError("profile", str(exc), "{kind: [rate per minute, min ms, max ms]}") from None
    return {"scenario": scenario, "property": prop, "profile": profile,
            "runs": _int_field(body, "runs", 200, 1, MAX_RUNS),
            "budget_s": _int_field(body, "budget_s", 120, 1, MAX_BUDGET_S)}


def _jobs():
    ext = current_app.extensions
    if "isrlab_search" not in ext:
        app = current_app._get_current_object()
        ext["isrlab_search"] = SearchJobs(lambda params, progress: _run(app, params, progress))
    return ext["isrlab_search"]


def _offload(app, cancelled):
    """Where a search computes: a job worker process (off the server's GIL; killed on cancel or
    past the job time limit), or None (in this thread) when the server runs jobs in threads."""
    processes = app.extensions["isrlab"]["jobs"].processes
    if processes is None:
        return None
    def offload(fn, *args):
        from app.workers import WorkerStopped
        # each part gets the job time limit; the search itself its own budget_s on top
        limit = time.monotonic() + app.config["JOB_TIME_LIMIT_S"] + ((args[4] or 0) if fn is find else 0)
        try:
            return processes.call(fn, *args, stopped=lambda: cancelled() or time.monotonic() > limit)
        except WorkerStopped as exc:
            if cancelled():
                raise Cancelled() from None
            if exc.why == "memory":
                raise UserError("search", f"stopped: its worker process's memory reached {exc.rss / 2 ** 20:,.0f} "
                                f"MB, over the job memory limit of {processes.memory_limit_bytes / 2 ** 20:,.0f} MB "
                                "(ISRLAB_JOB_WORKER_MEMORY_MB)", "a smaller scenario", status=408) from None
            raise UserError("search", f"stopped after the time limit of {app.config['JOB_TIME_LIMIT_S']:g} s",
                            "fewer runs or a smaller scenario", status=408) from None
    return offload


def _background_session(master):
    """The Spark session, its JVM (and the Python workers it forks) started at the jobs' lower CPU
    priority: searches on Spark take both cores, and the live rooms must not wait for them. On
    Linux a nice value belongs to a thread and a child inherits its creator's, so a short-lived
    thread lowers its own priority and starts the JVM; the search thread keeps its own (it holds
    the GIL now and then: a thread descheduled while holding it would stall every room)."""
    from app.spark.session import build_session
    from app.workers import NICE
    out = {}

    def start():
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
        except (OSError, AttributeError):
            pass
        try:
            out["spark"] = build_session(master=master)
        except BaseException as exc:  # noqa: BLE001 - raised again in the search's thread
            out["error"] = exc
    thread = threading.Thread(target=start, daemon=True, name="isrlab-spark-start")
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["spark"]


def _run(app, params, progress):
    cancelled = getattr(progress, "cancelled", lambda: False)
    spark = None
    if app.config.get("SEARCH_USE_SPARK", True):
        progress({"stage": "starting Spark"})
        spark = _background_session(app.config.get("SPARK_MASTER"))
    progress({"stage": "searching"})
    store = app.extensions["isrlab_runs"].engine if "isrlab_runs" in app.extensions else None
    return hunt(params["scenario"], params["property"], params["profile"], runs=params["runs"],
                budget_s=params["budget_s"], spark=spark, store=store,
                progress=lambda update: progress(dict(update, stage=update.get("stage", "searching"))),
                offload=_offload(app, cancelled))


@bp.get("/api/search/properties")
def properties():
    return jsonify({"properties": PROPERTIES, "invariants": list(INVARIANTS),
                    "max_runs": MAX_RUNS, "max_budget_s": MAX_BUDGET_S})


@bp.post("/api/search")
def start_search():
    params = parse_request(request.get_json(silent=True))     # a ScenarioError is replied as JSON 400
    current_app.extensions["isrlab"]["quotas"].charge(request.remote_addr, "search")
    return jsonify(localized_job(_jobs().start(params))), 202


def _checked(job_id, view):
    if not JOB_ID.match(job_id):
        raise UserError("job", "malformed job id", "an id returned by POST /api/search")
    found = view(job_id)
    if found is None:
        raise UserError("job", "no such search (finished searches are kept for an hour)", status=404)
    return jsonify(localized_job(found))


@bp.get("/api/search/<job_id>")
def search_status(job_id):
    return _checked(job_id, _jobs().view)


@bp.delete("/api/search/<job_id>")
def cancel_search(job_id):
    return _checked(job_id, _jobs().cancel)
