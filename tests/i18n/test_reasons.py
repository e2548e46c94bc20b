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
            # (a why slot's sample has no value of its own: "restart broker 7, controller 1" would
            # read as broker "7, controller 1")
            values[name] = ("heal every link" if name.startswith("why") else f"{k}, 9{k}" if name.startswith("idlist")
                            else f"[{k}, 9{k}]")
    return msgid % values, values


def test_every_pattern_is_reached_and_keeps_every_slot(zh):
    """No pattern is hidden behind a more general one, and each translation gives back every value."""
    for msgid in PATTERNS:
        text, values = _sample(msgid)
        out, complete = translate(text, zh)
        expected = {k: (zh("heal every link") if k.startswith("why") else v) for k, v in values.items()}
        assert complete and out == zh(msgid) % expected, (msgid, out)
        assert HAN.search(out) or msgid in ("broker %(idlist)s", "brokers %(idlist)s"), msgid   # "Broker 1, 2"
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


#: every operation a user can send from the page, in an order each era accepts (what the engine
#: then writes: "set_config", "crash rack r1 (process): broker 0", "ignored: consumer c1 is
#: already running", "no active controller: the topic is created once there is one"...)
USER_OPS = [
    {"at_ms": 500, "op": "produce", "topic": "orders", "count": 3, "producer": "p1"},
    {"at_ms": 600, "op": "produce", "topic": "orders", "partition": 0, "count": 2, "acks": "1", "key": "k", "value": "v"},
    {"at_ms": 1000, "op": "set_config", "topic": "orders", "key": "min.insync.replicas", "value": 3},
    {"at_ms": 1100, "op": "set_config", "topic": "orders", "key": "unclean.leader.election.enable", "value": True},
    {"at_ms": 1200, "op": "create_topic", "name": "events", "partitions": 2, "replication_factor": 2},
    {"at_ms": 1300, "op": "create_topic", "name": "audit", "partitions": 1, "replication_factor": 3,
     "assignment": {"0": [2, 1, 0]}, "config": {"min.insync.replicas": 2}},
    {"at_ms": 1500, "op": "consume", "consumer": "c1", "topic": "orders"},
    {"at_ms": 1600, "op": "consume", "consumer": "c2", "topic": "orders", "partition": 0, "group": "g1"},
    {"at_ms": 2000, "op": "crash", "broker": 1},
    {"at_ms": 2100, "op": "crash", "broker": 2, "mode": "power"},
    {"at_ms": 4000, "op": "restart", "broker": 1},
    {"at_ms": 4100, "op": "restart", "broker": 2},
    {"at_ms": 9000, "op": "pause", "broker": 0, "for_ms": 500},
    {"at_ms": 11000, "op": "pause", "broker": 1},
    {"at_ms": 11500, "op": "resume", "broker": 1},
    {"at_ms": 12000, "op": "flush", "broker": 0},
    {"at_ms": 12500, "op": "isolate", "broker": 2},
    {"at_ms": 13000, "op": "heal"},
    {"at_ms": 13200, "op": "isolate", "broker": 2, "from": "zk"},
    {"at_ms": 13400, "op": "heal", "from": 2, "to": "zk"},
    {"at_ms": 13500, "op": "cut", "from": 0, "to": 1},
    {"at_ms": 13700, "op": "heal", "from": 0, "to": 1},
    {"at_ms": 14000, "op": "slow", "from": 0, "to": 2, "latency_ms": 50},
    {"at_ms": 15000, "op": "partition", "groups": [[0], [1, 2]]},
    {"at_ms": 16000, "op": "heal"},
    {"at_ms": 17000, "op": "expire_session", "broker": 1},
    {"at_ms": 22000, "op": "elect_preferred", "topic": "orders", "partition": 0},
    {"at_ms": 22500, "op": "elect_preferred"},
    {"at_ms": 23000, "op": "stop_client", "client": "c1"},
    {"at_ms": 23100, "op": "stop_client", "client": "p2"},
    {"at_ms": 24000, "op": "shutdown", "broker": 2},
    {"at_ms": 26000, "op": "restart", "broker": 2},
    {"at_ms": 27000, "op": "crash", "rack": "r1"},
    {"at_ms": 28000, "op": "restart", "rack": "r1"},
    {"at_ms": 28500, "op": "isolate", "rack": "r2"},
    {"at_ms": 29000, "op": "heal", "rack": "r2"},
    {"at_ms": 29500, "op": "pause", "rack": "r1", "for_ms": 300},
    {"at_ms": 30000, "op": "flush", "rack": "r2"},
    {"at_ms": 30500, "op": "shutdown", "rack": "r1"},
    {"at_ms": 32000, "op": "restart", "rack": "r1"},
    {"at_ms": 32500, "op": "crash", "rack": "r2", "mode": "power"},
    {"at_ms": 33500, "op": "restart", "rack": "r2"},
]
ZK_ONLY = ("expire_session", "elect_preferred")
KRAFT_OPS = [
    {"at_ms": 5000, "op": "create_topic", "name": "later", "partitions": 1, "replication_factor": 2},  # elected by now
    {"at_ms": 34000, "op": "crash", "controller": 3001},
    {"at_ms": 34500, "op": "restart", "controller": 3001},
    {"at_ms": 35000, "op": "pause", "controller": 3002, "for_ms": 300},
    {"at_ms": 35500, "op": "isolate", "controller": 3002},
    {"at_ms": 36000, "op": "heal"},
    {"at_ms": 36500, "op": "isolate", "broker": 1, "from": "controllers"},
    {"at_ms": 37000, "op": "heal", "from": 1, "to": "controllers"},
    {"at_ms": 37500, "op": "crash", "rack": "r3"},                                   # every controller
    {"at_ms": 37600, "op": "create_topic", "name": "late", "partitions": 1, "replication_factor": 1},
    {"at_ms": 38500, "op": "restart", "rack": "r3"},
]


