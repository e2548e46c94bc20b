"""Kafka's own KRaft controller tests, written again against the simulator (docs/kafka-parity.md,
section "KRaft controller").

Where Kafka's test is a unit test of ``PartitionChangeBuilder`` or of the AlterPartition
validation, the engine's pure functions (``engine/kraft/partition_change.py``,
``engine/kraft/quorum_controller.validate_alter``) are called with the same registration and the
same inputs; the other tests run a small simulated cluster and assert the same outcome on the
committed metadata. Kafka's broker ids are kept where a pure function is called; scenarios number
brokers from 0. Tags: apache/kafka 3.9.0 and 4.1.0.
"""
import pytest

from engine.kraft.metadata_image import BROKER_CHANGE, REGISTER_BROKER, MetadataImage
from engine.kraft.partition_change import build_change, merge
from engine.kraft.quorum_controller import validate_alter
from engine.simulation import Simulation


def registration(replicas, isr, leader, elr=(), lke=(), state="RECOVERED", epochs=(100, 200)):
    return {"replicas": list(replicas), "isr": list(isr), "leader": leader,
            "leader_epoch": epochs[0], "partition_epoch": epochs[1], "elr": list(elr),
            "last_known_elr": list(lke), "leader_recovery_state": state}


def cluster(brokers, isr_replicas, era="4.1", timeline=(), duration_ms=40000, config=None,
            partitions=1):
    return {"name": "parity", "kafka_version": era, "brokers": brokers, "duration_ms": duration_ms,
            "config": config or {},
            "topics": [{"name": "foo", "partitions": partitions,
                        "replication_factor": isr_replicas}],
            "clients": [], "timeline": list(timeline)}


def events(result, type_, **match):
    return [e for e in result["history"]
            if e["type"] == type_ and all(e.get(k) == v for k, v in match.items())]


# -- PartitionChangeBuilderTest ---------------------------------------------------------------------

def elected(reg, target_isr, acceptable, elr, election="online"):
    """PartitionChangeBuilder.electLeader: (node, unclean) for an election type."""
    change, kind = build_change(reg, target_isr, acceptable, elr, 2, unclean=election == "unclean",
                                preferred=election == "preferred")
    return (change or {}).get("leader", reg["leader"]), kind == "unclean"


@pytest.mark.parametrize("elr", [False, True])
def test_elect_leader(elr):
    """Kafka: PartitionChangeBuilderTest.testElectLeader at 3.9.0 and 4.1.0 (record versions with
    and without ELR). FOO (AR [2,1,3], ISR [2,1,3], leader 1, 3 not acceptable): PREFERRED elects 2,
    ONLINE and UNCLEAN keep 1, also with target ISR [1,3]; target ISR [3] leaves no leader unless
    UNCLEAN, which elects 2 uncleanly. BAZ (ISR [1,3], leader 3): every election type keeps 3.
    The case with new target replicas (reassignment) is not applicable."""
    foo = registration([2, 1, 3], [2, 1, 3], 1)
    foo_ok = lambda b: b != 3  # noqa: E731
    assert elected(foo, foo["isr"], foo_ok, elr, "preferred") == (2, False)
    assert elected(foo, foo["isr"], foo_ok, elr) == (1, False)
    assert elected(foo, foo["isr"], foo_ok, elr, "unclean") == (1, False)
    assert elected(foo, [1, 3], foo_ok, elr) == (1, False)
    assert elected(foo, [1, 3], foo_ok, elr, "unclean") == (1, False)
    assert elected(foo, [3], foo_ok, elr) == (-1, False)
    assert elected(foo, [3], foo_ok, elr, "unclean") == (2, True)
    baz = registration([2, 1, 3], [1, 3], 3)
    for election in ("preferred", "online", "unclean"):
        assert elected(baz, baz["isr"], lambda b: True, elr, election) == (3, False)


