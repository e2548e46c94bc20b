#!/usr/bin/env python3
"""Refresh the README screenshot (docs/screenshot.png) from the page as it is now.

Serves the app in a thread (a throwaway instance folder), opens the live page in Debian's headless
Chromium (the browser the tests use, never a downloaded one), runs a library scenario until it
pauses on its punchline (the first invariant violation, or a moment), jumps to the violation's
cause (the page's own "Jump to cause": the lost record, its partition and the event that lost it
highlighted) and takes the picture. Look at the result before committing it.

    .venv/bin/python scripts/screenshot.py                        # KIP-101 0.10 at 1920x1080
    .venv/bin/python scripts/screenshot.py --size 1440x900 --out /tmp/shot.png
    .venv/bin/python scripts/screenshot.py --scenario isr-shrink-slow-follower --at 30000
    .venv/bin/python scripts/screenshot.py --lang zh-CN --size 1024x768 --out /tmp/zh.png
"""
import argparse
import logging
import pathlib
import sys
import tempfile
import threading

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def serve(folder):
    from werkzeug.serving import make_server

    from app import create_app
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app = create_app({"SECRET_KEY": "screenshot", "DATABASE_URL": f"sqlite:///{folder}/runs.db",
                      "INSTANCE_PATH": str(folder)})
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return app, srv, f"http://127.0.0.1:{srv.server_port}"


def shoot(base, scenario, at_ms, size, out, speed, lang=None):
    from playwright.sync_api import sync_playwright
    width, height = size
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.set_default_timeout(60000)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base + "/" + (f"?lang={lang}" if lang else ""))
        page.wait_for_function("() => window.isrlab && window.isrlab.store.clock && window.isrlab.store.meta")
        run = page.evaluate("() => window.isrlab.store.run")
        page.evaluate("(id) => window.isrlab.load({library: id}, true)", scenario)
        page.wait_for_function("([id, run]) => { const s = window.isrlab.store; return s.clock && s.clock.source"
                               " && s.clock.source.name === id && s.meta && s.run !== run; }", arg=[scenario, run])
        page.evaluate("(v) => window.isrlab.setSpeed(v)", speed)
        # the punchline: the run pauses itself on its first violation; else stop at the moment asked
        page.wait_for_function("(at) => { const c = window.isrlab.store.clock; return c && (c.paused_reason === 'violation'"
                               " || c.finished || (at !== null && c.t_ms >= at)); }", arg=at_ms, timeout=120000)
        if page.evaluate("() => window.isrlab.store.clock.playing"):
            page.evaluate("() => window.isrlab.control('pause')")
        if page.evaluate("() => window.isrlab.store.violations.length > 0"):
            page.evaluate("() => window.isrlab.jumpToViolation()")     # the lost record and its cause, highlighted
        page.mouse.move(0, height - 1)           # no hover tooltip in the picture
        page.wait_for_timeout(1200)              # the last frames, the chart and the toasts settle
        page.evaluate("() => document.querySelectorAll('.toast').forEach(t => t.remove())")
        page.wait_for_timeout(200)
        page.screenshot(path=str(out))
        state = page.evaluate("() => ({t: window.isrlab.store.clock.t_ms, why: window.isrlab.store.clock.paused_reason})")
        browser.close()
    if errors:
        raise SystemExit(f"JavaScript errors on the page: {errors}")
    return state


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="kip101-scenario-1-v0.10", help="a library scenario id")
    parser.add_argument("--at", type=int, default=None, help="stop at this simulated ms if no violation comes first")
    parser.add_argument("--size", default="1920x1080", help="viewport WIDTHxHEIGHT (1920x1080 or 1440x900)")
    parser.add_argument("--speed", type=float, default=5.0, help="simulation speed while waiting")
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshot.png"))
    parser.add_argument("--lang", default=None, help="the page's language: en or zh-CN (default: the browser's)")
    args = parser.parse_args(argv)
    size = tuple(int(v) for v in args.size.lower().split("x"))
    with tempfile.TemporaryDirectory(prefix="isrlab-shot-") as folder:
        app, srv, base = serve(folder)
        try:
            state = shoot(base, args.scenario, args.at, size, pathlib.Path(args.out), args.speed, args.lang)
        finally:
            from app import runner_of
            srv.shutdown()
            runner_of(app).stop()
            app.extensions["isrlab_runs"].close()
    print(f"{args.out}: {args.scenario} at {state['t'] / 1000:.3f} s ({state['why'] or 'playing'}), {size[0]}x{size[1]}")


if __name__ == "__main__":
    main()
