"""ISSUE 18: the rules a real ZooKeeper and Kafka's KafkaZkClient follow (docs/model.md §9.10).

The differential test (test_zk_differential.py) holds every answer against a real server; these
tests name each rule on its own, including the two a replay cannot see (how many registrations a
broker sends, and whether it registers with a checked-ephemeral multi).
"""
import pytest

from engine.scenario.library import library
from engine.zookeeper.trace import record
from engine.zookeeper.server import CHILD, DELETED


def test_sequential_suffix_counts_child_creations_not_deletions(zk):
    zk.create("/isr_change_notification")
    first = zk.create("/isr_change_notification/isr_change_", sequence=True)
    assert first.endswith("0000000000")
    zk.delete(first)
    second = zk.create("/isr_change_notification/isr_change_", sequence=True)
    assert second.endswith("0000000001")         # a real ZooKeeper 3.8 says ...01 here
    zk.delete(second)
    zk.create("/isr_change_notification/other")
    zk.delete("/isr_change_notification/other")  # any child's creation counts, no deletion does
    assert zk.create("/isr_change_notification/isr_change_", sequence=True).endswith("0000000003")
    # the cversion a client reads still counts creations and deletions (2 x creations - children)
    assert zk.exists("/isr_change_notification").cversion == 7


def test_failed_multi_does_not_advance_the_sequence(zk):
    zk.create("/n")
    with pytest.raises(Exception):
        zk.multi([("create", "/n/s_", None, False, None), ("check", "/missing", 0)])
    assert zk.create("/n/s_", sequence=True).endswith("0000000000")


def test_a_multi_is_one_transaction_with_one_zxid(zk):
    sid = zk.create_session("b0", 6000)
    zk.create("/controller_epoch", 0)
    zk.multi([("create", "/controller", {"brokerid": 0}, True, sid),
              ("set", "/controller_epoch", 1, 0)])
    created = zk.exists("/controller").czxid
    assert created == zk.exists("/controller_epoch").mzxid
    zk.create("/after")
    assert zk.exists("/after").czxid == created + 1


def test_a_session_close_is_one_transaction(zk):
    sid = zk.create_session("b0", 6000)
    zk.create("/e1", ephemeral=True, session_id=sid)
    zk.create("/e2", ephemeral=True, session_id=sid)
    before = zk.zxid
    zk.expire_session(sid)
    assert zk.zxid == before + 1


def test_one_node_deleted_event_per_session_watching_data_and_children(zk):
    sid = zk.create_session("c", 6000)
    zk.create("/a")
    zk.get("/a", watch=sid)
    zk.get_children("/a", watch=sid)
    zk.get_children("/", watch=sid)
    zk.delete("/a")
    assert zk.events == [(sid, DELETED, "/a"), (sid, CHILD, "/")]


def _registrations(calls):
    """session -> the calls that wrote /brokers/ids/<id> from it."""
    out = {}
    for call in calls:
        args = call.get("args") or {}
        paths = [args.get("path")] if call["op"] == "create" else \
            [op[1] for op in args.get("ops", ()) if op[0] == "create"]
        if any(p and p.startswith("/brokers/ids/") for p in paths):
            out.setdefault(call["session"], []).append(call)
    return out


@pytest.mark.parametrize("name", ["controller-failover-session-expiry", "zombie-leader-after-pause",
                                  "broker-failure-clean-election"])
@pytest.mark.parametrize("era", ["0.10", "2.6"])
def test_one_registration_per_session(name, era):
    recorder, _ = record({**library()[name], "kafka_version": era})
    per_session = _registrations(recorder.calls)
    sessions = [c["session"] for c in recorder.calls if c["op"] == "connect"]
    assert per_session and all(len(calls) == 1 for calls in per_session.values()), per_session
    assert set(per_session) <= set(sessions)


def test_registration_is_a_checked_ephemeral_multi_from_2_2():
    """<= 2.0 eras: one plain ephemeral create (version 0, epoch = its czxid). 2.4/2.6 (Kafka 2.2+):
    a multi create(null) + setData(data, version 0): version 1, epoch = czxid = mzxid."""
    for era, version in (("0.10", 0), ("1.1", 0), ("2.0", 0), ("2.4", 1), ("2.6", 1)):
        recorder, result = record({**library()["controller-failover-session-expiry"],
                                   "kafka_version": era})
        regs = [c for calls in _registrations(recorder.calls).values() for c in calls]
        assert {c["op"] for c in regs} == ({"multi"} if version else {"create"}), era
        for call in regs:
            if call["op"] == "multi":
                assert [op[0] for op in call["args"]["ops"]] == ["create", "set"]
                assert call["args"]["ops"][0][2] is None and call["args"]["ops"][1][3] == 0
                stat = call["result"]["results"][1]["stat"]
            else:
                stat = call["result"]["stat"]
            assert stat["version"] == version and stat["czxid"] == stat["mzxid"]
        started = [e for e in result["history"] if e["type"] in ("broker_started", "broker_registered")]
        epochs = {(c["result"]["results"][1]["stat"] if c["op"] == "multi" else c["result"]["stat"])["czxid"]
                  for c in regs}
        assert started and {e["broker_epoch"] for e in started} <= epochs, era
