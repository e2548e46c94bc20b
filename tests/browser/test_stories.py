"""The three things a new user should be able to do without reading code: watch an ISR shrink,
cause NOT_ENOUGH_REPLICAS, and lose an acknowledged record under 0.10 - and see why."""
from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS, open_page, pick_library, store, wait_store


def test_watch_an_isr_shrink_with_its_reason(page, server):
    """isr-shrink-slow-follower (2.6): follower 2 is cut off at 5 s; the leader's isr-expiration task
    (every replica.lag.time.max.ms / 2 = 15 s) drops it once it has not caught up for > 30000 ms;
    the state znode's zkVersion goes 0 -> 1 while the leader epoch stays 0 (§2.3)."""
    _app, base = server
    open_page(page, base)
    pick_library(page, "isr-shrink-slow-follower")
    page.keyboard.press("m")                   # as fast as possible
    wait_store(page, "s.clock.speed === 'max'")
    wait_store(page, "s.events.some(e => e.type === 'isr_shrink')", timeout=20000)
    page.keyboard.press(" ")
    shrink = store(page, "s.events.find(e => e.type === 'isr_shrink')")
    assert shrink["isr_before"] == [0, 1, 2] and shrink["isr"] == [0, 1] and shrink["leader_epoch"] == 0
    assert shrink["zk_version"] == 1
    assert "replica.lag.time.max.ms 30000" in shrink["reason"] and "follower 2" in shrink["reason"]
    entry = page.locator(".ev", has_text="ISR shrink").first
    expect(entry).to_contain_text("not caught up for")
    entry.click()
    page.wait_for_selector(".broker.hl[data-broker='2']", timeout=3000)   # the follower that left is highlighted


def test_cause_not_enough_replicas(page, server):
    """A new 0.10 cluster (retries=0 by default in that era), min.insync.replicas=2 set live; both
    followers of orders-0 crash; once their sessions expire (6000 ms) the ISR is the leader alone and
    acks=all produce is refused before the append with NOT_ENOUGH_REPLICAS (§6 step 3)."""
    _app, base = server
    open_page(page, base)
    page.keyboard.press("o")
    page.click(".dlg-tabs button[data-tab=new]")
    page.fill("#nc-name", "NER demo")
    page.select_option("#nc-version", "0.10")
    page.uncheck("#nc-producer")
    page.click("#nc-create")
    wait_store(page, "s.meta.name === 'NER demo' && s.partitions.has('orders-0') && s.partitions.get('orders-0').leader === 0")
    page.keyboard.press("c")
    form = page.locator("#dlg-config .form", has_text="orders")
    form.locator("input").fill("2")
    form.locator("button", has_text="set now").first.click()
    wait_store(page, "s.meta.topics[0].config['min.insync.replicas'] === 2")
    page.keyboard.press("Escape")
    expect(page.locator(".topic-head").first).to_contain_text("min.insync.replicas=2")
    for broker in (1, 2):                       # select with the digit key, crash with k
        page.keyboard.press(str(broker))
        page.keyboard.press("k")
        wait_store(page, f"s.brokers.get({broker}).state === 'stopped'")
    page.keyboard.press("]")
    page.keyboard.press("]")
    page.keyboard.press("]")                    # 10x
    wait_store(page, "s.partitions.get('orders-0').isr.length === 1", timeout=20000)
    expect(page.locator(".pcard[data-key='orders-0'] .badges")).to_contain_text("ISR < min.insync.replicas=2")
    page.click(".tabs button[data-tab=clients]")
    page.select_option("#produce-form select[aria-label=partition]", "0")
    page.fill("#produce-form input[aria-label=records]", "3")
    page.select_option("#produce-form select[aria-label=acks]", "all")
    page.click("#produce-button")
    wait_store(page, "['console-0','console-1','console-2'].every(id => s.ledger.some(r => r[0] === id && r[5] === 'failed'))")
    for i in range(3):
        expect(page.locator("#ledger tbody tr", has_text=f"console-{i}")).to_contain_text("NOT_ENOUGH_REPLICAS")
    expect(page.locator("#panel-clients .counts")).to_contain_text("NOT_ENOUGH_REPLICAS × 3")
    page.fill("#produce-form input[aria-label=records]", "2")
    page.select_option("#produce-form select[aria-label=acks]", "1")
    page.click("#produce-button")
    wait_store(page, "['console-3','console-4'].every(id => s.ledger.some(r => r[0] === id && r[5] === 'acked'))")
    page.screenshot(path=str(ARTIFACTS / "not-enough-replicas.png"))


