"""Issue 15 "Done when": the same scenario under "2.6" and "2.7". Under 2.6 the leader writes the
ISR change to ZooKeeper and a child of /isr_change_notification appears in the ZooKeeper panel;
under 2.7 an AlterIsr request flies leader -> controller (named and coloured on the map), the card
says the shrink is pending, the controller answers and the ISR changes, and no notification child
ever exists (docs/model.md §4.2, §17)."""
import re

from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS, open_page, pick_library, store, wait_store

SCENARIO = "isr-shrink-zookeeper-vs-controller"
STEP = "() => window.isrlab.request('control', {action: 'step'}).then(r => r.events || [])"
FACTS = lambda page: page.locator(".pcard[data-key='orders-0'] .facts")  # noqa: E731
ALTER_RGB = (0xf0, 0xe4, 0x42)       # palette.js: AlterIsr / AlterPartition


def step_until(page, match, budget=800):
    for _ in range(budget):
        found = next((e for e in page.evaluate(STEP) if match(e)), None)
        if found:
            return found
    raise AssertionError("not reached within the step budget")


def canvas_has_colour(page, rgb, tolerance=24):
    return page.evaluate("""([r, g, b, tol]) => {
      const c = document.getElementById('wire');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < d.length; i += 4)
        if (d[i + 3] > 200 && Math.abs(d[i] - r) <= tol && Math.abs(d[i + 1] - g) <= tol && Math.abs(d[i + 2] - b) <= tol) return true;
      return false;
    }""", [*rgb, tolerance])


def test_2_6_through_zookeeper_and_2_7_through_the_controller(page, server):
    _app, base = server
    open_page(page, base)
    pick_library(page, SCENARIO)
    assert store(page, "s.meta.kafka_version") == "2.6"
    # the era picker says what distinguishes each era
    option = page.locator("#era-select option[value='2.7']")
    assert option.inner_text().startswith("2.7 · AlterIsr")
    assert "KIP-497" in option.get_attribute("title")
    assert "isr_change_notification" in page.locator("#era-select").get_attribute("title")
    legend = page.locator("#legend")
    expect(legend).to_contain_text("AlterIsr / AlterPartition")
    page.click(".tabs button[data-tab=zk]")
    page.keyboard.press(" ")
    wait_store(page, "!s.clock.playing")

    # -- 2.6: the leader's own write, then /isr_change_notification/isr_change_0000000000
    shrink = step_until(page, lambda e: e["type"] == "isr_shrink")
    wait_store(page, "s.partitions.get('orders-0').isr.join(',') === '1,0'")
    expect(FACTS(page)).to_contain_text(re.compile(r"ISR \[1,0\] · replicas"))
    expect(FACTS(page)).not_to_contain_text("pending")
    assert not store(page, "s.messages.some(m => m.type.startsWith('AlterIsr'))")
    created = step_until(page, lambda e: e["type"] == "isr_change_notification" and e.get("stage") == "created")
    assert 5000 <= created["t_ms"] - shrink["t_ms"] <= 7500
    row = page.locator(f".zrow[data-path='{created['path']}']")
    row.wait_for()
    assert "isr_change_0000000000" in row.inner_text()

    # -- 2.7: an AlterIsr in flight from the leader (1) to the controller (0)
    run = store(page, "s.run")
    page.select_option("#era-select", "2.7")
    wait_store(page, "s.meta.kafka_version === '2.7' && s.run !== arg", arg=run)
    page.evaluate("() => window.isrlab.control('pause')")
    wait_store(page, "!s.clock.playing")
    assert store(page, "s.meta.isr_path") == "controller"
    sent = step_until(page, lambda e: e["type"] == "alter_partition" and e.get("phase") == "sent")
    assert sent["broker"] == 1 and sent["proposed_isr"] == [1, 0] and sent["api"] == "AlterIsr"
    inflight = page.locator("#inflight-alter")
    expect(inflight).to_be_visible()
    expect(inflight).to_contain_text("AlterIsr b1 → b0 (controller)")
    assert store(page, "s.controller ? s.controller.broker : [...s.brokers.values()].find(b => b.controller).id") == 0
    assert canvas_has_colour(page, ALTER_RGB), "no AlterIsr-coloured dot on the map"
    # the card: the znode's ISR is unchanged, the shrink is pending
    wait_store(page, "(s.partitions.get('orders-0').isr_state || {}).pending === 'shrink'")
    expect(FACTS(page)).to_contain_text("ISR [1,0,2] → proposed [1,0] (pending shrink, AlterIsr waiting for the controller)")
    leaving = page.locator(".pcard[data-key='orders-0'] .prow-label", has_text="b2").locator(".isr")
    expect(leaving).to_have_text("ISR↘")                 # still committed, proposed out
    page.screenshot(path=str(ARTIFACTS / "alter-isr-in-flight-2.7.png"))
    # the controller answers: the ISR changes, committed
    step_until(page, lambda e: e["type"] == "isr_shrink")
    wait_store(page, "s.partitions.get('orders-0').isr.join(',') === '1,0'")
    expect(FACTS(page)).not_to_contain_text("pending")
    # to the end: no isr_change_notification child, ever
    page.evaluate("() => window.isrlab.setSpeed('max')")
    page.evaluate("() => window.isrlab.control('play')")
    wait_store(page, "s.clock.finished", timeout=60000)
    assert not store(page, "s.events.some(e => e.type === 'isr_change_notification')")
    assert not store(page, "[...s.znodes.keys()].some(p => p.startsWith('/isr_change_notification/'))")
    assert page.locator(".zrow[data-path^='/isr_change_notification/']").count() == 0
    expect(page.locator(".zrow[data-path='/isr_change_notification']")).to_have_count(1)
    # the story explains the round trip in Kafka's words
    page.click(".tabs button[data-tab=timeline]")
    answered = page.locator(".ev", has_text="AlterIsr answered").first
    expect(answered).to_contain_text("the controller wrote ISR [1,0]")
    expect(page.locator(".ev", has_text="AlterIsr sent").first).to_contain_text("sends AlterIsr for orders-0 to the controller")


