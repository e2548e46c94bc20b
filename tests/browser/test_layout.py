"""Every page at 1024x768, 1366x768 and 1920x1080: no two visible sibling regions overlap and
nothing is clipped horizontally (checked by bounding boxes, tests/browser/layout.py), with a
screenshot of each page at each size in test-artifacts/layout/. Every page is checked in English
and in 中文 (their words are of other widths): the live page (ZooKeeper and KRaft), its side
panels with data in them and its dialogs, the replay, runs, compare and analytics pages, and the
page a link to a deleted run opens."""
import pytest
from sqlalchemy import insert

from app.sweeps import repo, spec
from app.sweeps.tables import analytics_cells
from engine.scenario.library import library
from engine.simulation import ENGINE_VERSION

from tests.browser.conftest import ARTIFACTS, browser, serving, wait_store, watch  # noqa: F401  (the fixture, reused)
from tests.browser.layout import SIZES, check_sizes, layout_problems
from tests.replay.test_browser import save_run

SHOTS = ARTIFACTS / "layout"
SWEEP = {"id": "layout", "name": "min ISR and truncation era",
         "grid": {"kafka_version": ["0.10", "2.6"], "acks": ["1", "all"], "min.insync.replicas": [1, 2]}, "seeds": 4}

# the regions whose children must not overlap, and the boxes that must not clip (per page)
TOP = ["body", "#topbar"]
LIVE = TOP + ["#layout", "#main", "#cluster .panel-head", "#partitions .panel-head", "#side .tabs", ".replay-bar",
              "#partition-list"]
LIVE_CLIP = ["#topbar", "#story", ".panel", "#side", ".replay-bar"]
RUNS = TOP + [".runs-main", "#filters"]
COMPARE = TOP + ["#compare-form", ".compare-panes"]
# a one-partition page uses the height it has: at most this much empty band under the last card
BAND = ("#main", "#partition-list .pcard", 40)
ANALYTICS = TOP + [".an-columns", ".an-toolbar", ".an-maps", "#cell-view", ".an-charts", ".an-facts", "#sweep-form",
                   ".an-form-grid"]
ANALYTICS_CLIP = ["#topbar", ".an-panel", ".an-map", ".an-toolbar"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("layout"), "layout") as (app, base):
        client = app.test_client()
        run_id = save_run(client, {"scenario": library()["kip101-scenario-1-v2.6"]})
        engine = app.extensions["isrlab_analytics"].engine
        sweep = spec.validate(SWEEP)
        cells = spec.cells(sweep)
        repo.register(engine, sweep, cells, ENGINE_VERSION)
        repo.set_status(engine, "layout", "done")
        with engine.begin() as conn:
            conn.execute(insert(analytics_cells), [
                {"sweep_id": "layout", "cell_id": c["cell_id"], "runs": 4, "runs_invalid": 0, "runs_error": 0,
                 "runs_lost": c["cell_id"] % 3, "p_loss": (c["cell_id"] % 3) / 4, "p_loss_lo": 0.0, "p_loss_hi": 0.8,
                 "runs_lost_acks_all": 0, "runs_violation": 0, "detect_samples": 1, "failover_samples": 1,
                 "nonconverged": 0} for c in cells])
        yield base, run_id


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    ctx.set_default_timeout(20000)
    p = watch(ctx.new_page())
    yield p
    ctx.close()


def _in(url, lang):
    """`url` in the language `lang` (the page keeps it in a cookie: the compare page's frames too)."""
    return url + ("&" if "?" in url else "?") + f"lang={lang}"


LANGS = pytest.mark.parametrize("lang", ["en", "zh-CN"])


def _live_ready(page):
    page.wait_for_function("() => window.isrlab && window.isrlab.store.clock && window.isrlab.store.meta"
                           " && document.querySelector('.pcard')")


def _replay_ready(page):
    page.wait_for_function("() => document.body.dataset.ready === '1' && document.querySelector('.pcard')")


def _assert_sound(found):
    assert found == {}, "\n".join(f"{size}: {p}" for size, problems in found.items() for p in problems)


