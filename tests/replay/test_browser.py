"""The replay in real Chromium (Debian's, driven by Playwright): save a live run, open its short
link in a fresh page, scrub back, step, check the drawn state against a straight run, fork it
live; a scenario link with a moment and a partition; a bad link; the runs page; compare."""
import json
import time

import pytest

from app.runner.live_view import partition_entity
from app.store import runs as store_runs
from engine.scenario.library import library
from engine.simulation import Simulation

from tests.browser.conftest import ARTIFACTS, browser, serving  # noqa: F401  (the fixture, reused)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("replay-browser"), "replay-browser") as served:
        yield served


def new_page(browser, request, name):
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
    ctx.set_default_timeout(20000)
    page = ctx.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("dialog", lambda d: (page.errors.append("dialog: " + d.message), d.dismiss()))
    request.addfinalizer(lambda: _finish(page, ctx, f"{request.node.name}-{name}"))
    return page


def _finish(page, ctx, name):
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    except Exception:  # noqa: BLE001
        pass
    ctx.close()


def replay_ready(page):
    page.wait_for_function("() => document.body.dataset.ready === '1' && window.isrlab.store.clock")


def replay_t(page):
    return page.evaluate("() => window.isrlab.replay.t")


def drawn_partition(page, key):
    return page.evaluate("(k) => window.isrlab.store.partitions.get(k)", key)


def save_run(client, body):
    """POST /api/runs and the saved run's id; on a loaded machine the save outlasts the server's
    0.8 s answer window and comes back as a background job (202), which is followed here."""
    reply = client.post("/api/runs", json=body).json
    deadline = time.monotonic() + 60
    while "job" in reply and reply["job"]["state"] not in ("done", "failed", "cancelled") and time.monotonic() < deadline:
        time.sleep(0.2)
        reply = client.get(reply["job"]["url"]).json
    if "job" in reply:
        assert reply["job"]["state"] == "done", reply
        reply = reply["job"]["result"]
    return reply["id"]


def straight_partition(scenario, t, key):
    sim = Simulation(scenario)
    sim.advance_to(t)
    return json.loads(json.dumps(partition_entity(sim, key)))


def test_save_live_run_open_link_scrub_back_and_fork(server, browser, request):
    app, base = server
    live = new_page(browser, request, "live")
    live.goto(base + "/")
    live.wait_for_function("() => window.isrlab && window.isrlab.store.clock && window.isrlab.store.room")
    live.add_script_tag(url=base + "/static/js/replay/live_save.js", type="module")
    live.wait_for_selector("#save-run")
    live.wait_for_function("() => window.isrlab.store.clock.t_ms > 4000")
    live.click("#save-run")
    live.wait_for_function("() => window.isrlabSaved && window.isrlabSaved.ok")
    saved = live.evaluate("() => window.isrlabSaved")
    assert live.errors == []
    run = store_runs.get_run(app.extensions["isrlab_runs"].engine, saved["id"])
    assert run["source"] == "live" and run["end_ms"] > 4000

    page = new_page(browser, request, "replay")      # a fresh page (its own browser context)
    page.goto(base + saved["links"]["short"])
    replay_ready(page)
    assert replay_t(page) == 0
    page.click("#replay-end")
    page.wait_for_function("(end) => window.isrlab.replay.t === end && !window.isrlab.replay.busy", arg=run["end_ms"])
    # scrub back to a moment by moving the slider
    target = run["end_ms"] // 2
    page.evaluate("(t) => { const s = document.getElementById('replay-scrub'); s.value = String(t);"
                  " s.dispatchEvent(new Event('input', {bubbles: true})); }", target)
    page.wait_for_function("(t) => window.isrlab.replay.t === t && !window.isrlab.replay.busy", arg=target)
    key = next(iter(json.loads(page.evaluate("() => JSON.stringify([...window.isrlab.store.partitions.keys()])"))))
    assert drawn_partition(page, key) == straight_partition(run["scenario"], target, key)
    assert page.inner_text("#clock-time").startswith(f"{target / 1000:.3f}")
    # step back and forward one event
    before = page.evaluate("() => window.isrlab.replay.historyLen")
    page.click("#replay-back")
    page.wait_for_function("(n) => window.isrlab.replay.historyLen < n && !window.isrlab.replay.busy", arg=before)
    t_back = replay_t(page)
    assert t_back <= target
    assert drawn_partition(page, key) == straight_partition(run["scenario"], t_back, key) or t_back == target
    page.click("#replay-forward")
    page.wait_for_function("(n) => window.isrlab.replay.historyLen >= n && !window.isrlab.replay.busy", arg=before)
    # play for a moment
    page.click("#replay-play")
    page.wait_for_function("(t) => window.isrlab.replay.t > t + 200", arg=t_back)
    page.click("#replay-play")
    page.wait_for_function("() => !window.isrlab.replay.playing && !window.isrlab.replay.busy")
    # fork: continue live from here
    fork_t = replay_t(page)
    page.click("#replay-fork")
    page.click("#menu button[data-item='fork-keep']")
    page.wait_for_url("**/r/*")
    page.wait_for_function("() => window.isrlab && window.isrlab.store.clock && window.isrlab.store.room")
    assert page.evaluate("() => window.isrlab.store.clock.t_ms") >= fork_t
    assert page.errors == [], page.errors


