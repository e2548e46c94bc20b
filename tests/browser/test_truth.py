"""The picture tells the truth (issue 12): every view derives from the frame on screen (restart at
maximum speed, era switch), labels say what is true (the acks a producer really sent, who made an
operation happen, repeated events collapsed with a count, Long.MAX_VALUE as Kafka prints it) and
the record ledger can be filtered and paged."""
from playwright.sync_api import expect

from tests.browser.conftest import open_page, wait_store

KIP101 = "kip101-scenario-1-v0.10"


def load(page, scenario):
    run = page.evaluate("() => window.isrlab.store.run")
    page.evaluate("(id) => window.isrlab.load({library: id}, true)", scenario)
    wait_store(page, "s.clock.source && s.clock.source.name === arg[0] && s.meta && s.run !== arg[1]", arg=[scenario, run])


def cards_match_store(page):
    """Every card's facts line against the store's partition (leader, epoch, ISR), after a draw."""
    page.wait_for_timeout(250)
    return page.evaluate("""() => {
      const bad = [];
      for (const [key, p] of window.isrlab.store.partitions) {
        const card = document.querySelector(`.pcard[data-key='${key}'] .facts`);
        const want = `leader ${p.leader === -1 ? 'none' : p.leader} · epoch ${p.leader_epoch}`;
        const isr = `ISR [${p.isr.join(',')}]`;
        const text = card ? card.innerText.replace(/\\s+/g, ' ') : '(no card)';
        if (!text.includes(want) || !text.includes(isr)) bad.push(JSON.stringify([key, text, want, isr, card && card.closest('.pcard').__stale, card && card.closest('.pcard').__p && card.closest('.pcard').__p.leader_epoch, window.isrlab.store.clock.playing, window.isrlab.store.clock.t_ms, window.isrlab.store.clock.paused_reason]));
      }
      return bad;
    }""")


def test_restart_at_max_speed_then_era_switch_leave_no_stale_value(page, server):
    _app, base = server
    open_page(page, base)
    load(page, KIP101)
    page.click(".tabs button[data-tab=clients]")
    page.evaluate("() => window.isrlab.setSpeed('max')")
    wait_store(page, "s.clock.paused_reason === 'violation' && s.records && s.records.lost > 0", timeout=60000)
    expect(page.locator("#tab-count-clients")).to_contain_text("lost")
    page.click(".tabs button[data-tab=timeline]")
    # restart while at maximum speed: the cards follow the new run, not the old values
    run = page.evaluate("() => window.isrlab.store.run")
    page.evaluate("() => window.isrlab.control('restart')")
    wait_store(page, "s.run !== arg && s.clock.t_ms > 3000", arg=run, timeout=60000)
    page.evaluate("() => window.isrlab.control('pause')")
    wait_store(page, "!s.clock.playing")
    assert cards_match_store(page) == []
    # era switch with the clients tab hidden: the "N lost" badge belongs to the old run
    page.select_option("#era-select", "2.6")
    wait_store(page, "s.meta.kafka_version === '2.6' && s.records && s.records.lost === 0", timeout=60000)
    page.wait_for_timeout(200)
    assert page.inner_text("#tab-count-clients").strip() == ""
    assert cards_match_store(page) == []
    # the alarm's "run paused" follows the clock
    assert page.locator("#alarms").is_hidden() or "run paused" not in page.inner_text("#alarms")


def test_reconnect_redraws_from_the_full_frame(page, context, server):
    """A viewer that lost its connection while another one crashed a broker: after the reconnect
    the cards and the broker map say what the room says now."""
    _app, base = server
    open_page(page, base)
    wait_store(page, "s.clock.t_ms > 300 && s.partitions.get('orders-0').leader === 1")
    room = page.evaluate("() => window.isrlab.store.room")
    page.evaluate("() => window.isrlab.socket.disconnect()")
    other = context.new_page()
    other.goto(f"{base}/r/{room}")
    other.wait_for_function("(r) => window.isrlab.store.room === r && window.isrlab.store.brokers.size === 3", arg=room)
    other.evaluate("() => window.isrlab.command({op: 'crash', broker: 0})")
    other.wait_for_function("() => window.isrlab.store.brokers.get(0).state !== 'running'")
    other.close()
    assert page.evaluate("() => window.isrlab.store.brokers.get(0).state") == "running"    # not told yet
    page.evaluate("() => window.isrlab.socket.connect()")
    wait_store(page, "s.brokers.get(0).state !== 'running'", timeout=20000)
    page.wait_for_timeout(300)
    assert "DOWN" in page.locator("#nodes .node.broker[data-broker='0']").inner_text().upper()
    assert cards_match_store(page) == []