@pytest.mark.parametrize("elr", [False, True])
def test_no_leader_epoch_bump_on_isr_shrink(elr):
    """Kafka: PartitionChangeBuilderTest.testNoLeaderEpochBumpOnIsrShrink at 3.9.0 and 4.1.0.
    Shrinking FOO's ISR [2,1,3] to [2,1] writes only the ISR: the leader epoch stays 100, the
    partition epoch goes to 201."""
    foo = registration([2, 1, 3], [2, 1, 3], 1)
    change, kind = build_change(foo, [2, 1], lambda b: True, elr, 1)
    assert change == {"isr": [2, 1]} and kind is None
    after = merge(foo, change)
    assert (after["leader"], after["leader_epoch"], after["partition_epoch"]) == (1, 100, 201)


def test_no_leader_epoch_bump_on_isr_expansion():
    """Kafka: PartitionChangeBuilderTest.testNoLeaderEpochBumpOnIsrExpansion at 3.9.0 and 4.1.0.
    Expanding FOO's ISR to [2,1,3,4] keeps leader 1 and leader epoch 100."""
    foo = registration([2, 1, 3], [2, 1, 3], 1)
    change, _kind = build_change(foo, [2, 1, 3, 4], lambda b: True)
    assert change == {"isr": [2, 1, 3, 4]}
    assert merge(foo, change)["leader_epoch"] == 100


def test_unclean_sets_leader_recovering_state():
    """Kafka: PartitionChangeBuilderTest.testUncleanSetsLeaderRecoveringState at 3.9.0 and 4.1.0.
    Leaderless, ISR [2,3] offline, only 1 acceptable, unclean election: 1 leads with ISR [1]
    and the registration is RECOVERING."""
    reg = registration([1, 2, 3], [2, 3], -1)
    change, kind = build_change(reg, [2, 3], lambda b: b == 1, False, 2, unclean=True)
    assert kind == "unclean"
    assert change["leader"] == 1 and change["isr"] == [1]
    after = merge(reg, change)
    assert (after["leader"], after["isr"], after["leader_recovery_state"]) == (1, [1], "RECOVERING")


def test_change_in_leadership_does_not_change_recovery_state():
    """Kafka: PartitionChangeBuilderTest.testChangeInLeadershipDoesNotChangeRecoveryState at 3.9.0
    and 4.1.0. A RECOVERING leader goes offline (leader -1, ISR [1] kept) and comes back as the
    only ISR member: neither record touches the recovery state, which stays RECOVERING."""
    reg = registration([1, 2, 3], [1], 1, state="RECOVERING")
    change, _kind = build_change(reg, [], lambda b: False, False, 2)
    assert change == {"leader": -1}
    reg = merge(reg, change)
    assert (reg["leader"], reg["isr"], reg["leader_recovery_state"]) == (-1, [1], "RECOVERING")
    change, _kind = build_change(reg, reg["isr"], lambda b: True, False, 2)
    assert "leader_recovery_state" not in change
    reg = merge(reg, change)
    assert (reg["leader"], reg["isr"], reg["leader_recovery_state"]) == (1, [1], "RECOVERING")


def test_elr_isr_shrink_below_min_isr():
    """Kafka: PartitionChangeBuilderTest.testEligibleLeaderReplicas_IsrShrinkBelowMinISR at 4.1.0
    (record version 2). Min ISR 3, ISR [1,2,3,4] -> [1,2]: the leavers 3 and 4 become ELR; with ELR
    off (3.9.0's default, version 1) the ELR stays empty."""
    reg = registration([1, 2, 3, 4], [1, 2, 3, 4], 1)
    change, _kind = build_change(reg, [1, 2], lambda b: b != 3, True, 3, preferred=True)
    assert change == {"isr": [1, 2], "elr": [3, 4]}
    assert merge(reg, change)["last_known_elr"] == []
    change, _kind = build_change(reg, [1, 2], lambda b: b != 3, False, 3, preferred=True)
    assert change == {"isr": [1, 2]}


def test_elr_isr_expand_above_min_isr():
    """Kafka: PartitionChangeBuilderTest.testEligibleLeaderReplicas_IsrExpandAboveMinISR at 4.1.0.
    ISR [1,2] -> [1,2,3] reaches min ISR 3: ELR [3] and last known ELR [4] are both cleared."""
    reg = registration([1, 2, 3, 4], [1, 2], 1, elr=[3], lke=[4])
    change, _kind = build_change(reg, [1, 2, 3], lambda b: b != 3, True, 3, preferred=True)
    assert change == {"isr": [1, 2, 3], "elr": [], "last_known_elr": []}


