"""What the engine writes, in 中文 at display time (issue 33): a library story's title and guide,
the timeline's reasons and labels, the alarm bar's detail, in Debian's Chromium.

The run itself stays English (its history is what a saved run and the golden digests hold): the
page translates with the catalog and the reason patterns it embeds (app/i18n/reasons.py,
static/js/i18n_reasons.js, static/js/i18n_story.js). In zh-CN the story's words and the first 20
reasons of the timeline carry no English word outside Kafka's own names (test_i18n_page.ALLOWED,
and the few the house style keeps: fetch, czxid...); in English nothing Chinese shows. The
timeline panel holds its wider Chinese rows at 1024 and 1920 px."""
import pathlib
import re

from babel.support import Translations

from app.i18n.reasons import translate
from tests.browser.conftest import ARTIFACTS, open_page, wait_store
from tests.browser.layout import SIZES, check_sizes
from tests.browser.test_i18n_page import ALLOWED, CJK, english_words
from tests.browser.test_layout import LIVE, LIVE_CLIP

SHOTS = ARTIFACTS / "i18n"
STORY = "unclean-election-loss"
#: besides ALLOWED: the words the seed articles and this catalog leave in English in a narration
#: (Kafka's fetch and its fetcher thread, ZooKeeper's czxid, "end offset" of OffsetsForLeaderEpoch)
KEPT = {"fetch", "fetcher", "czxid", "end", "seek"}
HAN = re.compile(r"[\u4e00-\u9fff]")


def _run(page, base, lang):
    """``STORY`` loaded in ``lang`` and run to its first violation (the run pauses there)."""
    open_page(page, base, f"/?lang={lang}")
    run = page.evaluate("() => window.isrlab.store.run")
    page.evaluate("(id) => window.isrlab.load({library: id}, true)", STORY)
    wait_store(page, "s.clock && s.clock.source && s.clock.source.name === arg[0] && s.meta && s.run !== arg[1]", arg=[STORY, run])
    page.evaluate("() => window.isrlab.setSpeed(50)")
    wait_store(page, "s.clock.paused_reason === 'violation' || s.clock.finished", timeout=120000)
    page.wait_for_selector("#alarms:not([hidden]) .adetail")
    page.wait_for_function("() => document.querySelectorAll('.tl-list .ev .reason').length >= 20")


def _english(page, selectors):
    return [(where, word, text) for where, word, text in english_words(page, selectors, skip=[]) if word not in KEPT]


def test_a_story_its_reasons_and_its_alarm_in_chinese(page, server):
    _, base = server
    _run(page, base, "zh-CN")
    name, guide = page.text_content("#scenario-name"), page.text_content("#story-text")
    assert name == "不干净的领导者选举丢失已确认的消息"
    assert guide.startswith("unclean.leader.election.enable=true，min.insync.replicas=1。两个追随者都崩溃；")
    assert page.evaluate("() => document.title") == f"{name} — ISR Lab"
    assert page.evaluate("() => window.isrlab.store.meta.name") == "Unclean leader election loses acknowledged records"   # the run keeps its English
    assert (found := _english(page, ["#scenario-name", "#story-text"])) == [], found
    first = ".tl-list .ev:nth-child(-n+20) .reason"
    reasons = page.locator(first).all_text_contents()
    assert len(reasons) == 20 and all(HAN.search(r) for r in reasons), reasons
    assert (found := _english(page, [first, ".tl-list .ev:nth-child(-n+20) .type"])) == [], found
    # Kafka's names and the values pass through unchanged
    assert "已注册 /brokers/ids/0（broker epoch = czxid" in "\n".join(reasons)
    # the alarm: its detail (the engine's violation text) in Chinese, the invariant's id as it is
    detail = page.text_content("#alarms .adetail")
    assert re.fullmatch(r"\d+ 条以 acks=all 确认的消息不在领导者的日志中（例如 p1-\d+ 于 \d+ ms 在 offset \d+ 被确认；领导者在那里什么也没有，LEO \d+）(；Broker \d+ 在 epoch \d+ 中成为领导者)?", detail), detail
    assert (found := _english(page, ["#alarms .adetail"])) == [], found
    # the picker: the story's title and guide where the library is listed
    page.click("#scenario-button")
    page.wait_for_selector(f".pitem[data-id='{STORY}']")
    assert page.text_content(f".pitem[data-id='{STORY}'] .pname") == name
    page.click(f".pitem[data-id='{STORY}']")
    assert page.text_content(".pdetail h3") == name
    assert page.locator(".pdetail p").first.text_content() == guide
    assert "null" not in page.text_content(".pdetail")
    page.fill(".psearch", "不干净的领导者选举")                        # searching in the reader's words finds it
    assert page.locator(".pitem").count() >= 1 and page.locator(f".pitem[data-id='{STORY}']").count() == 1


