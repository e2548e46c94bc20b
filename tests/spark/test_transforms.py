"""The analysis transforms on small hand-built DataFrames, against results worked out by hand."""
import math

from pyspark.sql import Row
from pyspark.sql.types import DoubleType, IntegerType, LongType, StringType, StructField, StructType
from pyspark.testing import assertDataFrameEqual

from app.analytics import transforms as T
from app.sweeps.schemas import EVENTS_TABLE_SCHEMA, LATENCY_TABLE_SCHEMA, RUNS_READ_SCHEMA

RUN_DEFAULTS = {"run_key": None, "sweep_id": "s", "run_no": 0, "cell_id": 0, "seed": 0, "status": "ok",
                "kafka_version": "2.6", "end_ms": 10000, "duration_ms": 10000, "fault_start_ms": 1000,
                "fault_end_ms": 6000, "partitions": 2, "faults": 0, "records_sent": 100, "acked": 100,
                "failed": 0, "failed_ner": 0, "pending": 0, "lost": 0, "lost_acks_all": 0, "violations": 0,
                "converged": True, "latency_max_ms": 5}


def runs_df(spark, *rows):
    full = []
    for r in rows:
        d = {**RUN_DEFAULTS, **r}
        d["run_key"] = d["run_key"] or f"key{d['run_no']:017d}"
        full.append(tuple(d[f.name] for f in RUNS_READ_SCHEMA.fields))
    return spark.createDataFrame(full, RUNS_READ_SCHEMA)


def events_df(spark, rows):
    names = [f.name for f in EVENTS_TABLE_SCHEMA.fields]
    return spark.createDataFrame([tuple({"sweep_id": "s", "run_no": 0, **r}.get(n) for n in names) for r in rows],
                                 EVENTS_TABLE_SCHEMA)


def story():
    """Run 0 of sweep s, two partitions (min ISR 2), 10 s long, hand-made:
    t-0 led by 0 from 10 ms; broker 0 crashes at 1000 (fault at 1000, seq after the stop); the
    controller marks t-0 offline at 3000 with ISR [1] and elects 1 (ISR [1]) at 3010; broker 0 is
    back at 5000 and t-0's ISR grows to 2 at 4000 (sic: follower 2 caught up first); broker 1 is
    paused 6000..6500 while it leads both partitions. t-1 is led by 1 all along with ISR 3.
    Also: one NOT_ENOUGH_REPLICAS response for 7 records, two violations of one invariant."""
    p0 = {"topic": "t", "partition": 0}
    p1 = {"topic": "t", "partition": 1}
    return [
        {"seq": 1, "t_ms": 10, "type": "partition_created", **p0, "leader": 0, "isr_size": 3, "min_isr": 2},
        {"seq": 2, "t_ms": 10, "type": "partition_created", **p1, "leader": 1, "isr_size": 3, "min_isr": 2},
        {"seq": 3, "t_ms": 1000, "type": "broker_stopped", "broker": 0, "kind": "process"},
        {"seq": 4, "t_ms": 1000, "type": "fault", "broker": 0, "kind": "crash"},
        {"seq": 5, "t_ms": 2000, "type": "produce_error", **p0, "broker": 0, "kind": "NOT_ENOUGH_REPLICAS", "count": 7},
        {"seq": 6, "t_ms": 3000, "type": "partition_offline", **p0, "broker": 1, "leader": -1, "isr_size": 1, "min_isr": 2},
        {"seq": 7, "t_ms": 3000, "type": "isr_shrink", **p1, "broker": 1, "kind": "leader", "isr_size": 2, "min_isr": 2},
        {"seq": 8, "t_ms": 3010, "type": "leader_elected", **p0, "broker": 1, "leader": 1, "kind": "clean",
         "isr_size": 1, "min_isr": 2},
        {"seq": 9, "t_ms": 4000, "type": "isr_expand", **p0, "broker": 1, "isr_size": 2, "min_isr": 2},
        {"seq": 10, "t_ms": 4500, "type": "violation", **p0, "kind": "replica_divergence", "count": 1},
        {"seq": 11, "t_ms": 4600, "type": "violation", **p0, "kind": "replica_divergence", "count": 1},
        {"seq": 12, "t_ms": 5000, "type": "broker_started", "broker": 0},
        {"seq": 13, "t_ms": 6000, "type": "fault", "broker": 1, "kind": "pause"},
        {"seq": 14, "t_ms": 6500, "type": "fault", "broker": 1, "kind": "resume"},
    ]