def test_scenario_link_opens_at_its_moment_with_the_partition_highlighted(server, browser, request):
    app, base = server
    doc = library()["kip101-scenario-1-v0.10"]
    client = app.test_client()
    made = client.post("/api/links", json={"scenario": doc, "t_ms": 12345, "partition": "orders-0", "broker": 1}).json
    assert made["ok"] and made["url"].startswith("/l/1")
    page = new_page(browser, request, "link")
    page.goto(base + made["url"])
    replay_ready(page)
    assert replay_t(page) == 12345
    assert page.evaluate("() => window.isrlab.store.ui.highlight.partitions.has('orders-0')")
    assert page.evaluate("() => window.isrlab.store.ui.selectedBroker") == 1
    assert drawn_partition(page, "orders-0") == straight_partition(doc, 12345, "orders-0")
    assert page.errors == [], page.errors


def test_a_damaged_link_says_so(server, browser, request):
    app, base = server
    code = app.test_client().post("/api/links", json={"scenario": library()["isr-expansion"]}).json["code"]
    page = new_page(browser, request, "bad-link")
    response = page.goto(base + "/l/" + code[:-7])
    assert response.status == 400
    assert "cannot be opened" in page.inner_text("#error-title")
    assert "truncated" in page.inner_text("#error-message") or "damaged" in page.inner_text("#error-message")


def test_runs_page_lists_filters_renames_and_deletes(server, browser, request):
    app, base = server
    client = app.test_client()
    ids = []
    for name in ("acks1-loss-on-failover", "isr-expansion", "kip101-scenario-1-v0.10"):
        ids.append(save_run(client, {"scenario": library()[name], "title": f"browser <b>{name}</b>"}))
    page = new_page(browser, request, "runs")
    page.goto(base + "/runs")
    page.wait_for_selector(f"#runs tr[data-id='{ids[0]}']")
    assert page.locator(f"#runs tr[data-id='{ids[0]}'] .run-title").inner_text() == "browser <b>acks1-loss-on-failover</b>"
    page.select_option("#outcome", "lost")
    page.wait_for_function("(id) => !document.querySelector(`#runs tr[data-id='${id}']`)", arg=ids[1])
    page.select_option("#outcome", "")
    page.fill("#q", "isr-exp")
    page.wait_for_function("(id) => document.querySelectorAll('#runs tbody tr').length === 1 && document.querySelector(`#runs tr[data-id='${id}']`)", arg=ids[1])
    row = f"#runs tr[data-id='{ids[1]}']"
    page.click(f"{row} button[data-act='rename']")
    page.fill(f"{row} .rename-input", "renamed in the browser")
    page.click(f"{row} button[data-act='save-title']")
    page.wait_for_function("(sel) => document.querySelector(sel + ' .run-title') && document.querySelector(sel + ' .run-title').textContent === 'renamed in the browser'", arg=row)
    page.click(f"{row} button[data-act='delete']")
    page.click(f"{row} button[data-act='delete']")
    page.wait_for_function("(sel) => !document.querySelector(sel)", arg=row)
    assert client.get(f"/api/runs/{ids[1]}").status_code == 404
    assert page.errors == [], page.errors


def _era(doc, version):
    from app.runner.limits import retarget
    out, _dropped = retarget(json.loads(json.dumps(doc)), version)
    return out