def test_elr_remove_unclean_shutdown_replicas_from_elr():
    """Kafka: PartitionChangeBuilderTest.testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr
    at 4.1.0. Replica 3 shut down uncleanly: it leaves the ELR [2,3] -> [2] (the leader and ISR stay).
    Kafka's test runs the builder with useLastKnownLeaderInBalancedRecovery off and then also
    expects last known ELR [3]; the controller never turns that mode off, and in its mode the last
    known ELR stays empty, which is what the engine writes."""
    reg = registration([1, 2, 3, 4], [1], 1, elr=[2, 3])
    change, _kind = build_change(reg, [1], lambda b: b != 3, True, 3, preferred=True,
                                 unclean_shutdown=(3,))
    assert change == {"elr": [2]}


def test_elr_can_be_elected():
    """Kafka: PartitionChangeBuilderTest.testEligibleLeaderReplicas_ElrCanBeElected at 4.1.0 (last
    known leader on). Leader 1 (ISR [1], ELR [3]) goes offline: ELR member 3 is elected cleanly and
    becomes the ISR, 1 moves to the ELR."""
    reg = registration([1, 2, 3, 4], [1], 1, elr=[3])
    change, kind = build_change(reg, [], lambda b: b != 1, True, 3, preferred=True)
    assert kind == "elr"
    after = merge(reg, change)
    assert (after["leader"], after["isr"], after["elr"], after["last_known_elr"]) == (3, [3], [1], [])


def test_elr_isr_can_shrink_to_zero():
    """Kafka: PartitionChangeBuilderTest.testEligibleLeaderReplicas_IsrCanShrinkToZero at 4.1.0 (last
    known leader on). Every replica offline: ISR [], leader -1, ELR [1,2,3,4], last known ELR [1]
    (the leader just before)."""
    reg = registration([1, 2, 3, 4], [1, 2, 3, 4], 1)
    change, _kind = build_change(reg, [], lambda b: False, True, 3, preferred=True)
    assert change == {"leader": -1, "isr": [], "elr": [1, 2, 3, 4], "last_known_elr": [1]}


def test_elr_elect_last_known_leader():
    """Kafka: PartitionChangeBuilderTest.testEligibleLeaderReplicas_ElectLastKnownLeader at 4.1.0.
    ISR and ELR empty, last known ELR [1] and 1 acceptable: 1 is elected RECOVERING with ISR [1]
    and the last known ELR is cleared."""
    reg = registration([1, 2, 3, 4], [], -1, lke=[1])
    change, kind = build_change(reg, [], lambda b: True, True, 3, preferred=True)
    assert kind == "last_known_leader"
    assert change == {"leader": 1, "isr": [1], "last_known_elr": [],
                      "leader_recovery_state": "RECOVERING"}


@pytest.mark.parametrize("preferred", [True, False])
def test_elr_not_eligible_last_known_leader(preferred):
    """Kafka: PartitionChangeBuilderTest.testEligibleLeaderReplicas_NotEligibleLastKnownLeader at
    4.1.0 (KAFKA-19522). The last known leader 1 is not acceptable: no record at all."""
    reg = registration([1, 2, 3, 4], [], -1, lke=[1])
    change, _kind = build_change(reg, [], lambda b: False, True, 3, preferred=preferred)
    assert change is None


# -- ReplicationControlManagerTest -------------------------------------------------------------------

def test_preferred_election_does_not_trigger_unclean_election():
    """Kafka: ReplicationControlManagerTest.testPreferredElectionDoesNotTriggerUncleanElection at
    3.9.0 and 4.1.0. Leaderless with ISR [1] (fenced), 2 unfenced and unclean election enabled: a
    PREFERRED election writes nothing."""
    reg = registration([1, 2, 3], [1], -1, epochs=(2, 4))
    change, _kind = build_change(reg, [1], lambda b: b == 2, False, 1, unclean=True, preferred=True)
    assert change is None