def test_wilson_interval_of_one_in_three(spark):
    df = spark.createDataFrame([(1, 3), (0, 10), (0, 0)], "k int, n int")
    lo, hi = T.wilson(df["k"], df["n"])
    got = df.select(lo.alias("lo"), hi.alias("hi"))
    # by hand, z = 1.96: 1/3 -> (0.0615, 0.7923); 0/10 -> (0, 0.2775); no runs -> no interval
    expected = spark.createDataFrame([(0.06149, 0.79235), (0.0, 0.27754), (None, None)],
                                     StructType([StructField("lo", DoubleType()), StructField("hi", DoubleType())]))
    assertDataFrameEqual(got, expected, checkRowOrder=True, atol=5e-5)


def test_offline_time_counts_leaderless_and_dead_leader_time(spark):
    runs = runs_df(spark, {"run_no": 0})
    events = events_df(spark, story())
    got = T.merge_pieces(T.offline_steps(events, runs))
    # t-0: leader 0 dead 1000..3000, no leader 3000..3010 -> one interval of 2010 ms;
    # then leader 1 paused 6000..6500 (t-0 and t-1)
    expected = spark.createDataFrame(
        [("s", 0, "t", 0, 1000, 3010, 2010), ("s", 0, "t", 0, 6000, 6500, 500), ("s", 0, "t", 1, 6000, 6500, 500)],
        "sweep_id string, run_no long, topic string, partition int, start_ms long, end_ms long, duration_ms long")
    assertDataFrameEqual(got, expected)


def test_time_under_min_isr(spark):
    runs = runs_df(spark, {"run_no": 0})
    got = T.time_flagged(T.under_min_isr_steps(events_df(spark, story()), runs))
    # t-0 has ISR 1 < 2 from 3000 until the expansion at 4000; t-1 never drops below 2
    assertDataFrameEqual(got, spark.createDataFrame([("s", 0, 1000)], "sweep_id string, run_no long, ms long"))


def test_detection_and_failover_times(spark):
    events = events_df(spark, story())
    schema = "sweep_id string, run_no long, fault_seq int, fault_t_ms long, kind string, reaction_ms long"
    # the crash at 1000: first ISR shrink at 3000 (2000 ms), first election at 3010 (2010 ms);
    # the pause at 6000 is followed by neither, so it gives no sample
    assertDataFrameEqual(T.detection_times(events), spark.createDataFrame([("s", 0, 4, 1000, "crash", 2000)], schema))
    assertDataFrameEqual(T.failover_times(events), spark.createDataFrame([("s", 0, 4, 1000, "crash", 2010)], schema))


def test_run_metrics_and_worst_rank(spark):
    runs = runs_df(spark, {"run_no": 0, "lost": 0, "violations": 2},
                   {"run_no": 1, "lost": 5}, {"run_no": 2, "lost": 0, "violations": 0},
                   {"run_no": 3, "status": "invalid"})
    events = events_df(spark, story())
    got = T.run_metrics(runs, events).select("run_no", "offline_ms", "under_min_isr_ms", "isr_churn", "ner_records",
                                             "unclean_elections", "worst_rank")
    expected = spark.createDataFrame([(0, 3010, 1000, 2, 7, 0, 2), (1, 0, 0, 0, 0, 0, 1), (2, 0, 0, 0, 0, 0, 3)],
                                     "run_no long, offline_ms long, under_min_isr_ms long, isr_churn int, "
                                     "ner_records int, unclean_elections int, worst_rank int")
    assertDataFrameEqual(got, expected)


def test_cell_with_three_runs_one_lost(spark):
    """3 simulated runs (1 lost 6 records) and 1 invalid run in cell 0; run 0 is the story."""
    runs = runs_df(spark, {"run_no": 0, "violations": 2, "failed": 10, "latency_max_ms": 40},
                   {"run_no": 1, "lost": 6, "lost_acks_all": 6, "converged": False},
                   {"run_no": 2}, {"run_no": 3, "status": "invalid"})
    events = events_df(spark, story())
    latency = spark.createDataFrame([("s", 0, 2, 5), ("s", 0, 4, 3), ("s", 1, 100, 2), ("s", 3, 9, 99)],
                                    LATENCY_TABLE_SCHEMA)
    results = T.analyse(runs, events, T.cell_latency(runs, latency))
    cell = results["analytics_cells"].collect()
    T.release(results)
    assert len(cell) == 1
    c = cell[0].asDict()
    lo, hi = 0.06149, 0.79235
    expected = {"runs": 3, "runs_invalid": 1, "runs_error": 0, "runs_lost": 1, "p_loss": 1 / 3,
                "lost_mean": 2.0, "lost_max": 6, "runs_lost_acks_all": 1, "runs_violation": 1,
                "violations_mean": 2 / 3, "offline_ms_mean": 3010 / 3, "offline_ms_max": 3010,
                "offline_fraction": 3010 / (3 * 2 * 10000), "under_min_isr_ms_mean": 1000 / 3,
                "under_min_isr_fraction": 1000 / 60000, "ner_rate": 7 / 300, "failed_rate": 10 / 300,
                "isr_churn_mean": 2 / 3, "detect_samples": 1, "detect_ms_p50": 2000.0, "detect_ms_p95": 2000.0,
                "failover_samples": 1, "failover_ms_p50": 2010.0, "failover_ms_p95": 2010.0,
                # latency of the 3 simulated runs: 5 x 2 ms, 3 x 4 ms, 2 x 100 ms (run 3 is invalid)
                "latency_p50_ms": 2.0, "latency_p95_ms": 100.0, "latency_p99_ms": 100.0, "latency_max_ms": 40,
                "nonconverged": 1, "worst_run_no": 1, "worst_run_key": "key00000000000000001"}
    for key, value in expected.items():
        if isinstance(value, float):
            assert math.isclose(c[key], value, rel_tol=1e-9), (key, c[key], value)
        else:
            assert c[key] == value, (key, c[key], value)
    assert math.isclose(c["p_loss_lo"], lo, abs_tol=5e-5) and math.isclose(c["p_loss_hi"], hi, abs_tol=5e-5)


