"""What the HTTP resources share: the JSON error reply, body and argument checks, run lookups.

Every resource module (``runs``, ``replays``, ``links``, ``compare``, ``rooms``) validates with
these, calls one function of the store / replay service / runner, and replies. User errors are
replied as ``{"ok": false, "error": {"field", "message", "allowed"}}`` by the one error handler
(``app.web.init_app``): a route raises, it never builds an error reply.
"""
import re

from flask import Response, abort, current_app, render_template, request
from flask_babel import gettext

from engine.scenario.document import load

from ..replay import links as linkcodec
from ..errors import USER_ERRORS  # noqa: F401  (re-exported for the page routes)
from ..i18n.errors import localized
from ..i18n.job_text import localized_job
from ..replay.service import ReplayError
from ..runner import AppError
from ..runner.limits import check_scenario
from ..store import runs as store_runs

RID = re.compile(r"^(?:[1-9][0-9]{0,17}|sc:[0-9a-f]{24})$")
TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
SLUG = re.compile(r"^[A-Za-z0-9_-]{1,16}$")


def ext():
    return current_app.extensions["isrlab_runs"]


def json_body(allowed, required=()):
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


def int_arg(name, lo=0, hi=10 ** 12, default=None):
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    if not (raw.isdigit() and len(raw) <= 13) or not lo <= int(raw) <= hi:
        raise AppError(name, f"{raw[:20]!r} is not a whole number from {lo} to {hi}", f"{lo} to {hi}")
    return int(raw)


def replay_key(raw):
    if not isinstance(raw, str) or not RID.match(raw):
        raise ReplayError("run", f"{str(raw)[:40]!r} is not a run", "a saved run's id, or a link's replay")
    return raw if raw.startswith("sc:") else int(raw)


def checked_scenario(doc, surface):
    """A scenario from a user, validated like every input: the server's limits and the work
    budget of ``surface`` (save, import, link, fork), then the engine."""
    check_scenario(doc, current_app.config, surface)
    return load(doc)


def run_links(run):
    return {"page": f"/runs/{run['id']}", "short": linkcodec.run_link(run["slug"])}


def describe_error(exc):
    d = localized(exc.to_dict())           # in the reader's language (app/i18n/errors.py)
    text = f"{d['field']}: {d['message']}" if d.get("field") else d["message"]
    return text + (gettext(" (allowed: %(allowed)s)", allowed=d["allowed"]) if d.get("allowed") else "")


def focus_or_error(scenario, end_ms):
    try:
        return linkcodec.parse_focus(request.args, scenario, end_ms)
    except linkcodec.LinkError as exc:
        abort(Response(render_template("runs_error.html", title="This link cannot be opened",
                                       message=describe_error(exc)), status=400))


def error_page(title, message, status):
    return render_template("runs_error.html", title=title, message=message), status


#: Run ids are JSON-safe integers (JavaScript's Number.MAX_SAFE_INTEGER). Routes take any run of
#: digits and refuse a larger id here, so every method answers 404 "no saved run" for it (a
#: bounded ``int(max=...)`` converter made the URL match no rule, and PATCH / DELETE answered 405).
MAX_RUN_ID = 9007199254740991


def no_such_run(run_id):
    return ReplayError("run", f"no saved run {run_id}", f"the id of a saved run (1 to {MAX_RUN_ID})", 404)


def checked_run_id(run_id):
    """``run_id`` if it can name a saved run; 404 otherwise."""
    if not 0 < run_id <= MAX_RUN_ID:
        raise no_such_run(run_id)
    return run_id


def get_run_or_404(run_id):
    run = store_runs.get_run(ext().engine, checked_run_id(run_id))
    if run is None:
        raise no_such_run(run_id)
    return run


# -- quotas and background jobs ------------------------------------------------------------------------
def charge(kind):
    """Count a costly action of this client against its quota (429 past it)."""
    current_app.extensions["isrlab"]["quotas"].charge(request.remote_addr, kind)


def submit(kind, work, scenario=None):
    """Queue ``work(job)`` on the job pool (429 when full), in the lane its estimated work picks."""
    from engine.core.budget import estimate
    return current_app.extensions["isrlab"]["jobs"].submit(
        kind, work, owner=request.remote_addr, estimated_events=estimate(scenario) if scenario else 0)


def job_reply(job, done_status=200):
    """The job's result when it finishes within ``JOB_ANSWER_WITHIN_S``, else 202 and where to look."""
    from flask import jsonify
    if job.wait(current_app.config["JOB_ANSWER_WITHIN_S"]):
        if job.state == "done":
            return jsonify(ok=True, **job.result), done_status
        return jsonify(ok=False, error=localized(job.error), job=localized_job(job.view())), job.status
    return jsonify(ok=True, job=localized_job(job.view())), 202
