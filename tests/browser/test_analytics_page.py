"""The analytics report in Chromium: the heat maps are drawn from the JSON, a click on a cell
shows its numbers and its worst runs with a replay link, the view is in the URL (shareable), and
a sweep document typed into the form is validated with the field named. The colour scale is
fixed (0 % is white, a few percent a light tint), each sweep has one status, the sweep form builds
the sweep document from its fields, and the tables' headers sit over their numbers."""
import json
import logging
import threading

import pytest
from werkzeug.serving import make_server

from sqlalchemy import update

from app import create_app, runner_of
from app.reports.routes import WEB_LIMITS
from app.sweeps import spec
from app.sweeps.tables import analytics_cells, sweep_runs
from tests.reports.test_routes import stored as _stored  # noqa: F401  (the fixture, reused)


@pytest.fixture
def app(tmp_path):
    application = create_app({"RUNNER_AUTOSTART": False, "SECRET_KEY": "t", "INSTANCE_PATH": str(tmp_path),
                              "DATABASE_URL": f"sqlite:///{tmp_path}/store.db"})
    yield application
    runner_of(application).stop()


@pytest.fixture
def stored(_stored, app):
    """The routes' fixture, with a stored run in every cell that drew faults: the numbers these
    tests read are those of tested cells (a cell that drew none shows "untested": test_sweep_faults)."""
    from sqlalchemy import insert, select
    engine = app.extensions["isrlab_analytics"].engine
    with engine.begin() as conn:
        conn.execute(update(sweep_runs).values(faults=2))
        row = dict(conn.execute(select(sweep_runs)).mappings().first())
        conn.execute(insert(sweep_runs), [{**row, "run_key": f"{cell:020x}", "run_no": 100 + cell, "cell_id": cell}
                                          for cell in (1, 2, 3)])
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
    page.click("#tab-json")                                      # the raw document is the "Advanced" tab
    page.fill("#sweep-doc", '{"grid": {"acks": ["2"]}}')
    page.click("#sweep-form button[type=submit]")
    page.wait_for_function("() => document.querySelector('#form-message').textContent.length > 0")
    assert page.locator("#form-message").text_content().startswith("grid.acks[0]:")
    page.fill("#sweep-doc", '{"name": "<img src=x onerror=alert(1)>", "grid": {"acks": ["2"]}}')
    page.click("#sweep-form button[type=submit]")
    page.wait_for_timeout(300)
    # the two refusals are HTTP 400s, which Chromium logs to the console: expected here
    page.errors[:] = [e for e in page.errors if "status of 400" not in e]


def _rgb(fill):
    return tuple(int(x) for x in fill[fill.index("(") + 1:-1].split(","))


def _set_p_loss(app, values):
    engine = app.extensions["isrlab_analytics"].engine
    with engine.begin() as conn:
        for cell_id, p in values.items():
            conn.execute(update(analytics_cells).where(analytics_cells.c.cell_id == cell_id).values(p_loss=p))


def test_the_heat_map_has_a_fixed_labelled_scale(page, base, app):
    # 6.9 % as the sweep's largest value: an autoscaled map painted it its deepest red
    _set_p_loss(app, {0: 0.0, 1: 0.069, 2: 0.0, 3: 0.0})
    page.goto(base + "/analytics/web?m1=p_loss")
    page.wait_for_selector("#map-1 g.cell")
    fill = lambda cell: _rgb(page.locator(f"#map-1 g.cell[data-cell='{cell}'] rect").get_attribute("fill"))  # noqa: E731
    assert fill(0) == (255, 255, 255)                            # 0 % is white
    light = fill(1)
    top = _rgb(page.evaluate("() => import('/static/js/analytics/scale.js').then(m => m.colour(1))"))
    assert light != top and min(light) > 200, light               # a light tint, far from the top colour
    legend = page.locator("#map-1 .legend")
    assert legend.get_attribute("data-scale") == "linear"
    ticks = legend.locator("text.tick").all_text_contents()
    assert ticks[0] == "0%" and ticks[-1] == "100%" and "50%" in ticks
    title = page.locator("#map-1 g.cell[data-cell='1'] title").text_content()
    assert "6.9%" in title and "95% Wilson interval 0%–90%" in title   # the interval on hover
    page.select_option("#scale", "log")                          # the log option, kept in the link
    page.wait_for_selector("#map-1 .legend[data-scale='log']")
    assert "scale=log" in page.url and fill(0) == (255, 255, 255)
    assert sum(fill(1)) < sum(light)                              # a few percent stands out on the log scale
    assert page.locator("#map-1 .legend rect.zero").count() == 1


