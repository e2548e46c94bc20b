"""The replay, compare, runs and analytics pages in 中文 and in English (issue 33): what their
JavaScript writes — the replay bar, its narration and menus, the compare page's verdict and record
lines, the runs table's rows and buttons, the sweeps list, the sweep form's summary, a report's
facts, heat maps, histograms and a cell's numbers. In zh-CN no English word is left outside
Kafka's own names (test_i18n_page.ALLOWED and identifiers); in English no CJK character at all.

Content stays as it is written and is left out: run titles and scenario names (a user's or the
library's words), the narration's event reasons and violation details (the engine writes them).
The compare verdict's sentence, its timing detail and the record fates are the server's words, in
the request's language (app/replay/compare_text.py): checked too."""
import re

import pytest

from engine.scenario.library import library
from tests.browser.conftest import ARTIFACTS, watch
from tests.browser.test_analytics_page import _stored, app, base, stored  # noqa: F401  (the fixtures, reused)
from tests.browser.test_i18n_page import CJK, english_words
from tests.browser.test_i18n_panels import CONTENT
from tests.replay.test_browser import save_run

SHOTS = ARTIFACTS / "i18n"
#: besides Kafka's words (CONTENT): the run's title, the narration's and the marks' quotes of what
#: the engine wrote (its reasons, the run result's event types), the server's timing detail
#: (docs/i18n.md, "Not translated yet")
PAGE_CONTENT = CONTENT + ["#replay-title", "#replay-narration", ".mark", "#timing-detail", "#variant-era option"]


def whole_page(page, where, skip=()):
    """Fail on English words anywhere on the page and in its frames (the compare page's two
    replays) but in PAGE_CONTENT and `skip`, each word once, one a line."""
    found = english_words(page, ["body"], skip=PAGE_CONTENT + list(skip))
    for frame in page.frames[1:]:
        found += [(frame.url.split("?")[0],) + w[1:] for w in english_words(frame, ["body"], skip=PAGE_CONTENT + list(skip))]
    if found:
        pytest.fail(f"{where}:\n" + "\n".join(sorted({f"{w[1]!r} in {w[2]!r}" for w in found})), pytrace=False)


#: the English page's text and titles, without the language switch (whose "中文" is its point)
_ALL_TEXT = ("() => { const c = document.body.cloneNode(true); c.querySelectorAll('.lang-switch').forEach(e => e.remove());"
             " return c.innerText + ' ' + [...c.querySelectorAll('[title],[placeholder],[aria-label]')]"
             ".map(e => (e.title || '') + ' ' + (e.placeholder || '') + ' ' + (e.getAttribute('aria-label') || '')).join(' '); }")


def open_in(browser, lang, width=1600, height=1000):
    ctx = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True,
                              locale="zh-CN" if lang == "zh-CN" else "en-US")
    ctx.set_default_timeout(30000)
    return ctx, watch(ctx.new_page())


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def no_cjk(page):
    text = page.evaluate(_ALL_TEXT)
    return CJK.findall(text)


@pytest.fixture(scope="module")
def saved(server):
    """A saved run of a story that loses an acknowledged record (KIP-101 under 0.10) and a calm one."""
    app_, base_ = server
    client = app_.test_client()
    return {"lost": save_run(client, {"scenario": library()["kip101-scenario-1-v0.10"], "title": "lost one"}),
            "calm": save_run(client, {"scenario": library()["isr-expansion"], "title": "calm one"})}


def replay_ready(page):
    page.wait_for_function("() => document.body.dataset.ready === '1' && window.isrlab.store.clock"
                           " && document.querySelector('#replay-status').textContent.length > 0")