def test_compare_finds_the_first_divergence(server, browser, request):
    app, base = server
    client = app.test_client()
    rid = save_run(client, {"scenario": library()["kip101-scenario-1-v2.6"]})
    page = new_page(browser, request, "compare")
    page.goto(base + f"/compare?a={rid}&era=0.10")
    page.wait_for_selector("#divergence")
    text = page.inner_text("#divergence")
    # KIP-101 under 0.10: the headline is the first difference of outcome, in words (issue 34)
    # — not B's election at 10 s that A makes too, a moment later, shown as raw JSON
    assert text.startswith("First difference that matters: at 25.") and "{" not in text
    assert "run B shrinks the ISR of orders-0 to [2], while run A keeps broker 2 as leader of orders-0" in text
    timing = page.inner_text("#timing-detail")
    assert timing.startswith("Timing detail — the first difference of any kind: at 10.")
    assert "orders-0's leader is broker 1 (leader epoch 0) in run A, broker 2 (leader epoch 1) in run B" in timing
    # records counted as the runs count them: each run's own lost count, then what differs
    lost = {side: sum(r["lost"] for r in Simulation(doc).run()["records"])
            for side, doc in (("A", library()["kip101-scenario-1-v2.6"]), ("B", _era(library()["kip101-scenario-1-v2.6"], "0.10")))}
    assert lost["B"] > 0
    assert page.inner_text("#records-lost") == f"Acknowledged records lost (as a saved run counts them): run A {lost['A']}, run B {lost['B']}"
    counts = page.inner_text("#record-counts")
    assert f"lost in B only: {lost['B']}" in counts and "lost in A only: 0" in counts
    assert "acknowledged in one, failed in the other: " in counts
    assert "run B loses record" in page.inner_text(".compare-fates")
    page.click("#to-divergence")
    page.wait_for_function("() => window.isrlabCompare.seen && Object.values(window.isrlabCompare.seen).length === 2"
                           " && Object.values(window.isrlabCompare.seen).every(t => t === window.isrlabCompare.divergence.t_ms)")
    assert page.errors == [], page.errors


def test_compare_shows_the_isr_change_through_zookeeper_and_through_the_controller(server, browser, request):
    """Issue 15: one scenario under 2.6 (A) and 2.7 (B) side by side: the page says how each era
    moves an ISR change, and the lanes mark B's AlterIsr round trip and A's notification."""
    _app, base = server
    page = new_page(browser, request, "compare-eras")
    page.goto(base + "/compare?a=isr-shrink-zookeeper-vs-controller&era=2.7")
    page.wait_for_selector("#divergence")
    # one ISR change at two moments is timing, not a difference of outcome (docs/model.md §17.3)
    assert page.inner_text("#divergence").startswith("No election, ISR change or record fate differs up to")
    assert "the ISR of orders-0 is [1, 0] in run A, [1, 0, 2] in run B" in page.inner_text("#timing-detail")
    path = page.inner_text("#isr-path")
    assert "A 2.6: the leader writes the znode itself" in path and "/isr_change_notification 5–7.5 s later" in path
    assert "B 2.7: the leader sends AlterIsr to the controller" in path
    page.wait_for_selector("#lane-b .mark.alter_partition")
    page.wait_for_selector("#lane-a .mark.isr_change_notification")
    assert page.locator("#lane-b .mark.isr_change_notification").count() == 0
    assert page.locator("#lane-a .mark.alter_partition").count() == 0
    colour = page.evaluate("() => getComputedStyle(document.querySelector('#lane-b .mark.alter_partition')).backgroundColor")
    assert colour == "rgb(240, 228, 66)"          # the AlterIsr colour of the live map's legend
    assert page.errors == [], page.errors


def card_texts(page):
    """Each partition card's drawn text (head: leader, epoch, ISR, badges; rows: LEO and HW per replica).
    The focused card's time chart is left out: live it charts the frames seen, a replay the whole run."""
    return page.evaluate("() => Object.fromEntries([...document.querySelectorAll('.pcard')].map(c =>"
                         " [c.dataset.key, [...c.children].filter(x => !x.classList.contains('pchart'))"
                         ".map(x => x.innerText).join(' ').replace(/\\s+/g, ' ').trim()]))")


