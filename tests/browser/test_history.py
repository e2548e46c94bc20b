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


BROKER_RGB = {0: (0x4f, 0xb3, 0xff), 1: (0x3f, 0xd0, 0xa0), 2: (0xff, 0x7a, 0xa8)}   # chart.js BROKER_COLORS


def canvas_colours(page, selector, colours, tolerance=30):
    """Which of ``colours`` (name -> rgb) the canvas at ``selector`` has any pixel of."""
    return page.evaluate("""([sel, colours, tol]) => {
      const c = document.querySelector(sel);
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const found = {};
      for (const [name, [r, g, b]] of Object.entries(colours)) {
        found[name] = false;
        for (let i = 0; i < d.length && !found[name]; i += 4)
          if (d[i + 3] > 200 && Math.abs(d[i] - r) <= tol && Math.abs(d[i + 1] - g) <= tol && Math.abs(d[i + 2] - b) <= tol) found[name] = true;
      }
      return found;
    }""", [selector, {str(k): v for k, v in colours.items()}, tolerance])


def test_the_time_chart_marks_each_kind_of_event_and_keeps_equal_lines_visible(page, server):
    """Issue 34, item 5: a restart is not drawn as a fault, each kind of event has its own mark and
    the legend names only the kinds on the chart; three replicas with the same HW and LEO stay
    visible (each broker's colour is on the canvas); a KRaft record naming leader -1 is an
    offline mark, as ZooKeeper's partition_offline is."""
    _app, base = server
    open_page(page, base)
    doc = {"name": "chart", "seed": 3, "kafka_version": "2.6", "brokers": 3, "duration_ms": 60000,
           "config": {"zookeeper.session.timeout.ms": 6000},
           "topics": [{"name": "orders", "partitions": 1, "replication_factor": 3, "assignment": {"0": [1, 0, 2]}}],
           "clients": [{"name": "p1", "type": "producer", "topic": "orders", "acks": "all", "rate_per_s": 20}],
           "timeline": [{"at_ms": 2000, "op": "crash", "broker": 1}, {"at_ms": 12000, "op": "restart", "broker": 1}]}
    assert page.evaluate("(doc) => window.isrlab.load({scenario: doc}, true)", doc)["ok"]
    page.evaluate("() => window.isrlab.setSpeed('max')")
    wait_store(page, "s.clock.t_ms > 30000 && s.partitions.get('orders-0').isr.length === 3", timeout=60000)
    page.evaluate("() => window.isrlab.control('pause')")
    legend = page.locator(".pchart[data-key='orders-0'] .pchart-legend")
    expect(legend).to_contain_text("C crash / shutdown")
    expect(legend).to_contain_text("R restart / resume / heal")
    expect(legend).to_contain_text("E election")
    assert "fault" not in legend.inner_text().lower()
    assert "O offline" not in legend.inner_text()  # broker 0, the controller, elects at once: never offline
    found = canvas_colours(page, ".pchart[data-key='orders-0'] canvas", BROKER_RGB)
    assert found == {"0": True, "1": True, "2": True}, found
    kinds = page.evaluate("""async () => {
      const chart = await import('/static/js/render/chart.js');
      const events = [{t_ms: 5, type: 'partition_change', topic: 't', partition: 0, leader: -1, reason: 'fenced'},
                      {t_ms: 6, type: 'fault', op: 'heal', reason: 'heal'}, {t_ms: 7, type: 'fault', op: 'produce', reason: 'p'}];
      return chart.marksFromEvents(events, 't-0').map(chart.markKind);
    }""")
    assert kinds == ["partition_offline", "recover", "action"]
