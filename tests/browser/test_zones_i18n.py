"""The zone boxes in 中文 (issue 33): the story lose-one-zone (three racks; az-b crashes at 10 s) in a
zh-CN page at 1024, 1366 and 1920 px. Each box's state word, its name, button and title are
Chinese; a Chinese word does not push the header out of its box nor cut the zone's name."""
import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS, open_page, store, watch
from tests.browser.layout import placed_overlaps
from tests.browser.test_i18n_page import CJK, english_words
from tests.browser.test_truth import load
from tests.browser.test_zones import ZONES, check_zones, inside, settle, until, zone_boxes

#: what each rack's header shows, from the catalog (translations/zh_CN/LC_MESSAGES/messages.po)
ALL_UP, DOWN = "全部运行", "宕机"


def header_problems(page):
    """Each zone's header: its visible parts inside the zone's box and apart, none cutting its text."""
    problems = placed_overlaps(page, "#nodes .zone[data-rack] .zhead > *")
    for rack, part in page.evaluate("""() => [...document.querySelectorAll('#nodes .zone[data-rack]')].flatMap(z =>
        [...z.querySelector('.zhead').children].filter(c => !c.hidden && getComputedStyle(c).display !== 'none')
          .map(c => { const a = c.getBoundingClientRect(), b = z.getBoundingClientRect();
                      return [z.dataset.rack, {part: c.className, x: a.x, y: a.y, width: a.width, height: a.height,
                              box: {x: b.x, y: b.y, width: b.width, height: b.height}}]; }))"""):
        if not inside(part, part["box"]):
            problems.append(f"{rack}: {part['part']} outside its zone")
    return problems


@pytest.mark.parametrize("width,height", [(1024, 768), (1366, 768), (1920, 1080)])
def test_zone_boxes_speak_chinese_and_fit(browser, server, width, height):
    _app, base = server
    ctx = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True, locale="zh-CN")
    ctx.set_default_timeout(20000)
    page = watch(ctx.new_page())
    try:
        open_page(page, base, "/?lang=zh-CN")
        load(page, "lose-one-zone")
        settle(page)
        narrow = width < 1366
        for rack in ZONES:
            zone = page.locator(f"#nodes .zone[data-rack='{rack}']")
            expect(zone.locator(".zname")).to_have_text(f"可用区 {rack}")
            expect(zone.locator(".zstate")).to_have_text(ALL_UP)          # hidden in a narrow box: its title says it
            assert zone.locator(".zname").get_attribute("title").startswith(f"可用区 {rack}：{ALL_UP} · ")
            expect(zone.locator(".zact")).to_have_text("故障" if narrow else "让可用区故障")
        labels = {rack: f"可用区 {rack}" for rack in ZONES}
        assert check_zones(zone_boxes(page), ZONES, labels=labels) == []
        assert header_problems(page) == []
        assert (found := english_words(page, ["#nodes .zone"])) == [], found
        # the story's own fault: az-b crashes at 10 s; its header says so in Chinese
        until(page, "s.brokers.get(2).state === 'stopped' && s.brokers.get(3).state === 'stopped'")
        zone = page.locator("#nodes .zone[data-rack='az-b']")
        expect(zone.locator(".zstate")).to_have_text(DOWN)
        assert zone.locator(".zstate").is_visible() != narrow
        expect(zone.locator(".zact")).to_have_text("重启" if narrow else "重启可用区")
        assert f"可用区 az-b：{DOWN} · Broker 2, Broker 3" in zone.locator(".zname").get_attribute("title")
        expect(page.locator("#nodes .zone[data-rack='az-a'] .zstate")).to_have_text(ALL_UP)
        (ARTIFACTS / "i18n").mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "i18n" / f"zones-zh-CN-{width}x{height}.png"))
        assert check_zones(zone_boxes(page), ZONES, labels=labels) == []
        assert header_problems(page) == []
        assert (found := english_words(page, ["#nodes .zone"])) == [], found
        # the zone's menu: its title and items
        page.click("#nodes .zone[data-rack='az-b'] .zmore")
        expect(page.locator("#menu .mtitle")).to_have_text(f"可用区 az-b · {DOWN}")
        expect(page.locator("#menu button[data-item='zone-restart']")).to_contain_text("重启可用区 az-b：启动 它的 2 个 broker")
        assert (found := english_words(page, ["#menu"])) == [], found
        page.keyboard.press("Escape")
        # one broker cut off from every other: its zone counts it, in Chinese
        page.evaluate("() => window.isrlab.command({op: 'isolate', broker: 0, from: 'brokers'})")
        until(page, "(s.brokers.get(0).isolated_from || []).length > 0")
        expect(page.locator("#nodes .zone[data-rack='az-a'] .zstate")).to_have_text("1 个被隔离")
        assert header_problems(page) == []
        assert store(page, "document.documentElement.lang") == "zh-CN"
        assert page.errors == []
    finally:
        ctx.close()


def test_zone_boxes_in_english_have_no_chinese(page, server):
    _app, base = server
    open_page(page, base, "/?lang=en")
    load(page, "lose-one-zone")
    settle(page)
    expect(page.locator("#nodes .zone[data-rack='az-a'] .zstate")).to_have_text("all up")
    text = page.evaluate("() => [...document.querySelectorAll('#nodes .zone')].map(z => z.innerText + ' '"
                         " + [...z.querySelectorAll('[title]')].map(e => e.title).join(' ')).join(' ')")
    assert not CJK.findall(text), text


def test_broker_and_partition_cards_speak_chinese(browser, server):
    """The cards' details in zh-CN (issue 33, third slice): a broker's state word, its ZooKeeper
    session line and countdown once its zone is down, the partition cards' badges and the
    same-zone warning chip."""
    _app, base = server
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000}, bypass_csp=True, locale="zh-CN")
    ctx.set_default_timeout(20000)
    page = watch(ctx.new_page())
    try:
        open_page(page, base, "/?lang=zh-CN")
        load(page, "lose-one-zone")
        settle(page)
        card = page.locator("#nodes .node.broker[data-broker='0']")
        expect(card.locator(".state")).to_have_text("运行中")
        assert card.locator(".zktext").inner_text().startswith("ZK 已连接 · 0x")
        until(page, "s.brokers.get(2).state === 'stopped' && s.brokers.get(3).state === 'stopped'")
        down = page.locator("#nodes .node.broker[data-broker='2']")
        expect(down.locator(".state")).to_have_text("宕机")
        # the broker is gone, its ZooKeeper session lives on until it expires (zookeeper.session.timeout.ms)
        assert re.fullmatch(r"ZK 会话 0x[0-9a-f]+ 仍存活 · [\d.]+ s 后过期", down.locator(".zktext").inner_text())
        badges = page.locator(".pcard .badges .chip").all_inner_texts()
        assert any(re.fullmatch(r"领导者 [23] 宕机", b) for b in badges), badges
        assert (found := english_words(page, ["#nodes .node.broker", ".pcard .badges"])) == [], found
        # two replicas in one zone: the chip and its explanation
        load(page, "two-replicas-in-one-zone")
        settle(page)
        chip = page.locator(".pcard[data-key='orders-1'] .chip.zone-warn")
        expect(chip).to_have_text("⚠ az-b 中有 2 个副本")
        assert "orders-1 的副本 2, 3 都在可用区 az-b" in chip.get_attribute("title")
        assert page.errors == []
    finally:
        ctx.close()
