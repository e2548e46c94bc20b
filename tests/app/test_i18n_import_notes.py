"""The notes of an imported cluster in the reader's language (issue 33): the engine writes them in
English (engine/scenario/import_notes.py, import_cluster.py); the import dialog's reply and
``isrlab import-cluster`` show them in zh-CN (app/i18n/import_notes.py), values unchanged."""
import re
from types import SimpleNamespace as NS

import pytest

from app.i18n.import_notes import translate_note
from app.i18n.text import use_lang
from engine.scenario import import_cluster as ic
from engine.scenario.import_notes import state_notes
from tests.app.test_import_cli import isrlab, write
from tests.counterexample.test_i18n_search import english_words
from tests.engine.import_samples import API_VERSIONS_4_1, DESCRIBE_0_10, DESCRIBE_4_1, QUORUM_3_7, QUORUM_4_1

HAN = re.compile(r"[\u4e00-\u9fff]")
#: what the tools print, quoted by the notes as Kafka writes it: kafka-topics.sh's columns
#: (``Leader: none``, ``Replicas``, ``Elr``, KIP-966's Eligible Leader Replicas) and api-versions' ``rack: null``
TOOL_WORDS = {"Leader", "none", "Replicas", "Elr", "Eligible", "rack", "null"}


def english(text):
    return [w for w in english_words(text) if w not in TOOL_WORDS]
URL = "/api/import/describe"


def _part(i, leader, replicas, isr, **more):
    fields = dict(offline=[], elr=[], last_known_elr=[], adding=[], removing=[])
    return NS(partition=i, leader=leader, replicas=replicas, isr=isr, **{**fields, **more})


def _topic(name, parts, marked=False, configs=()):
    return NS(name=name, partitions=dict(enumerate(parts)), partition_count=len(parts),
              marked_for_deletion=marked, configs=list(configs), line=1)


def every_note(n):
    """Every note the engine writes, each with ``n`` cases (1: the singular sentences), written by
    the engine's own functions on a made-up cluster."""
    bad = [_part(i, None if i % 2 else 2, [1, 2, 3], [2], offline=[3], elr=[1], adding=[4], removing=[1])
           for i in range(n)]
    described = [_topic(f"t{k}", bad, marked=True, configs=[("retention.ms", "1")]) for k in range(n)]
    notes = state_notes(described)
    nodes = NS(racks={1: "a", 2: None}, unreachable=list(range(7, 7 + n)), fenced=list(range(7, 7 + n)))
    ic._brokers(described + [_topic("x", [_part(0, 9, list(range(9, 9 + n)), [9])])], nodes, None, notes)
    ic._controllers(None, [1, 2], notes)
    ic._controllers(NS(leader=3001, voters=[3000, 3001, 3002], line=1), [1, 2], notes)
    ic._controllers(NS(leader=None, voters=[1, 3000], line=1), [1, 2], notes)
    ic._racks(NS(racks={1: "a", **{b: None for b in range(2, 2 + n)}}), list(range(1, 2 + n)), notes)
    ic._topics([_topic(name, [_part(0, 1, [1], [1])], configs=[("retention.ms", "1")])
                for name in ["__consumer_offsets", "__transaction_state"][:n]], "3.7", notes)
    return notes


@pytest.fixture
def zh():
    use_lang("zh-CN")
    yield
    use_lang("en")


@pytest.mark.parametrize("n", [1, 2, 7])
def test_every_note_the_engine_writes_in_chinese(zh, n):
    notes = every_note(n)
    assert len(notes) >= 15
    for note in notes:
        text = translate_note(note)
        assert HAN.search(text) and not english(text), (note, text, english(text))
        assert re.findall(r"\d+", note) == re.findall(r"\d+", text) or n == 7, (note, text)   # values kept
    many = " ".join(translate_note(note) for note in notes)
    assert ("另有 2 个" in many) == (n == 7)             # "a, b, c, d, e and 2 more"


def test_english_stays_as_the_engine_wrote_it():
    use_lang("en")
    notes = every_note(2)
    assert [translate_note(n) for n in notes] == notes


def test_the_import_dialogs_reply_in_chinese(http):
    zh = http.post(URL + "?lang=zh-CN", json={"describe": DESCRIBE_0_10, "quorum": QUORUM_3_7, "kafka_version": "2.6"})
    en = http.post(URL + "?lang=en", json={"describe": DESCRIBE_0_10, "quorum": QUORUM_3_7, "kafka_version": "2.6"})
    assert zh.status_code == en.status_code == 200
    assert len(zh.json["notes"]) == len(en.json["notes"]) >= 4
    for text in zh.json["notes"]:
        assert HAN.search(text) and not english(text), text
    assert "导入时 Broker 0 不在 2 个分区的 ISR 中（orders-1, orders-2）；模拟开始时每个副本都处于同步状态" in zh.json["notes"]
    assert any("broker 0 was out of the ISR of 2 partitions" in n for n in en.json["notes"])
    assert zh.json["scenario"] == en.json["scenario"]         # the scenario itself is the engine's


def test_isrlab_import_cluster_notes_in_chinese(tmp_path):
    args = ["import-cluster", write(tmp_path, "d.txt", DESCRIBE_4_1), "--brokers", write(tmp_path, "a.txt", API_VERSIONS_4_1),
            "--quorum", write(tmp_path, "q.txt", QUORUM_4_1), "--kafka-version", "4.1"]
    try:
        zh = isrlab(args + ["--lang", "zh-CN"])
    finally:
        use_lang("en")
    assert zh.status == 0, zh.err
    notes = zh.err.splitlines()
    assert notes and all(HAN.search(n) and not english(n) for n in notes), notes
    assert any("ELR" in n for n in notes)
