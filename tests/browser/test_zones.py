"""Zones on screen (issue 32, item 6; docs/model.md §21): the brokers of a run with racks grouped in a
labelled box per zone at 1024 and 1920 px, one click failing a whole zone through the command path
of the broker menu, the warning on partitions with two replicas in one zone, and the racks in the
output of Kafka's tools (kafka-broker-api-versions.sh, kafka-configs.sh --all)."""
import json

import pytest
from playwright.sync_api import expect

from engine.scenario.library import library
from tests.browser.conftest import open_page, store, wait_store, watch
from tests.browser.layout import placed_overlaps
from tests.browser.test_truth import load

ZONES = {"az-a": [0, 1], "az-b": [2, 3], "az-c": [4, 5]}
#: the cluster of lose-one-zone without its scripted zone failure: the test's clicks are the faults
CALM = {**library()["lose-one-zone"], "timeline": [], "name": "three zones, no scripted fault"}


def inside(inner, outer, slack=0.5):
    return (inner["x"] >= outer["x"] - slack and inner["y"] >= outer["y"] - slack
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack)


def overlap(a, b):
    w = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
    h = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
    return w > 1 and h > 1


def zone_boxes(page):
    """{rack: {box, head, label, brokers: {id: box}, voters: {id: box}}} as drawn now."""
    return page.evaluate("""() => {
      const r = el => { const b = el.getBoundingClientRect(); return {x: b.x, y: b.y, width: b.width, height: b.height}; };
      const racks = window.isrlab.store.meta.racks;
      const out = {};
      for (const z of document.querySelectorAll('#nodes .zone[data-rack]')) {
        const name = z.querySelector('.zname');
        out[z.dataset.rack] = {box: r(z), head: r(z.querySelector('.zhead')), label: name.textContent,
          clipped: name.scrollWidth > name.clientWidth + 1, brokers: {}, voters: {}};
      }
      for (const b of document.querySelectorAll('#nodes .node.broker')) out[racks[b.dataset.broker]].brokers[b.dataset.broker] = r(b);
      for (const v of document.querySelectorAll('#nodes .node.voter')) {
        const rack = racks[v.dataset.voter];
        if (rack) out[rack].voters[v.dataset.voter] = r(v);
      }
      return out;
    }""")


def load_doc(page, doc):
    run = page.evaluate("() => window.isrlab.store.run")
    assert page.evaluate("(d) => window.isrlab.load({scenario: d}, true)", doc)["ok"]
    wait_store(page, "s.meta && s.run !== arg", arg=run)


def open_at(browser, base, width, height, scenario):
    ctx = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
    ctx.set_default_timeout(20000)
    page = watch(ctx.new_page())
    open_page(page, base)
    if isinstance(scenario, dict):
        load_doc(page, scenario)
    else:
        load(page, scenario)
    return ctx, page


def settle(page, predicate="s.clock.t_ms > 500"):
    """Run until `predicate`, pause, and let the map lay itself out (cards measured, boxes drawn)."""
    page.evaluate("() => window.isrlab.control('play')")
    wait_store(page, predicate, timeout=30000)
    page.evaluate("() => window.isrlab.control('pause')")
    wait_store(page, "!s.clock.playing")
    page.wait_for_timeout(600)


def until(page, predicate):
    """Play until `predicate` holds (a command applies 1 ms after it is sent), then pause."""
    page.evaluate("() => window.isrlab.control('play')")
    wait_store(page, predicate, timeout=30000)
    page.evaluate("() => window.isrlab.control('pause')")
    wait_store(page, "!s.clock.playing")
    page.wait_for_timeout(300)


def check_zones(boxes, zones, voters=None, labels=None):
    """Each zone's label (`labels`: {rack: label}, else the English "zone <rack>"), its brokers (and
    voters) inside its box and under its header, and no two boxes of one kind overlapping."""
    problems = []
    assert sorted(boxes) == sorted(zones), boxes.keys()
    for rack, members in zones.items():
        z = boxes[rack]
        if z["label"] != (labels or {}).get(rack, f"zone {rack}") or z["clipped"]:
            problems.append(f"{rack}: label {z['label']!r} clipped={z['clipped']}")
        if sorted(map(int, z["brokers"])) != members:
            problems.append(f"{rack}: brokers {sorted(z['brokers'])}")
        for node, box in {**z["brokers"], **z["voters"]}.items():
            if not inside(box, z["box"]):
                problems.append(f"node {node} outside zone {rack}: {box} vs {z['box']}")
            if overlap(box, z["head"]):
                problems.append(f"node {node} under the header of zone {rack}")
        if voters is not None and sorted(map(int, z["voters"])) != voters.get(rack, []):
            problems.append(f"{rack}: voters {sorted(z['voters'])}")
    racks = sorted(boxes)
    for i, a in enumerate(racks):
        for b in racks[i + 1:]:
            if overlap(boxes[a]["box"], boxes[b]["box"]):
                problems.append(f"zones {a} and {b} overlap")
    return problems


