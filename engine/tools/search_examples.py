"""The two reference questions of counterexample search, shared by its tests and benchmark.

- ``LOSSY_0_10``: Kafka 0.10, RF 2, acks=all, default fault profile. Before KIP-101 a follower
  truncates to its high watermark on becoming follower, and unclean election is on by default
  (docs/model.md §0, §8): an acknowledged record can be lost, and the search must show how.
- ``SAFE_2_6`` under ``PROCESS_CRASHES_ONLY``: Kafka 2.6, RF 3, acks=all, min.insync.replicas 2,
  unclean election off, process crashes only (nothing is lost from the page cache). Every
  acknowledged record is on two replicas and only an in-sync one can lead: nothing to find.
"""
from engine.tools.faults import DEFAULT_PROFILE

_WORKLOAD = {"clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 20}],
             "duration_ms": 60000}

LOSSY_0_10 = {"kafka_version": "0.10", "brokers": 3,
              "topics": [{"name": "t", "partitions": 1, "replication_factor": 2}], **_WORKLOAD}

SAFE_2_6 = {"kafka_version": "2.6", "brokers": 3,
            "config": {"min.insync.replicas": 2, "unclean.leader.election.enable": False},
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}], **_WORKLOAD}

#: Four process crashes per simulated minute, 1-30 s each; no other fault.
PROCESS_CRASHES_ONLY = {kind: (0.0, 0, 0) for kind in DEFAULT_PROFILE}
PROCESS_CRASHES_ONLY["crash_process"] = (4.0, 1000, 30000)
