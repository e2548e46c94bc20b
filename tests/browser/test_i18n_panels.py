"""The whole live page in 中文 and in English with data in every panel (issue 33): a ZooKeeper-mode
run (the znode tree with a znode open, the record ledger with rows and a filter, the Kafka CLI corner
after help, Kafka's tools and the corner's own errors, the metrics, the partition chart's and log
strips' tooltips, the broker and partition menus, the partition inspector) and a KRaft run (the
voters on the map, the quorum panel with a record open, kafka-metadata-quorum.sh), then every
dialog (help, config editor with its search panel, the scenario picker's three tabs).

zh-CN: every visible text and every title, placeholder and aria-label of the page (`body`) has no
English word outside test_i18n_page.ALLOWED (Kafka's names) and identifiers; what is left out is
content, named in CONTENT with the reason. en: no CJK character anywhere but the switch's "中文".
One page per language for the module (the runs are the slow part)."""
import re

import pytest

from tests.browser.conftest import ARTIFACTS, open_page, wait_store, watch
from tests.browser.test_i18n_page import CJK, english_words

SHOTS = ARTIFACTS / "i18n"

#: content, not chrome: what stays as Kafka, ZooKeeper or the user wrote it (docs/i18n.md)
CONTENT = [
    "#scenario-name", "#era-select option", "#notice",   # the story's own name; era notes name KIPs
    "#nc-version option", "#nc-import textarea",         # the same era notes; examples of Kafka's tools' output
    ".lang-switch",                                      # the other language's name, in itself
    ".kafka",                                            # lines Kafka's tools print (cli.js)
    ".presets", ".cli-out .cmd", "#cli-input",           # commands as typed, and the example commands
    ".zdata", ".zk-detail pre",                          # a znode's data and stat, as ZooKeeper keeps them
    ".facts",                                            # a partition's leader, epoch, zkVersion, ISR, replicas
    ".qtype", ".qtext", ".qdetail",                      # a metadata record's type and fields
    ".pname", ".pmeta",                                  # the picker's story titles (the library's words)
    "code",                                              # command lines (python -m app sweep …)
]
ZK_STORY, ZK_AT = "isr-shrink-slow-follower", 46000
KRAFT_STORY, KRAFT_AT = "controller-failover-kraft", 16000


class Leftovers:
    """What the page shows in the other language at each check, each word reported once (at the
    first place it shows), for one assertion at the end of a test."""

    def __init__(self, page, lang):
        self.page, self.lang, self.found, self.seen = page, lang, {}, set()

    def __call__(self, where):
        new = [p for p in leftovers(self.page, self.lang) if p[1:] not in self.seen]
        self.seen.update(p[1:] for p in new)
        if new:
            self.found[where] = new

    def done(self):
        """Fail with every leftover, one a line (an assert's message would be cut short)."""
        if self.found:
            pytest.fail("\n".join(f"{where}: {p}" for where, ps in self.found.items() for p in ps), pytrace=False)


def leftovers(page, lang):
    """What the page shows in the other language: English words in zh-CN, CJK characters in en."""
    if lang == "zh-CN":
        return english_words(page, ["body"], skip=CONTENT)
    return [(where, text[:80]) for where, text in page.evaluate(
        "([sel, skip]) => window.__words(sel, skip)", [["body"], [".lang-switch"]]) if CJK.search(text)]


@pytest.fixture(scope="module")
def pages(browser, server):
    """{lang: page}, each its own context asking for that language, opened once for the module."""
    _, base = server
    made, contexts = {}, []

    def get(lang):
        if lang not in made:
            ctx = browser.new_context(viewport={"width": 1600, "height": 1000}, bypass_csp=True,
                                      locale="zh-CN" if lang == "zh-CN" else "en-US")
            ctx.set_default_timeout(30000)
            contexts.append(ctx)
            page = watch(ctx.new_page())
            open_page(page, base, f"/?lang={lang}")
            page.evaluate(_EXPOSE)
            made[lang] = page
        return made[lang]
    yield get
    for ctx in contexts:
        ctx.close()


