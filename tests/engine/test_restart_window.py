"""Restart after a failed restart (docs/scenario-format.md §2 `restart`, docs/model.md §9.2): a
restart inside the crashed process's ZooKeeper session timeout fails to register and stops again,
so the loader accepts a later restart of that broker; outside that window it does not."""
import pytest

from engine.scenario.document import ScenarioError, load
from engine.simulation import Simulation

from .conftest import events


def doc(version, timeline, duration_ms=60000, **extra):
    out = {"seed": 1, "kafka_version": version, "brokers": 3,
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
           "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 5}],
           "timeline": timeline, "duration_ms": duration_ms}
    out.update(extra)
    return out


@pytest.mark.parametrize("version, timeout, early, late", [
    ("2.6", 18000, 8000, 30000),   # KIP-537: zookeeper.session.timeout.ms 18000 from 2.5
    ("2.4", 6000, 7000, 14000),    # 6000 before 2.5
])
def test_failed_restart_then_restart_after_expiry(version, timeout, early, late):
    timeline = [{"at_ms": 5000, "op": "crash", "broker": 2},
                {"at_ms": early, "op": "restart", "broker": 2},
                {"at_ms": late, "op": "restart", "broker": 2}]
    r = Simulation(doc(version, timeline)).run()
    [failed] = [e for e in events(r, "broker_stopped", broker=2) if e["state"] == "registration_failed"]
    assert early < failed["t_ms"] < early + 100
    assert f"zookeeper.session.timeout.ms {timeout}" in failed["reason"]
    [expired] = events(r, "session_expired", broker=2)
    # the old session ends timeout ms after ZooKeeper last heard from it (a ping at most a third
    # of the timeout before the crash), never after crash + timeout + one link latency
    assert 5000 + timeout - timeout // 3 - 10 <= expired["t_ms"] <= 5000 + timeout + 1
    [started] = [e for e in events(r, "broker_started", broker=2) if e["t_ms"] >= late]
    assert started["t_ms"] < late + 100
    assert r["brokers"]["2"]["state"] == "running"
    assert 2 in r["partitions"]["t-0"]["isr"]
    assert not r["violations"]


def test_second_restart_is_refused_when_the_first_could_not_fail():
    # 2.6: crash at 5000, session 18000 → the old session is surely gone after 23001
    with pytest.raises(ScenarioError) as err:
        load(doc("2.6", [{"at_ms": 5000, "op": "crash", "broker": 2},
                         {"at_ms": 23002, "op": "restart", "broker": 2},
                         {"at_ms": 40000, "op": "restart", "broker": 2}]))
    assert err.value.field == "timeline[2].broker"
    assert "it is running" in err.value.message
    # one millisecond earlier the first restart may still meet the old session
    load(doc("2.6", [{"at_ms": 5000, "op": "crash", "broker": 2},
                     {"at_ms": 23001, "op": "restart", "broker": 2},
                     {"at_ms": 40000, "op": "restart", "broker": 2}]))


def test_the_window_follows_the_configured_session_timeout_and_latency():
    base = [{"at_ms": 5000, "op": "crash", "broker": 2}, {"at_ms": 12000, "op": "restart", "broker": 2},
            {"at_ms": 20000, "op": "restart", "broker": 2}]
    with pytest.raises(ScenarioError):
        load(doc("2.4", base))                                         # 12000 > 5000 + 6000 + 1
    load(doc("2.4", base, config={"zookeeper.session.timeout.ms": 7000}))  # 12000 <= 12001
    load(doc("2.4", base, network={"latency_ms": 1000}))               # 12000 <= 12000


def test_a_cut_at_the_crash_keeps_the_window_open_until_the_heal_plus_rto_max():
    # a ping held by the cut may reach ZooKeeper at the first retransmission after the heal
    timeline = [{"at_ms": 1000, "op": "isolate", "broker": 2, "from": "zk"},
                {"at_ms": 5000, "op": "crash", "broker": 2},
                {"at_ms": 30000, "op": "restart", "broker": 2},
                {"at_ms": 40000, "op": "restart", "broker": 2},
                {"at_ms": 50000, "op": "heal"},
                {"at_ms": 60000, "op": "restart", "broker": 2}]
    load(doc("2.6", timeline, duration_ms=300000))
    timeline += [{"at_ms": 50000 + 120000 + 18000 + 2, "op": "restart", "broker": 2},
                 {"at_ms": 250000, "op": "restart", "broker": 2}]
    with pytest.raises(ScenarioError) as err:
        load(doc("2.6", timeline, duration_ms=300000))
    assert err.value.field == "timeline[7].broker"


def test_other_operations_on_a_maybe_stopped_broker_are_judged_as_running():
    load(doc("2.6", [{"at_ms": 5000, "op": "crash", "broker": 2},
                     {"at_ms": 6000, "op": "restart", "broker": 2},
                     {"at_ms": 7000, "op": "crash", "broker": 2},
                     {"at_ms": 8000, "op": "restart", "broker": 2}]))
    with pytest.raises(ScenarioError):
        load(doc("2.6", [{"at_ms": 5000, "op": "crash", "broker": 2},
                         {"at_ms": 6000, "op": "restart", "broker": 2},
                         {"at_ms": 7000, "op": "resume", "broker": 2}]))
