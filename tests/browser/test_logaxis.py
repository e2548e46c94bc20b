"""The partition card tells the truth: one offset axis per partition shared by its replicas (a
lagging or crashed follower is drawn short by exactly what it misses), records that differ between
replicas marked, truncated records shown as ghosts, and the focused partition's time chart whose
last point is what the card says. Measured on the canvas pixels, not on the page's own numbers."""
from conftest import open_page, pick_library, wait_store

# what a strip looks like (render/logaxis.js, render/partitions.js)
PITCH, ROW_H, STRIP_Y, STRIP_H = 26, 22, 4, 14
TRACK = (16, 21, 29)
MISMATCH = (255, 93, 108)
GHOST = (199, 125, 255)

PIXELS = """([key, broker, y0, y1]) => {
  const card = document.querySelector(`.pcard[data-key="${key}"]`);
  const canvas = card.querySelector('canvas.pstrip');
  const row = card.__order.indexOf(broker);
  const dpr = window.devicePixelRatio || 1;
  const top = row * 26 + 2;
  const img = canvas.getContext('2d').getImageData(0, Math.round((top + y0) * dpr), canvas.width, Math.max(1, Math.round((y1 - y0) * dpr)));
  const cols = [];
  for (let x = 0; x < canvas.width; x++) {
    const seen = [];
    for (let y = 0; y < img.height; y++) { const i = (y * canvas.width + x) * 4; seen.push([img.data[i], img.data[i + 1], img.data[i + 2], img.data[i + 3]]); }
    cols.push(seen);
  }
  return { dpr, cols };
}"""


def columns(page, key, broker, y0, y1):
    out = page.evaluate(PIXELS, [key, broker, y0, y1])
    return out["dpr"], out["cols"]


def near(px, rgb, tol=40):
    return px[3] > 0 and all(abs(a - b) <= tol for a, b in zip(px[:3], rgb))


def right_edge(page, key, broker):
    """Right-most CSS pixel of the strip band where something other than the empty track is drawn."""
    dpr, cols = columns(page, key, broker, STRIP_Y + 2, STRIP_Y + STRIP_H - 2)
    drawn = [x for x, col in enumerate(cols) if any(p[3] > 0 and not near(p, TRACK, 6) for p in col)]
    return max(drawn) / dpr


def axis(page, key):
    lo, span, w = page.locator(f".pcard[data-key='{key}']").get_attribute("data-axis").split()
    return float(lo), float(span), float(w)


def test_a_crashed_follower_is_drawn_short_by_what_it_misses(page, server):
    """broker-failure-clean-election (2.6): follower 2 of orders-0 crashes while p1 produces; the
    leader's log keeps growing. On the shared axis broker 2's strip ends left of the leader's by
    (leader LEO - its LEO) x pixels per offset; and the chart's last point is the card's LEO/HW."""
    _app, base = server
    open_page(page, base)
    pick_library(page, "broker-failure-clean-election")
    # crash the follower once it holds some records, so there is a log for it to keep showing
    wait_store(page, "s.partitions.has('orders-0') && s.partitions.get('orders-0').leader === 1 && "
               "s.partitions.get('orders-0').replica_state.find(x => x.broker === 2).leo >= 20", timeout=40000)
    page.evaluate("() => window.isrlab.command({op: 'crash', broker: 2})")
    page.evaluate("() => window.isrlab.setSpeed(10)")
    wait_store(page, "(() => { const r = s.partitions.get('orders-0').replica_state;"
               " return r.find(x => x.broker === 1).leo - r.find(x => x.broker === 2).leo >= 40; })()", timeout=40000)
    page.evaluate("() => window.isrlab.control('pause')")
    wait_store(page, "!s.clock.playing")
    page.wait_for_timeout(500)                 # the last frame drawn
    p = page.evaluate("() => window.isrlab.store.partitions.get('orders-0')")
    leo = {r["broker"]: r["leo"] for r in p["replica_state"]}
    assert not next(r for r in p["replica_state"] if r["broker"] == 2)["running"]
    lo, span, w = axis(page, "orders-0")
    ppo = w / span
    assert lo <= min(r["log_start_offset"] for r in p["replica_state"]), "by default the axis shows every offset"
    leader_edge, follower_edge = right_edge(page, "orders-0", 1), right_edge(page, "orders-0", 2)
    expected = (leo[1] - leo[2]) * ppo
    assert expected > 20
    assert abs((leader_edge - follower_edge) - expected) <= 4, (leader_edge, follower_edge, expected, leo)
    assert follower_edge > 10, "the crashed follower still shows the log it holds"

    chart = page.locator(".pcard[data-key='orders-0'] .pchart")
    page.wait_for_function("() => { const c = document.querySelector(\".pcard[data-key='orders-0'] .pchart\");"
                           " return c && c.dataset.last; }")
    import json
    last = json.loads(chart.get_attribute("data-last"))
    for b in (1, 2, 0):
        row_label = page.locator(".pcard[data-key='orders-0'] .prow-info").nth(p["replicas"].index(b))
        assert row_label.locator(".leo").inner_text() == str(last["leo"][str(b)])
        assert row_label.locator(".hw").inner_text() == str(last["hw"][str(b)])
    assert last["isr"] == len(p["isr"])

    # zoom in (wheel over the strips) keeps following the tail; double-click shows everything again
    page.locator(".pcard[data-key='orders-0'] canvas.pstrip").hover()
    for _ in range(4):
        page.mouse.wheel(0, -100)
    page.wait_for_function("() => { const a = document.querySelector(\".pcard[data-key='orders-0']\").dataset.axis.split(' ');"
                           " return Number(a[1]) < %f; }" % (span * 0.7))
    zlo, zspan, _ = axis(page, "orders-0")
    assert abs(zlo + zspan - (max(leo.values()) + 1)) < 1e-6, "zoomed, the axis still ends at the tail"
    page.locator(".pcard[data-key='orders-0'] canvas.pstrip").dblclick()
    page.wait_for_function("(s) => Number(document.querySelector(\".pcard[data-key='orders-0']\").dataset.axis.split(' ')[1]) === s",
                           arg=span)


