"""The server's side of the two languages (app/i18n): which language a request gets, the pages'
words, the catalog the browser gets, error replies in Chinese with the English field, share links
that carry the language, and the CJK font served from the machine."""
import json
import re
import struct

import pytest

from app.i18n import COOKIE, lang_tag
from app.i18n.errors import PATTERNS, translate_message
from app.i18n.fonts import cjk_font_path
from app.i18n.sfnt import extract_face, face_offsets
from app.replay import links as linkcodec

ZH = {"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"}
HAN = re.compile(r"[\u4e00-\u9fff]")


def html_lang(response):
    return re.search(r'<html lang="([^"]+)">', response.get_data(as_text=True)).group(1)


@pytest.mark.parametrize("value, tag", [("zh-CN", "zh-CN"), ("zh_CN", "zh-CN"), ("zh", "zh-CN"), ("zh-Hans", "zh-CN"),
                                        ("en", "en"), ("en-US", "en"), ("fr", None), ("zh-TW", None), (None, None), (3, None)])
def test_language_tags(value, tag):
    assert lang_tag(value) == tag


def test_the_language_comes_from_accept_language_then_the_cookie_then_the_query(http):
    assert html_lang(http.get("/")) == "en"                              # no header, no cookie
    assert html_lang(http.get("/", headers={"Accept-Language": "fr-FR,fr;q=0.9"})) == "en"
    assert html_lang(http.get("/", headers=ZH)) == "zh-CN"
    assert html_lang(http.get("/", headers={"Accept-Language": "fr;q=1, zh-CN;q=0.5"})) == "zh-CN"
    # ?lang= wins over the header and is remembered in a cookie
    reply = http.get("/?lang=en", headers=ZH)
    assert html_lang(reply) == "en" and f"{COOKIE}=en" in reply.headers["Set-Cookie"]
    assert html_lang(http.get("/", headers=ZH)) == "en"                   # the cookie outranks the header
    assert html_lang(http.get("/?lang=zh-CN")) == "zh-CN"
    assert html_lang(http.get("/")) == "zh-CN"
    assert html_lang(http.get("/?lang=klingon")) == "zh-CN"              # an unknown one changes nothing
    assert "Set-Cookie" not in http.get("/?lang=zh-CN").headers          # already chosen: nothing to set


@pytest.mark.parametrize("path", ["/", "/runs", "/compare", "/analytics", "/s/nothing"])
def test_every_page_has_the_switch_and_its_words_in_chinese(http, path):
    zh = http.get(path + "?lang=zh-CN").get_data(as_text=True)
    en = http.get(path + "?lang=en").get_data(as_text=True)
    for page, current in ((zh, "zh-CN"), (en, "en")):
        switch = re.search(r'<nav class="lang-switch".*?</nav>', page, re.S).group(0)
        assert '>中文</a>' in switch and '>English</a>' in switch
        assert re.search(rf'data-lang="{current}"[^>]*aria-current="true"', switch)
        assert "/static/css/i18n.css" in page
    title = re.search(r"<title>(.*?)</title>", zh).group(1)
    assert HAN.search(title), title
    body = re.sub(r'<script type="application/json".*?</script>|<nav class="lang-switch".*?</nav>', "", en, flags=re.S)
    assert not HAN.search(body), HAN.findall(body)[:5]                     # English pages: no Chinese


def test_the_live_page_in_chinese(http):
    page = http.get("/?lang=zh-CN").get_data(as_text=True)
    for words in ("看点", "集群", "分区", "时间线", "分享", "已刷盘", "副本不足", "Kafka 命令行"):
        assert words in page, words
    for english in (">Share<", ">What to watch<", ">Timeline ", ">Faults<"):
        assert english not in page


def test_the_browser_gets_the_catalog_of_its_language_and_only_the_browsers_share(http):
    def catalog(path):
        text = http.get(path).get_data(as_text=True)
        return json.loads(re.search(r'<script type="application/json" id="i18n-catalog">(.*?)</script>', text, re.S).group(1))
    zh = catalog("/?lang=zh-CN")
    assert zh["Jump to cause"] == "跳到原因" and zh["{n} watching"] == "{n} 人在看"
    assert "%(value)s is out of range" not in zh          # a server-side message: not sent to the page
    assert "What to watch" in zh                          # both a template's and a module's word
    assert catalog("/?lang=en") == {}


def test_an_api_error_in_chinese_keeps_its_english_field(http):
    en = http.post("/api/links", json={"scenario": {"brokers": 0}}, headers={"Accept-Language": "en"}).get_json()
    zh = http.post("/api/links", json={"scenario": {"brokers": 0}}, headers=ZH).get_json()
    assert en["error"]["field"] == zh["error"]["field"] == "brokers"
    assert en["error"]["message"] == "0 is out of range" and en["error"]["allowed"] == "an integer from 1 to 64"
    assert zh["error"]["message"] == "0 超出范围" and zh["error"]["allowed"] == "1 到 64 之间的整数"
    # an application error (app/web/links.py)
    zh = http.post("/api/links", json={"run": "x"}, headers=ZH).get_json()["error"]
    assert (zh["field"], zh["message"], zh["allowed"]) == ("run", "不是运行 id", "已保存运行的 id")


