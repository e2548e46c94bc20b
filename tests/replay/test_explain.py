"""Replays explain themselves (issue 12, item 6): a replay opened without a moment starts at its
first violation, titled, with a narration strip; the step buttons go from one event the timeline
shows to the next; "Copy link" gives a link that opens the same moment with the same partition
highlighted and the same broker selected; one transport bar."""
from engine.scenario.library import library

from tests.browser.conftest import browser  # noqa: F401  (the fixture, reused)
from tests.replay.test_browser import new_page, replay_ready, replay_t, save_run, server  # noqa: F401

KIP101 = "kip101-scenario-1-v0.10"      # loses p1-99 at 18009 ms (truncation to HW, then election)


def test_replay_without_a_moment_starts_at_its_first_violation_titled_and_narrated(server, browser, request):
    app, base = server
    doc = library()[KIP101]
    rid = save_run(app.test_client(), {"scenario": doc})       # untitled, as analytics saves them
    page = new_page(browser, request, "first-violation")
    page.goto(f"{base}/runs/{rid}")
    replay_ready(page)
    first = min(v[0] for v in page.evaluate("() => window.isrlab.replay.violations"))
    assert first > 0 and replay_t(page) == first
    assert page.inner_text("#replay-title").strip() == doc["name"]
    assert doc["name"] in page.title()
    assert page.evaluate("() => window.isrlab.store.ui.highlight.partitions.has('orders-0')")
    narration = page.inner_text("#replay-narration")
    assert "orders-0" in narration and "18.0" in narration and "truncation" in narration, narration
    # one transport: the live top bar's play/step/speed are not shown in a replay
    assert page.locator("#toolbar").is_hidden() and page.locator("#replay-play").is_visible()


def test_step_back_goes_to_the_previous_visible_event(server, browser, request):
    app, base = server
    rid = save_run(app.test_client(), {"scenario": library()[KIP101], "title": "steps"})
    page = new_page(browser, request, "step-visible")
    page.goto(f"{base}/runs/{rid}?t=12000")
    replay_ready(page)
    page.wait_for_function("() => window.isrlab.replay.story.length > 0")
    story = page.evaluate("() => window.isrlab.replay.story")
    here = page.evaluate("() => window.isrlab.replay.historyLen") - 1
    want = max(i for i, _t, _ty in story if i < here)
    page.click("#replay-back")
    page.wait_for_function("(i) => window.isrlab.store.ui.selectedEvent === i && !window.isrlab.replay.busy", arg=want)
    want_t = next(t for i, t, _ty in story if i == want)
    assert replay_t(page) == want_t
    # the selected row in the timeline is that event, and it is one the timeline shows
    assert page.locator(f"#panel-timeline .ev.selected[data-i='{want}']").count() == 1
    before = next(i for i, _t, _ty in reversed(story) if i < want)
    page.click("#replay-back")
    page.wait_for_function("(i) => window.isrlab.store.ui.selectedEvent === i && !window.isrlab.replay.busy", arg=before)
    page.click("#replay-forward")
    page.wait_for_function("(i) => window.isrlab.store.ui.selectedEvent === i && !window.isrlab.replay.busy", arg=want)
    assert page.errors == [], page.errors


def test_copy_link_round_trip_lands_on_the_same_moment_and_partition(server, browser, request):
    app, base = server
    rid = save_run(app.test_client(), {"scenario": library()[KIP101], "title": "link me"})
    page = new_page(browser, request, "copy-link")
    page.goto(f"{base}/runs/{rid}?t=15000")
    replay_ready(page)
    page.evaluate("() => window.isrlab.selectBroker(3)")
    page.locator(".pcard[data-key='orders-0'] .phead").click()
    page.click("#menu button[data-item='link']")
    page.wait_for_function("() => document.getElementById('replay-bar').dataset.link")
    url = page.get_attribute("#replay-bar", "data-link")
    shown = page.locator("#toasts .toast", has_text="Link").last.inner_text()
    assert url in shown, shown                      # the link is shown, not only put on a clipboard
    other = new_page(browser, request, "copy-link-opened")
    other.goto(url)
    replay_ready(other)
    assert replay_t(other) == 15000
    assert other.evaluate("() => window.isrlab.store.ui.highlight.partitions.has('orders-0')")
    assert other.evaluate("() => window.isrlab.store.ui.selectedBroker") == 3
    assert other.locator(".pcard.hl[data-key='orders-0']").count() == 1
    assert page.errors == [] and other.errors == [], (page.errors, other.errors)


def test_seek_back_and_fork_redraw_from_the_frame(server, browser, request):
    """Seeking from the violation back to before the crash, then forking: each page's cards say
    what its store says (leader, epoch, ISR), never what was drawn before."""
    from tests.browser.test_truth import cards_match_store
    app, base = server
    rid = save_run(app.test_client(), {"scenario": library()[KIP101], "title": "seek"})
    page = new_page(browser, request, "seek-fork")
    page.goto(f"{base}/runs/{rid}")
    replay_ready(page)
    assert "epoch 2" in page.inner_text(".pcard[data-key='orders-0'] .facts")
    page.evaluate("() => window.isrlab.seek(3000)")
    page.wait_for_function("() => window.isrlab.replay.t === 3000 && !window.isrlab.replay.busy")
    assert cards_match_store(page) == []
    assert "epoch 0" in page.inner_text(".pcard[data-key='orders-0'] .facts")
    page.click("#replay-fork")
    page.click("#menu button[data-item='fork-keep']")
    page.wait_for_url("**/r/*")
    page.wait_for_function("() => window.isrlab && window.isrlab.store.clock && window.isrlab.store.room"
                           " && window.isrlab.store.partitions.size")
    page.evaluate("() => window.isrlab.control('pause')")
    page.wait_for_function("() => !window.isrlab.store.clock.playing")
    assert cards_match_store(page) == []
