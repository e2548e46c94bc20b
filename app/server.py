"""The production server: gunicorn with one worker process of threads, real websockets.

Why this shape (measured; see docs/deploy.md):
* one process, because live rooms live in memory (a second process would be a second world);
  several web processes share rooms only through a room host and Redis (ISRLAB_MESSAGE_QUEUE,
  app/rooms/host.py), each its own ``isrlab serve`` behind a sticky proxy;
* gunicorn's ``gthread`` worker, because Flask-SocketIO runs in ``threading`` mode and
  simple-websocket serves a WebSocket on the thread of its request: each open WebSocket holds
  one of the ``threads`` (``ISRLAB_THREADS``), and gunicorn creates them only as connections come;
* the app is built inside the worker (``load``), so the runner's background task and the replay
  worker processes belong to the process that serves.

SIGTERM (or Ctrl+C) is a graceful stop: gunicorn stops accepting, lets requests in flight finish
for ``graceful_timeout`` seconds, then the worker exits; a run is saved in one transaction, so a
stop never leaves half a run in the store.
"""
import logging
import sys

from gunicorn.app.base import BaseApplication

ACCESS_LOG_FORMAT = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms'


class IsrLabServer(BaseApplication):
    def __init__(self, settings):
        self.settings = settings
        super().__init__()

    def load_config(self):
        host, port = self.settings["HOST"], self.settings["PORT"]
        bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        options = {
            "bind": [bind],
            "workers": 1,                                  # rooms are in this process's memory
            "worker_class": "gthread",
            "threads": self.settings["THREADS"],
            "timeout": 60,                                 # the worker's heartbeat, not a request limit
            "graceful_timeout": self.settings["GRACEFUL_TIMEOUT_S"],
            "keepalive": 5,
            "accesslog": "-" if self.settings["ACCESS_LOG"] else None,
            "access_log_format": ACCESS_LOG_FORMAT,
            "errorlog": "-",
            "loglevel": "warning",
            "proc_name": "isrlab",
            "limit_request_line": 8190,
            "limit_request_fields": 100,
        }
        for key, value in options.items():
            self.cfg.set(key, value)

    def load(self):
        from .factory import create_app
        from .web import warm_up
        app = create_app({**self.settings, "REPLAY_WORKER_PROCESSES": True})   # indexes off the GIL
        warm_up(app)                                    # open the store: upgrades a fresh database
        processes = app.extensions["isrlab"]["jobs"].processes
        if processes is not None:
            processes.warm()                            # jobs' worker processes, ready before the first job
        return app


def serve(settings):
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    host, port = settings["HOST"], settings["PORT"]
    shown = f"[{host}]" if ":" in host else host
    print(f"ISR Lab is running on http://{shown}:{port}/  (Ctrl+C to stop)", flush=True)
    sys.argv = [sys.argv[0]]                 # gunicorn reads its own flags from argv: give it none
    IsrLabServer(settings).run()
    return 0