# the same walk over text and attributes as english_words, kept on the page for the English check
_EXPOSE = """() => { window.__words = (selectors, skip) => {
  const out = [], skipped = el => skip.some(s => el.closest(s));
  for (const sel of selectors) for (const root of document.querySelectorAll(sel)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || skipped(el) || !el.getClientRects().length) continue;
      if (n.textContent.trim()) out.push([sel, n.textContent.trim()]);
    }
    for (const el of [root, ...root.querySelectorAll('*')]) {
      if (skipped(el)) continue;
      for (const a of ['title', 'placeholder', 'aria-label']) if (el.getAttribute(a)) out.push([sel + '@' + a, el.getAttribute(a)]);
    }
  }
  return out; }; }"""


def run_story(page, story, at):
    """Load a library story and run it to `at` ms (the room pauses there)."""
    page.evaluate("(id) => window.isrlab.load({ library: id })", story)
    wait_store(page, "s.clock && s.clock.source && s.clock.source.name === arg && s.meta", arg=story)
    page.evaluate("(at) => window.isrlab.control('run_to', at)", at)
    wait_store(page, "s.clock && !s.clock.playing && s.clock.t_ms >= arg", arg=at, timeout=90000)


def tab(page, name):
    page.click(f"#side .tabs [data-tab='{name}']")
    page.wait_for_selector(f"#panel-{name}.active")


def cli(page, *lines):
    tab(page, "cli")
    for line in lines:
        before = page.locator("#cli-out > div").count()
        page.fill("#cli-input", line)
        page.press("#cli-input", "Enter")
        page.wait_for_function("(n) => document.querySelectorAll('#cli-out > div').length >= n + 2", arg=before)


def hover(page, selector):
    """Move the pointer over the middle of `selector`: its tooltip (#tooltip) shows."""
    box = page.locator(selector).first.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_selector("#tooltip:not([hidden])")
    return page.locator("#tooltip").inner_text()


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


LANGS = pytest.mark.parametrize("lang", ["zh-CN", "en"])


@LANGS
def test_a_zookeeper_run_in_every_panel(pages, lang):
    page = pages(lang)
    run_story(page, ZK_STORY, ZK_AT)
    check = Leftovers(page, lang)
    tab(page, "timeline")
    check("timeline")
    # the znode tree with an ephemeral znode open
    tab(page, "zk")
    page.click(".zrow[data-path='/brokers/ids/1']")
    page.wait_for_selector(".zk-detail pre")
    eph = page.locator(".zrow[data-path='/brokers/ids/1'] .eph").inner_text()
    assert re.fullmatch(r"临时节点 0x[0-9a-f]+" if lang == "zh-CN" else r"ephemeral 0x[0-9a-f]+", eph), eph
    check("zk")
    # the ledger's rows, then a filter the room answers
    tab(page, "clients")
    page.wait_for_selector("#ledger tbody tr")
    summary = page.locator("#ledger-summary").inner_text()
    assert re.fullmatch(r"最新的 \d+ 条消息" if lang == "zh-CN" else r"newest \d+ record\(s\)", summary), summary
    statuses = page.locator("#ledger tbody .status").all_inner_texts()
    assert statuses and all(s in (("已确认", "等待中", "失败", "无确认") if lang == "zh-CN" else ("acked", "pending", "failed", "unacknowledged"))
                            or s.isupper() for s in statuses), statuses       # a failed record shows Kafka's error
    check("clients")
    page.select_option("#ledger-status", "acked")
    page.wait_for_function("() => /\\d/.test(document.getElementById('ledger-summary').textContent)"
                           " && !/^(newest|最新)/.test(document.getElementById('ledger-summary').textContent)")
    check("ledger filtered")
    page.select_option("#ledger-status", "")
    tab(page, "network")
    check("faults")
    tab(page, "metrics")
    page.wait_for_selector(".mcard")
    check("metrics")
    # the CLI corner: help, Kafka's tools, Kafka's own errors and the corner's
    cli(page, "help", "kafka-topics.sh --describe", "get /controller", "ls /nope", "kafka-nope.sh",
        "kafka-metadata-quorum.sh describe --status", "kafka-topics.sh --list", "kafka-configs.sh --describe --entity-type users")
    out = page.locator("#cli-out").inner_text()
    assert "Topic: orders\tPartitionCount: 1" in out and "Node does not exist: /nope" in out     # as Kafka prints them
    if lang == "zh-CN":
        assert "未知命令：kafka-nope.sh（试试 help）" in out and "这里只支持 --describe" in out
        assert "清屏" in page.locator("#cli-out .help").inner_text()
    check("cli")
    # the partition chart's tooltip and a log strip's
    chart = hover(page, ".pchart-canvas")
    assert ("ISR 大小 " if lang == "zh-CN" else "ISR size ") in chart, chart
    check("chart tooltip")
    strip = hover(page, ".pstrip")
    assert "LEO " in strip and ("日志起始" if lang == "zh-CN" else "log start") in strip, strip
    check("strip tooltip")
    page.mouse.move(1, 1)
    # the menus of a broker and a partition, and the partition inspector
    page.locator(".node.broker").first.click()
    page.wait_for_selector("#menu:not([hidden])")
    check("broker menu")
    page.keyboard.press("Escape")
    page.locator(".pcard .phead").first.click()
    page.wait_for_selector("#menu:not([hidden]) button[data-item='inspect']")
    check("partition menu")
    page.click("#menu button[data-item='inspect']")
    page.wait_for_selector("#dlg-inspect[open] .inspect-table tbody tr")
    check("inspector")
    page.keyboard.press("Escape")
    # a command from the partition's menu: its toast names it in the page's language
    page.locator(".pcard .phead").first.click()
    page.click("#menu button[data-item='produce-all']")
    said = "向 orders-0 生产 10 条消息（acks=all）" if lang == "zh-CN" else "produce 10 to orders-0 (acks=all)"
    page.locator("#toasts .toast", has_text=said).wait_for()          # once the room has scheduled it
    check("toast")
    shot(page, f"panels-zk-{lang}")
    check.done()
    assert page.errors == [], page.errors


