"""Issue 30, defects 1 and 2 (engine 1.3.0): a retried acks=all batch found to be a duplicate
waits for the high watermark like any acks=all append (docs/model.md §6), and a caught-up
follower outside the ISR that may not join it does not hold the HW (KAFKA-15021, §17.5, §20).

Each test fails on engine 1.2.0's rules (shown by running the same scenario with
``engine_version="1.2.0"``, whose behaviour is asserted too).
"""
import pytest

from engine.simulation import Simulation

from .conftest import events


def _record(result, rid):
    [record] = [r for r in result["records"] if r["id"] == rid]
    return record


# -- defect 1: a duplicate waits in DelayedProduce (ReplicaManager.appendRecords) -----------------

def duplicate_run(version):
    """Follower 2 is cut off from the other brokers at 2 s (not from ZooKeeper or the KRaft
    controllers), so the HW stays 0 until the leader drops it from the ISR (replica.lag.time.max.ms
    10000, checked every 5000 ms). The idempotent acks=all batch p-0 times out after
    request.timeout.ms 3000 and is retried: the retries are duplicates."""
    return {"seed": 1, "kafka_version": version, "brokers": 3,
            "config": {"replica.lag.time.max.ms": 10000, "min.insync.replicas": 2,
                       "request.timeout.ms": 3000, "enable.idempotence": True, "acks": "all",
                       "retries": 10},
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                        "assignment": {"0": [0, 1, 2]}}],
            "timeline": [{"at_ms": 2000, "op": "isolate", "broker": 2, "from": "brokers"},
                         {"at_ms": 3000, "op": "produce", "topic": "t", "producer": "p", "count": 1}],
            "duration_ms": 30000}


@pytest.mark.parametrize("version", ["1.1", "2.6", "3.7", "4.1"])
def test_a_duplicate_acks_all_retry_waits_for_the_high_watermark(version):
    """Kafka (UnifiedLog/Log.append: a duplicate returns the original batch's offsets; then
    ReplicaManager.appendRecords parks acks=all on lastOffset + 1): no ack before the HW passes
    offset 0; every attempt before that times out, the one parked when the HW moves is
    answered with the original offset 0."""
    r = Simulation(duplicate_run(version)).run()
    [hw] = [e for e in events(r, "high_watermark", broker=0) if e["hw"] == 1]
    record = _record(r, "p-0")
    assert record["status"] == "acked" and record["offset"] == 0
    assert hw["t_ms"] < record["acked_ms"] <= hw["t_ms"] + 2
    timeouts = events(r, "produce_error", error="REQUEST_TIMED_OUT", records=["p-0"])
    assert len(timeouts) >= 2   # the first attempt and at least one duplicate retry
    assert all(e["t_ms"] < hw["t_ms"] for e in timeouts)
    # engine 1.2.0 acknowledged the first retry at once, with the HW still 0
    old = Simulation(duplicate_run(version), engine_version="1.2.0").run()
    assert _record(old, "p-0")["acked_ms"] < timeouts[0]["t_ms"] + 200
    assert len(events(old, "produce_error", error="REQUEST_TIMED_OUT", records=["p-0"])) == 1


def test_a_duplicate_under_min_isr_is_refused_before_the_log_is_asked():
    """Partition.appendRecordsToLeader checks min.insync.replicas before the log finds the
    duplicate. min.insync.replicas 3: p-0 is appended with the ISR [0, 1, 2]; its duplicate
    retries wait (engine 1.2.0 acknowledged the first at once); once the ISR is [0, 1] the parked
    one ends NOT_ENOUGH_REPLICAS_AFTER_APPEND and the next retry NOT_ENOUGH_REPLICAS."""
    doc = duplicate_run("2.6")
    doc["config"]["min.insync.replicas"] = 3
    r = Simulation(doc).run()
    [shrink] = events(r, "isr_shrink", broker=0)
    assert _record(r, "p-0")["status"] != "acked"
    [after] = events(r, "produce_error", error="NOT_ENOUGH_REPLICAS_AFTER_APPEND", records=["p-0"])
    assert after["t_ms"] == shrink["t_ms"]
    refused = events(r, "produce_error", error="NOT_ENOUGH_REPLICAS", records=["p-0"])
    assert refused and refused[0]["t_ms"] > shrink["t_ms"]
    old = Simulation(doc, engine_version="1.2.0").run()
    assert _record(old, "p-0")["status"] == "acked"


# -- defect 2: KAFKA-15021, an ineligible caught-up replica does not hold the HW ------------------

def zombie_run(version):
    """Broker 2 loses ZooKeeper at 1 s and its fetch responses take 3 s: the leader drops it from
    the ISR (replica.lag.time.max.ms 2000) and its session expires at ~18 s, but it keeps fetching
    (its leader epoch is still current) and catches up once the link is fast again at 22 s. The
    leader refuses it the ISR (not alive in its metadata cache, KIP-841); it is caught up,
    outside the ISR, when it stops at 27 s; an acks=all record follows at 27.5 s."""
    return {"seed": 1, "kafka_version": version, "brokers": 3,
            "config": {"replica.lag.time.max.ms": 2000},
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                        "assignment": {"0": [0, 1, 2]}}],
            "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "1",
                         "rate_per_s": 5, "stop_ms": 21000}],
            "timeline": [{"at_ms": 1000, "op": "isolate", "broker": 2, "from": "zk"},
                         {"at_ms": 1000, "op": "slow", "from": 0, "to": 2, "latency_ms": 3000},
                         {"at_ms": 22000, "op": "slow", "from": 0, "to": 2, "latency_ms": 1},
                         {"at_ms": 27000, "op": "pause", "broker": 2},
                         {"at_ms": 27500, "op": "produce", "topic": "t", "producer": "r",
                          "count": 1, "acks": "all"}],
            "duration_ms": 70000}


