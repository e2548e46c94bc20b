"""The Metrics tab (static/js/render/metrics.js): one small multiple per MBean of the era, its
name, its value now and its graph over the run, the same numbers the room's sampler has, laid
out without overlap or clipping at 1024 and 1920 px; a replay graphs the whole run."""
import pytest

from engine.scenario.library import library
from tests.browser.conftest import ARTIFACTS, open_page, wait_store
from tests.browser.layout import layout_problems
from tests.browser.test_truth import load
from tests.replay.test_browser import save_run

SHOTS = ARTIFACTS / "metrics"


def show_metrics(page):
    page.click(".tabs button[data-tab=metrics]")
    page.wait_for_selector("#panel-metrics .mcard")


def panel_problems(page):
    return layout_problems(page, ["#side", ".tabs", "#panel-metrics", ".metrics-grid", ".mcard", ".mline"],
                           [".mcard", ".mname", ".mline", "#panel-metrics", ".tabs"])


@pytest.mark.parametrize("width,height", [(1024, 768), (1920, 1080)])
def test_metrics_tab_shows_the_eras_mbeans_and_their_values(page, server, width, height):
    _app, base = server
    page.set_viewport_size({"width": width, "height": height})
    open_page(page, base)
    load(page, "broker-failure-clean-election")
    show_metrics(page)
    wait_store(page, "s.metricSeries.points.length > 5 && s.clock.t_ms > 2000", timeout=30000)
    page.evaluate("() => window.isrlab.control('pause')")
    wait_store(page, "!s.clock.playing")
    page.wait_for_timeout(400)
    names = page.locator("#panel-metrics .mname").all_inner_texts()
    catalog = page.evaluate("() => window.isrlab.store.metricSeries.catalog.metrics.map(m => m.mbean)")
    assert len(names) == len(catalog) and names[0] == "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions"
    assert "kafka.controller:type=KafkaController,name=ActiveControllerCount" in names
    assert not any("FencedBrokerCount" in n for n in names)          # 2.6: not a metric of the era
    # the value now is the last sample's (1 active controller, and its unit)
    card = page.locator("#panel-metrics .mcard[data-id=active_controller]")
    assert card.locator(".mvalue").inner_text() == "1" and card.locator(".munit").inner_text() == "controllers"
    # the tabs still fit on one line, every card fits the side panel, nothing overlaps
    tabs = page.evaluate("() => [...document.querySelectorAll('.tabs button')].map(b => b.getBoundingClientRect().top)")
    assert max(tabs) - min(tabs) < 2, tabs
    assert panel_problems(page) == []
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"live-{width}x{height}.png"))


def test_metrics_follow_a_crash_live(page, server):
    """Crash a follower: its leader's UnderReplicatedPartitions goes to 1 once the controller
    (session expiry) shrinks the ISR, on screen as in the room's sampler."""
    app, base = server
    page.set_viewport_size({"width": 1366, "height": 900})
    open_page(page, base)
    load(page, "broker-failure-clean-election")
    show_metrics(page)
    wait_store(page, "s.clock.t_ms > 500")
    page.evaluate("() => window.isrlab.control('speed', 20)")
    wait_store(page, "s.partitions.get('orders-0') && s.partitions.get('orders-0').isr.length < 3", timeout=60000)
    page.evaluate("() => window.isrlab.control('pause')")
    wait_store(page, "!s.clock.playing")
    page.wait_for_timeout(400)
    room = page.evaluate("() => window.isrlab.store.room")
    live = app.extensions["isrlab"]["runner"].require(room)
    _run, metrics = live.metrics_now()          # plain data: the room may live in a room worker
    want = metrics["points"][-1]
    ids = [m["id"] for m in metrics["metrics"]]
    shown = page.locator("#panel-metrics .mcard[data-id=under_replicated] .mvalue").inner_text()
    assert shown == str(want[ids.index("under_replicated") + 1])


def test_the_replay_graphs_the_whole_run_and_a_click_seeks(page, server):
    app, base = server
    page.set_viewport_size({"width": 1024, "height": 768})
    run_id = save_run(app.test_client(), {"scenario": library()["unclean-election-loss"]})
    page.goto(f"{base}/runs/{run_id}")
    page.wait_for_function("() => window.isrlab && window.isrlab.store.clock")
    show_metrics(page)
    page.wait_for_function("() => document.querySelectorAll('#panel-metrics .mcard').length > 5"
                           " && document.querySelector('#panel-metrics .metrics-head').textContent.includes('Kafka')",
                           timeout=60000)
    unclean = page.locator("#panel-metrics .mcard[data-id=unclean_elections] canvas")
    box = unclean.bounding_box()
    unclean.click(position={"x": box["width"] - 10, "y": box["height"] / 2})
    page.wait_for_function("() => window.isrlab.store.clock.t_ms > 60000", timeout=30000)
    page.wait_for_timeout(400)
    sub = page.locator("#panel-metrics .mcard[data-id=unclean_elections] .msub").inner_text()
    assert "Count 1" in sub, sub
    assert panel_problems(page) == []
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "replay-1024x768.png"))


def test_kraft_eras_show_the_quorum_controllers_metrics(page, server):
    """3.9-kraft: the KRaft controller's FencedBrokerCount / ActiveBrokerCount and the brokers'
    last-applied-record-lag-ms are there, the ZooKeeper controller's LeaderElectionRateAndTimeMs
    is not; at 1024 px the cards fit."""
    _app, base = server
    page.set_viewport_size({"width": 1024, "height": 768})
    open_page(page, base)
    load(page, "controller-failover-kraft")
    show_metrics(page)
    wait_store(page, "s.metricSeries.points.length > 20 && s.clock.t_ms > 3000", timeout=30000)
    page.evaluate("() => window.isrlab.control('pause')")
    wait_store(page, "!s.clock.playing")
    page.wait_for_timeout(400)
    names = " ".join(page.locator("#panel-metrics .mname").all_inner_texts())
    assert "FencedBrokerCount" in names and "last-applied-record-lag-ms" in names
    assert "LeaderElectionRateAndTimeMs" not in names
    active = page.locator("#panel-metrics .mcard[data-id=active_brokers] .mvalue").inner_text()
    assert active == str(page.evaluate("() => window.isrlab.store.brokers.size"))
    lag = page.locator("#panel-metrics .mcard[data-id=metadata_lag] .mvalue").inner_text()
    assert lag.isdigit() and int(lag) < 1500
    assert panel_problems(page) == []
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "kraft-1024x768.png"))
