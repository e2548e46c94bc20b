"""``python -m app [serve] [--host H] [--port P]``: serve ISR Lab (never in debug mode).
``python -m app sweep|analyze|resimulate ...``: the Spark jobs (``app.analytics.cli``).
``python -m app search BASE.json``: find and shrink a counterexample (``app.counterexample.cli``)."""
import argparse
import logging
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("sweep", "analyze", "resimulate"):   # the Spark jobs: app.analytics.cli
        from .analytics.cli import main as spark_main
        return spark_main(argv)
    if argv and argv[0] == "search":  # counterexample search: app.counterexample.cli
        from .counterexample.cli import main as search_main
        return search_main(argv[1:])
    if argv and argv[0] == "run":     # a headless run, optionally saved: app.replay.headless
        from .replay.headless import main as run_main
        return run_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m app", description="ISR Lab: the live web simulator")
    parser.add_argument("command", nargs="?", default="serve", choices=("serve",))
    parser.add_argument("--host", help="address to listen on (default ISRLAB_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (default ISRLAB_PORT or 5000)")
    args = parser.parse_args(argv)
    from .factory import create_app, socketio_of          # Flask only for the web server
    app = create_app({"REPLAY_WORKER_PROCESSES": True})   # seek indexes built off the server's GIL
    from .web import warm_up
    warm_up(app)                                          # open the store: upgrades a fresh database
    host = args.host or app.config["HOST"]
    port = app.config["PORT"] if args.port is None else args.port
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)   # no "development server" banner noise
    shown = f"[{host}]" if ":" in host else host
    print(f"ISR Lab is running on http://{shown}:{port}/  (Ctrl+C to stop)", flush=True)
    socketio_of(app).run(app, host=host, port=port, debug=False, use_reloader=False,
                         log_output=False, allow_unsafe_werkzeug=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