def test_kafka_15021_a_dead_caught_up_follower_holds_the_hw_in_3_3_not_in_3_7():
    """Partition.maybeIncrementLeaderHW: 3.3.1 counts every follower caught up within
    replica.lag.time.max.ms; 3.6.0+ only one that isReplicaIsrEligible (ZooKeeper mode:
    metadataCache.hasAliveBroker). 3.7: acked once follower 1 has the record; 3.3: the HW stays
    at 105 (nothing recomputes it after broker 2's lag window) and the request times out."""
    new = Simulation(zombie_run("3.7")).run()
    record = _record(new, "r-0")
    assert record["status"] == "acked" and record["offset"] == 105
    assert record["acked_ms"] - 27500 < 20
    old = Simulation(zombie_run("3.3")).run()
    [timeout] = events(old, "produce_error", error="REQUEST_TIMED_OUT", records=["r-0"])
    assert timeout["t_ms"] == 27500 + 30000 + 3
    assert not [e for e in events(old, "high_watermark", broker=0) if 27500 <= e["t_ms"] < timeout["t_ms"]]
    # engine 1.2.0's rules in 3.7: as 3.3
    kept = Simulation(zombie_run("3.7"), engine_version="1.2.0").run()
    assert events(kept, "produce_error", error="REQUEST_TIMED_OUT", records=["r-0"])


def crash_run(version, produce_ms):
    return {"seed": 1, "kafka_version": version, "brokers": 3,
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                        "assignment": {"0": [0, 1, 2]}}],
            "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "all",
                         "rate_per_s": 2, "stop_ms": 1500}],
            "timeline": [{"at_ms": 2000, "op": "crash", "broker": 2},
                         {"at_ms": produce_ms, "op": "produce", "topic": "t", "producer": "q",
                          "count": 1, "acks": "all"}],
            "duration_ms": 60000}


@pytest.mark.parametrize("version", ["3.9-kraft", "4.1"])
def test_kraft_a_fenced_follower_does_not_hold_the_hw(version):
    """KRaft (isReplicaIsrEligible: not fenced, not in controlled shutdown): broker 2 crashes at
    2 s and is fenced ~9 s later; the ISR shrink keeps the leader epoch, so broker 2 is still
    'caught up' (replica.lag.time.max.ms 30000) at 14 s. The record is acknowledged as soon as
    follower 1 has it, not after the request timeout (engine 1.2.0: REQUEST_TIMED_OUT at 44 s)."""
    r = Simulation(crash_run(version, 14000)).run()
    [fenced] = events(r, "broker_fenced", broker=2)
    assert fenced["t_ms"] < 14000
    record = _record(r, "q-0")
    assert record["status"] == "acked" and record["acked_ms"] - 14000 < 20
    old = Simulation(crash_run(version, 14000), engine_version="1.2.0").run()
    [timeout] = events(old, "produce_error", error="REQUEST_TIMED_OUT", records=["q-0"])
    assert timeout["t_ms"] == 14000 + 30000 + 3


@pytest.mark.parametrize("version", ["3.3", "3.7"])
def test_zk_a_crashed_follower_is_reset_by_the_controller_epoch_bump(version):
    """ZooKeeper mode: the controller removes a dead broker from the ISR with a new leader epoch,
    and makeLeader resets a non-ISR follower's lastCaughtUpTimeMs to 0 (resetReplicaState), so
    even 3.3 does not wait for the crashed broker: acked at once after the shrink at ~18 s."""
    r = Simulation(crash_run(version, 22000)).run()
    record = _record(r, "q-0")
    assert record["status"] == "acked" and record["acked_ms"] - 22000 < 20


def test_candidate_high_watermark_skips_ineligible_caught_up_followers():
    """The pure rule (engine/server/partition.py): follower 3 is outside the ISR and caught up
    (last caught up 100 ms ago, lag 30000); it holds the candidate at its LEO 5 unless the
    eligible set leaves it out. An ISR member counts whether eligible or not."""
    from engine.server.partition import RemoteReplica, candidate_high_watermark
    remotes = {2: RemoteReplica(), 3: RemoteReplica()}
    remotes[2].leo, remotes[2].last_caught_up_ms = 9, 900
    remotes[3].leo, remotes[3].last_caught_up_ms = 5, 900
    args = (1, 10, [1, 2], remotes, 1000, 30000)
    assert candidate_high_watermark(*args) == 5
    assert candidate_high_watermark(*args, eligible={1: 0, 2: 0, 3: 0}) == 5
    assert candidate_high_watermark(*args, eligible={1: 0}) == 9