def _fulfil_with(page, pattern, change):
    """Answer `pattern` with the server's JSON as changed by `change(body)` (a job the test needs)."""
    def handler(route):
        response = route.fetch()
        body = response.json()
        change(body)
        route.fulfill(response=response, json=body)
    page.route(pattern, handler)


def test_one_status_per_sweep(page, base, app):
    from app.sweeps import repo
    repo.set_status(app.extensions["isrlab_analytics"].engine, "web", "done")
    job = {"kind": "analyze", "sweep_id": "web", "state": "running", "progress": None, "result": None,
           "returncode": None, "started": 0, "ended": None, "errors": []}

    def report(body):                   # stored "done", not analysed, and an analysis job running
        body.update(analysed=False, job=job)
        body["sweep"]["status"] = "done"
    _fulfil_with(page, "**/analytics/api/sweeps/web", report)
    page.goto(base + "/analytics/web")
    page.wait_for_selector("#sweep-status[data-state]")
    statuses = page.locator("#report-view .an-status")
    assert statuses.count() == 1 and statuses.get_attribute("data-state") == "running"
    assert page.locator("#report-view .an-pill").all_text_contents() == ["start spark and analyse…"]
    assert page.locator("#report-view .an-bar").count() <= 1
    assert page.locator("#not-analysed").is_hidden()
    shown = page.locator("#report-view").inner_text().lower()
    assert " done" not in shown.replace("analysed", "") and "not analysed" not in shown

    # a sweep that is still starting Spark is listed with that one step, before it is stored
    starting = {**job, "kind": "sweep", "sweep_id": "sw-new", "progress": {"stage": "starting Spark"}}
    _fulfil_with(page, "**/analytics/api/sweeps", lambda body: body.update(job=starting))
    page.goto(base + "/analytics")
    page.wait_for_selector("#sweeps-table tr[data-sweep='sw-new'] .an-status")
    for row in page.locator("#sweeps-table tbody tr").all():
        assert row.locator(".an-status").count() == 1 and row.locator(".an-bar").count() <= 1
    new = page.locator("#sweeps-table tr[data-sweep='sw-new']")
    assert new.locator(".an-steps li.current").text_content() == "Start Spark"
    assert new.locator(".an-steps li").all_text_contents() == ["Start Spark", "Simulate runs", "Analyse"]
    web = page.locator("#sweeps-table tr[data-sweep='web'] .an-status")
    assert web.get_attribute("data-state") == "done"              # it has its analysis (the fixture's rows)
    page.unroute_all(behavior="ignoreErrors")
    page.goto("about:blank")            # the page polls while a job runs: stop it before the server goes


EXPECTED = {
    "name": "era and unclean elections",
    "grid": {"kafka_version": ["0.10", "2.6"], "unclean.leader.election.enable": [False, True],
             "min.insync.replicas": [1, 2]},
    "base": {"brokers": 4, "duration_ms": 90000, "topics": [{"name": "t", "partitions": 2, "replication_factor": 3}],
             "clients": [{"name": "p1", "type": "producer", "topic": "t", "rate_per_s": 50}]},
    "seeds": {"first": 7, "count": 5},
    "faults": "none",
}


