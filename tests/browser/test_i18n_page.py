"""The live page in 中文 and in English (issue 33, first slice), in Debian's Chromium.

Scope, honestly: the zh-CN checks read the chrome this slice translated — the header and its
toolbar, the story bar's head, the panels' heads and legends, the side tabs and the timeline's
filters, the Clients and Faults tabs (forms, tables' heads, buttons; not the ledger's rows), the
ZooKeeper tab's note and the KRaft Quorum tab's head and voter lines, the alarm bar, a broker's
menu, and the help, scenario-picker (library and new-cluster form) and config dialogs — and fail on an English word
there that is not one of Kafka's own names (ALLOWED) or an identifier (a word with a digit, dot,
underscore or inner capital, or in capitals: ISR, HW, min.insync.replicas, zkVersion). They do not
read what the engine writes (timeline entries, the library's story titles and guides: those are
test_i18n_narration.py's; znode contents stay English, docs/i18n.md). The cards, zone boxes and
the other pages are read in test_zones_i18n.py and test_i18n_pages.py, the whole page with data
in every panel (znode tree, ledger rows, CLI corner, quorum panel, tooltips) in test_i18n_panels.py. The
English page must show no CJK character at all, except the switch's own "中文"."""
import re

import pytest

from tests.browser.conftest import ARTIFACTS, open_page, wait_store, watch

SHOTS = ARTIFACTS / "i18n"

#: Kafka's own names and the words a Chinese Kafka engineer leaves in English (house style of
#: /work/shared/seeds: Broker, leader epoch, offset, quorum...), units, keys and example values
ALLOWED = {
    "id", "stat", "Kafka", "kafka", "ZooKeeper", "KRaft", "Raft", "Broker", "Brokers", "broker", "Fetch", "Produce", "Metadata", "Vote", "Lab",
    "epoch", "leader", "controller", "znode", "znodes", "quorum", "Quorum", "offset", "offsets", "acks", "lag",
    "kill", "fsync", "earliest", "orders", "truncat", "Space", "Esc", "Home", "End", "s", "ms", "px", "true", "false", "all",
    "running", "starting", "stopped", "paused", "halted", "down", "fenced",        # broker states, as Kafka names them
    "crash", "shutdown", "isolate", "expire", "restart",                          # op names (docs/scenario-format.md)
    "follower", "candidate", "prospective", "unattached", "resigned",            # Raft roles (QuorumState)
    "state", "controlled", "fence", "fencing", "unclean", "clean",               # the state znode, controlled shutdown, fencing (KIP-320, KRaft)
    "describe",                                                                   # kafka-metadata-quorum.sh describe --status: a tool's subcommand
    "MBean",                                                                      # JMX: Kafka's metrics are named by MBean
    "console",                                                                    # the client id the page's "produce 10" commands use (a name, like kafka-console-producer's)
    "fault",                                                                      # an event type of the run result (a replay mark's title)
    "min",                                                                        # "min ISR" (UnderMinIsr), as the catalog writes it
    "Wilson",                                                                     # the Wilson score interval (a statistician's name)
    "fetch", "fetcher", "czxid", "retries", "latest",                            # Kafka's and ZooKeeper's words as the seeds keep them
    "Value", "Count", "Mean", "Max",                                             # Yammer's attribute names (a metric's JMX attributes)
    "ls", "get", "help", "topics", "brokers",                                    # the CLI corner's commands and --entity-type values
    "Spark",                                                                      # Apache Spark, which runs the sweeps
}
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")

# the words of the chrome under `selectors`: visible text and the title/placeholder/aria-label of
# its elements; the elements matched by `skip` (content, not chrome) are left out
_WORDS_JS = r"""
([selectors, skip]) => {
  const out = [];
  const skipped = el => skip.some(s => el.closest(s));
  for (const sel of selectors) for (const root of document.querySelectorAll(sel)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || skipped(el) || !el.getClientRects().length || getComputedStyle(el).visibility === "hidden") continue;
      if (n.textContent.trim()) out.push([sel, n.textContent.trim()]);
    }
    for (const el of [root, ...root.querySelectorAll("*")]) {
      if (skipped(el)) continue;
      for (const a of ["title", "placeholder", "aria-label"]) if (el.getAttribute(a)) out.push([sel + "@" + a, el.getAttribute(a)]);
    }
  }
  return out;
}
"""

