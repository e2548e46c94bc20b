"""The Flask application factory: ``create_app(config=None)`` (re-exported by ``app``).

Every app gets its own ``SocketIO`` object and its own runner (stack notes: a module-level
SocketIO rebound by each ``create_app`` makes Socket.IO test clients and a live test server
interfere). Both live in ``app.extensions``: ``app.extensions["socketio"]`` and
``app.extensions["isrlab"]["runner"]``.
"""
import os

from flask import Flask
from flask_socketio import SocketIO

from .config import load_settings
from .jobs import JobPool
from .workers import WorkerProcesses

#: what jobs compute in worker processes (app.workers imports them in a warmed worker up front)
JOB_MODULES = ("app.jobwork", "app.counterexample.service", "app.counterexample.finder")
from .quotas import Quotas
from .counterexample.routes import bp as search_bp
from .i18n import init_app as init_i18n
from .reports import init_app as init_reports
from .runner import Runner
from .web import init_app as init_web
from .web.events import register_events
from .web.ratelimit import RateLimiter
from .web.guards import install_guards, socket_origins
from .web.inputs import CheckedJSONProvider, CheckedRequest, SocketJSON
from .web.transport import SocketIOTransport

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def create_app(config=None):
    settings = load_settings()
    if config:
        settings.update(config)
    app = Flask(__name__, template_folder=os.path.join(ROOT, "templates"),
                static_folder=os.path.join(ROOT, "static"), static_url_path="/static")
    app.config.update(settings)
    app.debug = False
    options = {"async_mode": "threading", "max_http_buffer_size": settings["MAX_MESSAGE_BYTES"],
               "logger": False, "engineio_logger": False}
    options["cors_allowed_origins"] = socket_origins(settings)
    SocketJSON.max_depth = settings["MAX_JSON_DEPTH"]
    options["json"] = SocketJSON
    if settings.get("MESSAGE_QUEUE"):
        # frames the room host emits reach this process's sockets through Redis (app/rooms/host.py);
        # the manager Flask-SocketIO would build from message_queue= has no Redis time limits
        from .rooms.socketio_queue import redis_manager
        options["client_manager"] = redis_manager(settings["MESSAGE_QUEUE"])
    app.json = CheckedJSONProvider(app)
    app.request_class = CheckedRequest
    socketio = SocketIO(app, **options)
    runner = make_runner(settings, SocketIOTransport(socketio), socketio)
    app.extensions["isrlab"] = {
        "runner": runner,
        "limiter": RateLimiter(settings["COMMANDS_PER_S"], settings["COMMAND_BURST"]),
        "jobs": JobPool(settings["JOB_WORKERS"], settings["JOB_QUEUE"], settings["JOB_TIME_LIMIT_S"],
                        settings["JOB_MEMORY_LIMIT_BYTES"], yield_ratio=settings["JOB_YIELD"],
                        processes=WorkerProcesses(settings["JOB_PROCESSES"], settings["JOB_WORKER_MEMORY_BYTES"], JOB_MODULES)
                        if settings["JOB_PROCESSES"] > 0 else None),
        "quotas": make_quotas(settings),
    }
    init_i18n(app)                      # zh-CN and en: catalogs, the language of a request, the CJK font
    init_web(app)                       # pages and HTTP resources (app/web/), the store and replays
    app.register_blueprint(search_bp)   # "Can this lose data?" (app/counterexample/routes.py)
    init_reports(app)                   # sweeps and their analytics report (app/reports/)
    register_events(socketio)

    install_guards(app)
    return app


def make_runner(settings, transport, socketio):
    """The room host through Redis when ISRLAB_MESSAGE_QUEUE is set (app/rooms/redis_runner.py);
    else room workers (app/rooms/) unless ISRLAB_ROOM_WORKERS=0 or the runner is driven by hand
    (RUNNER_AUTOSTART off: unit tests tick an in-process runner with a fake clock)."""
    if settings.get("MESSAGE_QUEUE"):
        from .rooms.redis_runner import RedisRunner
        return RedisRunner(settings, transport)
    if settings.get("ROOM_WORKERS", 0) > 0 and settings["RUNNER_AUTOSTART"]:
        from .rooms.remote import RemoteRunner
        return RemoteRunner(settings, transport)
    return Runner(settings, transport, start_task=socketio.start_background_task)


def make_quotas(settings):
    """Costly actions counted in this process, or in Redis for all web processes sharing it."""
    limits = (settings["QUOTA_PER_CLIENT"], settings["QUOTA_WINDOW_S"], settings["QUOTA_GLOBAL"])
    if settings.get("MESSAGE_QUEUE"):
        from .shared_quotas import SharedQuotas
        return SharedQuotas(settings["MESSAGE_QUEUE"], *limits)
    return Quotas(*limits)


def runner_of(app):
    return app.extensions["isrlab"]["runner"]


def socketio_of(app):
    return app.extensions["socketio"]
