"""The live page in a real headless Chromium: it shows a breathing cluster, a broker crashed by a
click leads to an election on screen, records produced from the page are acknowledged."""
import re

from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS, open_page, pick_library, store, wait_store, watch


def test_the_page_shows_a_live_cluster(page, server):
    _app, base = server
    open_page(page, base)
    # the first frames can arrive before the create call's answer, which puts the room in the URL
    page.wait_for_url(re.compile(r"/r/[A-Za-z0-9_-]+$"), timeout=10000)
    assert re.search(r"/r/[A-Za-z0-9_-]+$", page.url), "the room is in the URL, to share or reload"
    wait_store(page, "s.clock.t_ms > 600")
    assert page.locator(".broker").count() == 3
    assert page.locator(".broker .ctrl:visible").count() == 1, "exactly one controller badge"
    assert page.locator("#scenario-name").inner_text() == "Leader failure and a clean election"
    expect(page.locator(".pcard[data-key='orders-0'] .facts")).to_contain_text("leader 1 · epoch 0 · zkVersion 0 · ISR [1,2,0]")
    assert page.locator(".ev .type", has_text="controller elected").count() == 1
    t1 = store(page, "s.clock.t_ms")
    page.wait_for_timeout(500)
    assert store(page, "s.clock.t_ms") > t1 + 300, "simulated time moves at 1x"
    assert store(page, "s.frames") > 10
    page.screenshot(path=str(ARTIFACTS / "live-cluster.png"))


def test_crash_the_leader_by_clicking_and_watch_the_election(page, server):
    """broker-failure-clean-election, era 2.6: after the leader's process crash the controller waits
    for its ZooKeeper session to expire (zookeeper.session.timeout.ms 18000), then elects the first
    replica in AR order [1, 2, 0] that is alive and in the ISR - broker 2 - bumping the epoch (§9.3)."""
    _app, base = server
    open_page(page, base)
    pick_library(page, "broker-failure-clean-election")
    wait_store(page, "s.partitions.has('orders-0') && s.partitions.get('orders-0').leader === 1 && s.clock.t_ms > 200")
    page.click("#toolbar [data-action=play]")                       # pause
    wait_store(page, "!s.clock.playing")
    expect(page.locator(".pcard[data-key='orders-0'] .facts")).to_contain_text("ISR [1,2,0]")
    page.click(".broker[data-broker='1']")
    page.click("#menu button[data-item=crash]")
    wait_store(page, "s.brokers.get(1).state === 'stopped' && s.events.some(e => e.type === 'broker_stopped' && e.broker === 1)")
    crash_at = store(page, "s.events.find(e => e.type === 'broker_stopped' && e.broker === 1).t_ms")
    expect(page.locator(".broker[data-broker='1'] .state")).to_have_text("down")
    for _ in range(3):                                               # 1x -> 2x -> 5x -> 10x
        page.keyboard.press("]")
    wait_store(page, "s.clock.speed === 10")
    page.keyboard.press(" ")                                         # play
    page.wait_for_selector(".broker[data-broker='1'] .countdown", timeout=15000)
    assert "still alive · expires in" in page.locator(".broker[data-broker='1'] .countdown").inner_text()
    wait_store(page, "s.partitions.get('orders-0').leader === 2", timeout=20000)
    page.keyboard.press(" ")                                         # pause
    wait_store(page, "!s.clock.playing")
    expect(page.locator(".pcard[data-key='orders-0'] .facts")).to_contain_text("leader 2 · epoch 1 · zkVersion 1 · ISR [2,0]")
    expect(page.locator(".pcard[data-key='orders-0'] .prow-label", has_text="b1").locator(".isr")).to_have_text("out")
    elected = store(page, "s.events.find(e => e.type === 'leader_elected' && e.leader === 2)")
    assert elected["kind"] == "clean" and elected["isr_before"] == [1, 2, 0] and elected["isr"] == [2, 0]
    expired = store(page, "s.events.find(e => e.type === 'session_expired' && e.broker === 1)")
    assert "zookeeper.session.timeout.ms 18000" in expired["reason"]
    assert 12000 <= expired["t_ms"] - crash_at <= 18000, "expiry 18 s after the last heartbeat (sent every 6 s)"
    assert 0 < elected["t_ms"] - expired["t_ms"] < 50, "the controller reacts to the expiry at once"
    entry = page.locator(".ev", has_text="leader elected (clean)").first
    assert "leader 1 is not alive" in entry.inner_text()
    entry.click()
    page.wait_for_selector(".pcard.hl[data-key='orders-0']", timeout=3000)   # clicking an event highlights what it touched
    page.screenshot(path=str(ARTIFACTS / "election.png"))


