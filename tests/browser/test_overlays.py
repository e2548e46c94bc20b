"""What floats over the page never hides what the page is about (issue 34, item 8): the violation
bar leaves the focused partition card and its chart in view after "Jump to cause"; a previous run's
toast does not stay over the next run; a long "What to watch" shows two lines until "more", so the
partitions stay above the fold at 1366x768."""
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import browser, context, open_page, serving, wait_store  # noqa: F401


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("overlays"), "overlays") as served:
        yield served


@pytest.fixture
def small_page(browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    yield page
    page.close()


def box(page, selector):
    return page.locator(selector).first.bounding_box()


def overlap(a, b):
    return a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"] \
        and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]


def test_the_violation_bar_leaves_the_jumped_to_partition_in_view(small_page, server):
    page = small_page
    _app, base = server
    open_page(page, base)
    assert page.evaluate("() => window.isrlab.load({library: 'kip101-scenario-1-v0.10'}, true)")["ok"]
    page.evaluate("() => window.isrlab.setSpeed('max')")
    wait_store(page, "s.clock.paused_reason === 'violation'", timeout=60000)
    bar = page.locator("#alarms")
    expect(bar).to_be_visible()
    page.click("#jump-cause")
    card = ".pcard[data-key='orders-0']"
    page.wait_for_timeout(800)                                  # the smooth scroll settles
    rows = page.locator(f"{card} .prow-label")
    for i in range(rows.count()):
        assert not overlap(rows.nth(i).bounding_box(), box(page, "#alarms")), f"replica row {i} under the alarm bar"
    # the chart can be scrolled clear of the bar: the main column keeps the bar's height below it
    page.locator(f"{card} .pchart").scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    assert not overlap(box(page, f"{card} .pchart canvas"), box(page, "#alarms"))


def test_at_1024x768_jump_to_cause_leaves_the_whole_card_clear_of_the_bar(browser, server):  # noqa: F811
    """At 1024 px the bar's title wraps to three lines: the room the main column keeps below its
    content is the bar's height with its words in it (it was measured empty, one line short, and
    the chart's bottom stayed under the bar)."""
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    try:
        _app, base = server
        open_page(page, base)
        assert page.evaluate("() => window.isrlab.load({library: 'kip101-scenario-1-v0.10'}, true)")["ok"]
        page.evaluate("() => window.isrlab.setSpeed('max')")
        wait_store(page, "s.clock.paused_reason === 'violation'", timeout=60000)
        page.click("#jump-cause")
        page.wait_for_timeout(900)                              # the smooth scroll settles
        bar = box(page, "#alarms")
        room = page.evaluate("() => parseFloat(getComputedStyle(document.documentElement).getPropertyValue('--alarm-space'))")
        assert room == pytest.approx(bar["height"] + 20, abs=1)
        card = box(page, ".pcard[data-key='orders-0']")
        assert bar["height"] > 60                               # it really is the tall, wrapped bar
        assert card["y"] + card["height"] <= bar["y"], (card, bar)
    finally:
        page.close()


def test_a_previous_runs_toast_does_not_stay_over_the_next_run(small_page, server):
    page = small_page
    _app, base = server
    open_page(page, base)
    page.evaluate("() => window.isrlab.command({op: 'crash', broker: 99})")   # refused: an error toast
    expect(page.locator(".toast.error")).to_have_count(1)
    page.wait_for_timeout(1600)
    assert page.evaluate("() => window.isrlab.load({library: 'isr-expansion'}, true)")["ok"]
    wait_store(page, "s.meta && s.meta.name.startsWith('ISR expansion')")
    expect(page.locator(".toast.error")).to_have_count(0)


def test_a_long_guide_is_two_lines_until_more(small_page, server):
    page = small_page
    _app, base = server
    open_page(page, base)
    assert page.evaluate("() => window.isrlab.load({library: 'isr-shrink-slow-follower'}, true)")["ok"]
    wait_store(page, "s.meta && s.meta.name.startsWith('ISR shrink')")
    text = page.locator("#story-text")
    line = float(page.evaluate("() => parseFloat(getComputedStyle(document.getElementById('story-text')).lineHeight)"))
    assert text.bounding_box()["height"] <= 2 * line + 2
    assert box(page, "#partitions")["y"] < 768 - 150          # the partitions start above the fold
    more = page.locator("#story-more")
    expect(more).to_be_visible()
    more.click()
    assert text.bounding_box()["height"] > 2 * line + 2
    expect(more).to_have_text("less")


@pytest.mark.parametrize("width", [1024, 1920])
def test_the_header_does_not_jump_with_the_title(browser, server, width):  # noqa: F811
    """Issue 34, item 8: the era selector and run controls stay where they are whether the story's
    title is short or long; a cut title keeps its whole text as a tooltip."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    _app, base = server
    open_page(page, base)
    places = []
    for story in ("isr-expansion", "kip279-fast-leader-changes-v2.0"):
        assert page.evaluate("(id) => window.isrlab.load({library: id}, true)", story)["ok"]
        wait_store(page, "s.meta && s.clock && s.clock.source && s.clock.source.name === arg", arg=story)
        places.append((box(page, "#era-select")["x"], box(page, "#toolbar")["x"]))
    name = page.locator("#scenario-name")
    assert name.get_attribute("title").startswith("KIP-279 under 2.0")
    page.close()
    assert places[0] == places[1], places


def test_the_scenario_picker_groups_and_searches_and_holds_the_run(page, server):  # noqa: F811
    """Issue 34, item 8: the picker lists the stories in groups by the kind of cluster, a search
    narrows them, and the run behind the picker stands still while it is open."""
    _app, base = server
    open_page(page, base)
    page.evaluate("() => window.isrlab.control('play')")
    wait_store(page, "s.clock.playing")
    page.click("#scenario-button")
    expect(page.locator("dialog#dlg-picker")).to_be_visible()
    wait_store(page, "!s.clock.playing")                     # held while the picker is open
    held_at = page.evaluate("() => window.isrlab.store.clock.t_ms")
    groups = page.locator(".pgroup").all_inner_texts()
    assert [g.split(" · ")[0].lower() for g in groups] == ["zookeeper", "zookeeper", "kraft"], groups
    page.fill(".psearch", "jepsen")
    expect(page.locator(".pitem")).to_have_count(1)
    expect(page.locator(".pitem")).to_have_attribute("data-id", "jepsen-partition-v0.10")
    page.fill(".psearch", "no such story at all")
    expect(page.locator(".pitem")).to_have_count(0)
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.isrlab.store.clock.t_ms") == held_at
    page.click("dialog#dlg-picker button.close")
    wait_store(page, "s.clock.playing")                      # closed without a new story: it goes on


def test_the_clients_tab_fits_its_panel_at_1024(browser, server):  # noqa: F811
    """Issue 34, item 8: at 1024 px the producers table's last column (its "stop" button) and the
    consumers table stay inside the side panel instead of being clipped."""
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    _app, base = server
    open_page(page, base)
    assert page.evaluate("() => window.isrlab.load({library: 'acks1-loss-on-failover'}, true)")["ok"]
    wait_store(page, "s.clients && s.clients.size > 0", timeout=20000)
    page.evaluate("() => window.isrlab.control('pause')")     # the table stops being redrawn
    wait_store(page, "!s.clock.playing")
    page.click(".tabs button[data-tab=clients]")
    stop = page.locator("#panel-clients table.grid button", has_text="stop").first
    expect(stop).to_be_visible()
    panel = box(page, "#panel-clients")
    right = stop.bounding_box()
    page.close()
    assert right["x"] + right["width"] <= panel["x"] + panel["width"], (right, panel)


def test_the_replay_chrome_leaves_room_for_the_cluster(small_page, server):
    """Issue 34, item 8: the replay's bar and narration tell the moment shown; the scenario's guide
    starts folded and the violation bar (the narration's twin) is not drawn over the partitions, so
    the cluster starts in the upper third of a 1366x768 screen (it started ~375 px down)."""
    from engine.scenario.library import library
    from tests.replay.test_browser import save_run
    page = small_page
    app, base = server
    rid = save_run(app.test_client(), {"scenario": library()["kip101-scenario-1-v0.10"], "title": "chrome"})
    page.goto(f"{base}/runs/{rid}")
    page.wait_for_function("() => window.isrlab && window.isrlab.store.meta && window.isrlab.store.clock")
    expect(page.locator("#story-toggle")).to_have_text("show")
    expect(page.locator("#story-text")).to_be_hidden()
    expect(page.locator("#alarms")).to_be_hidden()
    assert box(page, "#cluster")["y"] < 768 / 3 + 20, box(page, "#cluster")
    page.click("#story-toggle")
    expect(page.locator("#story-text")).to_be_visible()


def test_the_new_cluster_forms_checkboxes_sit_by_their_labels(small_page, server):
    """Issue 34, item 8: a checkbox of the new-cluster form starts its row's field column, like the
    inputs above and below it, instead of floating in the middle of the row."""
    page = small_page
    _app, base = server
    open_page(page, base)
    page.click("#scenario-button")
    page.click(".dlg-tabs button[data-tab=new]")
    unclean, lag = box(page, "#nc-unclean"), box(page, "#nc-lag")
    assert abs(unclean["x"] - lag["x"]) <= 4, (unclean, lag)
    consumer = box(page, "#nc-consumer")
    assert abs(consumer["x"] - lag["x"]) <= 4, (consumer, lag)
