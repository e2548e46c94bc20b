"""Kafka's AlterIsr / AlterPartition tests (ZooKeeper mode, eras 2.7 - 3.7), ported as scenarios
on the simulated cluster (docs/kafka-parity.md, docs/model.md §17).

Kafka's ``PartitionTest`` drives one ``Partition`` with a mock AlterPartition manager; here the
leader is broker 1 of a real cluster whose controller is broker 0, the proposal travels over the
simulated network, and ``controller_fails`` stands for ``failIsrUpdate``. A slow leader ->
controller link keeps a proposal pending long enough to look at it.
"""
import pytest

from .zk_cluster import (BOUNCE_3, ISOLATE_3, SLOW_TO_CONTROLLER, STATE, alter, ask_controller,
                         cluster, controller_fails, controller_fails_request, events,
                         leader_partition, started)
from engine.simulation import Simulation

#: the leader -> controller link turns slow (2 s) before broker 3 comes back (BOUNCE_3)
SLOW_EXPAND = {"at_ms": 2500, "op": "slow", "from": 1, "to": 0, "latency_ms": 2000}
ZK_ALTER_ERAS = ("2.7", "3.0", "3.3", "3.7")


def isr_state(sim):
    return sim.result()["partitions"]["t-0"]["isr_state"]


def run_expansion_failing(version, error, times=1):
    """BOUNCE_3: broker 3 is proposed back at ~3016 ms; the controller answers ``error``."""
    sim = started(version, BOUNCE_3, at_ms=2900)
    controller_fails(sim, error, times)
    return sim, sim.run()


@pytest.mark.parametrize("version", ZK_ALTER_ERAS)
def test_isr_expansion_is_pending_until_the_controller_commits_it(version):
    """Kafka: PartitionTest.testIsrExpansion at 2.7.0 and 3.3.1 — a caught-up follower is proposed,
    the committed ISR stays as it was (the maximal ISR has it) until the answer commits it with
    the next partition epoch."""
    sim = started(version, BOUNCE_3 + [SLOW_EXPAND], at_ms=3100)
    [sent] = alter(sim.result(), "sent")
    assert sent["proposed_isr"] == [1, 2, 3] and sent["partition_epoch"] == 1
    assert isr_state(sim) == {"committed": [1, 2], "maximal": [1, 2, 3], "pending": "expand"}
    r = sim.run()
    [expand] = events(r, "isr_expand")
    assert expand["isr"] == [1, 2, 3] and expand["zk_version"] == 2
    assert expand["t_ms"] >= sent["t_ms"] + 2000          # the slow link: the answer commits it
    assert r["partitions"]["t-0"]["isr_state"]["pending"] is None


@pytest.mark.parametrize("version, hw_at_commit", [("2.7", 2), ("3.3", 4)])
def test_a_shrink_is_pending_on_the_old_isr_then_commits_with_the_next_partition_epoch(
        version, hw_at_commit):
    """Kafka: PartitionTest.testMaybeShrinkIsr at 2.7.0 and 3.3.1 — the lagging follower is
    proposed out, committed and maximal ISR keep it (the HW too) until the answer; from 3.1 the
    commit advances the HW to the log end (3.3.1 asserts HW == LEO; 2.7.0 does not, KAFKA-13091)."""
    sim = started(version, [ISOLATE_3, SLOW_TO_CONTROLLER], at_ms=3200)
    assert isr_state(sim) == {"committed": [1, 2, 3], "maximal": [1, 2, 3], "pending": "shrink"}
    assert sim.brokers[1].logs["t-0"].hw == 2               # held by broker 3
    [sent] = alter(sim.result(), "sent")
    assert sent["proposed_isr"] == [1, 2]
    sim.advance_to(6500)
    [shrink] = events(sim.result(), "isr_shrink")
    assert shrink["isr"] == [1, 2] and shrink["zk_version"] == 1
    assert isr_state(sim) == {"committed": [1, 2], "maximal": [1, 2], "pending": None}
    assert sim.brokers[1].logs["t-0"].leo == 4
    assert sim.brokers[1].logs["t-0"].hw == hw_at_commit


