"""The leader side of a partition as Kafka's ``PartitionTest`` and ``ReplicaManagerTest`` check it
(docs/kafka-parity.md, section "ZooKeeper-mode broker").

Kafka's tests drive one ``Partition`` or ``ReplicaManager`` with a mock clock and hand-made
LeaderAndIsr states; here the same situations arise in a small simulated cluster, or — where
Kafka's test checks one pure rule — the engine's pure function of ``engine/server/partition.py``
is called with the test's numbers. Every test names its Kafka counterpart and tag.
"""
import pytest

from engine import eras
from engine.core.messages import FETCH, OFFSETS_FOR_LEADER_EPOCH, Envelope
from engine.scenario.document import ScenarioError, load
from engine.server.log import UNDEFINED
from engine.server.partition import (NEVER_MS, RemoteReplica, can_join_isr, is_out_of_sync,
                                     update_fetch_state)
from engine.simulation import Simulation

LAG_MS = 30000  # Defaults.ReplicaLagTimeMaxMs, the lag of Kafka's PartitionTest


def history(result, kind, **match):
    return [e for e in result["history"]
            if e["type"] == kind and all(e.get(k) == v for k, v in match.items())]


def record(result, rid):
    [found] = [r for r in result["records"] if r["id"] == rid]
    return found


def cluster(version, timeline, config=None, clients=(), duration_ms=60000, brokers=3,
            replicas=(0, 1, 2)):
    """Partition t-0 on ``replicas``, led by the first (broker 0, also the ZooKeeper-mode
    controller, unless said otherwise)."""
    return {"seed": 1, "kafka_version": version, "brokers": brokers,
            "config": dict(config or {}),
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                        "assignment": {"0": list(replicas)}}],
            "clients": list(clients), "timeline": list(timeline), "duration_ms": duration_ms}


def producer(acks="1", stop_ms=6000, rate=5):
    return {"name": "p", "type": "producer", "topic": "t", "acks": acks, "rate_per_s": rate,
            "stop_ms": stop_ms}


def leader_part(sim, broker=0):
    return sim.brokers[broker].partitions["t-0"]


# -- pure rules of the follower's fetch state (Replica.updateFetchState, Partition) ----------------

def test_update_follower_fetch_state():
    """Kafka: PartitionTest.testUpdateFollowerFetchState at 3.7.0 — a fetch below the leader's
    LEO records the follower's LEO but not a caught-up time; a fetch at the LEO makes it caught
    up now."""
    remote = RemoteReplica()
    remote.last_caught_up_ms = 0          # makeLeader: an ISR member is caught up at t=0
    update_fetch_state(remote, 3, 6, 500)
    assert (remote.leo, remote.last_caught_up_ms) == (3, 0)
    update_fetch_state(remote, 6, 6, 1000)
    assert (remote.leo, remote.last_caught_up_ms) == (6, 1000)


def test_should_not_shrink_isr_if_previous_fetch_is_caught_up():
    """Kafka: PartitionTest.testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp at 3.7.0 — a follower
    that reaches the LEO the leader had at its previous fetch is caught up as of that fetch
    (5000 ms), so 10001 ms after the start it is not out of sync. Kafka's test runs with the
    30000 ms default; a lag of 10000 here makes the previous-fetch rule decide the outcome."""
    remote = RemoteReplica()
    remote.last_caught_up_ms = 0
    update_fetch_state(remote, 5, 10, 5000)   # first fetch: behind the LEO 10
    assert remote.last_caught_up_ms == 0
    update_fetch_state(remote, 10, 15, 10001)  # 5 more appended; it reached the old LEO 10
    assert remote.last_caught_up_ms == 5000
    assert not is_out_of_sync(remote, 15, 10001, 10000, eras.ERAS["3.7"])


def test_should_not_shrink_isr_if_follower_caught_up_to_log_end():
    """Kafka: PartitionTest.testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd at 3.7.0 — a follower
    at the leader's LEO is never out of sync, however long ago it fetched (KAFKA-7152, 2.1+);
    in the "2.0" era, before that fix, it is."""
    remote = RemoteReplica()
    update_fetch_state(remote, 10, 10, 0)
    later = LAG_MS + 1
    assert not is_out_of_sync(remote, 10, later, LAG_MS, eras.ERAS["3.7"])
    assert not is_out_of_sync(remote, 10, later, LAG_MS, eras.ERAS["2.4"])
    assert is_out_of_sync(remote, 10, later, LAG_MS, eras.ERAS["2.0"])