CHROME = ["#topbar", "#story .story-head", "#cluster .panel-head", "#partitions .panel-head", "#side .tabs",
          ".tl-filters", ".tl-search", "#panel-clients h3", "#panel-network h3"]
CONTENT = ["#scenario-name", ".lang-switch a[lang='en']", "#era-select option", "#notice"]


def english_words(page, selectors, skip=CONTENT):
    """[(where, word, text)] for every English word of the chrome that is not allowed."""
    found = []
    for where, text in page.evaluate(_WORDS_JS, [selectors, skip]):
        for word in re.findall(r"(?:--|/)?[A-Za-z0-9][A-Za-z0-9_.=/#\-]*", text):     # --alter, 3.9-kraft, retries=5, /admin/x, Partition#maybeExpandIsr: one word
            word = word.rstrip(".-")
            identifier = (re.search(r"[0-9_.=/#\-]", word) or re.search(r"[a-z][A-Z]", word) or word.isupper())
            if not identifier and word not in ALLOWED and len(word) > 1:      # one letter: a key (o, c, ?)
                found.append((where, word, text[:80]))
    return found


@pytest.fixture
def zh_page(browser, request):
    """A page whose browser asks for zh-CN (Accept-Language), as a Chinese user's does."""
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000}, bypass_csp=True, locale="zh-CN")
    ctx.set_default_timeout(20000)
    p = watch(ctx.new_page())
    yield p
    SHOTS.mkdir(parents=True, exist_ok=True)
    p.screenshot(path=str(SHOTS / f"{request.node.name}.png"))
    ctx.close()
    assert p.errors == [], p.errors


def test_the_live_page_in_chinese_from_accept_language(zh_page, server):
    _, base = server
    open_page(zh_page, base)
    assert zh_page.evaluate("() => document.documentElement.lang") == "zh-CN"
    wait_store(zh_page, "document.querySelectorAll('#toolbar button[title]').length >= 4 && s.meta")
    zh_page.wait_for_function("() => document.getElementById('conn').textContent === '已连接'")
    assert english_words(zh_page, CHROME) == []
    words = zh_page.locator("#topbar").inner_text()
    for expected in ("场景", "分享", "场景 JSON", "保存运行", "中文"):
        assert expected in words, (expected, words)
    assert zh_page.get_attribute("#toolbar button[data-action='step']", "title") == "单步到下一个事件（n .）"
    # the Clients and Faults tabs: their forms, tables and buttons (the ledger's rows are records)
    zh_page.click("#side .tabs [data-tab='clients']")
    zh_page.wait_for_selector("#produce-button")
    assert (found := english_words(zh_page, ["#panel-clients"], skip=CONTENT + [".ledger", "#panel-clients td"])) == [], found
    zh_page.click("#side .tabs [data-tab='network']")
    zh_page.wait_for_selector("#panel-network button")
    assert (found := english_words(zh_page, ["#panel-network"])) == [], found
    zh_page.click("#side .tabs [data-tab='zk']")
    assert (found := english_words(zh_page, ["#panel-zk > div > .dim"])) == [], found
    # the CJK glyphs come from the app's own font (no outside fetch): the face loaded
    assert zh_page.evaluate("() => document.fonts.check('13px \"ISR Lab CJK\"', '副本')")
    assert zh_page.evaluate("async () => { await document.fonts.ready; return [...document.fonts]"
                            ".filter(f => f.family.includes('ISR Lab CJK')).map(f => f.status); }") == ["loaded"]