def image_with(active=(), fenced=(), shutting_down=()):
    image = MetadataImage()
    offset = 0
    for broker in sorted(set(active) | set(fenced) | set(shutting_down)):
        image.replay({"offset": offset, "type": REGISTER_BROKER, "broker": broker,
                      "broker_epoch": 100 + broker, "fenced": broker in fenced,
                      "in_controlled_shutdown": False})
        offset += 1
        if broker in shutting_down:
            image.replay({"offset": offset, "type": BROKER_CHANGE, "broker": broker,
                          "broker_epoch": 100 + broker, "in_controlled_shutdown": 1})
            offset += 1
    return image


def alter(new_isr, leader_epoch=0, partition_epoch=0, recovery=0):
    return {"new_isr": list(new_isr), "leader_epoch": leader_epoch, "zk_version": partition_epoch,
            "leader_recovery_state": recovery}


def test_invalid_alter_partition_requests():
    """Kafka: ReplicationControlManagerTest.testInvalidAlterPartitionRequests at 3.9.0 and 4.1.0.
    Partition [0,1,2] led by 0: a non-leader sender, a leader or partition epoch ahead of the
    controller (NOT_CONTROLLER, KAFKA-14154), a non-replica or a missing leader in the new ISR and
    a RECOVERING request with two members and a RECOVERED -> RECOVERING move are refused with
    Kafka's errors; a valid shrink passes (engine 1.2.0 accepted RECOVERED -> RECOVERING)."""
    image = image_with(active=[0, 1, 2])
    reg = registration([0, 1, 2], [0, 1, 2], 0, epochs=(0, 0))
    assert validate_alter(image, 1, reg, alter([0, 1])) == "INVALID_REQUEST"
    assert validate_alter(image, 0, reg, alter([0, 1], leader_epoch=500)) == "NOT_CONTROLLER"
    assert validate_alter(image, 0, reg, alter([0, 1], partition_epoch=500)) == "NOT_CONTROLLER"
    assert validate_alter(image, 0, reg, alter([0, 1, 3])) == "INVALID_REQUEST"
    assert validate_alter(image, 0, reg, alter([1, 2])) == "INVALID_REQUEST"
    assert validate_alter(image, 0, reg, alter([0, 1], recovery=1)) == "INVALID_REQUEST"
    assert validate_alter(image, 0, reg, alter([0], recovery=1)) == "INVALID_REQUEST"
    assert validate_alter(image, 0, reg, alter([0], recovery=1), False) is None  # engine 1.2.0
    assert validate_alter(image, 0, reg, alter([0, 1])) is None


def test_alter_partition_should_reject_fenced_brokers():
    """Kafka: ReplicationControlManagerTest.testAlterPartitionShouldRejectFencedBrokers at 3.9.0 and
    4.1.0. Fencing 3 shrinks [1,2,3,4] to ISR [1,2,4] (leader 1, epochs 0/1); the leader's request
    to add 3 back gets INELIGIBLE_REPLICA, and is accepted once 3 is unfenced."""
    reg = registration([1, 2, 3, 4], [1, 2, 3, 4], 1, epochs=(0, 0))
    change, _kind = build_change(reg, [1, 2, 4], lambda b: b != 3)
    reg = merge(reg, change)
    assert (reg["isr"], reg["leader"], reg["leader_epoch"], reg["partition_epoch"]) == ([1, 2, 4], 1, 0, 1)
    image = image_with(active=[1, 2, 4], fenced=[3])
    assert validate_alter(image, 1, reg, alter([1, 2, 3, 4], 0, 1)) == "INELIGIBLE_REPLICA"
    image.replay({"offset": 9, "type": BROKER_CHANGE, "broker": 3, "broker_epoch": 103, "fenced": -1})
    assert validate_alter(image, 1, reg, alter([1, 2, 3, 4], 0, 1)) is None