def test_follower_does_not_join_isr_until_caught_up_to_offset_within_current_leader_epoch():
    """Kafka: PartitionTest.testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch
    at 2.7.0 — with HW 3 and the leader's epoch starting at offset 6, a follower at LEO 3 or 5
    may not join; at 6 it may (KAFKA-7128)."""
    era = eras.ERAS["2.7"]
    remote = RemoteReplica()
    for leo, joins in ((3, False), (5, False), (6, True)):
        remote.leo = leo
        assert can_join_isr(remote, 3, 6, era) is joins


# -- ISR shrink and expansion, the high watermark ------------------------------------------------

def test_maybe_shrink_isr():
    """Kafka: PartitionTest.testMaybeShrinkIsr at 3.7.0 — a follower that stops fetching is
    proposed out of the ISR after replica.lag.time.max.ms; until the controller commits the
    shrink the maximal ISR still holds the HW, and on commit the HW jumps to the leader's LEO."""
    timeline = [{"at_ms": 3000, "op": "isolate", "broker": 2, "from": "brokers"}]
    sim = Simulation(cluster("3.7", timeline, {"replica.lag.time.max.ms": 2000},
                             [producer(stop_ms=8000)]))
    result = sim.run()
    [sent] = history(result, "alter_partition", phase="sent")
    [shrink] = history(result, "isr_shrink", broker=0)
    assert sent["proposed_isr"] == [0, 1] and shrink["isr"] == [0, 1]
    assert sent["t_ms"] - 3000 > 2000                    # not before the lag has passed
    moves = history(result, "high_watermark", broker=0)
    held = [m for m in moves if 3100 < m["t_ms"] < shrink["t_ms"]]
    assert not held                                      # broker 2 holds the HW until the commit
    [commit] = [m for m in moves if m["t_ms"] == shrink["t_ms"]]
    assert commit["hw"] > commit["hw_before"]


def test_isr_expansion():
    """Kafka: PartitionTest.testIsrExpansion at 3.7.0 — a follower outside the ISR that catches up
    is proposed into it: the maximal ISR includes it at once, the committed ISR only after the
    controller's answer."""
    timeline = [{"at_ms": 2000, "op": "crash", "broker": 2},
                {"at_ms": 25000, "op": "restart", "broker": 2}]
    sim = Simulation(cluster("3.7", timeline, clients=[producer(stop_ms=4000)]))
    result = sim.run()
    [removed] = history(result, "isr_shrink", by="controller")
    assert removed["isr"] == [0, 1]
    [sent] = history(result, "alter_partition", phase="sent", proposed_isr=[0, 1, 2])
    sim = Simulation(cluster("3.7", timeline, clients=[producer(stop_ms=4000)]))
    sim.advance_to(sent["t_ms"])
    assert sim.result()["partitions"]["t-0"]["isr_state"] == \
        {"committed": [0, 1], "maximal": [0, 1, 2], "pending": "expand"}
    [expand] = history(result, "isr_expand", broker=0)
    assert expand["isr"] == [0, 1, 2] and expand["t_ms"] > sent["t_ms"]
    assert result["partitions"]["t-0"]["isr"] == [0, 1, 2]


MIN_ISR_3 = [{"at_ms": 3000, "op": "isolate", "broker": 2, "from": "brokers"},
             {"at_ms": 12000, "op": "heal"}]


@pytest.mark.parametrize("version", ["3.3", "3.7"])
def test_high_watermark_should_not_advance_when_under_min_isr(version):
    """Kafka: PartitionTest.testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR at 3.7.0 —
    min.insync.replicas 3 and an ISR of 2: acks=1 records do not move the HW (KAFKA-15583, 3.7)
    until the third replica is back in the ISR; 3.3 moves it with the two."""
    sim = Simulation(cluster(version, MIN_ISR_3, {"replica.lag.time.max.ms": 2000,
                                                  "min.insync.replicas": 3},
                             [producer(stop_ms=20000)]))
    result = sim.run()
    [shrink] = history(result, "isr_shrink", broker=0)
    [expand] = history(result, "isr_expand", broker=0)
    between = [m for m in history(result, "high_watermark", broker=0)
               if shrink["t_ms"] < m["t_ms"] < expand["t_ms"]]
    if version == "3.7":
        assert not between
        [at_expand] = [m for m in history(result, "high_watermark", broker=0)
                       if m["t_ms"] == expand["t_ms"]]
        assert at_expand["hw"] > at_expand["hw_before"]
    else:
        assert between