def test_the_dialogs_menu_and_alarm_in_chinese(page, server):
    _, base = server
    open_page(page, base, "/?lang=zh-CN")
    # help
    page.keyboard.press("?")
    page.wait_for_selector("#dlg-help[open]")
    assert page.locator("#dlg-help h2").text_content() == "ISR Lab — 帮助"
    assert (found := english_words(page, ["#dlg-help"])) == [], found
    page.keyboard.press("Escape")
    # a broker's menu
    page.locator(".node.broker").first.click()
    page.wait_for_selector("#menu:not([hidden])")
    assert english_words(page, ["#menu button"]) == []
    page.keyboard.press("Escape")
    # the config editor
    page.keyboard.press("c")
    page.wait_for_selector("#dlg-config[open] .cfg-table")
    assert english_words(page, ["#dlg-config .dlg-head", "#dlg-config h3", "#dlg-config th", "#dlg-config button",
                                "#dlg-config label", "#dlg-config .cfg-now", "#dlg-config .search-panel p"]) == []
    page.keyboard.press("Escape")
    # the picker: the library's chrome (its stories' titles and guides are content), the new-cluster form
    page.click("#scenario-button")
    page.wait_for_selector("#dlg-picker[open] .pitem")
    assert english_words(page, ["#dlg-picker .dlg-head", ".psearch", ".pgroup", "#run-scenario", ".pdetail .chip"],
                         skip=[".pname", ".pmeta"]) == []
    page.click(".dlg-tabs button[data-tab='new']")
    page.wait_for_selector("#nc-create")
    assert english_words(page, ["#dlg-picker .formgrid > label", "#nc-create", "#dlg-picker .row"]) == []
    # the import box on the same form (tool names and their flags are Kafka's, on the allowlist)
    page.click("#nc-import > summary")
    page.click("#nc-import .import-more > summary")
    assert (found := english_words(page, ["#nc-import > summary", "#nc-import > p", "#nc-import label",
                                          "#nc-import .import-more > summary", "#nc-import-read"])) == [], found
    page.click("#nc-import-read")
    assert (found := english_words(page, ["#nc-import-error"])) == [], found
    # a field error, as the form shows it
    page.fill("#nc-brokers", "0")
    page.click("#nc-create")
    err = page.locator(".field-err[data-field='brokers']").inner_text()
    assert err.startswith("Broker 数：0 不是 1 到 ") and err.endswith(" 之间的整数"), err
    assert page.locator("#nc-error").inner_text() == "有 1 个字段需要修改（红色标出）"
    page.keyboard.press("Escape")
    # the alarm bar: KIP-101 scenario 1 under 0.10 loses an acknowledged record
    page.evaluate("() => window.isrlab.load({ library: 'kip101-scenario-1-v0.10' })")
    wait_store(page, "s.clock && s.clock.source && s.clock.source.name === 'kip101-scenario-1-v0.10'")
    page.evaluate("() => window.isrlab.setSpeed('max').then(() => window.isrlab.store.clock.playing"
                  " || window.isrlab.store.violations.length || window.isrlab.control('play'))")
    page.wait_for_selector("#alarms:not([hidden])", timeout=60000)
    title = page.locator("#alarms .atitle").inner_text()
    assert re.match(r"^\d+ 次不变式违例 — ", title) and "acked_record_lost" in title, title
    assert english_words(page, ["#alarms"], skip=[".adetail"]) == []
    assert page.locator("#jump-cause").inner_text() == "跳到原因"
    # the chrome after the run: paused on the violation at speed max, one record lost (Clients tab)
    wait_store(page, "s.clock && !s.clock.playing")
    assert (found := english_words(page, CHROME)) == [], found
    assert page.locator("#speed-label").inner_text() == "最快"
    assert page.locator("#clock-state").inner_text() in ("已暂停：违例", "已结束")     # paused on it, or past it
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "alarm-zh-CN.png"))


def test_the_kraft_chrome_in_chinese(page, server):
    """A KRaft era: the Quorum tab, its voters' lines and the metadata log's head, the Faults
    tab's controller rows, the cluster panel's controller line."""
    _, base = server
    open_page(page, base, "/?lang=zh-CN")
    page.evaluate("() => window.isrlab.load({ library: 'controller-failover-kraft' })")
    wait_store(page, "s.quorum && s.quorum.active !== null && s.quorum.active !== undefined")
    assert page.locator("#side .tabs [data-tab='zk']").text_content() == "Quorum"
    assert page.locator("#controller-line").inner_text().startswith("活跃控制器：")
    page.click("#side .tabs [data-tab='zk']")
    page.wait_for_selector(".qvoter")
    assert "活跃控制器" in page.locator(".qvoter.active").inner_text()
    assert (found := english_words(page, [".qhead", ".qloghead", ".qvoter .qvid", ".qvoter .qv4", ".qvoter .qrole"])) == [], found
    page.click("#side .tabs [data-tab='network']")
    assert (found := english_words(page, ["#panel-network"])) == [], found
    assert (found := english_words(page, CHROME)) == [], found