def test_alter_partition_should_reject_shutting_down_brokers():
    """Kafka: ReplicationControlManagerTest.testAlterPartitionShouldRejectShuttingDownBrokers at
    3.9.0 and 4.1.0. Adding broker 4, in controlled shutdown, to the ISR: INELIGIBLE_REPLICA."""
    image = image_with(active=[1, 2, 3], shutting_down=[4])
    reg = registration([1, 2, 3, 4], [1, 2, 3], 1, epochs=(0, 0))
    assert validate_alter(image, 1, reg, alter([1, 2, 3, 4])) == "INELIGIBLE_REPLICA"


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_fence_multiple_brokers(era):
    """Kafka: QuorumControllerTest.testFenceMultipleBrokers at 3.9.0 and 4.1.0 (and
    ReplicationControlManagerTest.testFenceMultipleBrokers). Five brokers, RF 5; every broker but
    one stops heartbeating: all four are fenced, the partition's ISR is [that broker] and it leads,
    and the partition is off its preferred leader."""
    timeline = [{"op": "crash", "broker": b, "at_ms": 5000} for b in (0, 1, 2, 3)]
    result = Simulation(cluster(5, 5, era, timeline, 25000)).run()
    assert sorted(e["broker"] for e in events(result, "broker_fenced")) == [0, 1, 2, 3]
    part = result["partitions"]["foo-0"]
    assert part["isr"] == [4] and part["leader"] == 4
    assert part["replicas"][0] != part["leader"]  # arePartitionLeadersImbalanced


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_balance_partition_leaders(era):
    """Kafka: QuorumControllerTest.testBalancePartitionLeaders at 3.9.0 and 4.1.0 (and
    ReplicationControlManagerTest.testBalancePartitionLeaders). Three brokers, RF 3, three
    partitions, check interval 1 s; broker 2 is fenced and comes back: once it is in the ISR again,
    the balancer's record sets only the leader (ISR unchanged, leader epoch + 1) and no partition is
    left off its preferred leader."""
    timeline = [{"op": "crash", "broker": 2, "at_ms": 5000},
                {"op": "restart", "broker": 2, "at_ms": 16000}]
    config = {"leader.imbalance.check.interval.seconds": 1}
    result = Simulation(cluster(3, 3, era, timeline, 30000, config, partitions=3)).run()
    moved_back = events(result, "leader_elected", kind="preferred")
    assert moved_back and {e["leader"] for e in moved_back} == {2}
    for key, part in result["partitions"].items():
        assert part["leader"] == part["replicas"][0], key
    record = next(r for r in result["metadata_log"] if r.get("reason", "").startswith("automatic"))
    assert "isr" not in record and record["leader"] == 2


# -- ClusterControlManagerTest / BrokerHeartbeatManagerTest --------------------------------------------

@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_re_registration_and_broker_epoch(era):
    """Kafka: ClusterControlManagerTest.testReRegistrationAndBrokerEpoch at 3.9.0 and 4.1.0. The
    broker epoch is the offset of the broker's RegisterBrokerRecord, and a re-registration gets the
    offset of its new record."""
    timeline = [{"op": "crash", "broker": 0, "at_ms": 5000}, {"op": "restart", "broker": 0, "at_ms": 16000}]
    result = Simulation(cluster(3, 3, era, timeline, 25000)).run()
    records = [r for r in result["metadata_log"] if r["type"] == REGISTER_BROKER and r["broker"] == 0]
    started = events(result, "broker_started", broker=0)
    assert len(records) == 2 and len(started) == 2
    assert [e["broker_epoch"] for e in started] == [r["offset"] for r in records]
    assert records[1]["broker_epoch"] > records[0]["broker_epoch"]


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_duplicate_broker_registration_with_active_old_broker(era):
    """Kafka: ClusterControlManagerTest.testDuplicateBrokerRegistrationWithActiveOldBroker at 4.1.0
    (the same check is in 3.9.0's ClusterControlManager.registerBroker). A new incarnation while the
    old one's session (broker.session.timeout.ms 9000 after its last heartbeat) is valid is refused
    with DUPLICATE_BROKER_REGISTRATION; once the session expired it registers."""
    timeline = [{"op": "crash", "broker": 0, "at_ms": 5000}, {"op": "restart", "broker": 0, "at_ms": 6000}]
    result = Simulation(cluster(3, 3, era, timeline, 25000)).run()
    rejected = events(result, "registration_rejected", broker=0)
    assert rejected and {e["error"] for e in rejected} == {"DUPLICATE_BROKER_REGISTRATION"}
    fenced = events(result, "broker_fenced", broker=0)[0]["t_ms"]
    assert all(e["t_ms"] <= fenced for e in rejected)
    started = events(result, "broker_started", broker=0)
    assert len(started) == 2 and started[1]["t_ms"] >= fenced
    assert 5000 + 9000 - 2000 <= fenced <= 5000 + 9000 + 1125 + 10


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_process_broker_heartbeat_in_controlled_shutdown(era):
    """Kafka: ReplicationControlManagerTest.testProcessBrokerHeartbeatInControlledShutdown and
    BrokerHeartbeatManagerTest.testCalculateNextBrokerState at 3.9.0 and 4.1.0. A heartbeat with
    WantShutDown from a leader writes in_controlled_shutdown and moves its leadership and ISR
    membership away; SHUTDOWN_NOW follows once it leads nothing, and it is fenced."""
    timeline = [{"op": "shutdown", "broker": 0, "at_ms": 5000}]
    # 20 s: from engine 1.5.0 the grant can come with the heartbeat 2 s after the 50 ms one
    # (BrokerLifecycleManager's PENDING_CONTROLLED_SHUTDOWN schedule), and 4.1's second fence a
    # session after that last heartbeat
    result = Simulation(cluster(3, 3, era, timeline, 20000)).run()
    started = events(result, "controlled_shutdown_started", broker=0)
    granted = events(result, "controlled_shutdown_granted", broker=0)
    assert started and granted and started[0]["t_ms"] <= granted[0]["t_ms"]
    part = result["partitions"]["foo-0"]
    assert part["leader"] != 0 and 0 not in part["isr"]
    fences = events(result, "broker_fenced")
    # at commit: the 25 ms linger (engine 1.4.0) and a fetch round trip
    assert fences[0]["broker"] == 0 and fences[0]["t_ms"] <= granted[0]["t_ms"] + 25 + 5
    # 4.1 (engine 1.4.0): the tracker still holds the stopped broker's last heartbeat; when that
    # session expires, maybeFenceOneStaleBroker writes the fence record again (4.1.0 does not look
    # whether the broker is fenced); 3.9's unfenced list no longer holds it
    assert [e["broker"] for e in fences] == ([0, 0] if era == "4.1" else [0])
    if era == "4.1":
        assert fences[1]["t_ms"] > granted[0]["t_ms"] + 9000        # a session after the grant