def test_the_replay_page_in_chinese(browser, server, saved):
    _app, base_ = server
    ctx, page = open_in(browser, "zh-CN")
    try:
        page.goto(f"{base_}/runs/{saved['calm']}?lang=zh-CN")
        replay_ready(page)
        assert page.evaluate("() => document.documentElement.lang") == "zh-CN"
        bar = page.locator("#replay-bar")
        assert bar.locator(".replay-badge").inner_text() == "回放"
        assert page.locator("#replay-fork").inner_text() == "分叉…"
        assert page.locator("#replay-status").inner_text().startswith("事件 ")
        assert page.locator("#conn").inner_text() == "回放"
        # the narration's frame is the page's (a calm run: no event reason in it)
        page.evaluate("() => window.isrlab.seek(window.isrlab.replay.end)")
        page.wait_for_function("() => document.querySelector('#replay-narration').textContent.includes('没有违反不变式')")
        assert (found := english_words(page, ["#replay-bar"], skip=["#replay-title", "#replay-narration"])) == [], found
        assert (found := english_words(page, ["#topbar"], skip=["#scenario-name", ".lang-switch a[lang='en']", "#era-select option"])) == [], found
        # the fork menu and a broker's menu
        page.click("#replay-fork")
        page.wait_for_selector("#menu:not([hidden])")
        assert page.locator("#menu .mtitle").inner_text() == "分叉这次运行"
        assert (found := english_words(page, ["#menu"])) == [], found
        page.keyboard.press("Escape")
        page.locator(".node.broker").first.click()
        page.wait_for_selector("#menu:not([hidden]) button[data-item='fork']")
        assert (found := english_words(page, ["#menu"])) == [], found
        page.keyboard.press("Escape")
        # the whole page, each side tab in turn (the same panels as the live page's)
        for name in ("timeline", "zk", "clients", "cli", "metrics"):
            page.click(f"#side .tabs [data-tab='{name}']")
            page.wait_for_timeout(300)
            whole_page(page, f"replay, {name} tab")
        shot(page, "replay-zh-CN")
        # a run with a violation: the narration's own words around the engine's
        page.goto(f"{base_}/runs/{saved['lost']}?lang=zh-CN")
        replay_ready(page)
        page.wait_for_function("() => document.querySelector('#replay-narration').dataset.state === 'violation'")
        narration = page.locator("#replay-narration").inner_text()
        assert re.search(r"(^消息 \d+.*，)?\d[\d.]* s 时 orders-\d+ 中的 [a-z_]+：", narration), narration
        assert page.errors == []
    finally:
        ctx.close()


def test_the_runs_page_in_chinese(browser, server, saved):
    _app, base_ = server
    ctx, page = open_in(browser, "zh-CN")
    try:
        page.goto(f"{base_}/runs?lang=zh-CN")
        page.wait_for_selector(f"#runs tr[data-id='{saved['lost']}']")
        assert re.fullmatch(r"\d+ 次运行", page.locator("#total").inner_text())
        row = page.locator(f"#runs tr[data-id='{saved['lost']}']")
        assert CJK.search(row.locator(".chip").inner_text())                 # lost records
        assert row.locator("button[data-act='rename']").inner_text() == "重命名"
        skip = [".run-title", "#runs td:nth-child(3)", ".src", "#scenario option", "#era option"]
        assert (found := english_words(page, ["#filters", "#runs", ".pager"], skip=skip)) == [], found
        whole_page(page, "runs", skip)
        row.locator("button[data-act='delete']").click()
        assert row.locator("button[data-act='delete']").inner_text() == "确定删除？"
        shot(page, "runs-zh-CN")
        # the page a link to a run that is gone opens
        page.goto(f"{base_}/runs/999999?lang=zh-CN")
        page.errors[:] = [e for e in page.errors if "status of 404" not in e]      # the page's own status: the run is gone
        assert page.inner_text("#error-title") == "没有这个运行"
        whole_page(page, "the error page")
        assert page.errors == []
    finally:
        ctx.close()


def test_the_compare_page_in_chinese(browser, server):
    _app, base_ = server
    ctx, page = open_in(browser, "zh-CN")
    try:
        page.goto(f"{base_}/compare?a=isr-shrink-zookeeper-vs-controller&era=2.7&lang=zh-CN")
        page.wait_for_selector("#divergence")
        page.wait_for_function("() => document.querySelector('#compare-status').textContent.startsWith('比较用时')")
        # one ISR change at two moments: the verdict is the page's own sentence
        assert page.inner_text("#divergence").startswith("到 ")
        assert "2.6：领导者自己写 znode" in page.inner_text("#isr-path")
        assert (found := english_words(page, ["#compare-form", "#divergence", "#isr-path", "#records-lost",
                                              "#record-counts", "#timing-detail", ".compare-fates",
                                              ".compare-axis"],
                                       skip=["#variant-era option"])) == [], found     # era notes name KIPs (as the live page's era menu)
        page.wait_for_selector("#lane-b .mark.alter_partition")
        for frame in ("#pane-a", "#pane-b"):
            page.frame_locator(frame).locator(".pcard").first.wait_for()
        whole_page(page, "compare")
        assert " 的 alter_partition" in page.get_attribute("#lane-b .mark.alter_partition", "title")
        shot(page, "compare-zh-CN")
        assert page.errors == []
    finally:
        ctx.close()