def test_kafka_metrics_of_the_runs_per_cell(spark):
    """The kafka_metrics rows of cell 0's runs (run 0 from a 0.10 era: no UnderMinIsr; run 3 is
    invalid and run 2 was stored before the metrics existed): means over the runs that have the
    value, peaks over the runs; the cell without any row gets nulls."""
    import json
    from app.sweeps.schemas import KAFKA_METRICS_READ_SCHEMA
    runs = runs_df(spark, {"run_no": 0}, {"run_no": 1}, {"run_no": 2}, {"run_no": 3, "status": "invalid"},
                   {"run_no": 4, "cell_id": 1})
    base = {"sample_ms": 100, "at_min_isr_ms": 0, "isr_shrinks": 0, "isr_expands": 0, "active_controller_max": 1,
            "fenced_brokers_max": None, "metadata_lag_ms_peak": None}
    km = spark.createDataFrame([
        ("s", 0, json.dumps({**base, "under_replicated_ms": 1000, "under_min_isr_ms": None, "offline_ms": 300,
                             "offline_max": 1, "no_active_controller_ms": 0, "unclean_elections": 1,
                             "max_lag_peak": 0, "record_errors": 7, "request_latency_avg_peak": 10.0})),
        ("s", 1, json.dumps({**base, "under_replicated_ms": 2000, "under_min_isr_ms": 500, "offline_ms": 0,
                             "offline_max": 0, "no_active_controller_ms": 18100, "unclean_elections": 0,
                             "max_lag_peak": 5070, "record_errors": 0, "request_latency_avg_peak": 311.712})),
        ("s", 3, json.dumps({**base, "under_replicated_ms": 9900, "under_min_isr_ms": 9900, "offline_ms": 9900,
                             "offline_max": 9, "no_active_controller_ms": 0, "unclean_elections": 9,
                             "max_lag_peak": 9, "record_errors": 9, "request_latency_avg_peak": 9.0}))],
        KAFKA_METRICS_READ_SCHEMA)
    results = T.analyse(runs, events_df(spark, story()), T.cell_latency(runs, spark.createDataFrame(
        [], LATENCY_TABLE_SCHEMA)), kafka_metrics=km)
    cells = {r["cell_id"]: r.asDict() for r in results["analytics_cells"].collect()}
    T.release(results)
    c = cells[0]
    assert c["km_runs"] == 2
    assert c["km_under_replicated_ms_mean"] == 1500.0 and c["km_under_min_isr_ms_mean"] == 500.0
    assert c["km_offline_ms_mean"] == 150.0 and c["km_offline_max"] == 1
    assert c["km_no_controller_ms_mean"] == 9050.0 and c["km_unclean_elections_mean"] == 0.5
    assert c["km_max_lag_peak"] == 5070 and c["km_record_errors_mean"] == 3.5
    assert c["km_request_latency_peak_max"] == 311.712
    assert all(cells[1][k] is None for k in T.KM_COLUMNS)
    # without the rows at all (a job over an older store): the columns exist, null
    plain = T.analyse(runs, events_df(spark, story()), T.cell_latency(runs, spark.createDataFrame(
        [], LATENCY_TABLE_SCHEMA)))
    row = plain["analytics_cells"].where("cell_id = 0").collect()[0].asDict()
    T.release(plain)
    assert all(row[k] is None for k in T.KM_COLUMNS)


