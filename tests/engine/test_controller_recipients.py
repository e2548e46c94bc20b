"""Who gets the controller's LeaderAndIsr (docs/model.md §9.8): ReplicaStateMachine's
OfflineReplica transition sends the shrunk ISR to the partition's *other* replicas
(``partitionReplicaAssignment(partition).filterNot(_ == replicaId)`` at 0.10.2.2, 1.1.1, 2.7.2,
3.7.0); the removed replica, still alive during a controlled shutdown, gets StopReplica instead
and stops fetching.
"""
from engine.simulation import Simulation

from .conftest import events


def follower_shutdown(version, engine_version=None):
    """Partition [0, 1, 2] led by 0 (the controller); follower 2 shuts down at 1 s."""
    doc = {"seed": 1, "kafka_version": version, "brokers": 3,
           "config": {"auto.leader.rebalance.enable": False},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [0, 1, 2]}}],
           "clients": [], "duration_ms": 6000,
           "timeline": [{"at_ms": 1000, "op": "shutdown", "broker": 2}]}
    return Simulation(doc, engine_version=engine_version).run()


def test_a_follower_in_controlled_shutdown_is_not_made_a_follower_again():
    """Fails under engine 1.2.0's rule, which sent the LeaderAndIsr of the shrink to broker 2 too:
    it followed again, fetched, and from 2.7 (no KIP-841 before 3.3) its fetch put it back into
    the ISR through AlterIsr."""
    for version in ("0.10", "2.6", "2.7", "3.3", "3.7"):
        r = follower_shutdown(version)
        [removal] = events(r, "isr_shrink", by="controller")
        assert removal["isr"] == [0, 1] and removal["leader_epoch"] == 1, version
        assert not [e for e in events(r, "become_follower", broker=2) if e["t_ms"] >= 1000], version
        assert not events(r, "isr_expand"), version
        assert r["zk"]["/brokers/topics/t/partitions/0/state"]["data"]["isr"] == [0, 1], version
    old = follower_shutdown("2.7", engine_version="1.2.0")
    assert [e for e in events(old, "become_follower", broker=2) if e["t_ms"] >= 1000]
    assert events(old, "isr_expand")[0]["isr"] == [0, 1, 2]


def test_a_broker_in_controlled_shutdown_is_not_told_of_an_offline_election():
    """Fails under engine 1.2.0's rule. Broker 2 is in a long controlled shutdown (it is the last
    ISR member of u-0, so three attempts 5 s apart); leader 1 of t-0 crashes and the controller
    elects 0. Election.leaderForOffline @ 2.7.2 sends the LeaderAndIsr to the live replicas,
    ``isReplicaOnline`` without shutting-down brokers: broker 2, which got StopReplica for t-0,
    stays stopped there, instead of following 0 and (2.7, no KIP-841) rejoining the ISR."""
    doc = {"seed": 1, "kafka_version": "2.7", "brokers": 4,
           "config": {"auto.leader.rebalance.enable": False, "zookeeper.session.timeout.ms": 3000},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [1, 2, 0]}},
                      {"name": "u", "partitions": 1, "replication_factor": 2,
                       "assignment": {"0": [2, 3]}}],
           "clients": [], "duration_ms": 15000,
           "timeline": [{"at_ms": 500, "op": "shutdown", "broker": 3},
                        {"at_ms": 1000, "op": "shutdown", "broker": 2},
                        {"at_ms": 2000, "op": "crash", "broker": 1}]}
    for engine_version, rejoins in ((None, False), ("1.2.0", True)):
        r = Simulation(doc, engine_version=engine_version).run()
        [elected] = events(r, "leader_elected", topic="t")
        assert (elected["leader"], elected["isr"], elected["leader_epoch"]) == (0, [0], 2)
        late = [e for e in events(r, "become_follower", broker=2, topic="t")
                if e["t_ms"] >= elected["t_ms"]]
        assert bool(late) is rejoins
        assert bool(events(r, "isr_expand", topic="t")) is rejoins


def leader_shutdown(version, engine_version=None):
    """Partition [1, 0, 2] led by 1 (broker 0 is the controller); leader 1 shuts down at 1 s."""
    doc = {"seed": 1, "kafka_version": version, "brokers": 3,
           "config": {"auto.leader.rebalance.enable": False},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [1, 0, 2]}}],
           "clients": [], "duration_ms": 4000,
           "timeline": [{"at_ms": 1000, "op": "shutdown", "broker": 1}]}
    return Simulation(doc, engine_version=engine_version).run()


def test_kafka_7482_the_shutting_down_leader_is_not_told_in_1_1_to_2_0():
    """Fails under engine 1.2.0's rule. PartitionStateMachine.leaderForControlledShutdown @ 1.1.1
    and 2.0.1 returns ``assignment.filter(isReplicaOnline(_, partition))`` as the recipients —
    shutting-down brokers excluded — so the old leader gets no LeaderAndIsr and is never made a
    follower before it stops (KAFKA-7482, fixed in 2.1.0: ``includeShuttingDownBrokers = true``,
    as ``Election.leaderForControlledShutdown`` @ 2.4.1 - 3.7.0; 0.10.2.2's
    ControlledShutdownLeaderSelector returns the live-or-shutting-down replicas too)."""
    for version, told in (("0.10", True), ("1.1", False), ("2.0", False), ("2.0.1", False),
                          ("2.4", True), ("2.7", True), ("3.7", True)):
        r = leader_shutdown(version)
        [elected] = events(r, "leader_elected", kind="controlled_shutdown")
        assert (elected["leader"], elected["isr"]) == (0, [0, 2]), version
        moved = [e for e in events(r, "become_follower", broker=1) if e["t_ms"] >= 1000]
        assert bool(moved) is told, version
        assert [e for e in events(r, "become_follower", broker=2) if e["t_ms"] >= 1000], version
    old = leader_shutdown("2.0.1", engine_version="1.2.0")
    assert [e for e in events(old, "become_follower", broker=1) if e["t_ms"] >= 1000]
