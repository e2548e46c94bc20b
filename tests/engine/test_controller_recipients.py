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
