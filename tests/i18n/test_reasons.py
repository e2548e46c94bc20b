"""The timeline's reasons and the alarms' details in 中文 (app/i18n/reasons.py): the pattern table
against the catalog and against what the engine really writes.

Coverage: every library story is run in 0.10, 2.6, 3.7, 3.9-kraft and 4.1 (where it validates);
at least 90% of the reasons and violation details of those runs, and of their distinct templates
(numbers replaced), must come out wholly translated."""
import collections
import pathlib
import re

import pytest
from babel.support import Translations

from app.i18n.catalog import ensure_compiled
from app.i18n.reasons import ORDERED, PATTERNS, SLOT, browser_table, translate
from engine.scenario.document import ScenarioError, load
from engine.scenario.library import library
from engine.simulation import Simulation

ROOT = pathlib.Path(__file__).resolve().parents[2]
ERAS = ("0.10", "2.6", "3.7", "3.9-kraft", "4.1")
HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def zh():
    ensure_compiled(str(ROOT / "translations"), "zh_CN")
    return Translations.load(str(ROOT / "translations"), ["zh_CN"]).gettext


def zh_of(text, gettext):
    return translate(text, gettext)[0]


def test_a_reason_keeps_its_values_and_kafkas_names(zh):
    text = "follower 2 not caught up for 40051 ms > replica.lag.time.max.ms 30000 (follower LEO 100, leader LEO 110)"
    assert zh_of(text, zh) == "追随者 2 已 40051 ms 没有追上 > replica.lag.time.max.ms 30000（追随者 LEO 100，领导者 LEO 110）"
    text = "NOT_ENOUGH_REPLICAS after 3 attempt(s); retries=2147483647, delivery.timeout.ms=120000"
    assert zh_of(text, zh) == "NOT_ENOUGH_REPLICAS，已尝试 3 次；retries=2147483647，delivery.timeout.ms=120000"
    text = "registered /brokers/ids/2 (broker epoch = czxid 10)"
    assert zh_of(text, zh) == "已注册 /brokers/ids/2（broker epoch = czxid 10）"


def test_a_reason_inside_a_reason_is_translated_too(zh):
    inner = "follower 2 LEO 1228 >= leader HW 1228 and >= leader epoch start offset 0 (KAFKA-7128)"
    out, complete = translate("controller accepted AlterPartition: " + inner, zh)
    assert complete and out == ("控制器接受了 AlterPartition：追随者 2 的 LEO 1228 >= 领导者 HW 1228，"
                                "且 >= 领导者当前 epoch 的起始 offset 0（KAFKA-7128）")
    # the leader's isr-expiration names each follower it removes, joined by "; "
    two = "; ".join(f"follower {b} not caught up for 12051 ms > replica.lag.time.max.ms 10000 (follower LEO 60, leader LEO 65)"
                    for b in (2, 3))
    out, complete = translate(two, zh)
    assert complete and out.count("replica.lag.time.max.ms 10000") == 2 and "；追随者 3 已 12051 ms" in out


def test_the_most_specific_pattern_wins(zh):
    assert zh_of("expand of orders-0 proposed by leader 1: accepted", zh) == "领导者 1 提议扩张 orders-0 的 ISR：已接受"
    assert zh_of("expand of orders-0 proposed by leader 1: INELIGIBLE_REPLICA", zh) == "领导者 1 提议扩张 orders-0 的 ISR：INELIGIBLE_REPLICA"
    assert zh_of("crash broker 1 (power)", zh) == "Broker 1 断电"
    assert zh_of("expire_session broker 1", zh) == "让 Broker 1 的会话过期"
    assert zh_of("leader imbalance above leader.imbalance.per.broker.percentage 10%", zh) == \
        "领导者不均衡超过 leader.imbalance.per.broker.percentage 10%"


def test_what_no_pattern_matches_stays_english(zh):
    assert translate("a sentence the engine never wrote", zh) == ("a sentence the engine never wrote", False)
    # a slot holds a value, never a clause: a colon does not slip into one
    assert translate("crash broker 1: again (process)", zh)[1] is False


def _sample(msgid):
    """``msgid`` with each slot filled by a value of its own (a ``why`` slot by a reason)."""
    values = {}
    for k, found in enumerate(SLOT.finditer(msgid)):
        name = found.group(1)
        if name:
            values[name] = "restart broker 7" if name.startswith("why") else f"[{k}, 9{k}]"
    return msgid % values, values


def test_every_pattern_is_reached_and_keeps_every_slot(zh):
    """No pattern is hidden behind a more general one, and each translation gives back every value."""
    for msgid in PATTERNS:
        text, values = _sample(msgid)
        out, complete = translate(text, zh)
        expected = {k: ("重启 Broker 7" if k.startswith("why") else v) for k, v in values.items()}
        assert complete and out == zh(msgid) % expected, (msgid, out)
        assert HAN.search(out), msgid
        for name, value in expected.items():
            assert value in out, (msgid, name)


def test_the_browser_gets_the_same_table_in_the_same_order(zh):
    table = browser_table(zh)
    assert len(table) == len(PATTERNS) == len(set(PATTERNS))
    assert [msgstr for _, msgstr in table] == [zh(m) for m in ORDERED]
    assert all("(?P<" not in source for source, _ in table)          # JavaScript's named groups: (?<name>
    assert browser_table(lambda m: m)[0][1] == ORDERED[0]


@pytest.fixture(scope="module")
def library_reasons():
    """Counter of (reason or detail) over every library story in ERAS."""
    found = collections.Counter()
    for doc in library().values():
        for version in ERAS:
            switched = {**doc, "kafka_version": version}
            try:
                load(switched)
            except ScenarioError:
                continue
            sim = Simulation(switched)
            sim.run(logs=False)
            for e in sim.history:
                for key in ("reason", "detail"):
                    if e.get(key):
                        found[e[key]] += 1
    return found


def test_coverage_of_the_library_runs(library_reasons, zh):
    done = {text: translate(text, zh)[1] for text in library_reasons}
    events = sum(library_reasons.values())
    translated = sum(n for text, n in library_reasons.items() if done[text])
    templates = collections.defaultdict(bool)
    for text, ok in done.items():
        key = re.sub(r"\d+", "N", text)
        templates[key] = templates[key] or ok
    share, distinct = translated / events, sum(templates.values()) / len(templates)
    print(f"reasons translated: {translated}/{events} ({share:.1%}); templates {sum(templates.values())}/{len(templates)} ({distinct:.1%})")
    missing = sorted((n, t) for t, n in library_reasons.items() if not done[t])[-10:]
    assert share >= 0.9 and distinct >= 0.9, missing
    assert events > 50_000 and len(templates) > 150          # the runs did happen, in every era