def test_produce_records_and_see_them_acked(page, server):
    _app, base = server
    open_page(page, base)
    wait_store(page, "s.clock.t_ms > 300")
    page.click(".tabs button[data-tab=clients]")
    page.fill("#produce-form input[aria-label=records]", "5")
    page.select_option("#produce-form select[aria-label=acks]", "all")
    page.click("#produce-button")
    wait_store(page, "['console-0','console-1','console-2','console-3','console-4'].every(id => s.ledger.some(r => r[0] === id && r[5] === 'acked'))")
    expect(page.locator("#ledger tbody tr", has_text="console-")).to_have_count(5)
    for i in range(5):
        expect(page.locator("#ledger tbody tr", has_text=f"console-{i}")).to_contain_text("acked")
    wait_store(page, "s.records.by_producer.console && s.records.by_producer.console.acked === 5")
    page.wait_for_timeout(100)
    cells = page.locator("#panel-clients tr", has_text="console").first.locator("td").all_inner_texts()
    assert cells[0] == "console" and cells[4:7] == ["5", "5", "0"], cells   # sent, acked, failed


def test_kafka_corner_describe_and_zookeeper_shell(page, server):
    _app, base = server
    open_page(page, base)
    wait_store(page, "s.partitions.has('orders-0') && s.clock.t_ms > 200")
    page.click(".tabs button[data-tab=cli]")
    expect(page.locator("#describe")).to_contain_text("\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,0\tIsr: 1,2,0")
    page.fill("#cli-input", "ls /brokers/ids")
    page.keyboard.press("Enter")
    page.fill("#cli-input", "get /controller")
    page.keyboard.press("Enter")
    out = page.locator("#cli-out").inner_text()
    assert "[0, 1, 2]" in out
    assert '"brokerid":0' in out and "ephemeralOwner = 0x101" in out and "dataVersion = 0" in out
    page.fill("#cli-input", "get /nope")
    page.keyboard.press("Enter")
    assert "Node does not exist: /nope" in page.locator("#cli-out .err").last.inner_text()


def test_two_tabs_watch_the_same_room(page, context, server):
    _app, base = server
    open_page(page, base)
    wait_store(page, "s.clock.t_ms > 200")
    other = watch(context.new_page())
    open_page(other, base, page.url.replace(base, ""))
    assert store(other, "s.room") == store(page, "s.room")
    wait_store(page, "s.clock.viewers === 2")
    expect(page.locator("#viewers")).to_have_text("2 watching")
    other.click(".tabs button[data-tab=network]")
    other.locator("#panel-network tr", has_text="b2").locator("button", has_text="crash").click()
    expect(page.locator(".broker[data-broker='2'] .state")).to_have_text("down")
    assert other.errors == [] and other.dialogs == []
    other.close()