def test_producer_label_is_the_acks_it_sent_and_long_max_prints_as_kafka(page, server):
    _app, base = server
    open_page(page, base)
    wait_store(page, "s.clock.t_ms > 300")
    page.click(".tabs button[data-tab=clients]")
    page.fill("#produce-form input[aria-label=records]", "3")
    page.select_option("#produce-form select[aria-label=acks]", "all")
    page.click("#produce-button")
    wait_store(page, "s.clients.has('console') && s.clients.get('console').acks === 'all'")
    page.wait_for_timeout(200)
    row = page.locator("#panel-clients tr", has_text="console").first
    cells = row.locator("td").all_inner_texts()
    assert cells[2].startswith("all"), cells            # what it sent, not the era's default acks=1
    settings = row.get_attribute("data-settings")
    assert "acks=all" in settings and "enable.idempotence=" in settings, settings
    # Long.MAX_VALUE (log.flush.interval.messages) printed the way Kafka prints it
    page.evaluate("() => window.isrlab.openConfig()")
    cfg = page.locator("#dlg-config tr", has_text="log.flush.interval.messages").first
    text = cfg.inner_text()
    assert "9223372036854775807" in text and "9223372036854776000" not in text, text
    assert cfg.locator("input").input_value() == "9223372036854775807"
    # "set now" on a topic config: the dialog shows the value in force once the frames carry it
    topic_row = page.locator("#dlg-config .form", has_text="min.insync.replicas").first
    topic_row.locator("input").fill("2")
    topic_row.locator("button", has_text="set now").first.click()
    expect(topic_row.locator(".cfg-now").first).to_have_text("in force: 2")


def test_repeated_events_collapse_and_user_actions_are_not_faults(page, server):
    """min.insync.replicas=3 and the scenario's crash of broker 1 at 5 s: once the ISR shrinks, an
    acks=all send is retried every retry.backoff.ms with NOT_ENOUGH_REPLICAS, one event each."""
    _app, base = server
    open_page(page, base)
    wait_store(page, "s.clock.t_ms > 300")
    page.evaluate("() => window.isrlab.command({op: 'set_config', topic: 'orders', key: 'min.insync.replicas', value: 3})")
    page.evaluate("() => window.isrlab.setSpeed(10)")
    wait_store(page, "s.partitions.get('orders-0').isr.length < 3 && s.partitions.get('orders-0').leader !== -1", timeout=40000)
    page.evaluate("() => window.isrlab.command({op: 'produce', topic: 'orders', count: 3, acks: 'all', producer: 'rep'})")
    wait_store(page, "s.events.filter(e => e.type === 'produce_error' && e.producer === 'rep').length >= 8", timeout=40000)
    page.evaluate("() => window.isrlab.control('pause')")
    page.wait_for_timeout(400)
    counts = page.evaluate("() => [...document.querySelectorAll('#panel-timeline .ev')].filter(el => el.textContent.includes('produce error')"
                           " && el.querySelector('.where').textContent.includes('· rep ·')).map(el => Number(el.dataset.count || 1))")
    errors = page.evaluate("() => window.isrlab.store.events.filter(e => e.type === 'produce_error' && e.producer === 'rep').length")
    assert sum(counts) == errors and len(counts) <= 3, (counts, errors)
    expect(page.locator("#panel-timeline .ev .times", has_text="×").first).to_be_visible()
    # who made an operation happen: this viewer's command vs the scenario's injected fault
    expect(page.locator("#panel-timeline .ev .type", has_text="you did: set_config").first).to_be_attached()
    expect(page.locator("#panel-timeline .ev .type", has_text="fault injected: crash").first).to_be_attached()
    assert page.locator("#panel-timeline .ev .type", has_text="fault: ").count() == 0


