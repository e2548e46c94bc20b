"""Browser tests: the real page in Debian's Chromium (never a downloaded browser), driven by
Playwright, against the app served by Werkzeug in a thread. Screenshots go to test-artifacts/.

Contexts use bypass_csp so that Playwright's polling helpers can evaluate predicates; the page's
own safety (text through textContent) is checked without relying on the CSP."""
import contextlib
import logging
import os
import pathlib
import threading

import pytest
from werkzeug.serving import make_server

from app import create_app, runner_of

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


#: Every browser test is the same client address (127.0.0.1): the per-address limits that guard a
#: public server (30 costly actions per 10 minutes, tested in tests/app) would refuse the suite's
#: own rooms once enough tests share one server, and a refused room looks like a page that never
#: loads. The suite raises them; the limits themselves are tested where they are the subject.
TEST_CLIENT_LIMITS = {"COMMANDS_PER_S": 50.0, "COMMAND_BURST": 150, "QUOTA_PER_CLIENT": 10_000}


@contextlib.contextmanager
def serving(folder, name):
    """An app with its own SQLite store in ``folder``, served by Werkzeug in a thread: yields
    (app, base URL); stops the server, the runner and the store afterwards."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app = create_app({"SECRET_KEY": name, "DATABASE_URL": f"sqlite:///{folder}/runs.db",
                      "INSTANCE_PATH": str(folder), **TEST_CLIENT_LIMITS})
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield app, f"http://127.0.0.1:{srv.server_port}"
    finally:
        srv.shutdown()
        runner_of(app).stop()
        app.extensions["isrlab_runs"].close()


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    # a store of its own: with the defaults the suite wrote its runs into <repo>/instance, the
    # developer's own saved runs
    with serving(tmp_path_factory.mktemp("browser-store"), "browser-tests") as served:
        yield served


@pytest.fixture(scope="module")
def browser():
    # module scope: a sync Playwright left running for the whole session would keep its event
    # loop alive and break other suites that start their own (tests/replay)
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def context(browser):
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000}, bypass_csp=True)
    ctx.set_default_timeout(15000)
    yield ctx
    ctx.close()


def _console_error(message):
    """The console error's text, with the address of a resource that failed to load (which request
    a "Failed to load resource" was is what one needs to know)."""
    url = (message.location or {}).get("url", "")
    return f"{message.text} ({url})" if message.text.startswith("Failed to load resource") and url else message.text


def _favicon_network_failure(text):
    """Chromium fetches the tab's icon by itself, outside the page's scripts, and may do it while a
    test is tearing down: a network-level failure of that one request (seen once in CI as
    net::ERR_CONNECTION_RESET) is no error of the page. A 404 or 500 for it still is."""
    return "favicon" in text and "Failed to load resource: net::" in text


def _record_console(page, message):
    if message.type != "error":
        return
    text = _console_error(message)
    if not _favicon_network_failure(text):
        page.errors.append(text)


def watch(page):
    """Collect JavaScript errors and dialogs (alert() from injected markup would show up here)."""
    page.errors = []
    page.dialogs = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("console", lambda m: _record_console(page, m))
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    return page


@pytest.fixture
def page(context, request):
    p = watch(context.new_page())
    yield p
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        p.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"))
    except Exception:  # noqa: BLE001 - a failed screenshot must not hide the test's own result
        pass
    assert p.errors == [], f"JavaScript errors: {p.errors}"
    assert p.dialogs == [], f"unexpected dialogs: {p.dialogs}"


# -- helpers ---------------------------------------------------------------------------------------
def open_page(page, base, path="/"):
    page.goto(base + path)
    page.wait_for_function("() => window.isrlab && window.isrlab.store.clock && window.isrlab.store.meta")
    return page


def pick_library(page, scenario_id):
    """Open the scenario picker and run a library scenario, by clicking; returns once the page
    shows the new run (the same story may already be on screen: its old run, held by the open
    picker, must not pass for the new one)."""
    before = page.evaluate("() => window.isrlab.store.run")
    page.click("#scenario-button")
    page.click(f".pitem[data-id='{scenario_id}']")
    page.click("#run-scenario")
    page.wait_for_function("([id, before]) => { const s = window.isrlab.store, c = s.clock;"
                           " return c && c.source && c.source.name === id && s.meta && s.run !== before; }",
                           arg=[scenario_id, before])
    page.wait_for_selector("dialog#dlg-picker:not([open])", state="attached")


def store(page, expr):
    return page.evaluate(f"() => {{ const s = window.isrlab.store; return {expr}; }}")


def wait_store(page, predicate, timeout=20000, arg=None):
    page.wait_for_function(f"(arg) => {{ const s = window.isrlab.store; return {predicate}; }}", arg=arg, timeout=timeout)


def card_facts(page, key):
    return page.locator(f".pcard[data-key='{key}'] .facts").inner_text()