def test_a_socket_error_in_chinese(app, sio, http):
    client = sio.test_client(app, headers=ZH)
    try:
        reply = client.emit("create", {"scenario": {"brokers": 3, "topics": [{"name": "bad name!", "partitions": 1}]}},
                            callback=True)
    finally:
        client.disconnect()
    assert reply["error"]["field"] == "topics[0].name"
    assert reply["error"]["message"] == "'bad name!' 不是合法的 Kafka 主题名"
    assert reply["error"]["allowed"] == "1–249 个字符，取自 a-z A-Z 0-9 . _ -"


def test_a_message_the_catalog_does_not_know_stays_english(app):
    with app.test_request_context("/?lang=zh-CN"):
        assert translate_message("something nobody wrote down") == "something nobody wrote down"
        assert translate_message("unknown field") == "未知字段"
        assert translate_message("7 is out of range") == "7 超出范围"
        assert translate_message("cannot crash broker 2: it is stopped at that point of the timeline") \
            == "无法对 Broker 2 执行 crash：在时间线的这一时刻它处于 stopped 状态"
    with app.test_request_context("/?lang=en"):
        assert translate_message("7 is out of range") == "7 is out of range"


def test_every_pattern_has_distinct_slots():
    for msgid in PATTERNS:
        slots = re.findall(r"%\((\w+)\)s", msgid)
        assert slots and len(slots) == len(set(slots)), msgid


def test_the_era_notes_in_chinese(http):
    notes = http.get("/api/eras?lang=zh-CN").get_json()["notes"]
    assert notes["2.6"]["short"] == "ISR 经由 ZooKeeper" and "/isr_change_notification" in notes["2.6"]["text"]
    assert http.get("/api/eras?lang=en").get_json()["notes"]["2.6"]["short"] == "ISR via ZooKeeper"


def test_share_links_carry_the_language(http):
    assert linkcodec.scenario_link("1abc", t_ms=5, lang="zh-CN") == "/l/1abc?t=5&lang=zh-CN"
    assert linkcodec.run_link("xyz") == "/s/xyz"
    made = http.post("/api/links", json={"scenario": {"brokers": 3}, "t_ms": 1000, "lang": "zh-CN"}).get_json()
    assert made["url"].startswith("/l/1") and made["url"].endswith("?t=1000&lang=zh-CN")
    # whoever opens it reads the page in that language, whatever the browser asks for
    assert html_lang(http.get(made["url"], headers={"Accept-Language": "en"})) == "zh-CN"
    bad = http.post("/api/links", json={"scenario": {"brokers": 3}, "lang": "fr"}).get_json()["error"]
    assert bad["field"] == "lang" and bad["allowed"] == "en or zh-CN"


def test_the_cjk_font_is_served_by_the_app_as_one_aligned_face(http):
    path = cjk_font_path()
    assert path, "no CJK font installed: scripts/setup.sh installs fonts-wqy-zenhei"
    reply = http.get("/fonts/cjk")
    assert reply.status_code == 200 and reply.mimetype == "font/ttf"
    assert "max-age=604800" in reply.headers["Cache-Control"]           # fetched once a week at most
    data = reply.get_data()
    assert data[:4] in (b"\x00\x01\x00\x00", b"OTTO")                    # one face, not a collection
    num = struct.unpack_from(">H", data, 4)[0]
    tags = []
    for i in range(num):
        tag, _check, offset, length = struct.unpack_from(">4sIII", data, 12 + 16 * i)
        assert offset % 4 == 0 and offset + length <= len(data), tag     # what Chromium's sanitiser needs
        tags.append(tag)
    assert tags == sorted(tags) and {b"cmap", b"glyf", b"head"} <= set(tags) and b"FFTM" not in tags


def test_extract_face_of_a_collection():
    """A two-face collection whose second table sits at an odd offset comes out aligned."""
    # a ttcf header naming one directory twice, then table data at odd offsets
    tables = [(b"cmap", b"CMAPDATA!"), (b"FFTM", b"x" * 7), (b"head", b"HEADDATA")]
    dir_at = 12 + 8
    data_at = dir_at + 12 + 16 * len(tables)
    blob = bytearray(b"ttcf" + struct.pack(">HHI", 1, 0, 2) + struct.pack(">II", dir_at, dir_at))
    blob += struct.pack(">IHHHH", 0x00010000, len(tables), 32, 1, 16)
    pos = data_at
    for tag, body in tables:
        blob += struct.pack(">4sIII", tag, 0, pos, len(body))
        pos += len(body)
    for _tag, body in tables:
        blob += body
    assert face_offsets(bytes(blob)) == [dir_at, dir_at]
    out = extract_face(bytes(blob), 1)
    assert struct.unpack_from(">H", out, 4)[0] == 2
    got = {}
    for i in range(2):
        tag, _c, offset, length = struct.unpack_from(">4sIII", out, 12 + 16 * i)
        assert offset % 4 == 0
        got[tag] = out[offset:offset + length]
    assert got == {b"cmap": b"CMAPDATA!", b"head": b"HEADDATA"}