def test_ledger_filters_by_status_and_producer_and_pages(page, server):
    _app, base = server
    open_page(page, base)
    wait_store(page, "s.clock.t_ms > 300")
    page.evaluate("() => window.isrlab.command({op: 'produce', topic: 'orders', count: 40, acks: 'all', producer: 'old'})")
    wait_store(page, "s.records.by_producer.old && s.records.by_producer.old.acked === 40", timeout=30000)
    page.evaluate("() => window.isrlab.command({op: 'produce', topic: 'orders', count: 40, acks: '1', producer: 'new'})")
    wait_store(page, "s.records.by_producer.new && s.records.by_producer.new.acked === 40", timeout=30000)
    page.evaluate("() => window.isrlab.control('pause')")      # the steady producer p1 would move the pages
    page.click(".tabs button[data-tab=clients]")
    # unfiltered: the newest 30 records only, all from "new"
    expect(page.locator("#ledger tbody tr", has_text="old-")).to_have_count(0)
    page.select_option("#ledger-producer", "old")
    expect(page.locator("#ledger-summary")).to_contain_text("of 40 matching")
    assert page.locator("#ledger tbody tr").count() == 40
    assert page.locator("#ledger tbody tr", has_text="new-").count() == 0
    page.select_option("#ledger-status", "acked")
    expect(page.locator("#ledger-summary")).to_contain_text("1–40 of 40 matching")
    page.select_option("#ledger-status", "failed")
    expect(page.locator("#ledger-summary")).to_contain_text("no record matches")
    # more than a page (the scenario's own producer p1 counts too): the older page holds old-0
    page.select_option("#ledger-producer", "")
    page.select_option("#ledger-status", "acked")
    expect(page.locator("#ledger-summary")).to_contain_text("1–50 of ")
    assert page.locator("#ledger tbody tr").count() == 50
    assert page.locator("#ledger tbody tr", has_text="old-0").count() == 0
    pages = 0
    while page.locator("#ledger tbody tr", has_text="old-0").count() == 0 and pages < 10:
        page.click("#ledger-older")
        pages += 1
        expect(page.locator("#ledger-summary")).to_contain_text(f"{pages * 50 + 1}–")
    assert pages > 0 and page.locator("#ledger tbody tr", has_text="old-0").count() == 1
    # the outcome chips print no "null" next to LOST (replaceChildren(null) did)
    assert "null" not in page.inner_text("#panel-clients .counts")


def _cards_and_clock(page):
    page.wait_for_timeout(400)
    return page.evaluate("""() => ({
      t: window.isrlab.store.clock.t_ms,
      cards: Array.from(document.querySelectorAll('.pcard')).map(c =>
        [c.dataset.key, c.querySelector('.facts').innerText.replace(/\\s+/g, ' ')]),
      brokers: Array.from(window.isrlab.store.brokers.values()).map(b => [b.id, b.state]),
    })""")


def test_a_reload_after_a_pause_at_max_speed_shows_what_the_page_showed(page, server):
    """Issue 34 item 11: a room restarted at maximum speed and paused; a reload of its link at that
    moment shows the same moment — leader, epoch and ISR of every partition — as before."""
    _app, base = server
    open_page(page, base)
    load(page, KIP101)
    page.evaluate("() => window.isrlab.setSpeed('max')")
    wait_store(page, "s.clock.t_ms > 2000", timeout=60000)
    run = page.evaluate("() => window.isrlab.store.run")
    page.evaluate("() => window.isrlab.control('restart')")
    wait_store(page, "s.run !== arg && s.clock.t_ms > 8000", arg=run, timeout=60000)
    page.evaluate("() => window.isrlab.control('pause')")
    wait_store(page, "!s.clock.playing")
    before = _cards_and_clock(page)
    assert before["cards"], before
    page.reload()
    page.wait_for_function("() => window.isrlab && window.isrlab.store.meta && window.isrlab.store.clock"
                           " && window.isrlab.store.partitions.size > 0")
    wait_store(page, "!s.clock.playing && s.clock.t_ms === arg", arg=before["t"])
    after = _cards_and_clock(page)
    assert after == before
    assert cards_match_store(page) == []