def test_elr_broker_fence():
    """Kafka: ReplicationControlManagerTest.testEligibleLeaderReplicas_BrokerFence at 4.1.0. RF 4,
    min ISR 3, leader 0: fencing 2 then 3 leaves ISR [0,1] and ELR [3] (2 left while the ISR was
    still at min ISR); fencing 1 as well leaves ISR [0] and ELR [1,3]; last known ELR stays empty."""
    timeline = [{"op": "crash", "broker": 2, "at_ms": 5000}, {"op": "crash", "broker": 3, "at_ms": 7000},
                {"op": "crash", "broker": 1, "at_ms": 9000}]
    result = Simulation(cluster(4, 4, "4.1", timeline, 25000, {"min.insync.replicas": 3})).run()
    changes = [e for e in events(result, "partition_change") if e["t_ms"] > 5000]
    assert [(e["isr"], e.get("elr")) for e in changes] == [([0, 1, 3], None), ([0, 1], [3]),
                                                          ([0], [1, 3])]
    part = result["partitions"]["foo-0"]
    assert (part["leader"], part["isr"], part["elr"], part["last_known_elr"]) == (0, [0], [1, 3], [])


def committed_image_through(result, offset):
    """The committed metadata image after the records up to ``offset``."""
    image = MetadataImage()
    for record in result["metadata_log"]:
        if record["offset"] > offset:
            break
        image.replay(record)
    return image