def test_the_sweep_form_builds_the_document(page, base):
    page.goto(base + "/analytics")
    page.wait_for_selector("#f-axes .an-axis")
    page.fill("#f-name", EXPECTED["name"])
    for field, value in (("#f-brokers", "4"), ("#f-partitions", "2"), ("#f-rf", "3"), ("#f-rate", "50"),
                         ("#f-duration", "90"), ("#f-seeds", "5"), ("#f-first-seed", "7")):
        page.fill(field, value)
    page.select_option("#f-faults", "none")
    rows = page.locator("#f-axes .an-axis")
    rows.nth(1).locator(".axis-name").select_option("unclean.leader.election.enable")
    rows.nth(1).locator(".axis-values").fill("false, true")
    assert "8 cell(s) × 5 seed(s) = 40 runs" in page.inner_text("#f-summary")
    page.click("#tab-json")                                       # the built document, as JSON
    assert json.loads(page.input_value("#sweep-doc")) == EXPECTED
    assert spec.validate(EXPECTED, WEB_LIMITS)["seeds"] == {"first": 7, "count": 5}
    page.click("#tab-fields")
    posted = []

    def accept(route):                  # no Spark here: the request is the thing checked
        posted.append(json.loads(route.request.post_data))
        route.fulfill(status=202, json={"ok": True, "sweep_id": "sw-x", "report": "/analytics/sw-x"})
    page.route("**/analytics/api/sweeps", lambda route: accept(route) if route.request.method == "POST"
               else route.continue_())
    page.click("#sweep-form button[type=submit]")
    page.wait_for_selector("#form-message a")
    assert posted == [EXPECTED]
    # a value the axis cannot take is named before anything is sent
    rows.nth(0).locator(".axis-values").fill("0.10, 9.9")
    page.click("#sweep-form button[type=submit]")
    # beside the axis's values, once (not again under the button)
    assert rows.nth(0).locator("xpath=following-sibling::div[contains(@class, 'field-err')][1]").inner_text().startswith('"9.9" is not one of')
    assert page.inner_text("#form-message").strip() == "" and len(posted) == 1


def test_table_headers_sit_over_their_columns(page, base):
    page.goto(base + "/analytics/web?cell=0")
    page.wait_for_selector("#runs-table tbody tr")
    for table in ("#runs-table", "#sweeps-table"):
        if table == "#sweeps-table":
            page.goto(base + "/analytics")
            page.wait_for_selector("#sweeps-table tbody tr")
        pairs = page.evaluate("""(sel) => {
          const t = document.querySelector(sel);
          const ths = [...t.querySelectorAll('thead th')];
          const tds = [...t.querySelectorAll('tbody tr:first-child td')];
          return ths.map((th, i) => [th.textContent, getComputedStyle(th).textAlign,
                                     getComputedStyle(tds[i]).textAlign,
                                     Math.round(th.getBoundingClientRect().right - tds[i].getBoundingClientRect().right)]);
        }""", table)
        for name, th_align, td_align, right in pairs:
            assert th_align == td_align and right == 0, (table, name, th_align, td_align, right)


def test_kafka_metric_outputs_are_chosen_like_the_others(page, base, app):
    """The runs' Kafka metrics (km_* of analytics_cells) are heat-map outputs in their own group,
    drawn from the report's numbers; a cell analysed without them says nothing of them."""
    engine = app.extensions["isrlab_analytics"].engine
    with engine.begin() as conn:
        for cell_id, unclean in {0: 0.0, 1: 1.5, 2: 0.25, 3: None}.items():
            conn.execute(update(analytics_cells).where(analytics_cells.c.cell_id == cell_id).values(
                km_runs=None if unclean is None else 2, km_unclean_elections_mean=unclean,
                km_under_min_isr_ms_mean=None if unclean is None else 2500.0,
                km_offline_max=None if unclean is None else 1, km_max_lag_peak=None if unclean is None else 5070))
    page.goto(base + "/analytics/web?m1=km_unclean_elections_mean&m2=km_under_min_isr_ms_mean")
    page.wait_for_selector("#map-1 g.cell")
    group = page.locator("#metric-1 optgroup")
    assert group.count() == 1 and "Kafka" in group.get_attribute("label")
    assert "UncleanLeaderElectionsPerSec count, per run" in group.locator("option").all_text_contents()
    values = {page.locator(f"#map-1 g.cell[data-cell='{c}']").get_attribute("data-cell"):
              page.locator(f"#map-1 g.cell[data-cell='{c}'] text.value").text_content() for c in range(4)}
    assert values == {"0": "0.00", "1": "1.5", "2": "0.25", "3": "–"}
    assert page.locator("#map-2 g.cell[data-cell='0'] text.value").text_content() == "2.50 s"
    page.locator("#map-1 g.cell[data-cell='1']").click()
    page.wait_for_selector("#cell-facts .fact")
    facts = page.locator("#cell-facts").inner_text()
    assert "UncleanLeaderElectionsPerSec count, per run" in facts and "peak MaxLag (messages)" in facts
    assert "5070" in facts
