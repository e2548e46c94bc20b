"""Follower fetching (KIP-392) as Kafka's ``ReplicaManagerTest`` and ``PartitionTest`` check it
(docs/kafka-parity.md, section "ZooKeeper-mode broker"; docs/model.md §21.8).

Kafka's tests hand a ``ReplicaManager`` a consumer fetch with or without ``ClientMetadata``; here
the same fetch — with the consumer's ``rack_id`` or without — is handed to a broker of a small
simulated cluster in racks az-a, az-b, az-c (broker 0 leads t-0, broker 1 is its az-b follower),
and its answer read. Every test names its Kafka counterpart and tag.
"""
import pytest

from engine.core.messages import FETCH, Envelope
from engine.eras import RACK_AWARE_SELECTOR
from engine.simulation import Simulation

RACKS = {"0": "az-a", "1": "az-b", "2": "az-c"}


def cluster(version, timeline=(), selector=RACK_AWARE_SELECTOR, duration_ms=60000, config=None):
    config = dict(config or {})
    if selector:
        config["replica.selector.class"] = selector
    doc = {"seed": 1, "kafka_version": version, "brokers": 3, "racks": dict(RACKS), "config": config,
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [0, 1, 2]}}],
           "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "1", "rate_per_s": 20}],
           "timeline": list(timeline), "duration_ms": duration_ms}
    if version in ("3.9-kraft", "4.1"):
        doc["racks"].update({"3000": "az-a", "3001": "az-b", "3002": "az-c"})
    return doc


def consumer_fetch(broker, rack=None, offset=0, epoch=-1, max_wait_ms=0):
    """A consumer's Fetch of t-0 handed to ``broker``: (the t-0 answer or None while it is parked,
    whether the request is parked in the fetch purgatory)."""
    answers = []
    broker.reply = lambda _env, body: answers.append(body)
    body = {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1,
            "partitions": {"t-0": {"fetch_offset": offset, "current_leader_epoch": epoch}}}
    if rack is not None:
        body["rack_id"] = rack
    broker.on_fetch(Envelope(0, "c", broker.node_id, FETCH, body, 0, 0, 0, True))
    del broker.reply
    watched = any(op.env.body is body for ops in broker.fetch_purgatory.values() for op in ops)
    # unanswered is parked: watched on its partition, or (a redirect up to 3.2) only on its wait
    parked = watched or not answers
    return (answers[0]["partitions"]["t-0"] if answers else None), parked


def started(version, until=3000, **kw):
    sim = Simulation(cluster(version, **kw))
    sim.advance_to(until)
    return sim


@pytest.mark.parametrize("version", ["2.4", "3.7", "4.1"])
def test_preferred_replica_as_follower(version):
    """Kafka: ReplicaManagerTest.testPreferredReplicaAsFollower and
    testFetchFromFollowerShouldNotRunPreferLeaderSelect at 3.7.0 — a consumer fetch with client
    metadata at a follower is served there, and a follower never names a preferred replica."""
    sim = started(version)
    answer, _ = consumer_fetch(sim.brokers[1], rack="az-b")
    assert answer["error"] is None and "preferred_read_replica" not in answer
    assert answer["records"] and answer["from_follower"]
    assert len(answer["records"]) == sim.brokers[1].partitions["t-0"].log.hw   # up to its HW


def test_preferred_replica_as_leader():
    """Kafka: ReplicaManagerTest.testPreferredReplicaAsLeader and testReplicaSelector at 3.7.0 — a
    consumer in the leader's rack (rack-a) is served by the leader: no preferred replica."""
    sim = started("3.7")
    answer, _ = consumer_fetch(sim.brokers[0], rack="az-a")
    assert answer["error"] is None and "preferred_read_replica" not in answer and answer["records"]
    answer, _ = consumer_fetch(sim.brokers[0], rack="az-b")
    assert answer["preferred_read_replica"] == 1 and answer["records"] == ()