def zombie(version):
    """Broker 2 loses ZooKeeper and its fetch responses take 3 s: out of the ISR at ~3 s, session
    expired at ~18 s, still fetching in the current leader epoch; caught up once the link is fast
    again (22 s); it stops at 27 s and an acks=all record follows at 27.5 s."""
    timeline = [{"at_ms": 1000, "op": "isolate", "broker": 2, "from": "zk"},
                {"at_ms": 1000, "op": "slow", "from": 0, "to": 2, "latency_ms": 3000},
                {"at_ms": 22000, "op": "slow", "from": 0, "to": 2, "latency_ms": 1},
                {"at_ms": 27000, "op": "pause", "broker": 2},
                {"at_ms": 27500, "op": "produce", "topic": "t", "producer": "r", "count": 1,
                 "acks": "all"}]
    return cluster(version, timeline, {"replica.lag.time.max.ms": 2000},
                   [producer(stop_ms=21000)], duration_ms=70000)


@pytest.mark.parametrize("version", ["3.3", "3.7"])
def test_isr_not_expanded_if_replica_is_not_alive_zk(version):
    """Kafka: PartitionTest.testIsrNotExpandedIfReplicaIsFencedOrShutdown (quorum "zk") at 3.7.0 —
    a caught-up follower that is not alive in the leader's metadata cache is not proposed into
    the ISR (isReplicaIsrEligible, KAFKA-14140 in ZooKeeper mode from 3.3)."""
    sim = Simulation(zombie(version))
    sim.advance_to(26000)
    part = leader_part(sim)
    assert 2 not in sim.brokers[0].live_brokers
    assert part.remotes[2].leo == part.log.leo           # caught up
    assert part.isr == [0, 1] and part.pending is None   # never proposed
    result = sim.run()
    assert not history(result, "alter_partition", proposed_isr=[0, 1, 2])


def test_high_watermark_increases_with_dead_follower_zk():
    """Kafka: PartitionTest.testHighWatermarkIncreasesWithFencedOrShutdownFollower at 3.7.0
    (KAFKA-15021) — a ZooKeeper-mode analogue: Kafka's test is KRaft only (a mocked
    KRaftMetadataCache, broker fenced / shutting down / unfenced); this one exercises the same rule
    through the ZooKeeper branch of isReplicaIsrEligible (ZkMetadataCache.hasAliveBroker). A
    caught-up follower outside the ISR that is not alive in the metadata cache does not hold the
    HW: in 3.7 the acks=all record is acknowledged once follower 1 has it; in 3.3 (before
    KAFKA-15021) broker 2 holds the HW and it times out (the role of Kafka's "unfenced" case)."""
    new = Simulation(zombie("3.7")).run()
    acked = record(new, "r-0")
    assert acked["status"] == "acked" and acked["acked_ms"] - 27500 < 20
    old = Simulation(zombie("3.3")).run()
    assert history(old, "produce_error", error="REQUEST_TIMED_OUT", records=["r-0"])


@pytest.mark.parametrize("fault", ["shutdown", "crash"])
def test_high_watermark_increases_with_fenced_follower_kraft(fault):
    """Kafka: PartitionTest.testHighWatermarkIncreasesWithFencedOrShutdownFollower ("fenced") at
    3.7.0 — KRaft: broker 2 is fenced (it asked to shut down and leads nothing, or it crashed and
    its session expired); caught up but out of the ISR, it does not hold the HW. The fence and
    the ISR shrink are one batch of the metadata log, so the leader sees both at once: the
    records parked on the HW are acknowledged as the shrink lands, later ones within a fetch
    round trip (engine 1.2.0: after replica.lag.time.max.ms, or REQUEST_TIMED_OUT). Kafka's
    "shutdown" case (in controlled shutdown, not fenced) is not separated: here the shut-down
    broker is fenced too; its "unfenced" case (HW held) is not ported."""
    timeline = [{"at_ms": 5000, "op": fault, "broker": 2}]
    result = Simulation(cluster("4.1", timeline, clients=[producer(acks="all", stop_ms=20000)],
                                duration_ms=25000)).run()
    [shrink] = [e for e in history(result, "isr_updated", broker=0) if e["isr"] == [0, 1]]
    parked = [r for r in result["records"] if 5000 < r["sent_ms"] < shrink["t_ms"] - 50]
    assert (len(parked) > 0) is (fault == "crash")   # a crash is fenced ~9 s later
    assert all(r["status"] == "acked" and r["acked_ms"] - shrink["t_ms"] < 10 for r in parked)
    after = [r for r in result["records"] if r["sent_ms"] > shrink["t_ms"]]
    assert after and all(r["status"] == "acked" and r["acked_ms"] - r["sent_ms"] < 50
                         for r in after)


