"""What a page did not see itself (issue 12): the live time chart after a reload shows the room's
history since the run started, and a saved live session's replay still says which operations the
viewer did ("you did") apart from the scenario's faults."""
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import browser, context, open_page, page, serving, wait_store, watch  # noqa: F401


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("history"), "history") as served:
        yield served


def chart_points(page, key):
    return page.evaluate("(k) => { const s = window.isrlab.store.series.parts.get(k); return s ? s.points : null; }", key)


def test_live_chart_shows_the_history_from_before_a_reload(page, server):
    _app, base = server
    open_page(page, base)
    page.evaluate("() => window.isrlab.setSpeed(5)")
    page.evaluate("() => window.isrlab.command({op: 'produce', topic: 'orders', count: 40, acks: 'all', producer: 'mine'})")
    wait_store(page, "s.clock.t_ms > 6000", timeout=30000)
    before = chart_points(page, "orders-0")
    assert before and before[0][0] < 1000
    url = page.url
    assert "/r/" in url
    page.reload()
    open_page(page, url.split("/r/")[0], "/r/" + url.split("/r/")[1])
    # the chart of the page that just loaded starts at the run's start, not at the reload
    page.wait_for_function("() => { const s = window.isrlab.store.series.parts.get('orders-0');"
                           " return s && s.points.length > 10 && s.points[0][0] < 1000; }", timeout=15000)
    points = chart_points(page, "orders-0")
    reloaded_at = page.evaluate("() => window.isrlab.store.clock.t_ms")
    early = [p for p in points if p[0] < 6000]
    assert len(early) >= 10, points[:5]
    assert max(p[2][0] for p in points) >= 40          # the records produced before the reload
    assert all(a[0] < b[0] for a, b in zip(points, points[1:]))
    assert points[-1][0] <= reloaded_at + 5000
    # the chart draws them: the canvas is the focused card's, with a time axis from 0 s
    expect(page.locator(".pchart[data-key='orders-0']")).to_be_attached()


def test_replay_of_a_saved_live_session_says_you_did(page, server):
    _app, base = server
    open_page(page, base)
    wait_store(page, "s.clock.t_ms > 300")
    page.evaluate("() => window.isrlab.command({op: 'pause', broker: 2, for_ms: 800})")
    page.evaluate("() => window.isrlab.setSpeed(10)")
    wait_store(page, "s.clock.t_ms > 6500", timeout=30000)       # past the scenario's crash at 5 s
    expect(page.locator("#panel-timeline .ev .type", has_text="you did: pause").first).to_be_attached()
    page.click("#save-run")
    page.wait_for_function("() => window.isrlabSaved && window.isrlabSaved.ok")
    saved = page.evaluate("() => window.isrlabSaved")
    page.goto(base + saved["links"]["page"] + "?t=6000")
    page.wait_for_function("() => document.body.dataset.ready === '1' && window.isrlab.store.clock")
    expect(page.locator("#panel-timeline .ev .type", has_text="you did: pause").first).to_be_attached()
    expect(page.locator("#panel-timeline .ev .type", has_text="fault injected: crash").first).to_be_attached()
    assert page.locator("#panel-timeline .ev .type", has_text="you did: crash").count() == 0
