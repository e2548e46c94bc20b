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
