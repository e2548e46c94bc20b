"""The analytics report in Chromium: the heat maps are drawn from the JSON, a click on a cell
shows its numbers and its worst runs with a replay link, the view is in the URL (shareable), and
a sweep document typed into the form is validated with the field named."""
import logging
import threading

import pytest
from werkzeug.serving import make_server

from app import create_app, runner_of
from tests.reports.test_routes import stored as _stored  # noqa: F401  (the fixture, reused)


@pytest.fixture
def app(tmp_path):
    application = create_app({"RUNNER_AUTOSTART": False, "SECRET_KEY": "t", "INSTANCE_PATH": str(tmp_path),
                              "DATABASE_URL": f"sqlite:///{tmp_path}/store.db"})
    yield application
    runner_of(application).stop()


@pytest.fixture
def stored(_stored):
    return _stored


@pytest.fixture
def base(app, stored):
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()


def test_heat_map_cell_click_and_shareable_view(page, base, stored):
    key, _scenario = stored
    page.goto(base + "/analytics/web?m1=p_loss&m2=violation_share")
    page.wait_for_selector("#map-1 g.cell")
    assert page.locator("#map-1 g.cell").count() == 4
    values = page.locator("#map-1 g.cell text.value").all_text_contents()
    assert sorted(values) == ["0%", "0%", "50%", "50%"]
    assert page.locator("#metric-2").input_value() == "violation_share"
    page.locator("#map-1 g.cell[data-cell='0']").click()
    page.wait_for_selector("#runs-table tbody tr")
    assert "cell=0" in page.url                                  # the view is in the link
    assert page.locator("#cell-title").text_content() == "kafka_version=0.10, acks=1"
    href = page.locator("#runs-table a.replay").first.get_attribute("href")
    assert href == f"/analytics/runs/{key}/replay"
    assert page.locator("#chart-detect rect.bar").count() >= 1
    page.goto(page.url)                                          # opening the link shows the same view
    page.wait_for_selector("#runs-table tbody tr")
    assert page.locator("#map-1 g.cell.selected").get_attribute("data-cell") == "0"


def test_the_form_names_the_wrong_field(page, base):
    page.goto(base + "/analytics")
    page.wait_for_selector("#sweeps-table tbody tr")
    page.fill("#sweep-doc", '{"grid": {"acks": ["2"]}}')
    page.click("#sweep-form button[type=submit]")
    page.wait_for_function("() => document.querySelector('#form-message').textContent.length > 0")
    assert page.locator("#form-message").text_content().startswith("grid.acks[0]:")
    page.fill("#sweep-doc", '{"name": "<img src=x onerror=alert(1)>", "grid": {"acks": ["2"]}}')
    page.click("#sweep-form button[type=submit]")
    page.wait_for_timeout(300)
    # the two refusals are HTTP 400s, which Chromium logs to the console: expected here
    page.errors[:] = [e for e in page.errors if "status of 400" not in e]