def user_scenario(version):
    kraft = version in ("3.9-kraft", "4.1")
    ops = [op for op in USER_OPS if not kraft or (op["op"] not in ZK_ONLY and "zk" not in (op.get("from"), op.get("to")))]
    racks = {"0": "r1", "1": "r2", "2": "r2"}
    if kraft:
        ops = sorted(ops + KRAFT_OPS, key=lambda op: op["at_ms"])
        racks = {**racks, "3000": "r3", "3001": "r3", "3002": "r3"}
    return {"name": "user commands", "kafka_version": version, "brokers": 3, "duration_ms": 40000, "seed": 3,
            "racks": racks, "topics": [{"name": "orders", "partitions": 1, "replication_factor": 3}],
            "clients": [{"name": "p1", "type": "producer", "topic": "orders", "acks": "all", "rate_per_s": 20},
                        {"name": "p2", "type": "producer", "topic": "orders", "acks": "1", "rate_per_s": 5}],
            "timeline": [dict(op, by="user") for op in ops]}


@pytest.mark.parametrize("version", ERAS)
def test_every_reason_of_a_users_commands_is_translated(version, zh):
    doc = user_scenario(version)
    load(doc)                                     # every command is one the page could send
    sim = Simulation(doc)
    sim.run(logs=False)
    found = {e[k] for e in sim.history for k in ("reason", "detail") if e.get(k)}
    ops = {e["reason"] for e in sim.history if e.get("type") == "fault"}
    assert {"set_config", "create_topic", "consume", "stop_client"} <= ops
    assert any(r.startswith("crash rack r1 (process): broker 0") for r in ops), ops
    untranslated = sorted(t for t in found if not translate(t, zh)[1])
    assert not untranslated, untranslated[:10]
    if version in ("3.9-kraft", "4.1"):
        assert "no active controller: the topic is created once there is one" in found


def test_a_zone_faults_nodes_are_translated_and_kept(zh):
    assert zh_of("crash rack r1 (process): broker 0", zh) == "机架 r1 进程崩溃：Broker 0"
    assert zh_of("isolate rack r2: brokers 1, 2, controllers 3000, 3001", zh) == "隔离机架 r2：Broker 1, 2，控制器 3000, 3001"
    assert zh_of("set_config", zh) == "修改配置"
    # an id list holds ids only: a sentence after "broker" is not a list of brokers
    assert translate("broker 1 went somewhere", zh)[1] is False