def test_elr_unclean_shutdown():
    """Kafka: ReplicationControlManagerTest.testEligibleLeaderReplicas_UncleanShutdown at 4.1.0. RF 4,
    min ISR 3, leader 0; 1, 2, 3 fenced: ISR [0], ELR [2,3]. Replicas that come back after an unclean
    shutdown leave the ELR, and the last ISR member stays the last known leader: the end state is
    ELR [2], last known ELR [0]. On the live cluster 0 is lost before 3 comes back (a restarted 3
    would otherwise rejoin 0's ISR), so in between the ELR is [0,2] where Kafka's has [2]."""
    timeline = [{"op": "crash", "broker": 1, "at_ms": 3000}, {"op": "crash", "broker": 2, "at_ms": 5000},
                {"op": "crash", "broker": 3, "at_ms": 7000}, {"op": "crash", "broker": 0, "at_ms": 9000},
                {"op": "restart", "broker": 3, "at_ms": 20000}, {"op": "restart", "broker": 0, "at_ms": 22000}]
    result = Simulation(cluster(4, 4, "4.1", timeline, 30000, {"min.insync.replicas": 3})).run()
    change = next(r for r in result["metadata_log"] if r.get("reason") == "broker 3 fenced")
    part = committed_image_through(result, change["offset"]).partitions[("foo", 0)]
    assert (part["isr"], part["elr"]) == ([0], [2, 3])
    registrations = [r for r in result["metadata_log"] if r["type"] == REGISTER_BROKER][4:]
    expected = ((3, [0, 2], [0]), (0, [2], [0]))
    assert [r["broker"] for r in registrations] == [3, 0]
    for record, (broker, elr, lke) in zip(registrations, expected):
        assert record["clean"] is False
        part = committed_image_through(result, record["offset"]).partitions[("foo", 0)]
        assert (part["leader"], part["isr"], part["elr"], part["last_known_elr"]) == (-1, [], elr, lke), broker


@pytest.mark.parametrize("stop,clean", [("shutdown", True), ("crash", False)])
def test_re_registration_with_clean_shutdown_detection(stop, clean):
    """Kafka: ClusterControlManagerTest.testReRegistrationWithCleanShutdownDetection at 4.1.0. A
    re-registration whose PreviousBrokerEpoch is the registered epoch (the clean-shutdown file of a
    controlled shutdown) is clean, otherwise unclean; the new registration has the new record's
    offset as epoch and is not in controlled shutdown."""
    timeline = [{"op": stop, "broker": 0, "at_ms": 5000}, {"op": "restart", "broker": 0, "at_ms": 20000}]
    result = Simulation(cluster(3, 3, "4.1", timeline, 25000)).run()
    again = [r for r in result["metadata_log"] if r["type"] == REGISTER_BROKER and r["broker"] == 0][1]
    assert again["clean"] is clean and again["broker_epoch"] == again["offset"]
    reg = committed_image_through(result, again["offset"]).brokers[0]
    assert reg["in_controlled_shutdown"] is False and reg["broker_epoch"] == again["offset"]


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_duplicate_registration_after_controlled_shutdown(era):
    """Kafka: ClusterControlManager.registerBroker at 3.9.0 and 4.1.0 (and
    ClusterControlManagerTest.testDuplicateBrokerRegistrationWithActiveOldBroker at 4.1.0, whose
    broker session lives in ``BrokerHeartbeatTracker``, KAFKA-17793). 3.9 asks
    ``BrokerHeartbeatManager.hasValidSession(id)``, false for a fenced broker, so a broker fenced
    by its granted controlled shutdown re-registers at once. 4.1 asks
    ``hasValidSession(id, epoch)`` of the tracker, which holds the last heartbeat of that epoch
    whether the broker is fenced or not: a restart within broker.session.timeout.ms (9000) of the
    last heartbeat is refused with DUPLICATE_BROKER_REGISTRATION until that session expires."""
    # restart at 8 s: from engine 1.5.0 the grant comes with the heartbeat 2 s after the 50 ms
    # one (PENDING_CONTROLLED_SHUTDOWN's schedule), at about 7.1 s
    timeline = [{"op": "shutdown", "broker": 0, "at_ms": 5000},
                {"op": "restart", "broker": 0, "at_ms": 8000}]
    result = Simulation(cluster(3, 3, era, timeline, 25000)).run()
    granted = events(result, "controlled_shutdown_granted", broker=0)[0]["t_ms"]
    rejected = events(result, "registration_rejected", broker=0)
    started = events(result, "broker_started", broker=0)
    assert len(started) == 2
    if era == "3.9-kraft":
        assert not rejected and started[1]["t_ms"] < 8000 + 1000
    else:
        assert rejected and {e["error"] for e in rejected} == {"DUPLICATE_BROKER_REGISTRATION"}
        assert all(e["t_ms"] <= granted + 9000 for e in rejected)
        assert granted + 9000 - 100 <= started[1]["t_ms"] <= granted + 9000 + 2100