def test_live_and_replay_pages_draw_the_same_moment_the_same(server, browser, request):
    """The live page (socket frames) and the replay page (fetched frames) draw through one view:
    at the same moment of the same run, every partition card says the same leader, epoch, ISR,
    LEO and HW. kip101-scenario-1-v0.10 at max speed pauses on its violation at 18009 ms, after
    the truncation and the election that lose p1-99: a moment where the replicas disagree."""
    _app, base = server
    live = new_page(browser, request, "same-live")
    live.goto(base + "/")
    live.wait_for_function("() => window.isrlab && window.isrlab.store.clock && window.isrlab.store.meta")
    live.evaluate("() => window.isrlab.load({library: 'kip101-scenario-1-v0.10'}, true)")
    live.wait_for_function("() => { const s = window.isrlab.store; return s.meta && s.meta.kafka_version === '0.10'"
                           " && s.clock.source && s.clock.source.name === 'kip101-scenario-1-v0.10'; }")
    live.evaluate("() => window.isrlab.setSpeed('max')")
    live.wait_for_function("() => window.isrlab.store.clock.paused_reason === 'violation'", timeout=30000)
    t = live.evaluate("() => window.isrlab.store.clock.t_ms")
    live.wait_for_function("() => document.querySelectorAll('.pcard').length === window.isrlab.store.partitions.size")
    live.wait_for_timeout(300)                  # the last frame drawn
    live.wait_for_function("() => window.isrlabSaveRun")
    saved = live.evaluate("() => window.isrlabSaveRun()")
    assert saved and saved["ok"], saved

    replay = new_page(browser, request, "same-replay")
    replay.goto(base + saved["links"]["page"] + f"?t={t}")
    replay_ready(replay)
    replay.wait_for_function("(t) => window.isrlab.replay.t === t && !window.isrlab.replay.busy", arg=t)
    replay.wait_for_timeout(300)
    keys = live.evaluate("() => [...window.isrlab.store.partitions.keys()]")
    assert keys and replay.evaluate("() => [...window.isrlab.store.partitions.keys()]") == keys
    for key in keys:
        assert drawn_partition(replay, key) == drawn_partition(live, key), key
    live_cards, replay_cards = card_texts(live), card_texts(replay)
    assert set(live_cards) == set(keys)
    assert replay_cards == live_cards
    assert "leader 3 · epoch 2" in live_cards["orders-0"] and "ISR [3]" in live_cards["orders-0"], live_cards
    assert live.errors == [] and replay.errors == [], (live.errors, replay.errors)


def test_the_time_chart_shows_the_whole_run_and_clicking_it_seeks(server, browser, request):
    """The replay page charts orders-0 over the whole run (GET /api/replay/<rid>/series): the last
    point is the run's end state, and a click at a moment of the chart moves the replay there."""
    app, base = server
    doc = library()["kip101-scenario-1-v0.10"]
    made = app.test_client().post("/api/links", json={"scenario": doc, "t_ms": 2000, "partition": "orders-0"}).json
    page = new_page(browser, request, "chart")
    page.goto(base + made["url"])
    replay_ready(page)
    page.wait_for_function("() => { const c = document.querySelector(\".pcard[data-key='orders-0'] .pchart\"); return c && c.dataset.layout; }")
    chart = page.locator(".pcard[data-key='orders-0'] .pchart")
    last = json.loads(chart.get_attribute("data-last"))
    end = straight_partition(doc, doc["duration_ms"], "orders-0")
    assert last["t"] == doc["duration_ms"]
    assert last["leo"] == {str(r["broker"]): r["leo"] for r in end["replica_state"]}
    assert last["hw"] == {str(r["broker"]): r["hw"] for r in end["replica_state"]}
    layout = json.loads(chart.get_attribute("data-layout"))
    target = 12000
    x = layout["left"] + (target - layout["t0"]) * layout["width"] / (layout["t1"] - layout["t0"])
    chart.locator("canvas").click(position={"x": x, "y": 40})
    page.wait_for_function("() => window.isrlab.replay.t !== 2000 && !window.isrlab.replay.busy")
    per_px = (layout["t1"] - layout["t0"]) / layout["width"]
    assert abs(replay_t(page) - target) <= 2 * per_px, (replay_t(page), target)
    assert page.errors == [], page.errors
