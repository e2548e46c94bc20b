"""Unkeyed records: round-robin up to 2.3, a sticky partition from 2.4 (KIP-480's
StickyPartitionCache in DefaultPartitioner, 2.4 - 3.2; KIP-794's built-in partitioner, also
sticky, from 3.3). Engine 1.2.0 gave the sticky partition to eras "2.4" and "2.6" only and
round-robined in 2.7 and later (fixed in 1.3.0, docs/model.md §19).

With linger.ms 0 every record opens a new batch, so the sticky partition moves on at every record,
to a random other partition (StickyPartitionCache.nextPartition): on three partitions the step
from one record's partition to the next is sometimes +1 and sometimes +2, where round-robin
always steps +1."""
import pytest

from engine.simulation import Simulation


def _doc(era):
    return {"seed": 5, "kafka_version": era, "brokers": 3, "duration_ms": 4000,
            "topics": [{"name": "t", "partitions": 3, "replication_factor": 1}],
            "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "1", "rate_per_s": 200}],
            "timeline": []}


def _steps(era, engine_version=None):
    """The steps (mod 3) from each record's partition to the next record's, in send order."""
    records = sorted(Simulation(_doc(era), engine_version=engine_version).run()["records"],
                     key=lambda r: int(r["id"].rpartition("-")[2]))
    assert len(records) > 500
    parts = [r["partition"] for r in records]
    return {(b - a) % 3 for a, b in zip(parts, parts[1:])}


@pytest.mark.parametrize("era", ["2.4", "2.6", "2.7", "3.3", "3.7", "3.9-kraft", "4.1"])
def test_unkeyed_records_go_to_a_random_sticky_partition_from_2_4(era):
    steps = _steps(era)      # 0 too where records share a batch (one in flight, idempotence)
    assert {1, 2} <= steps, steps


@pytest.mark.parametrize("era", ["0.10", "1.1", "2.0"])
def test_unkeyed_records_round_robin_before_2_4(era):
    assert _steps(era) == {1}


def test_engine_1_2_0_round_robined_after_2_6():
    assert _steps("3.7", engine_version="1.2.0") == {1}