def test_kip101_divergence_and_the_truncated_record_are_marked(page, server):
    """kip101-scenario-1-v0.10 to its end: broker 3 truncated p1-99 (offset 99) to its HW when it
    followed 2, then led in epoch 2; brokers 1 and 2 still hold epoch 0 at offset 99 (and 2 holds
    epoch 1 at 100..104). Their records there are marked as differing from the leader's; broker 3's
    offset 99 carries the ghost of the record it truncated."""
    _app, base = server
    open_page(page, base)
    pick_library(page, "kip101-scenario-1-v0.10")
    page.evaluate("() => window.isrlab.control('pause_on_violation', false)")
    page.evaluate("() => window.isrlab.setSpeed('max')")
    wait_store(page, "s.clock.t_ms >= 45000 && s.partitions.get('orders-0').replica_state.find(r => r.broker === 3).leo > 110",
               timeout=60000)
    page.wait_for_timeout(500)
    p = page.evaluate("() => window.isrlab.store.partitions.get('orders-0')")
    assert p["leader"] == 3
    lo, span, w = axis(page, "orders-0")
    ppo = w / span

    def has(broker, offset, rgb, y0, y1):
        dpr, cols = columns(page, "orders-0", broker, y0, y1)
        x0, x1 = int(((offset - lo) * ppo) * dpr), int(((offset + 1 - lo) * ppo) * dpr)
        return any(near(px, rgb) for col in cols[x0:max(x0 + 1, x1)] for px in col)

    below = (STRIP_Y + STRIP_H + 1, STRIP_Y + STRIP_H + 4)
    assert has(1, 99, MISMATCH, *below), "broker 1's p1-99 (epoch 0) differs from the leader's offset 99 (epoch 2)"
    assert has(2, 102, MISMATCH, *below), "broker 2's epoch-1 records differ from the leader's epoch-2 ones"
    assert not has(3, 99, MISMATCH, *below), "the leader is the reference"
    assert not has(1, 50, MISMATCH, *below), "offsets the replicas agree on are not marked"
    assert has(3, 99, GHOST, 0, 3), "broker 3 shows where it truncated p1-99"
    runs = page.evaluate("async () => { const m = await import('/static/js/render/logaxis.js');"
                         " const p = window.isrlab.store.partitions.get('orders-0'); const ref = m.referenceReplica(p);"
                         " return p.replica_state.map(r => [r.broker, m.divergentRuns(r, ref)]); }")
    runs = {b: r for b, r in runs}
    assert [99, 100] in runs[1] and [99, 105] in runs[2] and runs[3] == []


def test_clicking_a_record_in_the_ledger_finds_it_on_the_axis(page, server):
    """kip101-scenario-1-v0.10 paused at ~2.5 s (before its faults), orders-0 holding ~50 records: one click on a
    record's ledger row (a LOST one is found the same way) zooms orders-0's axis around that
    record's offset and marks it there."""
    _app, base = server
    open_page(page, base)
    pick_library(page, "kip101-scenario-1-v0.10")
    page.evaluate("() => window.isrlab.setSpeed(2)")
    wait_store(page, "s.clock.t_ms > 2500 && s.ledger.filter(x => x[5] === 'acked' && x[7] > 5).length > 3", timeout=40000)
    page.evaluate("() => window.isrlab.control('pause')")
    wait_store(page, "!s.clock.playing")
    page.evaluate("() => window.isrlab.showTab('clients')")
    rid, offset = page.evaluate("() => { const r = window.isrlab.store.ledger.filter(x => x[5] === 'acked' && x[7] > 5)[0];"
                                " return [r[0], r[7]]; }")
    page.locator("#ledger tbody tr", has=page.get_by_text(rid, exact=True)).first.click()
    page.wait_for_function("() => Number(document.querySelector(\".pcard[data-key='orders-0']\").dataset.axis.split(' ')[1]) <= 40")
    page.wait_for_timeout(300)
    lo, span, w = axis(page, "orders-0")
    assert lo <= offset < lo + span
    assert page.evaluate("() => window.isrlab.store.ui.highlight.partitions.has('orders-0')")
    dpr, cols = columns(page, "orders-0", 1, 1, 4)
    x = int(((offset - lo) * w / span) * dpr)
    assert any(near(px, (255, 224, 102)) for col in cols[max(0, x - 4):x + 4] for px in col), "the record's offset is marked"
    dpr, cols = columns(page, "orders-0", 1, 1, 4)
    assert not any(near(px, (255, 224, 102)) for col in cols[:max(0, x - 8)] for px in col), "only there"