def test_the_english_page_has_no_chinese(page, server):
    _, base = server
    open_page(page, base, "/?lang=en")
    assert page.evaluate("() => document.documentElement.lang") == "en"
    text_without_switch = ("() => { const c = document.body.cloneNode(true); c.querySelector('.lang-switch').remove();"
                           " return c.innerText + ' ' + [...c.querySelectorAll('[title],[placeholder],[aria-label]')]"
                           ".map(e => (e.title || '') + (e.placeholder || '') + (e.getAttribute('aria-label') || '')).join(' '); }")
    assert not CJK.findall(page.evaluate(text_without_switch))
    page.keyboard.press("?")
    page.wait_for_selector("#dlg-help[open]")
    assert not CJK.findall(page.locator("#dlg-help").inner_text())
    assert page.locator("#dlg-help h2").text_content() == "ISR Lab — help"


def test_the_switch_reloads_the_same_room_and_the_choice_persists(page, server):
    _, base = server
    open_page(page, base, "/?lang=en")
    room = page.evaluate("() => window.isrlab.store.room")
    assert page.locator(".lang-switch a[aria-current='true']").inner_text() == "English"
    with page.expect_navigation():
        page.click(".lang-switch a[data-lang='zh-CN']")
    page.wait_for_function("() => window.isrlab && window.isrlab.store.meta")
    assert page.evaluate("() => document.documentElement.lang") == "zh-CN"
    assert page.evaluate("() => window.isrlab.store.room") == room               # the same simulation
    assert page.locator(".lang-switch a[aria-current='true']").inner_text() == "中文"
    assert page.locator("#scenario-button .label").text_content() == "场景"
    # a new page of the same browser: the cookie keeps the choice
    other = watch(page.context.new_page())
    open_page(other, base)
    assert other.evaluate("() => document.documentElement.lang") == "zh-CN"
    with other.expect_navigation():
        other.click(".lang-switch a[data-lang='en']")
    other.wait_for_function("() => window.isrlab && window.isrlab.store.meta")
    assert other.evaluate("() => document.documentElement.lang") == "en"
    assert other.locator("#scenario-button .label").text_content() == "Scenario"
    assert other.errors == []
    other.close()


def test_a_share_link_opens_in_the_sharers_language(page, server, browser):
    _, base = server
    page.add_init_script("Object.defineProperty(navigator, 'clipboard', { value: undefined })")  # the link as a toast
    open_page(page, base, "/?lang=zh-CN")
    room = page.evaluate("() => window.isrlab.store.room")
    page.click("#topbar [data-action='share']")
    toast = page.locator("#toasts .toast", has_text="本房间的链接")
    url = toast.locator(".tbody").inner_text()
    assert url.startswith(base + "/r/") and url.endswith("?lang=zh-CN"), url
    # a student whose browser asks for English opens the teacher's link: the page is in Chinese
    ctx = browser.new_context(bypass_csp=True, locale="en-US")
    try:
        student = watch(ctx.new_page())
        open_page(student, base, url[len(base):])
        assert student.evaluate("() => document.documentElement.lang") == "zh-CN"
        assert student.evaluate("() => window.isrlab.store.room") == room
        assert student.errors == []
    finally:
        ctx.close()


def test_an_api_error_in_chinese_as_the_page_gets_it(page, server):
    _, base = server
    open_page(page, base, "/?lang=zh-CN")
    # the page's browser asks (its cookie says zh-CN; Playwright's request shares the context's cookies)
    reply = page.request.post(base + "/api/links", data={"scenario": {"brokers": 3, "topics": [{"name": "bad name!", "partitions": 1}]}})
    assert reply.status == 400
    assert reply.json()["error"]["field"] == "topics[0].name"
    assert reply.json()["error"]["message"] == "'bad name!' 不是合法的 Kafka 主题名"
    # and through the socket: a command the era refuses, shown in a toast in Chinese
    reply = page.evaluate("() => window.isrlab.request('create', { scenario: { brokers: 0 } })")
    assert reply["error"]["field"] == "brokers" and reply["error"]["message"] == "0 超出范围"