@LANGS
def test_live_page(page, server, lang):
    base, _ = server

    def ready(p):
        _live_ready(p)
        p.wait_for_function("(lang) => document.documentElement.lang === lang", arg=lang)
    _assert_sound(check_sizes(page, _in(base + "/", lang), LIVE + [".topright", ".lang-switch", ".tl-filters"], LIVE_CLIP,
                              ready, SHOTS, f"live-{lang}", band=BAND))


@pytest.mark.parametrize("voters,lang", [(3, "en"), (5, "en"), (3, "zh-CN")])
def test_live_page_kraft(page, server, voters, lang):
    """A KRaft room (4.1): the controller voters in place of the ZooKeeper pill, the quorum panel
    open; no two nodes of the map overlap, none clips its text (a voter's LEO and HW included, once
    the metadata log is past offset 100), nor do the quorum panel's parts."""
    base, _ = server
    doc = {**library()["broker-failure-clean-election"], "kafka_version": "4.1", "name": "layout kraft",
           "description": "A KRaft cluster whose leader crashes at 5 s: fenced 9 s after its last heartbeat.",
           "controllers": [3000 + i for i in range(voters)]}
    reply = page.request.post(base + "/api/rooms", data={"scenario": doc}).json()
    assert reply["ok"], reply

    def ready(p):
        p.wait_for_function("(arg) => window.isrlab && window.isrlab.store.quorum && document.querySelector('.pcard')"
                            " && document.querySelectorAll('.node.voter').length === arg && document.querySelector('.qrec')"
                            " || (document.querySelector('.tabs button[data-tab=zk]').click(), false)", arg=voters)
        # three-digit offsets (a NoOp every 500 ms: ~120 a minute) must fit the voters' LEO/HW line
        p.evaluate("() => { const b = document.querySelector('#topbar button[data-action=max]');"      # its word is the language's
                   " if (b && window.isrlab.store.quorum.high_watermark < 100) b.click(); }")
        p.wait_for_function("() => window.isrlab.store.quorum.voters.every(v => v.log_end_offset >= 100 && v.high_watermark >= 100)",
                            timeout=60_000)
    found = check_sizes(page, _in(base + reply["url"], lang), LIVE + [".quorum", ".qvoters", ".qloghead"],
                        LIVE_CLIP + [".quorum", ".qvoter", ".node.voter", ".voter .vrow2", ".voter .vname", ".broker"],
                        ready, SHOTS, f"live-kraft-{voters}-{lang}", band=BAND, placed=["#nodes .node"])
    _assert_sound(found)


@LANGS
def test_replay_page(page, server, lang):
    base, run_id = server
    _assert_sound(check_sizes(page, _in(base + f"/runs/{run_id}", lang), LIVE, LIVE_CLIP, _replay_ready, SHOTS, f"replay-{lang}",
                              band=BAND))


@LANGS
def test_runs_page(page, server, lang):
    base, _ = server
    ready = lambda p: p.wait_for_selector("#runs tbody tr")  # noqa: E731
    _assert_sound(check_sizes(page, _in(base + "/runs", lang), RUNS, ["#topbar", ".runs-main", "#filters"], ready, SHOTS,
                              f"runs-{lang}"))


@LANGS
def test_error_page(page, server, lang):
    """The page a link to a deleted run opens: its title, message and buttons."""
    base, _ = server
    _assert_sound(check_sizes(page, _in(base + "/runs/999999", lang), ["body", ".runs-main", ".runs-main p"], [".runs-main"],
                              lambda p: p.wait_for_selector("#error-title"), SHOTS, f"error-{lang}"))


@LANGS
def test_compare_page(page, server, lang):
    base, run_id = server

    def ready(p):
        p.wait_for_selector("#divergence")
        for frame in ("#pane-a", "#pane-b"):
            p.frame_locator(frame).locator(".pcard").first.wait_for()
    found = check_sizes(page, _in(base + f"/compare?a={run_id}&era=0.10", lang), COMPARE,
                        ["#topbar", "#compare-form", ".compare-result", ".compare-axis"], ready, SHOTS, f"compare-{lang}",
                        frames=(LIVE, LIVE_CLIP))
    _assert_sound(found)