def test_do_not_reset_replica_state_if_leader_epoch_is_not_bumped():
    """Kafka: PartitionTest.testDoNotResetReplicaStateIfLeaderEpochIsNotBumped at 3.7.0 — KRaft:
    a partition change that keeps the leader epoch (here the ISR shrink when broker 2 is fenced)
    keeps what the leader knows of its followers (follower 1's LEO and caught-up time)."""
    timeline = [{"at_ms": 2000, "op": "crash", "broker": 2}]
    sim = Simulation(cluster("4.1", timeline, clients=[producer(stop_ms=1500)], duration_ms=20000))
    sim.advance_to(5000)
    part = leader_part(sim)
    before = (part.leader_epoch, part.remotes[1].leo)
    assert before[1] != UNDEFINED
    result = sim.run()
    [shrink] = [e for e in history(result, "isr_updated", broker=0) if e["isr"] == [0, 1]]
    sim = Simulation(cluster("4.1", timeline, clients=[producer(stop_ms=1500)], duration_ms=20000))
    sim.advance_to(shrink["t_ms"] + 1)
    part = leader_part(sim)
    assert part.isr == [0, 1] and part.leader_epoch == before[0]
    assert part.remotes[1].leo == before[1] and part.remotes[1].last_caught_up_ms != NEVER_MS


def test_follower_should_not_have_any_remote_replica_states():
    """Kafka: PartitionTest.testFollowerShouldNotHaveAnyRemoteReplicaStates at 3.7.0 — a leader
    that becomes follower forgets its followers' states and keeps an empty ISR. Broker 0 leads
    t-0 (AR [1, 0, 2]) while broker 1 is down; the automatic preferred-leader rebalance hands
    leadership back to broker 1 once it has rejoined the ISR."""
    timeline = [{"at_ms": 1000, "op": "shutdown", "broker": 1},
                {"at_ms": 3000, "op": "restart", "broker": 1}]
    doc = cluster("3.7", timeline, clients=[producer(stop_ms=2000)], brokers=4, replicas=(1, 0, 2))
    [moved] = [e for e in history(Simulation(doc).run(), "become_follower", broker=0, leader=1)
               if e["t_ms"] > 3000]
    sim = Simulation(doc)
    sim.advance_to(moved["t_ms"] - 1)
    part = leader_part(sim)
    assert part.is_leader and set(part.remotes) == {1, 2} and part.isr == [0, 2, 1]
    sim.advance_to(moved["t_ms"])
    part = leader_part(sim)
    assert not part.is_leader and part.remotes == {} and part.isr == []


def test_make_leader_updates_epoch_cache():
    """Kafka: PartitionTest.testMakeLeaderUpdatesEpochCache at 2.7.0 — a new leader writes
    (its leader epoch, its LEO) into its leader-epoch cache at once (KAFKA-7415, 2.1 and
    2.0.1); the "2.0" era (2.0.0) does not."""
    timeline = [{"at_ms": 3000, "op": "crash", "broker": 0}]
    for version, expected in (("2.7", True), ("2.0", False)):
        sim = Simulation(cluster(version, timeline, clients=[producer(stop_ms=2000)], brokers=4))
        result = sim.run()
        elected = [e for e in history(result, "become_leader") if e["broker"] != 0][0]
        cache = result["partitions"]["t-0"]["replica_state"][str(elected["broker"])]["epoch_cache"]
        assert ([elected["leader_epoch"], elected["leo"]] in cache) is expected


def test_use_checkpoint_to_initialize_high_watermark():
    """Kafka: PartitionTest.testUseCheckpointToInitializeHighWatermark at 3.7.0 — a restarted
    broker's HW starts at the replication-offset-checkpoint's value (below its LEO), not at the
    LEO. All three brokers crash at 7.3 s while an acks=1 producer writes; they restart at 9 s."""
    timeline = [{"at_ms": 7300, "op": "crash", "broker": b} for b in (0, 1, 2)] + \
               [{"at_ms": 9000, "op": "restart", "broker": b} for b in (0, 1, 2)]
    doc = cluster("3.7", timeline, clients=[producer(stop_ms=7300, rate=20)], duration_ms=12000)
    sim = Simulation(doc)
    sim.advance_to(7299)
    checkpointed, leo = sim.brokers[0].hw_checkpoint["t-0"], leader_part(sim).log.leo
    assert checkpointed < leo
    result = sim.run()
    [start] = [e for e in history(result, "broker_starting", broker=0) if e["t_ms"] == 9000]
    assert f"t-0 LEO {leo} HW {checkpointed}" in start["reason"]


