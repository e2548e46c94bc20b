"""Counterexample search on Spark executors: the engine ships as it is, and the answer (the
lowest failing seed) is the same as in process (issue 6: 'on the same Spark machinery')."""
from app.counterexample import finder
from app.counterexample.service import hunt
from engine.tools.search_examples import LOSSY_0_10 as OLD
from engine.tools.search_examples import PROCESS_CRASHES_ONLY as CRASHES
from engine.tools.search_examples import SAFE_2_6 as SAFE


def test_spark_finds_the_same_lowest_failing_seed_as_the_local_search(spark):
    on_spark = finder.find(OLD, {"name": "no_acked_loss"}, runs=64, spark=spark)
    local = finder.find(OLD, {"name": "no_acked_loss"}, runs=64)
    assert on_spark["found"] and on_spark["seed"] == local["seed"]
    assert on_spark["evidence"] == local["evidence"]


def test_safe_settings_on_spark_find_nothing(spark):
    report = hunt(SAFE, {"name": "no_acked_loss"}, CRASHES, runs=32, spark=spark, save=False)
    assert report["found"] is False and report["search"]["runs"] == 32