def test_invariant_counts(spark):
    runs = runs_df(spark, {"run_no": 0}, {"run_no": 1})
    events = events_df(spark, story() + [{"run_no": 1, "seq": 1, "t_ms": 5, "type": "violation",
                                          "kind": "acked_record_lost", "count": 3}])
    expected = spark.createDataFrame([("s", 0, "replica_divergence", 1, 2), ("s", 0, "acked_record_lost", 1, 1)],
                                     StructType([StructField("sweep_id", StringType()),
                                                 StructField("cell_id", IntegerType()),
                                                 StructField("invariant", StringType()),
                                                 StructField("runs", IntegerType()),
                                                 StructField("occurrences", IntegerType())]))
    assertDataFrameEqual(T.invariant_counts(runs, events), expected)


def test_histogram_percentiles_pick_the_bucket_reaching_the_quantile(spark):
    hist = spark.createDataFrame([Row(sweep_id="s", cell_id=0, bucket_ms=2, count=5),
                                  Row(sweep_id="s", cell_id=0, bucket_ms=4, count=4),
                                  Row(sweep_id="s", cell_id=0, bucket_ms=100, count=1),
                                  Row(sweep_id="s", cell_id=1, bucket_ms=7, count=1)])
    got = T.histogram_percentiles(hist)
    # cell 0: 10 samples, cumulative 5, 9, 10 -> p50 = 2, p95 = 100 (9 < 9.5), p99 = 100
    expected = spark.createDataFrame([("s", 0, 2.0, 100.0, 100.0), ("s", 1, 7.0, 7.0, 7.0)],
                                     "sweep_id string, cell_id long, latency_p50_ms double, latency_p95_ms double, "
                                     "latency_p99_ms double")
    assertDataFrameEqual(got, expected)


def test_bucket_matches_the_executor_side_buckets(spark):
    from engine.tools.sweep_run import latency_bucket
    values = [0, 7, 99, 100, 123, 999, 1000, 1999, 29862, 123456]
    df = spark.createDataFrame([(v,) for v in values], StructType([StructField("v", LongType())]))
    got = [r[0] for r in df.select(T.bucket(df["v"])).collect()]
    assert got == [latency_bucket(v) for v in values]


def test_headline_agrees_with_the_full_cell_metrics(spark):
    runs = runs_df(spark, {"run_no": 0, "records_sent": 100}, {"run_no": 1, "lost": 6}, {"run_no": 2})
    events = events_df(spark, story())
    latency = spark.createDataFrame([("s", 0, 2, 5), ("s", 1, 100, 2)], LATENCY_TABLE_SCHEMA)
    lat = T.cell_latency(runs, latency)
    head = T.headline(runs, events, lat).collect()[0].asDict()
    full = T.analyse(runs, events, lat)
    cell = full["analytics_cells"].collect()[0].asDict()
    T.release(full)
    for key in ("runs", "runs_lost", "p_loss", "p_loss_lo", "p_loss_hi", "lost_mean", "isr_churn_mean", "ner_rate",
                "latency_p50_ms", "latency_p99_ms"):
        assert head[key] == cell[key], key
    assert head["ner_rate"] == 7 / 300 and head["latency_p99_ms"] == 100.0


def test_cell_latency_sums_the_buckets_of_the_simulated_runs(spark):
    runs = runs_df(spark, {"run_no": 0}, {"run_no": 1, "cell_id": 1}, {"run_no": 2}, {"run_no": 3, "status": "error"})
    latency = spark.createDataFrame([("s", 0, 2, 5), ("s", 2, 2, 4), ("s", 2, 7, 1), ("s", 1, 2, 3), ("s", 3, 2, 50)],
                                    LATENCY_TABLE_SCHEMA)
    expected = spark.createDataFrame([("s", 0, 2, 9), ("s", 0, 7, 1), ("s", 1, 2, 3)],
                                     "sweep_id string, cell_id int, bucket_ms int, count long")
    assertDataFrameEqual(T.cell_latency(runs, latency), expected)


def test_the_analysed_types_cover_every_type_the_transforms_read():
    """The extract reads only ANALYSED_TYPES: a transform reading another type would see none."""
    import inspect
    import re
    source = inspect.getsource(T)
    named = set(re.findall(r'F\.col\("type"\) == "([a-z_]+)"', source))
    for group in re.findall(r'F\.col\("type"\)\.isin\(([^)]*)\)', source):
        named |= set(re.findall(r'"([a-z_]+)"', group))
    assert named and named <= set(T.ANALYSED_TYPES), named - set(T.ANALYSED_TYPES)
    assert {"produce_failed", "truncation", "controller_elected"}.isdisjoint(T.ANALYSED_TYPES)
