"""The web layer: HTTP resources on one blueprint, Socket.IO events beside them.

| module     | serves |
|------------|--------|
| rooms      | the live page, rooms as JSON and as scenario files |
| meta       | health, the scenario library, era tables, HTTP error replies |
| runs       | saved runs: list, save, rename, delete, export, import |
| replays    | replay pages, frames, inspect, timeline, fork |
| links      | ``/l/<code>``, ``/s/<slug>`` and ``/api/links`` |
| compare    | ``/compare`` and ``/api/compare`` |
| jobs       | ``/api/jobs/<id>``: progress, result and cancel of background work |
| guides     | ``/api/walkthroughs``: the library stories told step by step, in the reader's language |
| cluster_import | ``/api/import/describe``: pasted Kafka tool output -> a scenario and notes |
| events     | Socket.IO: join, command, control (``register_events``) |

Handlers are thin: validate, call one function of the runner / store / replay service, reply.
"""
from . import cluster_import, compare, guides, jobs, links, meta, replays, rooms, runs  # noqa: F401  (attach their routes to bp)
from flask import jsonify

from engine.scenario.document import ScenarioError

from ..errors import error_reply, status_of
from .blueprint import bp
from .extension import RunsExtension


def user_error(exc):
    """The one place a refused request becomes a reply: every ``ScenarioError`` (the engine's, and
    the application's ``UserError``s) as ``{"ok": false, "error": {field, message, allowed}}``."""
    response = jsonify(error_reply(exc))
    if getattr(exc, "retry_after", None):
        response.headers["Retry-After"] = str(exc.retry_after)
    return response, status_of(exc)


def init_app(app):
    """Register the blueprint, the error reply and the store/replay extension (``create_app``)."""
    app.extensions["isrlab_runs"] = RunsExtension(app.config)
    app.register_blueprint(bp)
    app.register_error_handler(ScenarioError, user_error)
    return app


def warm_up(app):
    """Open the store now (upgrading a fresh database) instead of on first use."""
    return app.extensions["isrlab_runs"].engine