@pytest.mark.parametrize("version, chosen", [("3.0", 1), ("3.3", None), ("3.7", None)])
def test_preferred_replica_as_leader_when_same_rack_follower_is_out_of_isr(version, chosen):
    """Kafka: ReplicaManagerTest.testPreferredReplicaAsLeaderWhenSameRackFollowerIsOutOfIsr at
    3.7.0 — the rack-b follower has fetched (its LEO covers offset 0) but is out of the ISR: the
    selector does not see it, and the leader serves the fetch itself (KAFKA-14372, 3.3.2/3.4.0;
    "3.0" still names it). Broker 1 is cut off from the leader at 1 s and leaves the ISR after
    replica.lag.time.max.ms 10000."""
    timeline = [{"at_ms": 1000, "op": "cut", "from": 0, "to": 1}, {"at_ms": 1000, "op": "cut", "from": 1, "to": 0}]
    sim = started(version, until=20000, timeline=timeline, config={"replica.lag.time.max.ms": 10000})
    part = sim.brokers[0].partitions["t-0"]
    assert 1 not in part.isr and part.remotes[1].leo > 0
    answer, _ = consumer_fetch(sim.brokers[0], rack="az-b")
    assert answer.get("preferred_read_replica") == chosen


@pytest.mark.parametrize("version, immediate", [("3.0", False), ("3.3", True), ("3.7", True), ("4.1", True)])
def test_fetch_should_return_immediately_when_preferred_read_replica_is_defined(version, immediate):
    """Kafka: ReplicaManagerTest.testFetchShouldReturnImmediatelyWhenPreferredReadReplicaIsDefined
    at 3.7.0 (KAFKA-13767, 3.3.0) — with max wait 5000 ms and min bytes 1, a fetch whose answer names
    a preferred replica is answered at once and nothing is parked; before 3.3 it waited."""
    sim = started(version)
    answer, parked = consumer_fetch(sim.brokers[0], rack="az-b", max_wait_ms=5000)
    if immediate:
        assert answer["preferred_read_replica"] == 1 and not parked
    else:
        assert answer is None and parked


def test_default_replica_selector():
    """Kafka: ReplicaManagerTest.testDefaultReplicaSelector at 3.7.0 — no replica.selector.class
    means no selector: the leader serves every consumer, whatever its rack."""
    sim = started("3.7", selector=None)
    assert sim.brokers[0].config["replica.selector.class"] is None
    answer, _ = consumer_fetch(sim.brokers[0], rack="az-b")
    assert "preferred_read_replica" not in answer and answer["records"]


@pytest.mark.parametrize("version", ["2.4", "3.7"])
def test_leader_epoch_validation_on_follower(version):
    """Kafka: PartitionTest.testLeaderEpochValidationOnFollower at 3.7.0, with client metadata —
    a follower serves a consumer fetch without an epoch or with its leader epoch, and answers an
    older one FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH. (Without client metadata the
    engine answers NOT_LEADER_OR_FOLLOWER before the epoch check: docs/kafka-parity.md.)"""
    sim = started(version, timeline=[{"at_ms": 1000, "op": "shutdown", "broker": 2}])
    epoch = sim.brokers[1].partitions["t-0"].leader_epoch
    assert epoch >= 1
    errors = [consumer_fetch(sim.brokers[1], rack="az-b", epoch=e)[0]["error"]
              for e in (-1, epoch, epoch - 1, epoch + 1)]
    assert errors == [None, None, "FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH"]
    assert consumer_fetch(sim.brokers[1], rack=None, epoch=epoch)[0]["error"] == "NOT_LEADER_OR_FOLLOWER"


def test_fetch_follower_not_allowed_for_older_clients():
    """Kafka: ReplicaManagerTest.testFetchFollowerNotAllowedForOlderClients at 3.7.0 — a consumer
    fetch at a follower with client metadata (FetchRequest v11+; here an empty rack) is served; one
    without (an older client) is NOT_LEADER_OR_FOLLOWER. (The engine's consumer sends client
    metadata only with a client.rack: docs/model.md §21.8.)"""
    sim = started("3.7")
    assert consumer_fetch(sim.brokers[1], rack="")[0]["error"] is None
    assert consumer_fetch(sim.brokers[1], rack=None)[0]["error"] == "NOT_LEADER_OR_FOLLOWER"