@pytest.mark.parametrize("width,height", [(1024, 768), (1920, 1080)])
def test_brokers_are_grouped_in_a_labelled_box_per_zone(browser, server, width, height):
    _app, base = server
    ctx, page = open_at(browser, base, width, height, "lose-one-zone")
    try:
        settle(page)
        boxes = zone_boxes(page)
        assert check_zones(boxes, ZONES) == []
        assert placed_overlaps(page, "#nodes .node") == []
        # the zones stand side by side in rack order, the first card of each under its header
        lefts = [boxes[r]["box"]["x"] for r in ("az-a", "az-b", "az-c")]
        assert lefts == sorted(lefts) and len({round(boxes[r]["box"]["y"]) for r in boxes}) == 1
        # 1920 px: each zone's two brokers side by side; 1024 px: one above the other
        rows = {round(b["y"]) for b in boxes["az-b"]["brokers"].values()}
        assert len(rows) == (1 if width == 1920 else 2), boxes["az-b"]["brokers"]
        # a failed zone's header keeps its whole name beside its (wider) restart button
        page.click("#nodes .zone[data-rack='az-b'] .zact")
        until(page, "s.brokers.get(2).state === 'stopped' && s.brokers.get(3).state === 'stopped'")
        page.wait_for_timeout(300)
        assert check_zones(zone_boxes(page), ZONES) == []
        assert page.inner_text("#nodes .zone[data-rack='az-b'] .zact") == ("restart zone" if width == 1920 else "restart")
        # a run without racks draws no zone
        load(page, "broker-failure-clean-election")
        page.wait_for_timeout(500)
        assert page.locator("#nodes .zone").count() == 0
        assert page.errors == []
    finally:
        ctx.close()


@pytest.mark.parametrize("width,height", [(1024, 768), (1920, 1080)])
def test_kraft_controllers_with_a_rack_stand_in_their_zone(browser, server, width, height):
    _app, base = server
    doc = {**library()["lose-one-zone"], "kafka_version": "4.1", "name": "zones kraft",
           "racks": {**library()["lose-one-zone"]["racks"], "3000": "az-a", "3001": "az-b", "3002": "az-c"}}
    ctx, page = open_at(browser, base, width, height, doc)
    try:
        settle(page, "s.quorum && s.quorum.active !== null && s.clock.t_ms > 2000")
        boxes = zone_boxes(page)
        assert check_zones(boxes, ZONES, voters={"az-a": [3000], "az-b": [3001], "az-c": [3002]}) == []
        assert placed_overlaps(page, "#nodes .node") == []
        # the voter sits above its zone's brokers
        for rack, z in boxes.items():
            voter = next(iter(z["voters"].values()))
            assert all(voter["y"] + voter["height"] <= b["y"] for b in z["brokers"].values()), rack
        assert page.errors == []
    finally:
        ctx.close()