def leader_answer(broker, kind, current_leader_epoch):
    """The leader's Fetch or OffsetsForLeaderEpoch handler asked by follower 1 for t-0 with
    ``current_leader_epoch``; the partition's error in the answer (sent at once)."""
    answers = []
    broker.reply = lambda _env, body: answers.append(body)
    if kind == FETCH:
        part = {"fetch_offset": 0, "log_start_offset": 0}
        body, handler = {"replica_id": 1, "max_wait_ms": 0, "min_bytes": 1}, broker.on_fetch
    else:
        part = {"leader_epoch": 0}
        body, handler = {"replica_id": 1}, broker.on_offsets_for_leader_epoch
    body["partitions"] = {"t-0": {**part, "current_leader_epoch": current_leader_epoch}}
    handler(Envelope(0, 1, broker.node_id, kind, body, 0, 0, 0, True))
    del broker.reply
    return answers[0]["partitions"]["t-0"]["error"]


@pytest.mark.parametrize("kind", [FETCH, OFFSETS_FOR_LEADER_EPOCH])
@pytest.mark.parametrize("version, fencing", [("3.7", True), ("2.4", True), ("2.0", False)])
def test_leader_epoch_validation_on_leader(version, fencing, kind):
    """Kafka: PartitionTest.testLeaderEpochValidationOnLeader (Fetch) and
    PartitionTest.testOffsetForLeaderEpochValidationForLeader (OffsetsForLeaderEpoch) at 3.7.0 —
    a request without an epoch or with the leader's epoch is served; an older epoch is
    FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH (KIP-320, 2.1+; the "2.0" era serves
    all four). Broker 2's controlled shutdown bumps leader 0's epoch above 0."""
    sim = Simulation(cluster(version, [{"at_ms": 1000, "op": "shutdown", "broker": 2}]))
    sim.advance_to(3000)
    epoch = leader_part(sim).leader_epoch
    assert epoch >= 1
    errors = [leader_answer(sim.brokers[0], kind, e) for e in (-1, epoch, epoch - 1, epoch + 1)]
    if fencing:
        assert errors == [None, None, "FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH"]
    else:
        assert errors == [None] * 4


# -- ReplicaManager: produce and fetch --------------------------------------------------------------

def test_fetch_beyond_high_watermark():
    """Kafka: ReplicaManagerTest.testFetchBeyondHighWatermark at 3.7.0 — followers read up to the
    LEO, consumers only up to the HW: with broker 2 cut off the HW stays put, follower 1 has
    every record and the consumer has read none past the HW."""
    timeline = [{"at_ms": 3000, "op": "isolate", "broker": 2, "from": "brokers"},
                {"at_ms": 1000, "op": "consume", "consumer": "c", "topic": "t",
                 "from": "earliest"}]
    sim = Simulation(cluster("2.6", timeline, clients=[producer(stop_ms=8000)]))
    sim.advance_to(8500)
    part = leader_part(sim)
    hw, leo = part.log.hw, part.log.leo
    assert hw < leo
    assert sim.brokers[1].partitions["t-0"].log.leo == leo
    offsets = [c["offset"] for c in sim.consumed["c"]]
    assert offsets and max(offsets) == hw - 1