@pytest.mark.parametrize("version", ZK_ALTER_ERAS)
def test_isr_not_expanded_if_update_fails(version):
    """Kafka: PartitionTest.testIsrNotExpandedIfUpdateFails at 2.7.0 and 3.3.1 — an expansion
    answered INVALID_UPDATE_VERSION is given up: no ISR change, no resend, still pending (the
    maximal ISR keeps the newcomer)."""
    _sim, r = run_expansion_failing(version, "INVALID_UPDATE_VERSION")
    assert len(alter(r, "sent")) == 1
    assert not events(r, "isr_expand")
    assert r["partitions"]["t-0"]["isr_state"] == {"committed": [1, 2], "maximal": [1, 2, 3],
                                                   "pending": "expand"}


@pytest.mark.parametrize("version", ZK_ALTER_ERAS)
def test_isr_not_shrunk_if_update_fails(version):
    """Kafka: PartitionTest.testIsrNotShrunkIfUpdateFails at 2.7.0 and 3.3.1 — a shrink answered
    INVALID_UPDATE_VERSION leaves the partition pending on the old ISR, and the HW where the
    lagging replica holds it."""
    sim = started(version, [ISOLATE_3], at_ms=2900)
    controller_fails(sim, "INVALID_UPDATE_VERSION")
    sim.advance_to(5000)
    r = sim.result()
    assert [e["error"] for e in alter(r, "answered")] == ["INVALID_UPDATE_VERSION"]
    assert isr_state(sim) == {"committed": [1, 2, 3], "maximal": [1, 2, 3], "pending": "shrink"}
    assert sim.brokers[1].logs["t-0"].hw == 2 and sim.brokers[1].logs["t-0"].leo == 4
    assert len(alter(sim.run(), "sent")) == 1                # never retried


@pytest.mark.parametrize("error", ["UNKNOWN_TOPIC_OR_PARTITION", "INVALID_UPDATE_VERSION",
                                   "NEW_LEADER_ELECTED", "INVALID_REQUEST"])
def test_non_retriable_errors_leave_the_expansion_pending_and_are_not_retried(error):
    """Kafka: PartitionTest.testAlterIsrUnknownTopic, testAlterIsrInvalidVersion,
    testAlterIsrNewLeaderElected and testInvalidAlterPartitionRequestsAreNotRetried at 3.3.1 — the
    ISR stays committed without the newcomer, the maximal ISR keeps it, nothing is re-queued."""
    sim, r = run_expansion_failing("3.3", error)
    assert [e["error"] for e in alter(r, "answered")] == [error]
    assert len(alter(r, "sent")) == 1
    assert r["partitions"]["t-0"]["isr_state"] == {"committed": [1, 2], "maximal": [1, 2, 3],
                                                   "pending": "expand"}
    assert not sim.brokers[1].alter_isr_unsent


@pytest.mark.parametrize("error", ["UNKNOWN_SERVER_ERROR", "NOT_LEADER_OR_FOLLOWER"])
def test_an_unexpected_error_is_retried_at_once_and_then_commits(error):
    """Kafka: PartitionTest.testAlterIsrUnexpectedError and testPartitionShouldRetryAlterPartitionRequest
    at 3.3.1 (AlterPartitionManagerTest.testNotLeaderOrFollower: the error reaches the partition) —
    an error outside the known list re-queues the same proposal, the manager sends it again as
    soon as the answer is handled (two requests), and the second answer commits the next epoch."""
    _sim, r = run_expansion_failing("3.3", error)
    first, second = alter(r, "sent")
    failed, accepted = alter(r, "answered")
    assert failed["error"] == error and accepted["error"] is None
    assert second["t_ms"] == failed["t_ms"]                  # re-sent at once, not 50 ms later
    assert (second["proposed_isr"], second["partition_epoch"]) == ([1, 2, 3], 1)
    [expand] = events(r, "isr_expand")
    assert expand["isr"] == [1, 2, 3] and expand["zk_version"] == 2
    assert r["partitions"]["t-0"]["isr_state"]["pending"] is None


def test_kafka_14010_before_3_2_1_an_unexpected_error_leaves_the_partition_pending():
    """Kafka: PartitionTest.testAlterIsrUnexpectedError at 2.7.0 — its mock manager accepts the
    re-queue; the real AlterIsrManager of 2.7 - 3.0 still holds the item while the callback runs
    and refuses it (KAFKA-14010, fixed in 3.2.1 / 3.3.0), so the run shows the real outcome:
    stuck pending, one request."""
    for version in ("2.7", "3.0"):
        _sim, r = run_expansion_failing(version, "UNKNOWN_SERVER_ERROR")
        assert len(alter(r, "sent")) == 1
        assert r["partitions"]["t-0"]["isr_state"]["pending"] == "expand"


