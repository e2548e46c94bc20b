""""Can this lose data?" in the config editor: a search under 0.10 finds a loss, shrinks it, and
its link opens the replay paused one second before the break (issue 6)."""
from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS, open_page, pick_library, store, wait_store


def test_search_from_the_config_editor_and_watch_the_counterexample(page, server):
    app, base = server
    app.config["SEARCH_USE_SPARK"] = False      # the Spark path is tested in tests/spark
    open_page(page, base)
    pick_library(page, "jepsen-partition-v0.10")
    page.keyboard.press("c")
    page.wait_for_selector("dialog#dlg-config[open] #search-start")
    page.fill("#search-runs", "60")
    page.click("#search-start")
    expect(page.locator("#search-result")).to_contain_text("acknowledged record", timeout=120000)
    result = page.locator("#search-result").inner_text()
    assert "Shrunk from" in result and "lost" in result
    steps = page.locator("#search-result .narration li")
    assert 3 <= steps.count() <= 60
    page.screenshot(path=str(ARTIFACTS / "counterexample-search.png"))
    href = page.locator("#search-open").get_attribute("href")
    moment = int(href.split("t=")[1].split("&")[0])
    page.click("#search-open")
    page.wait_for_function("() => window.isrlab && window.isrlab.store.clock && window.isrlab.store.meta")
    wait_store(page, "s.clock.t_ms === arg", arg=moment, timeout=30000)
    assert store(page, "s.clock.t_ms") == moment