@LANGS
def test_analytics_pages(page, server, lang):
    base, _ = server
    found = check_sizes(page, _in(base + "/analytics", lang), ANALYTICS, ANALYTICS_CLIP,
                        lambda p: p.wait_for_selector("#sweeps-table tbody tr"), SHOTS, f"analytics-index-{lang}")
    found.update({f"report {k}": v for k, v in check_sizes(
        page, _in(base + "/analytics/layout?cell=0", lang), ANALYTICS, ANALYTICS_CLIP,
        lambda p: p.wait_for_selector("#cell-facts .fact"), SHOTS, f"analytics-report-{lang}").items()})
    _assert_sound(found)


# the side panels with data in them (a ZooKeeper run at 46 s, a KRaft run at 16 s), each tab in
# turn, and the dialogs: regions that must not overlap, boxes that must not clip
SIDE = ["#side .tabs", ".zk-root", ".zrow", ".ledger-filters", "#panel-clients .form", ".cli-in", ".presets",
        ".metrics-grid", ".mline", ".quorum", ".qvoters", ".qvoter", ".qloghead", ".qrec"]
SIDE_CLIP = ["#side", ".tab-panel", ".ledger", ".cli-in", ".qvoter", ".mcard"]
DIALOG = ["dialog[open] .dlg-head", "dialog[open] .dlg-tabs", "dialog[open] .formgrid", "dialog[open] .row",
          "dialog[open] .cfg-table tr"]
DIALOG_CLIP = ["dialog[open]", "dialog[open] .dlg-head"]
RUNS_TO = {"isr-shrink-slow-follower": 46000, "controller-failover-kraft": 16000}


def _run(page, base, story, lang):
    page.goto(_in(base + "/", lang))
    _live_ready(page)
    page.evaluate("(id) => window.isrlab.load({ library: id })", story)
    wait_store(page, "s.clock && s.clock.source && s.clock.source.name === arg && s.meta", arg=story)
    page.evaluate("(at) => window.isrlab.control('run_to', at)", RUNS_TO[story])
    wait_store(page, "s.clock && !s.clock.playing && s.clock.t_ms >= arg", arg=RUNS_TO[story], timeout=90000)


@LANGS
@pytest.mark.parametrize("story", list(RUNS_TO))
def test_side_panels_and_dialogs(page, server, lang, story):
    """One run, paused; at each size every side tab in turn (and the CLI corner after help and a
    describe), then the help, config and picker dialogs: no overlap, no clipping."""
    base, _ = server
    _run(page, base, story, lang)
    found = {}
    for w, h in SIZES:
        page.set_viewport_size({"width": w, "height": h})
        for name in ("zk", "clients", "cli", "metrics"):
            page.click(f"#side .tabs [data-tab='{name}']")
            if name == "cli" and not page.locator("#cli-out .help").count():
                for line in ("help", "kafka-topics.sh --describe"):
                    page.fill("#cli-input", line)
                    page.press("#cli-input", "Enter")
                page.wait_for_selector("#cli-out .help")
            page.wait_for_timeout(150)
            if problems := layout_problems(page, LIVE + SIDE, LIVE_CLIP + SIDE_CLIP):
                found[f"{w}x{h} {name}"] = problems
        page.screenshot(path=str(SHOTS / f"side-{story}-{lang}-{w}x{h}.png"))
        for key, opened in (("?", "#dlg-help[open]"), ("c", "#dlg-config[open] .cfg-table")):
            page.keyboard.press(key)
            page.wait_for_selector(opened)
            if problems := layout_problems(page, DIALOG, DIALOG_CLIP):
                found[f"{w}x{h} {opened}"] = problems
            page.keyboard.press("Escape")
        page.click("#scenario-button")
        page.wait_for_selector("#dlg-picker[open] .pitem")
        for tab in ("library", "new"):
            page.click(f".dlg-tabs button[data-tab='{tab}']")
            if problems := layout_problems(page, DIALOG, DIALOG_CLIP):
                found[f"{w}x{h} picker {tab}"] = problems
        page.keyboard.press("Escape")
    _assert_sound(found)