def test_retry_shrink_isr():
    """Kafka: PartitionTest.testRetryShrinkIsr at 3.3.1 — a shrink answered NETWORK_EXCEPTION
    (partition level) is retried and commits: ISR [1, 2], partition epoch 1, HW at the log end."""
    sim = started("3.3", [ISOLATE_3], at_ms=2900)
    controller_fails(sim, "NETWORK_EXCEPTION")
    sim.advance_to(3050)
    assert [e["error"] for e in alter(sim.result(), "answered")] == ["NETWORK_EXCEPTION", None]
    [shrink] = events(sim.result(), "isr_shrink")
    assert shrink["isr"] == [1, 2] and shrink["zk_version"] == 1
    assert sim.brokers[1].logs["t-0"].hw == sim.brokers[1].logs["t-0"].leo == 4


@pytest.mark.parametrize("version", ZK_ALTER_ERAS)
def test_single_in_flight_alter_isr(version):
    """Kafka: PartitionTest.testSingleInFlightAlterIsr at 2.7.0 and 3.3.1 — while an expansion is
    pending, a follower that falls out of sync is not proposed out; the shrink waits for the
    answer."""
    timeline = BOUNCE_3 + [dict(SLOW_EXPAND, latency_ms=4000),
                           {"at_ms": 3100, "op": "isolate", "broker": 2, "from": "brokers"},
                           {"at_ms": 3200, "op": "produce", "topic": "t", "acks": "1"}]
    r = Simulation(cluster(version, timeline)).run()
    expand_sent, *later = alter(r, "sent")
    [expand] = events(r, "isr_expand")
    assert expand_sent["proposed_isr"] == [1, 2, 3] and expand["t_ms"] > 7000
    # broker 2 misses the record of 3.2 s and is out of sync from ~5.2 s; the isr-expiration
    # task runs every second: nothing is proposed until the expansion commits
    assert later and all(e["t_ms"] >= expand["t_ms"] for e in later)
    assert later[0]["proposed_isr"] == [1, 3]


def test_alter_isr_leader_and_isr_race():
    """Kafka: PartitionTest.testAlterIsrLeaderAndIsrRace at 3.3.1 — a LeaderAndIsr during a
    pending shrink resets the partition to committed; the next shrink is not submitted while the
    old request awaits its answer, and is once it has arrived."""
    timeline = [SLOW_TO_CONTROLLER, ISOLATE_3, {"at_ms": 3500, "op": "shutdown", "broker": 2}]
    sim = started("3.3", timeline, at_ms=3600)
    part = leader_partition(sim)
    assert part.leader_epoch == 1 and part.pending is None    # makeLeader: committed again
    sim.advance_to(5500)                                        # two isr-expiration runs later
    assert part.pending is None and len(alter(sim.result(), "sent")) == 1
    r = sim.run()
    fenced = alter(r, "answered", error="FENCED_LEADER_EPOCH")
    [retry] = alter(r, "sent", leader_epoch=1)
    assert fenced and retry["t_ms"] >= fenced[0]["t_ms"] and retry["proposed_isr"] == [1]


@pytest.mark.parametrize("error", ["INELIGIBLE_REPLICA", "OPERATION_NOT_ATTEMPTED"])
def test_a_rejected_expansion_reverts_to_the_committed_isr(error):
    """Kafka: PartitionTest.testIsrNotExpandedIfReplicaIsInControlledShutdown at 3.3.1 — the
    controller rejects the expansion (INELIGIBLE_REPLICA; OPERATION_NOT_ATTEMPTED below
    AlterPartition v2): the partition reverts to its committed ISR, not in flight, and the next
    fetch proposes the replica again, which then commits."""
    sim = started("3.3", BOUNCE_3, at_ms=2900)
    controller_fails(sim, error)
    sim.advance_to(20000, stop=lambda: alter(sim.result(False), "answered"))
    [rejected] = alter(sim.result(), "answered")
    assert rejected["error"] == error and rejected["proposed_isr"] == [1, 2, 3]
    assert isr_state(sim) == {"committed": [1, 2], "maximal": [1, 2], "pending": None}
    r = sim.run()
    [_, accepted] = alter(r, "answered")
    assert accepted["error"] is None
    [expand] = events(r, "isr_expand")
    assert expand["isr"] == [1, 2, 3] and expand["zk_version"] == 2


# -- the broker's manager (AlterIsrManagerTest @ 2.7.0, AlterPartitionManagerTest @ 3.3.1) ---------

