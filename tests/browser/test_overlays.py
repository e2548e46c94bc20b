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