def test_lose_an_acknowledged_record_under_0_10_and_see_why(page, server):
    """kip101-scenario-1-v0.10: broker 3 truncates to its high watermark 99 when it follows broker 2
    (pre-KIP-101), dropping the acknowledged p1-99; broker 3 is elected at 18009 ms without it. The
    run pauses on the violation; "Jump to cause" lands on the truncation. Under 2.6 nothing is lost."""
    _app, base = server
    open_page(page, base)
    pick_library(page, "kip101-scenario-1-v0.10")
    page.keyboard.press("m")
    page.wait_for_selector("#alarms:not([hidden])", timeout=20000)
    expect(page.locator("#alarms")).to_contain_text("run paused")
    alarm = page.locator("#alarms").inner_text()
    assert "acked_record_lost" in alarm and "orders-0" in alarm and "p1-99" in alarm
    expect(page.locator("#clock-state")).to_have_text("paused: violation", ignore_case=True)
    assert store(page, "s.clock.t_ms") == 18009
    page.click("#jump-cause")
    page.wait_for_selector(".ev.selected", timeout=3000)
    selected = page.locator(".ev.selected")
    text = selected.inner_text()
    assert "truncation" in text.lower() and "b3" in text and "truncate to the local high watermark 99" in text
    page.wait_for_selector(".pcard.hl[data-key='orders-0']", timeout=3000)
    page.click(".tabs button[data-tab=clients]")
    expect(page.locator("#panel-clients")).to_contain_text("p1-99")
    page.click(".tabs button[data-tab=timeline]")
    expect(page.locator(".ev.selected")).to_be_in_viewport()
    page.wait_for_timeout(700)                 # the smooth scroll to the selected cause
    page.evaluate("() => document.getElementById('toasts').replaceChildren()")
    page.screenshot(path=str(ARTIFACTS / "lost-record-0.10.png"))     # docs/screenshot.png
    # the same story under 2.6: leader-epoch truncation keeps the record
    run = store(page, "s.run")
    page.select_option("#era-select", "2.6")
    wait_store(page, "s.meta.kafka_version === '2.6' && s.run !== arg", arg=run)
    expect(page.locator("#notice")).to_contain_text("restarted under kafka_version 2.6")
    page.keyboard.press("m")
    wait_store(page, "s.clock.finished", timeout=20000)
    expect(page.locator("#alarms")).to_be_hidden()
    assert store(page, "s.records.lost") == 0 and store(page, "s.violations.length") == 0


def test_isr_change_notifications_appear_and_vanish_in_the_znode_tree(page, server):
    """isr-change-propagation (0.10): a leader's ISR change becomes a sequential znode under
    /isr_change_notification 5-7.5 s later; the controller reads it and deletes it (§4.2)."""
    _app, base = server
    open_page(page, base)
    pick_library(page, "isr-change-propagation")
    page.click(".tabs button[data-tab=zk]")
    page.keyboard.press(" ")
    wait_store(page, "!s.clock.playing")
    step = "() => window.isrlab.request('control', {action: 'step'}).then(r => r.events || [])"
    created = None
    for _ in range(300):     # step the story (the server's replies say what each step reached)
        created = next((e for e in page.evaluate(step) if e["type"] == "isr_change_notification"
                        and e.get("stage") == "created"), None)
        if created:
            break
    assert created, "no ISR change notification within 300 steps"
    wait_store(page, "s.events.some(e => e.type === 'isr_shrink') && s.znodes.has(arg)", arg=created["path"])
    shrink = store(page, "s.events.find(e => e.type === 'isr_shrink')")
    assert 5000 <= created["t_ms"] - shrink["t_ms"] <= 7500
    path = created["path"]
    row = page.locator(f".zrow[data-path='{path}']")
    row.wait_for()
    assert "isr_change_0000000000" in row.inner_text()
    for _ in range(50):
        if any(e["type"] == "isr_change_notification" and e.get("stage") == "processed" for e in page.evaluate(step)):
            break
    page.evaluate(step)          # the controller deletes the notification right after reading it
    wait_store(page, f"!s.znodes.has({path!r})")
    page.wait_for_selector(f".zrow[data-path='{path}']", state="detached", timeout=5000)