def test_one_click_fails_the_zone_and_one_brings_it_back(page, server):
    _app, base = server
    open_page(page, base)
    load_doc(page, CALM)
    settle(page, "[...s.brokers.values()].every(b => b.state === 'running')")
    commands = store(page, "s.clock.commands")
    button = page.locator("#nodes .zone[data-rack='az-b'] .zact")
    expect(button).to_have_text("fail zone")
    button.click()
    until(page, "s.brokers.get(2).state === 'stopped' && s.brokers.get(3).state === 'stopped'")
    states = store(page, "[...s.brokers.values()].map(b => [b.id, b.state])")
    assert sorted(states) == [[0, "running"], [1, "running"], [2, "stopped"], [3, "stopped"],
                              [4, "running"], [5, "running"]]
    assert store(page, "s.clock.commands") == commands + 1          # one command for the zone
    fault = store(page, "s.events.filter(e => e.type === 'fault' && e.rack === 'az-b').map(e => [e.op, e.brokers, e.origin])")
    assert fault == [["crash", [2, 3], "user"]]
    zone = page.locator("#nodes .zone[data-rack='az-b']")
    expect(zone).to_have_class("zone down")
    expect(zone.locator(".zstate")).to_have_text("down")
    # the other zones are untouched, and the same button now restarts the zone
    expect(page.locator("#nodes .zone[data-rack='az-a'] .zstate")).to_have_text("all up")
    expect(button).to_have_text("restart zone")
    button.click()
    # both start again at once (whether they may register while their old sessions live is the
    # era's business: in 2.6 the old ephemeral /brokers/ids/N makes the registration fail)
    until(page, "[2, 3].every(id => s.brokers.get(id).state !== 'stopped')")
    assert store(page, "s.clock.commands") == commands + 2
    restarted = store(page, "s.events.filter(e => e.type === 'broker_starting' && [2, 3].includes(e.broker)).map(e => e.t_ms)")
    assert len(restarted) == 4 and restarted[2] == restarted[3]      # the first start, then one instant


def test_the_zone_menu_isolates_and_heals_a_zone(page, server):
    _app, base = server
    open_page(page, base)
    load_doc(page, CALM)
    settle(page, "[...s.brokers.values()].every(b => b.state === 'running')")
    page.click("#nodes .zone[data-rack='az-c'] .zmore")
    menu = page.locator("#menu")
    expect(menu.locator(".mtitle")).to_have_text("Zone az-c · all up")
    expect(menu.locator("button[data-item='zone-restart']")).to_be_disabled()
    expect(menu.locator("button[data-item='zone-heal']")).to_be_disabled()
    menu.locator("button[data-item='zone-isolate']").click()
    until(page, "(s.brokers.get(4).isolated_from || []).length > 0")
    cut = store(page, "[4, 5].map(id => s.brokers.get(id).isolated_from.filter(n => typeof n === 'number').sort((a, b) => a - b))")
    assert cut == [[0, 1, 2, 3], [0, 1, 2, 3]]               # cut from the nodes outside, not from each other
    expect(page.locator("#nodes .zone[data-rack='az-c'] .zact")).to_have_text("heal zone")
    page.click("#nodes .zone[data-rack='az-c'] .zact")
    until(page, "[4, 5].every(id => !(s.brokers.get(id).isolated_from || []).length)")
    expect(page.locator("#nodes .zone[data-rack='az-c'] .zstate")).to_have_text("all up")
    # one broker cut from the others is its own story: the zones it talks to are not cut off
    page.evaluate("() => window.isrlab.command({op: 'isolate', broker: 0, from: 'brokers'})")
    until(page, "(s.brokers.get(0).isolated_from || []).length > 0")
    expect(page.locator("#nodes .zone[data-rack='az-a'] .zstate")).to_have_text("1 cut off")
    expect(page.locator("#nodes .zone[data-rack='az-b'] .zstate")).to_have_text("all up")
    expect(page.locator("#nodes .zone[data-rack='az-b'] .zact")).to_have_text("fail zone")