# -- BrokerHeartbeatTrackerTest (4.1.0), second reading of engine 1.4.0 ----------------------------------

def tracker(session_ms=10):
    """BrokerHeartbeatTrackerTest.newBrokerHeartbeatTracker: a session of 10 ms (10_000_000 ns)."""
    from engine.kraft.heartbeat_tracker import HeartbeatTracker
    return HeartbeatTracker(session_ms)


TEST_BROKERS = [(0, 0), (1, 100), (2, 200)]


def test_heartbeat_tracker_maybe_remove_expired():
    """Kafka: BrokerHeartbeatTrackerTest.testMaybeRemoveExpiredWithEmptyTracker,
    testMaybeRemoveExpiredWithAllUpToDate and testMaybeRemoveExpiredWithAllExpired @ 4.1.0: nothing
    to remove from an empty tracker or while every session is fresh; 11 ms later every (id, epoch)
    is removed, one per call, then nothing."""
    assert tracker().remove_expired(0) is None
    t = tracker()
    for broker, epoch in TEST_BROKERS:
        t.update(broker, epoch, 0)
    assert t.remove_expired(0) is None
    removed = []
    while (key := t.remove_expired(11)) is not None:
        removed.append(key)
    assert sorted(removed) == TEST_BROKERS


def test_heartbeat_tracker_has_valid_session():
    """Kafka: BrokerHeartbeatTrackerTest.testHasValidSessionIsTrueForKnownBroker,
    testHasValidSessionIsFalseForUnknownBroker and testHasValidSessionIsFalseForUnknownBrokerEpoch
    @ 4.1.0: a session is the pair (id, epoch); another epoch of a known broker has none."""
    t = tracker()
    for broker, epoch in TEST_BROKERS:
        t.update(broker, epoch, 0)
    assert t.has_valid_session(2, 200, 0)
    assert not t.has_valid_session(3, 300, 0)
    assert not t.has_valid_session(2, 100, 0)


def test_heartbeat_tracker_is_expired():
    """Kafka: BrokerHeartbeatTrackerTest.testIsExpiredIsFalseForTheCurrentTime,
    testIsExpiredIsFalseForTenNanosecondsAfter, testIsExpiredIsTrueAfterExpirationTime and
    testIsExpiredIsFalseForPreviousTime @ 4.1.0, in the engine's milliseconds: contact + session
    < now, strictly (at exactly contact + session the session still holds), and never for a
    contact in the future."""
    t = tracker()
    t.update(0, 0, 456)
    assert not t.has_valid_session(0, 0, 456 + 11)
    assert t.has_valid_session(0, 0, 456) and t.has_valid_session(0, 0, 456 + 10)
    assert t.has_valid_session(0, 0, 0)


def test_broker_contact_times_are_updated_on_cluster_control_activation():
    """Kafka: ClusterControlManagerTest.testBrokerContactTimesAreUpdatedOnClusterControlActivation
    @ 4.1.0: the activation gives a contact time (now) to the current epoch of every unfenced
    broker, none to a fenced broker, to another epoch or to an unknown broker. Here broker 0 is
    fenced (it crashed) when the active controller fails over."""
    timeline = [{"op": "crash", "broker": 0, "at_ms": 3000}]
    sim = Simulation(cluster(3, 3, "4.1", timeline, 40000))
    sim.advance_to(16000)
    assert [e for e in sim.history if e["type"] == "broker_fenced" and e["broker"] == 0]
    old = sim.quorum.active
    sim.apply({"op": "crash", "controller": old})
    t = 16000
    while sim.quorum.active in (None, old) or sim.quorum.voters[sim.quorum.active].controller is None:
        t += 1
        sim.advance_to(t)
    activated = [e for e in sim.history if e["type"] == "controller_activated"][-1]["t_ms"]
    controller = sim.quorum.voters[sim.quorum.active].controller
    epochs = {b: reg["broker_epoch"] for b, reg in controller.image.brokers.items()}
    contacts = controller.tracker.contact
    assert (0, epochs[0]) not in contacts
    assert contacts[(1, epochs[1])] == activated and contacts[(2, epochs[2])] == activated
    assert (1, epochs[1] + 1) not in contacts and (3, epochs[0]) not in contacts