@pytest.mark.parametrize("version", ZK_ALTER_ERAS)
@pytest.mark.parametrize("error", ["STALE_BROKER_EPOCH", "UNKNOWN_SERVER_ERROR"])
def test_a_top_level_error_keeps_the_item_and_sends_it_again(version, error):
    """Kafka: AlterIsrManagerTest.testTopLevelError at 2.7.0 (via testStaleBrokerEpoch,
    testOtherErrors) and AlterPartitionManagerTest.testStaleBrokerEpoch / testUnknownServer at
    3.3.1 — the item stays queued and is sent again: 2.8+ once 50 ms after the answer, 2.7 at the
    next run of the 50 ms "send-alter-isr" task; the retry commits."""
    sim = started(version, [ISOLATE_3], at_ms=2900)
    controller_fails_request(sim, error)
    r = sim.run()
    first, retry = alter(r, "sent")
    failed, accepted = alter(r, "answered")
    assert failed["error"] == error and accepted["error"] is None
    assert (retry["proposed_isr"], retry["partition_epoch"]) == ([1, 2], 0)
    if version == "2.7":
        started_at = events(r, "broker_started", broker=1)[0]["t_ms"]
        assert 0 < retry["t_ms"] - failed["t_ms"] <= 50 and (retry["t_ms"] - started_at) % 50 == 0
    else:
        assert retry["t_ms"] == failed["t_ms"] + 50
    assert events(r, "isr_shrink")[0]["zk_version"] == 1


@pytest.mark.parametrize("version", ZK_ALTER_ERAS)
def test_one_request_in_flight_carries_every_queued_partition(version):
    """Kafka: AlterIsrManagerTest.testSingleBatch / testOneInFlight at 2.7.0 and
    AlterPartitionManagerTest.testSingleBatch / testOneInFlight at 3.3.1 — one request in flight per
    broker: 2.8+ sends the first proposal alone at once and the one queued meanwhile as soon as the
    answer is handled; 2.7's 50 ms task finds both queued and sends them in one request."""
    doc = cluster(version, [ISOLATE_3])
    doc["topics"][0].update(partitions=2, assignment={"0": [1, 2, 3], "1": [1, 3, 2]})
    sim = Simulation(doc)
    sent = []
    send = sim.brokers[1]._send_alter_isr
    sim.brokers[1]._send_alter_isr = lambda req: (sent.append(req[0]), send(req))
    r = sim.run()
    batches = [sorted(p["key"] for p in body["partitions"]) for body in sent]
    if version == "2.7":
        assert batches == [["t-0", "t-1"]]
    else:
        assert batches == [["t-0"], ["t-1"]]
        first_answer = alter(r, "answered", partition=0)[0]
        assert alter(r, "sent", partition=1)[0]["t_ms"] == first_answer["t_ms"]
    assert sorted((e["partition"], e["isr"]) for e in events(r, "isr_shrink")) == \
        [(0, [1, 2]), (1, [1, 2])]


# -- the controller (ControllerIntegrationTest @ 2.7.0 / 3.3.1 / 3.7.0) ---------------------------

@pytest.mark.parametrize("version", ZK_ALTER_ERAS)
def test_alter_partition_commits_and_answers_the_next_partition_epoch(version):
    """Kafka: ControllerIntegrationTest.testAlterPartition at 3.3.1 — the controller writes the
    proposed ISR to the state znode and answers leader, leader epoch, ISR and the new partition
    epoch (the znode's zkVersion); the leader epoch is not bumped."""
    sim = started(version)
    answer = ask_controller(sim, 1, leader_epoch=0, new_isr=[1, 2], partition_epoch=0)
    assert answer == {"error": None, "partitions": {"t-0": {
        "error": None, "leader": 1, "leader_epoch": 0, "isr": [1, 2], "zk_version": 1}}}
    node = sim.zk_server.tree.nodes[STATE]
    assert (node.data["isr"], node.data["leader_epoch"], node.version) == ([1, 2], 0, 1)


def test_idempotent_alter_partition():
    """Kafka: ControllerIntegrationTest.testIdempotentAlterPartition at 3.7.0 — the same request
    sent again, with the old or the new partition epoch, succeeds with the state already written
    (partition epoch 1) and writes nothing."""
    sim = started("3.7")
    first = ask_controller(sim, 1, leader_epoch=0, new_isr=[1, 2], partition_epoch=0)
    for epoch in (0, 1):
        again = ask_controller(sim, 1, leader_epoch=0, new_isr=[1, 2], partition_epoch=epoch)
        assert again == first
        assert again["partitions"]["t-0"]["zk_version"] == 1
    assert sim.zk_server.tree.nodes[STATE].version == 1