@pytest.mark.parametrize("version", ["3.7", "4.1"])
def test_clear_purgatory_on_becoming_follower(version):
    """Kafka: ReplicaManagerTest.testClearPurgatoryOnBecomingFollower at 3.7.0 (ZooKeeper mode) and
    ReplicaManagerTest.testDeltaToFollowerCompletesProduce at 3.7.0 (KRaft) — an acks=all produce
    parked on the leader is answered NOT_LEADER_OR_FOLLOWER as soon as the broker becomes
    follower (here: broker 0's controlled shutdown moves leadership away)."""
    timeline = [{"at_ms": 2000, "op": "isolate", "broker": 2, "from": "brokers"},
                {"at_ms": 3000, "op": "produce", "topic": "t", "producer": "q", "count": 1,
                 "acks": "all"},
                {"at_ms": 3500, "op": "shutdown", "broker": 0}]
    doc = cluster(version, timeline, brokers=4)
    sim = Simulation(doc)
    sim.advance_to(3490)
    assert sim.records["q-0"].status == "pending" and sim.records["q-0"].error is None
    [moved] = [e for e in history(sim.run(), "become_follower", broker=0) if e["t_ms"] > 3500]
    sim = Simulation(doc)
    sim.advance_to(moved["t_ms"] + 2)   # one link latency for the answer
    assert sim.records["q-0"].error == "NOT_LEADER_OR_FOLLOWER"


def test_duplicate_appends():
    """Kafka: UnifiedLogTest.testDuplicateAppends at 3.7.0 — the leader keeps the last 5 batches
    per producer: a retry of the last batch, or of the 5th from the end, is a duplicate answered
    with the original offset; a retry of an older batch is OUT_OF_ORDER_SEQUENCE_NUMBER.
    Nine one-record batches (sequences 0-8) of an idempotent producer, then the rule asked
    directly on the leader (``check_sequence``)."""
    doc = cluster("3.7", [], {"enable.idempotence": True}, [producer(stop_ms=1650)])
    sim = Simulation(doc)
    sim.advance_to(3000)
    broker, part = sim.brokers[0], leader_part(sim)
    assert part.log.leo == 9
    answer = broker.check_sequence(part, "p", {"seq": 8, "ids": ["p-8"]})
    assert answer == {"error": None, "base_offset": 8, "duplicate": True}
    assert broker.check_sequence(part, "p", {"seq": 4, "ids": ["p-4"]})["base_offset"] == 4
    assert broker.check_sequence(part, "p", {"seq": 3, "ids": ["p-3"]})["error"] == \
        "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert broker.check_sequence(part, "p", {"seq": 9, "ids": ["p-9"]}) is None  # the next one


def test_illegal_required_acks_are_refused_before_the_run():
    """Kafka: ReplicaManagerTest.testIllegalRequiredAcks at 3.7.0 — acks other than -1, 0, 1 get
    INVALID_REQUIRED_ACKS from the broker; the simulator refuses such a producer when the
    scenario is loaded (docs/model.md §6 step 1), so no request with acks 2 is ever sent."""
    doc = cluster("3.7", [], clients=[{**producer(), "acks": "2"}])
    with pytest.raises(ScenarioError):
        load(doc)


# -- the metadata cache (MetadataCache / ZkMetadataCache) ----------------------------------------------
def _metadata_answer(sim, broker):
    answers = []
    broker.reply = lambda _env, body: answers.append(body)
    broker.on_metadata(Envelope(0, "c", broker.node_id, "Metadata", {"topics": ["t"]}, 0, 0, 0, True))
    del broker.reply
    return answers[0]["partitions"]["t-0"]


@pytest.mark.parametrize("version", ["1.1", "2.6", "3.3", "3.7"])
def test_get_topic_metadata_partition_leader_not_available(version):
    """Kafka: MetadataCacheTest.getTopicMetadataPartitionLeaderNotAvailable at 3.3.1 (the same rule
    in MetadataCache.getPartitionMetadata @ 1.1.0 / 2.x and ZkMetadataCache @ 3.x): an
    UpdateMetadata names broker 0 alive and leader 1 for the partition; the metadata answer has
    LEADER_NOT_AVAILABLE, leader -1 (no node), the ISR kept. Engine 1.3.0 named broker 1."""
    for engine_version, leader in ((None, -1), ("1.3.0", 1)):
        sim = Simulation(cluster(version, [], duration_ms=5000), engine_version=engine_version)
        sim.advance_to(3000)
        broker = sim.brokers[0]
        state = dict(broker.metadata["t-0"], leader=1, isr=[0], replicas=[0], leader_epoch=1)
        broker.reply = lambda _env, body: None
        broker.on_update_metadata(Envelope(0, 2, 0, "UpdateMetadata", {
            "controller_id": 0, "controller_epoch": broker.known_controller_epoch, "broker_epoch": -1,
            "live_brokers": {0: broker.broker_epoch}, "partitions": [state]}, 0, 0, 0, True))
        del broker.reply
        answer = _metadata_answer(sim, broker)
        assert (answer["leader"], answer["isr"], answer["leader_epoch"]) == (leader, [0], 1)