def test_the_page_translates_every_reason_as_the_server_does(page, server):
    """static/js/i18n_reasons.js and app/i18n/reasons.py agree on every reason of a run (the same
    regular expressions in two engines, the same nesting and "; " rule)."""
    _, base = server
    _run(page, base, "zh-CN")
    texts = sorted({e for e in page.evaluate("() => window.isrlab.store.events.map(e => e.reason).filter(Boolean)")})
    assert len(texts) > 30
    shown = page.evaluate("async (texts) => { const m = await import('/static/js/i18n_reasons.js');"
                          " return texts.map(m.reason); }", texts)
    zh = Translations.load(str(pathlib.Path(__file__).resolve().parents[2] / "translations"), ["zh_CN"]).gettext
    assert shown == [translate(text, zh)[0] for text in texts]
    assert sum(1 for text, out in zip(texts, shown) if out != text) == len(texts)


def test_the_same_story_in_english_has_no_chinese(page, server):
    _, base = server
    _run(page, base, "en")
    assert page.text_content("#scenario-name") == "Unclean leader election loses acknowledged records"
    for sel in ("#scenario-name", "#story-text", "#panel-timeline", "#alarms"):
        text = page.locator(sel).inner_text()
        assert not CJK.search(text), (sel, CJK.search(text))
    assert "registered /brokers/ids/0 (broker epoch = czxid" in page.locator(".tl-list").inner_text()


def test_a_rerun_story_keeps_its_translation_and_says_so(page, server):
    _, base = server
    open_page(page, base, "/?story=isr-shrink-slow-follower&lang=zh-CN")
    page.wait_for_function("() => document.getElementById('scenario-name').textContent === '停止 fetch 的追随者被移出 ISR'")
    page.select_option("#era-select", "3.9-kraft")
    page.wait_for_function("() => window.isrlab.store.meta && window.isrlab.store.meta.kafka_version === '3.9-kraft'")
    page.wait_for_function("() => document.getElementById('scenario-name').textContent.endsWith('在 3.9-kraft 下重新运行')")
    assert page.text_content("#scenario-name") == "停止 fetch 的追随者被移出 ISR — 在 3.9-kraft 下重新运行"
    guide = page.text_content("#story-text")
    assert guide.startswith("[为 Kafka 2.6 编写；在 3.9-kraft 下重新运行，其规则可能讲出另一个故事] KRaft 没有 ZooKeeper：")
    assert "Broker 2 失去与其他 Broker 的连接" in guide


def test_the_timeline_in_chinese_at_1024_and_1920(page, server):
    _, base = server

    def ready(p):                        # past the ISR shrink (45 s): the long rows are on screen
        p.wait_for_function("() => window.isrlab && window.isrlab.store.clock && window.isrlab.store.meta")
        p.evaluate("() => { window.isrlab.setSpeed(50); if (!window.isrlab.store.clock.playing) window.isrlab.control('play'); }")
        wait_store(p, "s.clock.t_ms >= 46000 || s.clock.finished", timeout=60000)
        p.evaluate("() => window.isrlab.control('pause')")
        p.wait_for_function("() => document.querySelectorAll('.tl-list .ev .reason').length >= 12")

    widths = {w for w, _ in SIZES}
    assert {1024, 1920} <= widths
    problems = check_sizes(page, base + "/?story=isr-shrink-slow-follower&lang=zh-CN",
                           LIVE + ["#panel-timeline", ".tl-list", ".tl-list .ev", ".tl-list .evhead"],
                           clip=LIVE_CLIP + ["#panel-timeline", ".tl-list", ".tl-list .ev", ".tl-list .evhead", ".tl-list .reason"],
                           ready=ready, shots=SHOTS, name="timeline-zh")
    assert problems == {}