def test_3_3_unclean_election_shows_recovering_until_the_first_expansion(page, server):
    """KIP-704 (docs/model.md §17.6): the controller writes leader_recovery_state 1 with an
    unclean election; the card says RECOVERING until the leader's first AlterPartition."""
    from tests.engine.test_alter_isr import lonely_leader
    _app, base = server
    open_page(page, base)
    run = store(page, "s.run")
    page.evaluate("(doc) => window.isrlab.load({scenario: doc}, true)", lonely_leader("3.3"))
    wait_store(page, "s.meta && s.meta.kafka_version === '3.3' && s.run !== arg", arg=run)
    page.evaluate("() => window.isrlab.control('pause')")
    wait_store(page, "!s.clock.playing")
    step_until(page, lambda e: e["type"] == "leader_elected" and e.get("kind") == "unclean")
    wait_store(page, "s.partitions.get('t-0').leader_recovery_state === 1")
    badge = page.locator(".pcard[data-key='t-0'] .badges .chip", has_text="RECOVERING")
    expect(badge).to_be_visible()
    assert "KIP-704" in badge.get_attribute("title")
    step_until(page, lambda e: e["type"] == "isr_expand")
    expect(badge).to_have_count(0)


def test_switching_eras_retells_the_story_instead_of_keeping_its_words(page, server):
    """Issue 34, item 1: after the era selector moves "KIP-101 scenario 1 under 0.10" to 2.6, the
    title and the guide on screen say they were written for 0.10 and that the run follows 2.6; a
    leader-failure story moved to 4.1 says what replaces ZooKeeper's session and watch; moving back
    restores the story's own words."""
    _app, base = server
    open_page(page, base)
    pick_library(page, "kip101-scenario-1-v0.10")
    own_title = page.locator("#scenario-name").inner_text()
    assert own_title.startswith("KIP-101 scenario 1 under 0.10")
    page.select_option("#era-select", "2.6")
    wait_store(page, "s.meta.kafka_version === '2.6'")
    expect(page.locator("#scenario-name")).to_have_text(own_title + " — rerun under 2.6")
    expect(page.locator("#story-text")).to_contain_text("[Written for Kafka 0.10; rerun under 2.6")
    page.select_option("#era-select", "0.10")
    wait_store(page, "s.meta.kafka_version === '0.10'")
    expect(page.locator("#scenario-name")).to_have_text(own_title)
    assert not page.locator("#story-text").inner_text().startswith("[Written for")
    pick_library(page, "broker-failure-clean-election")
    page.select_option("#era-select", "4.1")
    wait_store(page, "s.meta.kafka_version === '4.1' && s.quorum")
    story = page.locator("#story-text")
    expect(story).to_contain_text("KRaft has no ZooKeeper")
    expect(story).to_contain_text("broker.session.timeout.ms")