def test_the_analytics_pages_in_chinese(browser, base):  # noqa: F811  (the fixture)
    ctx, page = open_in(browser, "zh-CN")
    try:
        page.goto(base + "/analytics?lang=zh-CN")
        page.wait_for_selector("#sweeps-table tbody tr")
        page.wait_for_function("() => document.querySelector('#f-summary').textContent.length > 0")
        assert page.inner_text("#f-summary") == "8 格 × 25 个种子 = 200 次运行"
        assert (found := english_words(page, ["#sweeps-table", "#f-axes", "#f-summary", "#questions"],
                                       skip=["#sweeps-table td:first-child a", "#sweeps-table td:first-child .dim", "#questions code"])) == [], found
        assert page.inner_text("#sweeps-table td:first-child .dim") == "web · 4 格"          # the sweep's id, then ours
        whole_page(page, "analytics", ["#sweeps-table td:first-child a", "#sweeps-table td:first-child .dim"])   # sweeps' names and ids
        page.goto(base + "/analytics/web?lang=zh-CN&m1=p_loss&m2=km_offline_ms_mean")
        page.wait_for_selector("#map-1 g.cell")
        page.locator("#map-1 g.cell[data-cell='0']").click()
        page.wait_for_selector("#runs-table tbody tr")
        assert page.inner_text("#runs-table tbody tr td.replay, #runs-table a.replay") == "回放 ▶"
        assert (found := english_words(page, ["#report-facts", "#sweep-status", "#fault-warning", "#map-1", "#map-2",
                                              "#cell-facts", "#cell-invariants", "#runs-table", "#chart-detect"])) == [], found
        labels = page.evaluate("() => [...document.querySelectorAll('#metric-1 option, #metric-1 optgroup')]"
                               ".map(o => o.label || o.textContent)")
        assert all(CJK.search(label) for label in labels), labels
        whole_page(page, "analytics report", ["#page-title"])          # the sweep's name, as its author wrote it
        shot(page, "analytics-zh-CN")
        assert page.errors == []
    finally:
        ctx.close()


def test_the_pages_in_english_have_no_chinese(browser, server, saved, base):  # noqa: F811
    _app, base_ = server
    ctx, page = open_in(browser, "en")
    try:
        page.goto(f"{base_}/runs/{saved['lost']}?lang=en")
        replay_ready(page)
        page.wait_for_function("() => document.querySelector('#replay-narration').dataset.state === 'violation'")
        assert page.locator(".replay-badge").inner_text() == "REPLAY"
        assert not no_cjk(page)
        page.goto(f"{base_}/runs?lang=en")
        page.wait_for_selector(f"#runs tr[data-id='{saved['lost']}']")
        assert not no_cjk(page)
        page.goto(f"{base_}/runs/999999?lang=en")
        page.errors[:] = [e for e in page.errors if "status of 404" not in e]      # the page's own status: the run is gone
        assert page.inner_text("#error-title") == "No such run"
        assert not no_cjk(page)
        page.goto(f"{base_}/compare?a=isr-shrink-zookeeper-vs-controller&era=2.7&lang=en")
        page.wait_for_selector("#isr-path")
        assert not no_cjk(page)
        page.goto(base + "/analytics?lang=en")
        page.wait_for_function("() => document.querySelector('#f-summary').textContent.length > 0")
        assert page.inner_text("#f-summary") == "8 cell(s) × 25 seed(s) = 200 runs"
        assert not no_cjk(page)
        page.goto(base + "/analytics/web?lang=en")
        page.wait_for_selector("#map-1 g.cell")
        page.locator("#map-1 g.cell[data-cell='0']").click()
        page.wait_for_selector("#runs-table tbody tr")
        assert not no_cjk(page)
        assert page.errors == []
    finally:
        ctx.close()
