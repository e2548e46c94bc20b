"""The "Can this lose data?" narration in the reader's language (issue 33): the engine writes each
step in English (``engine/tools/search.py`` ``narrate``), the job's reply translates it
(``app/i18n/narration.py``); Kafka's names and the values pass through unchanged."""
import re

import pytest

from app.i18n.narration import PATTERNS, translate_sentence, translate_step_text
from app.i18n.text import use_lang
from engine.narration import ALTER_ERRORS, explain_alter_partition
from tests.browser.test_i18n_page import ALLOWED, CJK
from tests.counterexample.test_routes import OLD, client, wait  # noqa: F401 (the fixture)

ZH = {"Accept-Language": "zh-CN"}
WORD = re.compile(r"(?:--|/)?[A-Za-z0-9][A-Za-z0-9_.=/#\-]*")


def english_words(text):
    """The words of ``text`` that are neither Kafka's names (ALLOWED) nor identifiers (the page
    test's rule: a digit, dot, underscore, inner capital or all capitals makes an identifier)."""
    found = []
    for word in WORD.findall(text):
        word = word.rstrip(".-")
        identifier = re.search(r"[0-9_.=/#\-]", word) or re.search(r"[a-z][A-Z]", word) or word.isupper()
        if not identifier and word not in ALLOWED and len(word) > 1:
            found.append(word)
    return found


@pytest.fixture
def zh():
    use_lang("zh-CN")
    yield
    use_lang("en")


def test_a_search_narrates_in_chinese_through_the_api_and_in_english_without(client):  # noqa: F811
    started = client.post("/api/search?lang=zh-CN", json={"scenario": OLD, "runs": 80}, headers=ZH)
    assert started.status_code == 202
    job_id = started.get_json()["id"]
    view = wait(client, job_id)
    assert view["state"] == "done", view["error"]
    zh = client.get(f"/api/search/{job_id}?lang=zh-CN").get_json()["report"]
    en = client.get(f"/api/search/{job_id}?lang=en").get_json()["report"]
    assert zh["found"] and len(zh["narration"]) == len(en["narration"]) >= 3
    for step_zh, step_en in zip(zh["narration"], en["narration"]):
        assert (step_zh["t_ms"], step_zh["type"], step_zh["step"]) == (step_en["t_ms"], step_en["type"], step_en["step"])
        assert CJK.search(step_zh["text"]), step_zh
        assert not english_words(step_zh["text"]), (english_words(step_zh["text"]), step_zh["text"])
        assert not CJK.search(step_en["text"]), step_en
        # the values survive: every number of the English step is in the Chinese one
        assert sorted(re.findall(r"\d+", step_en["text"])) == sorted(re.findall(r"\d+", step_zh["text"])), step_zh
    assert zh["narration"][-1]["type"] == "property_broken"
    assert not english_words(zh["message"]) and CJK.search(zh["message"])
    assert "Broker" in " ".join(s["text"] for s in zh["narration"])


def test_the_prefixes_and_a_property_detail(zh):
    assert translate_step_text("broker 2: t-0: controller removes broker 1 from the ISR: it is dead; leader epoch +1") \
        == "Broker 2：t-0：控制器把 Broker 1 移出 ISR：它已宕机；leader epoch +1"
    assert translate_step_text("t-0 offline for 3434 ms > 3000 ms (from 6042 ms)") == "t-0 离线 3434 ms > 3000 ms（自 6042 ms 起）"
    assert translate_step_text("6 acknowledged record(s) lost, e.g. p1-1 (acks=all, offset 1 of t-0)") \
        == "6 条已确认的消息丢失，例如 p1-1（acks=all，t-0 的 offset 1）"
    # an invariant id or a Kafka error in front stays as it is
    text, done = translate_sentence("NOT_ENOUGH_REPLICAS: acks=all and ISR [0] has 1 < min.insync.replicas 2: rejected before append")
    assert done and text.startswith("NOT_ENOUGH_REPLICAS：") and "min.insync.replicas 2" in text
    # what matches nothing stays English, whole
    assert translate_step_text("broker 1: something new the engine says") == "Broker 1：something new the engine says"


@pytest.mark.parametrize("event", [
    {"phase": "sent"}, {"phase": "answered"},
    *({"phase": "answered", "error": error} for error in [*ALTER_ERRORS, "UNKNOWN_TOPIC_OR_PARTITION"]),
])
def test_every_alter_partition_sentence_the_engine_writes(zh, event):
    e = {"type": "alter_partition", "api": "AlterPartition", "broker": 1, "topic": "orders", "partition": 0,
         "proposed_isr": [1, 2], "isr": [1, 2], "leader_epoch": 4, "partition_epoch": 7, "new_partition_epoch": 8, **event}
    english = explain_alter_partition(e)
    text, done = translate_sentence(english)
    assert done and not english_words(text), (english, text)
    assert "AlterPartition" in text and "orders-0" in text and "[1, 2]" in text


def test_english_stays_english():
    use_lang("en")
    for msgid in PATTERNS:
        assert translate_step_text(msgid) == msgid


def test_isrlab_search_narrates_in_chinese_and_its_json_stays_english(tmp_path):
    import json
    from click.testing import CliRunner
    from app.cli import cli
    path = tmp_path / "old.json"
    path.write_text(json.dumps(OLD))
    runner = CliRunner()
    try:
        zh = runner.invoke(cli, ["search", str(path), "--runs", "80", "--no-spark", "--no-save", "--lang", "zh-CN",
                                 "--progress", "none"])
        raw = runner.invoke(cli, ["search", str(path), "--runs", "80", "--no-spark", "--no-save", "--json",
                                  "--lang", "zh-CN", "--progress", "none"])
    finally:
        use_lang("en")
    assert zh.exit_code == 0, zh.output
    steps = [line for line in zh.output.splitlines() if re.match(r"\s*\d+\. ", line)]
    assert len(steps) >= 3 and all(CJK.search(line) and not english_words(line) for line in steps), steps
    assert CJK.search(zh.output.splitlines()[0])           # the verdict
    report = json.loads(raw.output)
    assert not any(CJK.search(s["text"]) for s in report["narration"])
