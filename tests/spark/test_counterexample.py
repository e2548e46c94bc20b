"""Counterexample search on Spark executors: the engine ships as it is, and the answer (the
lowest failing seed) is the same as in process (issue 6: 'on the same Spark machinery')."""
from app.counterexample import finder
from app.counterexample.service import hunt
from engine.faults import DEFAULT_PROFILE

OLD = {"kafka_version": "0.10", "brokers": 3,
       "topics": [{"name": "t", "partitions": 1, "replication_factor": 2}],
       "clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 20}],
       "duration_ms": 60000}
SAFE = {"kafka_version": "2.6", "brokers": 3,
        "config": {"min.insync.replicas": 2, "unclean.leader.election.enable": False},
        "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
        "clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 20}],
        "duration_ms": 60000}
CRASHES = {k: (0.0, 0, 0) for k in DEFAULT_PROFILE}
CRASHES["crash_process"] = (4.0, 1000, 30000)


def test_spark_finds_the_same_lowest_failing_seed_as_the_local_search(spark):
    on_spark = finder.find(OLD, {"name": "no_acked_loss"}, runs=64, spark=spark)
    local = finder.find(OLD, {"name": "no_acked_loss"}, runs=64)
    assert on_spark["found"] and on_spark["seed"] == local["seed"]
    assert on_spark["evidence"] == local["evidence"]


def test_safe_settings_on_spark_find_nothing(spark):
    report = hunt(SAFE, {"name": "no_acked_loss"}, CRASHES, runs=32, spark=spark, save=False)
    assert report["found"] is False and report["search"]["runs"] == 32