def test_partitions_with_two_replicas_in_one_zone_carry_a_warning(page, server):
    _app, base = server
    open_page(page, base)
    load(page, "two-replicas-in-one-zone")
    settle(page)
    chips = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('.pcard')].map(c =>
      [c.dataset.key, [...c.querySelectorAll('.chip.zone-warn')].map(x => [x.textContent, x.title])]))""")
    assert [t for t, _ in chips["orders-0"]] == ["⚠ 2 REPLICAS IN az-a"]
    assert [t for t, _ in chips["orders-1"]] == ["⚠ 2 REPLICAS IN az-b"]
    title = chips["orders-1"][0][1]
    assert "Replicas 2, 3 of orders-1 are all in zone az-b" in title
    assert "1 replica would be left, fewer than min.insync.replicas=2" in title and "NOT_ENOUGH_REPLICAS" in title
    summary = page.inner_text("#partition-summary")
    assert "3 with two replicas in one zone" in summary, summary
    # the rack-aware layout of the same cluster has nothing to warn about
    load(page, "lose-one-zone")
    settle(page)
    assert page.locator(".pcard .chip.zone-warn").count() == 0
    assert "one zone" not in page.inner_text("#partition-summary")


def test_kafka_tools_print_the_racks(page, server):
    _app, base = server
    open_page(page, base)
    load_doc(page, CALM)                                       # Kafka 2.6
    settle(page, "[...s.brokers.values()].every(b => b.state === 'running') && s.znodes.has('/brokers/ids/5')")
    page.click(".tabs button[data-tab=cli]")
    expect(page.locator("#panel-cli .rack-note")).to_contain_text("broker.rack")
    out = page.locator("#cli-out")

    def run(line):
        before = out.locator(":scope > div").count()
        page.fill("#cli-input", line)
        page.keyboard.press("Enter")
        expect(out.locator(":scope > div")).to_have_count(before + 2)
        return out.locator(":scope > div").last.inner_text()

    text = run("kafka-broker-api-versions.sh --bootstrap-server broker-0:9092")
    lines = text.splitlines()
    heads = [line for line in lines if " -> " in line]
    assert heads == [f"broker-{b}:9092 (id: {b} rack: {rack}) -> (" for rack, ids in ZONES.items() for b in ids]
    # NodeApiVersions.toString(true) of Kafka 2.6.0: 50 request types, one per line, in id order
    first = lines.index(heads[0])
    body = lines[first + 1:lines.index(")", first)]
    assert len(body) == 50 and body[0] == "\tProduce(0): 0 to 8 [usable: 8],"
    assert "\tFetch(1): 0 to 11 [usable: 11]," in body and "\tApiVersions(18): 0 to 3 [usable: 3]," in body
    assert body[-1] == "\tAlterClientQuotas(49): 0 [usable: 0]"
    text = run("kafka-configs.sh --describe --entity-type brokers --entity-name 3 --all")
    assert "  broker.rack=az-b sensitive=false synonyms={STATIC_BROKER_CONFIG:broker.rack=az-b}" in text.splitlines()
    text = run("get /brokers/ids/4")
    assert json.loads(text.splitlines()[0])["rack"] == "az-c"
    # a failed zone: its brokers stay in the metadata until their sessions expire, and do not answer
    page.click("#nodes .zone[data-rack='az-b'] .zact")
    until(page, "s.brokers.get(2).state === 'stopped' && s.brokers.get(3).state === 'stopped'")
    text = run("kafka-broker-api-versions.sh --bootstrap-server broker-0:9092")
    assert "broker-2:9092 (id: 2 rack: az-b) -> ERROR: org.apache.kafka.common.errors.DisconnectException" in text.splitlines()
    assert "broker-4:9092 (id: 4 rack: az-c) -> (" in text.splitlines()


def test_kraft_4_1_tools_print_racks_and_fencing(page, server):
    _app, base = server
    open_page(page, base)
    load_doc(page, {**CALM, "kafka_version": "4.1", "name": "zones kraft tools"})
    settle(page, "[...s.brokers.values()].every(b => b.state === 'running' && !b.fenced && b.broker_epoch >= 0)")
    page.click(".tabs button[data-tab=cli]")
    out = page.locator("#cli-out")
    page.fill("#cli-input", "kafka-broker-api-versions.sh --bootstrap-server broker-0:9092")
    page.keyboard.press("Enter")
    expect(out).to_contain_text("broker-5:9092 (id: 5 rack: az-c isFenced: false) -> (")
    expect(out).to_contain_text("\tProduce(0): 3 to 13 [usable: 13],")        # KIP-896: 4.0 drops v0-2
    page.fill("#cli-input", "kafka-cluster.sh list-endpoints --bootstrap-server broker-0:9092")
    page.keyboard.press("Enter")
    table = out.locator(":scope > div").last.inner_text().splitlines()
    assert table[0].split() == ["ID", "HOST", "PORT", "RACK", "STATE", "ENDPOINT_TYPE"]
    # ClusterTool's printf: ID and PORT 10 wide, HOST and RACK as wide as the longest, STATE 10
    assert table[1].rstrip() == "0          broker-0 9092       az-a unfenced   broker"
    assert [row.split()[3] for row in table[1:]] == ["az-a", "az-a", "az-b", "az-b", "az-c", "az-c"]


def test_a_replay_draws_the_zones_and_offers_a_fork_to_act_on_one(page, server):
    """A saved run replays with its zones; acting on a zone of a replay means forking it first
    (a replay is read-only): the zone's button opens that menu instead of sending a command."""
    from tests.replay.test_browser import save_run
    app, base = server
    run_id = save_run(app.test_client(), {"scenario": library()["two-replicas-in-one-zone"]})
    page.goto(f"{base}/runs/{run_id}")
    page.wait_for_function("() => document.body.dataset.ready === '1' && document.querySelector('#nodes .zone[data-rack]')")
    assert sorted(page.evaluate("() => [...document.querySelectorAll('#nodes .zone[data-rack]')].map(z => z.dataset.rack)")) \
        == ["az-a", "az-b", "az-c"]
    expect(page.locator(".pcard[data-key='orders-1'] .chip.zone-warn")).to_have_text("⚠ 2 REPLICAS IN az-b")
    page.click("#nodes .zone[data-rack='az-b'] .zact")
    expect(page.locator("#menu .mtitle")).to_have_text("Zone az-b (replay)")
    expect(page.locator("#menu button[data-item='fork']")).to_contain_text("to fail, isolate, restart or heal zone az-b")