def test_pure_modules_in_the_browser(page, server):
    """geometry.js, kafka.js and store.js are pure: checked here in the real engine that runs them."""
    _app, base = server
    open_page(page, base)
    r = page.evaluate("""async () => {
      const g = await import('/static/js/geometry.js');
      const k = await import('/static/js/kafka.js');
      const st = await import('/static/js/store.js');
      const out = {};
      out.window = g.logWindow([{leo: 500, log_start_offset: 0}, {leo: 480, log_start_offset: 0}], 64);
      out.small = g.logWindow([{leo: 3, log_start_offset: 0}], 64);
      out.epochs = [g.epochAt([[0, 10, 0], [10, 20, 3]], 0), g.epochAt([[0, 10, 0], [10, 20, 3]], 15), g.epochAt([[0, 10, 0]], 10)];
      out.id = [g.idAt([95, ['a', 'b', 'c']], 96), g.idAt([95, ['a']], 94)];
      out.duration = [g.messageDuration(100, 101, 1), g.messageDuration(0, 2000, 1), g.messageDuration(0, 2000, 10)];
      out.speeds = [0.1, 1, 10, 100].map(v => g.speedFromSlider(g.sliderFromSpeed(v)));
      out.lag = [g.lagFraction({ms_behind: 15000, lag_max_ms: 30000}), g.lagFraction({ms_behind: null, lag_max_ms: 1})];
      out.session = g.sessionLeft({expires_at_ms: 24000}, 18000, 18000);
      const lay = g.clusterLayout(1100, [0,1,2,3,4,5,6,7,8], ['p1']);
      out.rows = lay.rows;
      out.inside = Object.values(lay.nodes).every(n => n.x - n.w / 2 >= 0 && n.x + n.w / 2 <= 1100);
      out.describe = k.describeTopics({topics: [{name: 't', partitions: 1, replication_factor: 3, config: {'min.insync.replicas': 2}}]},
        [{topic: 't', partition: 0, leader: -1, replicas: [1,2,3], isr: [1], offline: true}]);
      const z = new Map([['/brokers', {data: null, version: 0}], ['/brokers/ids', {data: null, version: 0}], ['/brokers/ids/1', {data: {a: 1}, version: 0, ephemeral_owner: 257, czxid: 9, mzxid: 9}]]);
      out.ls = k.zkLs(z, '/brokers/ids');
      out.get = k.zkGet(z, '/brokers/ids/1');
      out.bad = k.zkLs(z, 'brokers');
      const s = st.createStore();
      out.gap = st.applyFrame(s, {full: 0, base: 7, seq: 8, run: 1, set: {}, del: [], events: [], violations: [], msgs: [], clock: {room: 'r'}}, 0);
      out.ok = st.applyFrame(s, {full: 1, base: 0, seq: 8, run: 1, set: {'b:1': {id: 1}}, del: [], events: [{i: 3, type: 'x', t_ms: 1}], violations: [], msgs: [], clock: {room: 'r'}}, 0);
      const hl = st.touched({type: 'isr_shrink', topic: 't', partition: 0, broker: 1, isr_before: [1,2,3], isr: [1,3]});
      out.touched = [[...hl.brokers].sort(), [...hl.partitions], [...hl.paths]];
      return out;
    }""")
    assert r["window"] == {"lo": 437, "hi": 501, "cells": 64, "hidden": 437}
    assert r["small"]["lo"] == 0 and r["small"]["cells"] == 8
    assert r["epochs"] == [0, 3, None]
    assert r["id"] == ["b", None]
    assert r["duration"] == [450, 2000, 450]
    assert r["speeds"] == [0.1, 1, 10, 100]
    assert r["lag"] == [0.5, 1.2]
    assert r["session"] == {"ms": 6000, "fraction": 6000 / 18000}
    assert r["rows"] == 2 and r["inside"]
    assert r["describe"] == ["Topic: t\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: min.insync.replicas=2",
                             "\tTopic: t\tPartition: 0\tLeader: none\tReplicas: 1,2,3\tIsr: 1"]
    assert r["ls"] == {"lines": ["[1]"]}
    assert r["get"]["lines"][0] == '{"a":1}' and "ephemeralOwner = 0x101" in r["get"]["lines"]
    assert r["bad"] == {"error": "Path must start with / character"}
    assert r["gap"] == "gap" and r["ok"] == "ok"
    assert r["touched"] == [[1, 2], ["t-0"], ["/brokers/topics/t/partitions/0/state"]]


def test_pages_draw_only_through_the_shared_view():
    """The live and replay pages wire a transport; which renderer draws which entity is view.js's
    alone, so a page module that imports a renderer itself has started to draw its own way."""
    js = ARTIFACTS.parent / "static" / "js"
    for page_module in ("main.js", "replay/main.js", "replay/compare.js"):
        text = (js / page_module).read_text()
        assert not re.search(r"from \"(\.\./|\./)render/", text), f"{page_module} imports a renderer"
    for page_module in ("main.js", "replay/main.js"):
        assert re.search(r"import \{ createView[^}]*\} from \"(\.\./|\./)view\.js\"", (js / page_module).read_text()), page_module
