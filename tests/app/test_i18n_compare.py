"""The compare page's server-written sentences in the request's language (issue 33): the verdict
after "First difference that matters", the timing detail and the record fates."""
import re

import pytest

from app.replay.compare_text import record_text, semantic_text, timing_text

HAN = re.compile(r"[\u4e00-\u9fff]")
WORDS = re.compile(r"\b(?:run|at|while|keeps|shrinks|elects|record|loses|acknowledges|broker|leader)\b")


class ENGLISH:
    """English words of the sentence, Kafka's "leader epoch" (kept as Kafka writes it) aside."""

    @staticmethod
    def search(text):
        return WORDS.search(text.replace("leader epoch", ""))


def test_the_kip101_comparison_in_chinese(http):
    body = {"a": {"library": "kip101-scenario-1-v2.6"}, "b": {"variant": {"kafka_version": "0.10"}}}
    zh = http.post("/api/compare", json=body, headers={"Accept-Language": "zh-CN"}).get_json()
    en = http.post("/api/compare", json=body, headers={"Accept-Language": "en"}).get_json()
    t = f"{zh['semantic']['t_ms'] / 1000:.3f} s"
    assert en["semantic"]["text"].startswith(f"at {t} run B shrinks the ISR of orders-0 to [2], while run A keeps")
    assert zh["semantic"]["text"].startswith(f"在 {t}，运行 B 把 orders-0 的 ISR 收缩为 [2]，而运行 A ")
    assert "Broker 2（leader epoch 1）" in zh["divergence"]["text"] and not ENGLISH.search(zh["divergence"]["text"])
    lost = next(r for r in zh["records"]["records"] if r["why"] == "lost_b")
    assert lost["text"].startswith(f"运行 B 丢失了在 ") and f"orders-0 中的消息 {lost['id']}" in lost["text"]
    for text in [zh["semantic"]["text"], zh["divergence"]["text"]] + [r["text"] for r in zh["records"]["records"]]:
        assert HAN.search(text) and not ENGLISH.search(text), text
    # the same numbers in both languages
    assert re.findall(r"\d+", zh["divergence"]["text"]) == re.findall(r"\d+", en["divergence"]["text"])


STATE = (1, 3, (1, 2, 3), False)
CASES = [
    {"kind": "leader", "t_ms": 1200, "partition": "orders-0",
     "detail": {"a": {"leader": 1, "leader_epoch": 2}, "b": {"leader": -1, "leader_epoch": 3}}},
    {"kind": "isr", "t_ms": 5, "partition": "orders-0", "detail": {"a": [1, 2], "b": [1]}},
    {"kind": "offline", "t_ms": 5, "partition": "orders-0", "detail": {"a": True, "b": False}},
    {"kind": "log", "t_ms": 5, "partition": "orders-0",
     "detail": {"broker": 2, "a": {"leo": 10, "hw": 9}, "b": None}},
    {"kind": "controller", "t_ms": 5, "partition": None, "detail": {"a": 1, "b": None}},
    {"kind": "partitions", "t_ms": 0, "partition": None, "detail": {}},
]
FATES = [None, {"status": "failed", "lost": False}, {"status": "pending", "lost": False},
         {"status": "acked", "lost": True, "acked_ms": 1500, "offset": 4, "topic": "orders", "partition": 0},
         {"status": "acked", "lost": False, "acked_ms": None, "offset": None}]


@pytest.fixture
def zh(app):
    with app.test_request_context("/?lang=zh-CN"):
        yield


@pytest.mark.parametrize("case", CASES, ids=[c["kind"] for c in CASES])
def test_every_timing_detail_in_chinese(zh, case):
    text = timing_text(case)
    assert HAN.search(text) and not ENGLISH.search(text), text


@pytest.mark.parametrize("fate", FATES)
def test_every_record_fate_in_chinese(zh, fate):
    lost = {"status": "acked", "lost": True, "acked_ms": 1000, "offset": 3, "topic": "orders", "partition": 0}
    for record in ({"id": "m1", "why": "lost_a", "a": lost, "b": fate},
                   {"id": "m1", "why": "acked_failed", "a": fate, "b": {"status": "failed", "lost": False}}):
        text = record_text(record)
        assert HAN.search(text) and not ENGLISH.search(text) and "m1" in text, text


def test_every_headline_shape_in_chinese(zh):
    shrunk, elected, offline = (1, 3, (1, 2), False), (2, 4, (2, 3), False), (1, 3, (1, 2, 3), True)
    side = lambda before, after, t: {"before": before, "after": after, "t_ms": t}  # noqa: E731
    for a, b in ((side(STATE, shrunk, 100), side(STATE, None, None)),
                 (side(STATE, elected, 100), side(STATE, offline, 100)),
                 (side(STATE, shrunk, 100), side(STATE, elected, 900))):
        text = semantic_text({"kind": "isr", "first": "a", "partition": "orders-0", "a": a, "b": b})
        assert HAN.search(text) and not ENGLISH.search(text), text
    text = semantic_text({"kind": "partitions", "a": {"partitions": ["a-0"]}, "b": {"partitions": ["b-0"]}})
    assert text == "两次运行的分区不同：A 有 a-0；B 有 b-0"


def test_outside_a_request_the_words_are_english():
    assert timing_text(CASES[1]) == "at 0.005 s the ISR of orders-0 is [1, 2] in run A, [1] in run B"