def test_zone_geometry_wraps_and_keeps_every_card_inside_its_zone(page, server):
    """geometry.js is pure: many zones wrap onto further lines, a crowded zone stacks rows, and
    brokers in no rack get a group of their own, last; in every case the boxes stay inside the map
    and apart, and each card inside its zone under the header."""
    _app, base = server
    open_page(page, base)
    r = page.evaluate("""async () => {
      const g = await import('/static/js/geometry.js');
      const z = await import('/static/js/zones.js');
      const check = (width, zones) => {
        const lay = g.clusterLayout(width, zones.flatMap(x => x.brokers), ['p1'], 0, [], zones);
        const bad = [];
        const cards = id => { const n = lay.nodes['b:' + id]; return {l: n.x - n.w / 2, r: n.x + n.w / 2, t: n.y - n.h / 2, b: n.y + n.h / 2}; };
        lay.zones.forEach((a, i) => {
          if (a.x < 0 || a.x + a.w > width) bad.push(`zone ${a.rack} outside`);
          lay.zones.slice(i + 1).forEach(b => {
            if (Math.min(a.x + a.w, b.x + b.w) > Math.max(a.x, b.x) && Math.min(a.y + a.h, b.y + b.h) > Math.max(a.y, b.y)) bad.push(`${a.rack}/${b.rack}`);
          });
          for (const id of zones[i].brokers) {
            const c = cards(id);
            if (c.l < a.x || c.r > a.x + a.w || c.t < a.y + g.ZONE.head || c.b > a.y + a.h) bad.push(`b${id} outside ${a.rack}`);
          }
        });
        const ids = zones.flatMap(x => x.brokers);
        ids.forEach((a, i) => ids.slice(i + 1).forEach(b => {
          const p = cards(a), q = cards(b);
          if (Math.min(p.r, q.r) > Math.max(p.l, q.l) && Math.min(p.b, q.b) > Math.max(p.t, q.t)) bad.push(`b${a}/b${b}`);
        }));
        return {bad, lines: new Set(lay.zones.map(x => x.y)).size, client: lay.nodes['c:p1'].y > Math.max(...lay.zones.map(x => x.y + x.h))};
      };
      const many = Array.from({length: 12}, (_, i) => ({rack: 'r' + String(i).padStart(2, '0'), brokers: [i], voters: []}));
      const crowded = [{rack: 'a', brokers: Array.from({length: 20}, (_, i) => i), voters: []}];
      const store = {meta: {racks: {'0': 'b', '1': 'a', '2': 'b'}}, brokers: new Map([0, 1, 2, 3].map(i => [i, {id: i}])), quorum: null};
      const groups = z.zoneGroups(store, [0, 1, 2, 3]);
      return {many: check(1100, many), crowded: check(1100, crowded), mixed: check(700, groups),
              groups: groups.map(x => [x.rack, x.brokers])};
    }""")
    assert r["many"]["bad"] == [] and r["many"]["lines"] >= 2 and r["many"]["client"]
    assert r["crowded"]["bad"] == [] and r["crowded"]["lines"] == 1 and r["crowded"]["client"]
    assert r["mixed"]["bad"] == [] and r["mixed"]["client"]
    assert r["groups"] == [["a", [1]], ["b", [0, 2]], [None, [3]]]
