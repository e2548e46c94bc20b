"""Aggregate the stored events of every stored run, whatever its source: saved runs (the store's
``runs``, ``run_events``, ``run_violations``: live sessions, headless runs, imports, forks,
counterexamples...) and sweep runs (``sweep_runs``, ``sweep_events``), per source and era —
without re-simulating anything. Pure transforms over JDBC reads; the answer is small and returned
(and optionally written as Parquet)."""
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType
from sqlalchemy import func, select

from app.spark.jdbc import jdbc_of, read_table
from app.store.db import reading
from app.store.models import Run
from app.sweeps.schemas import B, I, L, S
from app.sweeps.tables import sweep_runs

from .transforms import wilson

SAVED_RUNS = StructType([StructField("id", L, False), StructField("source", S, False),
                         StructField("kafka_version", S, False), StructField("lost_count", I, False),
                         StructField("violations_count", I, False)])
SAVED_EVENTS = StructType([StructField("run_id", L, False), StructField("type", S, False),
                           StructField("details", S, False)])
SAVED_VIOLATIONS = StructType([StructField("run_id", L, False), StructField("invariant", S, False)])
SWEEP_RUNS = StructType([StructField("sweep_id", S, False), StructField("run_no", L, False),
                         StructField("status", S, False), StructField("kafka_version", S, False),
                         StructField("lost", I, False), StructField("violations", I, False),
                         StructField("converged", B, False)])
SWEEP_EVENTS = StructType([StructField("sweep_id", S, False), StructField("run_no", L, False),
                           StructField("type", S, False), StructField("kind", S, True)])


def summarise(runs, events):
    """Pure. ``runs``: (group columns source, kafka_version; run, lost, violations); ``events``:
    (run, type, kind). Per source and era: runs, runs losing acknowledged records with the Wilson
    interval, runs breaking an invariant, elections by kind and ISR changes per run."""
    per_run = events.groupBy("run").agg(
        F.sum(F.when((F.col("type") == "leader_elected") & (F.col("kind") == "unclean"), 1).otherwise(0)).alias("unclean"),
        F.sum(F.when((F.col("type") == "leader_elected") & (F.col("kind") == "clean"), 1).otherwise(0)).alias("clean"),
        F.sum(F.when(F.col("type").isin("isr_shrink", "isr_expand"), 1).otherwise(0)).alias("isr_changes"),
        F.sum(F.when(F.col("type") == "truncation", 1).otherwise(0)).alias("truncations"))
    joined = runs.join(per_run, "run", "left").fillna(0, ["unclean", "clean", "isr_changes", "truncations"])
    out = joined.groupBy("source", "kafka_version").agg(
        F.count("*").cast("int").alias("runs"),
        F.sum(F.when(F.col("lost") > 0, 1).otherwise(0)).cast("int").alias("runs_lost"),
        F.sum(F.when(F.col("violations") > 0, 1).otherwise(0)).cast("int").alias("runs_violation"),
        F.sum(F.when(F.col("unclean") > 0, 1).otherwise(0)).cast("int").alias("runs_unclean_election"),
        (F.sum("clean").cast("double") / F.count("*")).alias("clean_elections_per_run"),
        (F.sum("isr_changes").cast("double") / F.count("*")).alias("isr_changes_per_run"),
        (F.sum("truncations").cast("double") / F.count("*")).alias("truncations_per_run"))
    lo, hi = wilson(F.col("runs_lost"), F.col("runs"))
    return (out.withColumn("p_loss", F.col("runs_lost").cast("double") / F.col("runs"))
            .withColumn("p_loss_lo", lo).withColumn("p_loss_hi", hi).orderBy("source", "kafka_version"))


def corpus_summary(spark, store, db_url=None, parquet=None):
    jdbc = jdbc_of(db_url or store.url.render_as_string(hide_password=False))
    parallelism = spark.sparkContext.defaultParallelism
    with reading(store) as conn:
        lo, hi, n_saved = conn.execute(select(func.min(Run.id), func.max(Run.id), func.count())).one()
        slo, shi, n_sweep = conn.execute(select(func.min(sweep_runs.c.run_no), func.max(sweep_runs.c.run_no),
                                                func.count())).one()
    runs, events = [], []
    if n_saved:
        saved = read_table(spark, jdbc, "runs", SAVED_RUNS, "id", (lo, hi), parallelism)
        runs.append(saved.select("source", "kafka_version", F.concat(F.lit("saved:"), F.col("id").cast("string")).alias("run"),
                                 F.col("lost_count").alias("lost"), F.col("violations_count").alias("violations")))
        ev = read_table(spark, jdbc, "run_events", SAVED_EVENTS, "run_id", (lo, hi), parallelism,
                        where="type IN ('leader_elected', 'isr_shrink', 'isr_expand', 'truncation')")
        events.append(ev.select(F.concat(F.lit("saved:"), F.col("run_id").cast("string")).alias("run"), "type",
                                F.get_json_object("details", "$.kind").alias("kind")))
    if n_sweep:
        sweep = read_table(spark, jdbc, "sweep_runs", SWEEP_RUNS, "run_no", (slo, shi), parallelism, where="status = 'ok'")
        key = F.concat_ws(":", F.lit("sweep"), "sweep_id", F.col("run_no").cast("string"))
        runs.append(sweep.select(F.concat_ws(":", F.lit("sweep"), "sweep_id").alias("source"), "kafka_version",
                                 key.alias("run"), "lost", "violations"))
        ev = read_table(spark, jdbc, "sweep_events", SWEEP_EVENTS, "run_no", (slo, shi), parallelism,
                        where="type IN ('leader_elected', 'isr_shrink', 'isr_expand', 'truncation')")
        events.append(ev.select(key.alias("run"), "type", "kind"))
    if not runs:
        return []
    all_runs, all_events = runs[0], events[0]
    for r, e in zip(runs[1:], events[1:]):
        all_runs, all_events = all_runs.unionByName(r), all_events.unionByName(e)
    result = summarise(all_runs, all_events)
    if parquet:
        result.write.mode("overwrite").parquet(parquet)
    return [r.asDict() for r in result.collect()]