@LANGS
def test_a_kraft_run_in_every_panel(pages, lang):
    page = pages(lang)
    run_story(page, KRAFT_STORY, KRAFT_AT)
    check = Leftovers(page, lang)
    page.wait_for_selector(".node.voter")
    check("map")
    tab(page, "zk")
    page.wait_for_selector(".qrec.clickable")
    page.locator(".qrec.clickable").first.click()
    page.wait_for_selector(".qdetail:not([hidden])")
    hw = page.locator(".qhw").text_content()         # drawn in capitals by CSS
    assert re.fullmatch(r"高水位 \d+" if lang == "zh-CN" else r"high watermark \d+", hw), hw
    check("quorum")
    tab(page, "clients")
    check("clients")
    tab(page, "metrics")
    page.wait_for_selector(".mcard")
    check("metrics")
    cli(page, "help", "kafka-metadata-quorum.sh describe --status", "kafka-metadata-quorum.sh describe --replication",
        "ls /brokers/ids", "kafka-metadata-quorum.sh")
    out = page.locator("#cli-out").inner_text()
    assert "LeaderEpoch:" in out and "HighWatermark:" in out                       # as Kafka prints them
    if lang == "zh-CN":
        assert "KRaft 模式下没有 ZooKeeper" in out and "Raft 领导者、epoch 和高水位" in out
    check("cli")
    page.locator(".node.voter").first.click()
    page.wait_for_selector("#menu:not([hidden])")
    check("controller menu")
    page.keyboard.press("Escape")
    shot(page, f"panels-kraft-{lang}")
    check.done()
    assert page.errors == [], page.errors


@LANGS
def test_every_dialog(pages, lang):
    page = pages(lang)
    check = Leftovers(page, lang)
    page.keyboard.press("?")
    page.wait_for_selector("#dlg-help[open]")
    check("help")
    page.keyboard.press("Escape")
    page.keyboard.press("c")
    page.wait_for_selector("#dlg-config[open] .cfg-table")
    check("config editor")
    page.keyboard.press("Escape")
    page.click("#scenario-button")
    page.wait_for_selector("#dlg-picker[open] .pitem")
    check("picker: library")
    page.click(".dlg-tabs button[data-tab='new']")
    page.wait_for_selector("#nc-create")
    page.click("#nc-import > summary")
    page.click("#nc-import .import-more > summary")
    check("picker: new cluster and import")
    page.keyboard.press("Escape")
    check.done()
    assert page.errors == [], page.errors