def test_idempotent_alter_isr_2_7():
    """Kafka: ControllerIntegrationTest.testIdempotentAlterIsr at 2.7.0 — processAlterIsr answers a
    request already in the desired state (same leader, leader epoch and ISR) from its cache."""
    sim = started("2.7")
    first = ask_controller(sim, 1, leader_epoch=0, new_isr=[1, 2], partition_epoch=0)
    assert ask_controller(sim, 1, leader_epoch=0, new_isr=[1, 2], partition_epoch=0) == first
    assert sim.zk_server.tree.nodes[STATE].version == 1


def test_alter_partition_errors():
    """Kafka: ControllerIntegrationTest.testAlterPartitionErrors at 3.7.0 (and 3.3.1) — the
    controller's validation answers each malformed or stale request with Kafka's error code."""
    sim = started("3.7")
    cases = [  # (fields, top-level error, partition error)
        ({"broker_epoch": sim.brokers[1].broker_epoch - 1}, "STALE_BROKER_EPOCH", None),
        ({"broker": 99}, "STALE_BROKER_EPOCH", None),
        ({"key": "unknown-0"}, None, "UNKNOWN_TOPIC_OR_PARTITION"),
        ({"key": "t-1"}, None, "UNKNOWN_TOPIC_OR_PARTITION"),
        ({"new_isr": [1], "partition_epoch": -1}, None, "INVALID_UPDATE_VERSION"),
        ({"partition_epoch": 1}, None, "NOT_CONTROLLER"),
        ({"leader_epoch": -1}, None, "FENCED_LEADER_EPOCH"),
        ({"leader_epoch": 1}, None, "NOT_CONTROLLER"),
        ({"recovery_state": 1}, None, "INVALID_REQUEST"),
        ({"recovery_state": 1, "new_isr": [1]}, None, "INVALID_REQUEST"),
        # version and epoch errors come before the other validations
        ({"recovery_state": 1, "partition_epoch": -1}, None, "INVALID_UPDATE_VERSION"),
        ({"recovery_state": 1, "partition_epoch": 1}, None, "NOT_CONTROLLER"),
        ({"recovery_state": 1, "leader_epoch": -1}, None, "FENCED_LEADER_EPOCH"),
        ({"recovery_state": 1, "leader_epoch": 1}, None, "NOT_CONTROLLER"),
    ]
    for fields, top, error in cases:
        req = {"leader_epoch": 0, "new_isr": [1, 2, 3], "partition_epoch": 0, **fields}
        answer = ask_controller(sim, 1, **req)
        assert answer["error"] == top, fields
        if error is not None:
            [res] = answer["partitions"].values()
            assert res == {"error": error}, fields
    assert sim.zk_server.tree.nodes[STATE].version == 0        # nothing was written


@pytest.mark.parametrize("version", ["2.7", "3.0"])
def test_before_3_3_the_controller_fences_only_an_older_leader_epoch(version):
    """Kafka: ControllerIntegrationTest.testAlterPartitionErrors at 3.3.1, its cases replayed
    against the older controller (processAlterIsr @ 2.7.2 / 3.0.2, which 2.7.0's suite does not
    test this way): only a leader epoch below the cache is fenced; a stale zkVersion fails in
    ZooKeeper as INVALID_UPDATE_VERSION; the liveness of the members is not checked."""
    sim = started(version)
    assert ask_controller(sim, 1, leader_epoch=-1, new_isr=[1, 2], partition_epoch=0)[
        "partitions"]["t-0"] == {"error": "FENCED_LEADER_EPOCH"}
    assert ask_controller(sim, 1, leader_epoch=0, new_isr=[1, 2], partition_epoch=5)[
        "partitions"]["t-0"] == {"error": "INVALID_UPDATE_VERSION"}
    # no check on the liveness of the proposed members before 3.3
    assert ask_controller(sim, 1, leader_epoch=0, new_isr=[1, 2, 7], partition_epoch=0)[
        "partitions"]["t-0"]["isr"] == [1, 2, 7]


@pytest.mark.parametrize("version, error", [("3.3", "INELIGIBLE_REPLICA"),
                                            ("3.7", "INELIGIBLE_REPLICA"), ("3.0", None)])
