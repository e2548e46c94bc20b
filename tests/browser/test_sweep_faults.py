"""A sweep whose runs drew no fault is not a clean bill of health (issue 34): the report says how
many faults each cell drew, a cell that drew none is hatched and says "untested" (not a white
"0%"), a banner says what to change when the sweep drew few or none, and a worst run opens in the
replay titled with its sweep, cell and seed, saying that it is being prepared while it is."""
import re

import pytest
from sqlalchemy import update

from app.sweeps.tables import analytics_cells, sweep_runs
from tests.browser.test_analytics_page import _rgb, _stored, app, base, stored  # noqa: F401  (the fixture under `stored`)


def _set_faults(app, faults, **by_cell):
    """Every stored run drew ``faults`` (cell ``c<n>``: ``by_cell``), and no cell lost a record."""
    with app.extensions["isrlab_analytics"].engine.begin() as conn:
        conn.execute(update(sweep_runs).values(faults=faults))
        for cell, n in by_cell.items():
            conn.execute(update(sweep_runs).where(sweep_runs.c.cell_id == int(cell[1:])).values(faults=n))
        conn.execute(update(analytics_cells).values(p_loss=0.0, runs_lost=0))


def test_a_cell_with_no_fault_is_untested_not_safe(page, base, app):
    _set_faults(app, 0)          # the smallest sweep's luck: its seeds drew no fault at all
    page.goto(base + "/analytics/web?m1=p_loss")
    page.wait_for_selector("#map-1 g.cell")
    cell = page.locator("#map-1 g.cell[data-cell='0']")
    assert cell.get_attribute("class").split()[:2] == ["cell", "untested"]
    assert cell.locator("text.value").text_content() == "untested"          # not a white "0%"
    assert cell.locator("text.faults").text_content() == "no fault drawn"
    assert "no fault drawn — untested, not safe" in cell.locator("title").text_content()
    fill = cell.locator("rect").get_attribute("fill")
    assert fill.startswith("url(#map-1-untested")                           # hatched, not a colour of the scale
    assert "untested: no fault drawn — untested, not safe" in page.locator("#map-1 .untested-key").text_content()
    banner = page.locator("#fault-warning")
    assert banner.is_visible()
    text = banner.inner_text()
    assert "drew no fault at all in its 4 run(s)" in text and "untested, not safe" in text
    assert "more seeds per cell" in text and "higher rates" in text
    assert "0 faults drawn" in page.locator("#report-facts").text_content()
    cell.click()
    page.wait_for_selector("#runs-table tbody tr")
    facts = page.locator("#cell-facts").inner_text()
    assert "untested" in facts and "no fault drawn — untested, not safe" in facts


def test_a_cell_that_drew_faults_says_how_many(page, base, app):
    _set_faults(app, 3, c2=0)
    page.goto(base + "/analytics/web?m1=p_loss")
    page.wait_for_selector("#map-1 g.cell")
    cell = page.locator("#map-1 g.cell[data-cell='0']")
    assert "untested" not in cell.get_attribute("class")
    assert cell.locator("text.value").text_content() == "0%"                # tested, and nothing lost
    assert cell.locator("text.faults").text_content() == "3 faults drawn"
    assert _rgb(cell.locator("rect").get_attribute("fill")) == (255, 255, 255)
    assert "untested" in page.locator("#map-1 g.cell[data-cell='2']").get_attribute("class")
    assert "1 of 4 cells drew no fault" in page.locator("#fault-warning").inner_text()
    assert "9 faults drawn" in page.locator("#report-facts").text_content()
    _set_faults(app, 3)                  # three faults per run everywhere: nothing to warn about
    page.reload()
    page.wait_for_selector("#map-1 g.cell")
    assert page.locator("#fault-warning").is_hidden() and page.locator("#map-1 g.cell.untested").count() == 0


def test_the_worst_run_opens_titled_with_its_sweep_cell_and_seed(page, base, app, stored):
    key, scenario = stored
    held = []
    # the first frame waits for the server's re-simulation: hold it to see what the page shows meanwhile
    page.route(re.compile(r".*/api/replay/[^/]+/frame.*"), lambda route: held.append(route))
    page.goto(base + f"/analytics/runs/{key}/replay")
    title = f"Sweep web, cell kafka_version=0.10, acks=1, seed {scenario['seed']}"
    page.wait_for_function("() => document.body.dataset.preparing === '1'")
    assert page.locator("#scenario-name").text_content() == title
    assert page.locator("#story-text").text_content().startswith("Preparing the replay: re-simulating this run")
    assert page.title() == f"{title} — ISR Lab replay"
    page.wait_for_function("() => /… [1-9] s$/.test(document.querySelector('#story-text').textContent)")
    for route in held:
        route.continue_()
    page.unroute_all(behavior="ignoreErrors")
    page.wait_for_function("() => document.body.dataset.ready === '1'", timeout=60000)
    assert page.locator("#scenario-name").text_content() == title
    story = page.locator("#story-text").text_content()
    assert story.startswith("Run 0 of the sweep “web sweep” (web): cell kafka_version=0.10, acks=1, seed ")
    assert "acknowledged record(s) lost" in story and "untitled" not in page.content()
    assert "A cluster of your own" not in story