def test_shutdown_broker_not_added_to_isr(version, error):
    """Kafka: ControllerIntegrationTest.testShutdownBrokerNotAddedToIsr at 3.3.1 and 3.7.0 — a
    proposal naming a broker that is shut down is refused with INELIGIBLE_REPLICA and the ISR is
    unchanged; once the broker is back it rejoins the ISR (3.0, before KIP-841, accepts it)."""
    sim = started(version, [{"at_ms": 1000, "op": "shutdown", "broker": 3}])
    assert sim.brokers[0].controller.states["t-0"]["isr"] == [1, 2]
    answer = ask_controller(sim, 1, leader_epoch=1, new_isr=[1, 2, 3], partition_epoch=1)
    res = answer["partitions"]["t-0"]
    assert res.get("error") == error
    if error:
        assert sim.brokers[0].controller.states["t-0"]["isr"] == [1, 2]
        sim.apply({"op": "restart", "broker": 3})
        sim.advance_to(sim.scheduler.now_ms + 2000)
        assert sim.zk_server.tree.nodes[STATE].data["isr"] == [1, 2, 3]


@pytest.mark.parametrize("version", ["3.3", "3.7"])
def test_alter_partition_errors_after_unclean_election(version):
    """Kafka: ControllerIntegrationTest.testAlterPartitionErrorsAfterUncleanElection at 3.3.1 and
    3.7.0 — replicas [1, 2]: 1 stops (leader 2, ISR [2]), 2 stops (no leader, ISR [2]), 1 restarts
    and is elected uncleanly (ISR [1], RECOVERING); the controller then answers each stale or
    invalid AlterPartition with Kafka's error code, epochs before the recovery-state checks.
    (Broker 2 leads its last partition: its controlled shutdown fails 3 times, 5 s apart, and it
    stops at ~12 s.)"""
    timeline = [{"at_ms": 1000, "op": "shutdown", "broker": 1},
                {"at_ms": 2000, "op": "shutdown", "broker": 2},
                {"at_ms": 13000, "op": "restart", "broker": 1}]
    doc = cluster(version, timeline, {"unclean.leader.election.enable": True}, clients=[])
    doc["topics"][0].update(replication_factor=2, assignment={"0": [1, 2]})
    sim = Simulation(doc)
    sim.advance_to(1500)
    assert sim.brokers[0].controller.states["t-0"]["leader"] == 2
    assert sim.brokers[0].controller.states["t-0"]["isr"] == [2]
    sim.advance_to(12500)
    assert (sim.brokers[0].controller.states["t-0"]["leader"],
            sim.brokers[0].controller.states["t-0"]["isr"]) == (-1, [2])
    sim.advance_to(14000)
    data = sim.zk_server.tree.nodes[STATE].data
    assert (data["leader"], data["isr"], data["leader_recovery_state"]) == (1, [1], 1)
    epoch, version_ = data["leader_epoch"], sim.zk_server.tree.nodes[STATE].version
    cases = [
        ({"broker_epoch": sim.brokers[1].broker_epoch - 1}, "STALE_BROKER_EPOCH", None),
        ({"broker": 99}, "STALE_BROKER_EPOCH", None),
        ({"partition_epoch": version_ - 1}, None, "INVALID_UPDATE_VERSION"),
        ({"partition_epoch": version_ + 1}, None, "NOT_CONTROLLER"),
        ({"leader_epoch": epoch - 1}, None, "FENCED_LEADER_EPOCH"),
        ({"leader_epoch": epoch + 1}, None, "NOT_CONTROLLER"),
        ({"recovery_state": 1}, None, "INVALID_REQUEST"),
        ({"recovery_state": 1, "partition_epoch": version_ - 1}, None, "INVALID_UPDATE_VERSION"),
        ({"recovery_state": 1, "partition_epoch": version_ + 1}, None, "NOT_CONTROLLER"),
        ({"recovery_state": 1, "leader_epoch": epoch - 1}, None, "FENCED_LEADER_EPOCH"),
        ({"recovery_state": 1, "leader_epoch": epoch + 1}, None, "NOT_CONTROLLER"),
    ]
    for fields, top, error in cases:
        req = {"leader_epoch": epoch, "new_isr": [1, 2], "partition_epoch": version_, **fields}
        answer = ask_controller(sim, 1, **req)
        assert answer["error"] == top, fields
        if error is not None:
            assert answer["partitions"]["t-0"] == {"error": error}, fields
