"""The analysis of sweeps as pure DataFrame functions: DataFrames in, a DataFrame out, no I/O.

Inputs are the stored facts (schemas in ``app.sweeps.schemas``): ``runs`` (sweep_runs),
``events`` (sweep_events: the compact replication events; only the ``ANALYSED_TYPES`` are read)
and the produce-latency histogram per cell (``cell_latency``: from the per-run sweep_latency rows
by ``cell_latency(runs, latency)``, or summed by the database, ``extract.cell_latency_query``).
Definitions (also on the report page):

* loss: a run *loses* when at least one acknowledged record is lost at its end; per cell the
  probability is runs_lost / runs with a 95% **Wilson score interval** (z = 1.96):
  ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``.
* offline time: per partition, the time it has no leader able to serve: its state znode (in KRaft
  its latest PartitionChangeRecord) names
  no leader (leader = -1, from ``partition_offline`` until the next ``leader_elected``) or names
  a broker that is stopped (crashed or shut down, until it registers again) or paused; summed
  over partitions (partition-ms). The run's end closes an open interval.
* time under min ISR: per partition, the time its ISR (from every state-znode write: creation,
  elections, shrinks, expansions) is smaller than the topic's min.insync.replicas.
* NOT_ENOUGH_REPLICAS rate: records in produce responses answered NOT_ENOUGH_REPLICAS(_AFTER_APPEND)
  / records sent. A record retried after such an answer counts again (eras with retries can
  exceed 1); records that finally *failed* with it are ``failed_ner`` of the run rows.
* ISR churn: ISR shrinks + expansions per run.
* detection time: from a disruptive fault operation (crash, pause, isolate, partition, cut,
  expire_session, slow, shutdown) to the first ISR shrink at or after it and before the next
  disruptive fault (in KRaft also a PartitionChangeRecord that shrinks the ISR); failover time:
  the same to the first clean, unclean, ELR or last-known-leader election.
  A fault followed by no such event gives no sample.
* produce latency: acked_ms - sent_ms of acknowledged records, from per-run histograms (exact
  below 100 ms, two significant digits above); a percentile is the smallest bucket whose
  cumulative count reaches it.
* worst runs: per cell ordered by lost records, then violations, then offline time (desc),
  then run_no.
* convergence: a run converged when at its end every broker runs, every partition has a leader
  and a full ISR; the others are counted as ``nonconverged``.
* Kafka's own metrics (``km_*``, docs/model.md §22.7): from each run's ``kafka_metrics`` row (its
  metrics read every 100 ms of the run): per cell the mean over runs of the time with
  UnderReplicatedPartitions, UnderMinIsrPartitionCount or OfflinePartitionsCount above zero and
  with ActiveControllerCount at 0, of UncleanLeaderElectionsPerSec's and record-error-total's
  counts; the peak over runs of OfflinePartitionsCount, MaxLag and request-latency-avg. A mean
  leaves out the runs whose era lacks the metric (0.10 has no UnderMinIsrPartitionCount); a cell
  whose runs carry no row (stored before) has none.

Sums are taken over integers and divided at the end, and percentiles are exact, so the same
input always gives the same numbers, however Spark partitions it.
"""
from pyspark.sql import Window
from pyspark.sql import functions as F

from engine.tools.sweep_run import DISRUPTIVE_OPS, NER_ERRORS, STATE_TYPES

from .kafka_metric_cells import KM_COLUMNS, KM_TYPES, kafka_metric_cells

Z = 1.96
RUN_KEY = ["sweep_id", "run_no"]
PARTITION_KEY = ["sweep_id", "run_no", "topic", "partition"]
CELL_KEY = ["sweep_id", "cell_id"]
#: the event types these transforms read; the extract leaves the others in the store
ANALYSED_TYPES = tuple(sorted(set(STATE_TYPES) | {
    "broker_stopped", "broker_started", "broker_registered",   # broker_down_intervals
    "fault",                                                     # pauses, detection and failover
    "produce_error",                                             # NOT_ENOUGH_REPLICAS records
    "violation"}))                                               # invariant_counts


def wilson(k, n, z=Z):
    """Columns (lo, hi) of the Wilson score interval for k successes in n trials."""
    n = n.cast("double")
    p = k.cast("double") / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * F.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = F.when(n > 0, F.greatest(F.lit(0.0), center - half))
    hi = F.when(n > 0, F.least(F.lit(1.0), center + half))
    return lo, hi


def bucket(col):
    """Histogram bucket of a non-negative integer column: exact below 100, then two significant
    digits (as engine.tools.sweep_run.latency_bucket)."""
    digits = F.length(col.cast("string"))
    scale = F.pow(F.lit(10), digits - 2).cast("long")
    return F.when(col < 100, col).otherwise(F.floor(col / scale) * scale).cast("long")


# -- per partition and per run ----------------------------------------------------------------------
def _state_steps(events, runs, value_col, predicate):
    """Rows (sweep_id, run_no, topic, partition, t_ms, until_ms, flag) for each state-znode write:
    the state holds from t_ms until the next write (or the run's end)."""
    ordered = Window.partitionBy(*PARTITION_KEY).orderBy("t_ms", "seq")
    steps = (events.where(F.col("type").isin(*STATE_TYPES) & F.col(value_col).isNotNull()
                          & F.col("partition").isNotNull())
             .select(*PARTITION_KEY, "seq", "t_ms", F.col(value_col).alias("value"), "min_isr"))
    ends = runs.select(*RUN_KEY, "end_ms")
    return (steps.join(ends, RUN_KEY)
            .withColumn("until_ms", F.coalesce(F.lead("t_ms").over(ordered), F.col("end_ms")))
            .withColumn("flag", predicate(F.col("value"), F.col("min_isr")))
            .select(*PARTITION_KEY, "seq", "t_ms", "until_ms", "flag"))


def leader_steps(events, runs):
    """The leader named by each state-znode write, held until the next write: (partition key,
    seq, t_ms, until_ms, leader)."""
    ordered = Window.partitionBy(*PARTITION_KEY).orderBy("t_ms", "seq")
    steps = (events.where(F.col("type").isin(*STATE_TYPES) & F.col("leader").isNotNull()
                          & F.col("partition").isNotNull())
             .select(*PARTITION_KEY, "seq", "t_ms", "leader"))
    return (steps.join(runs.select(*RUN_KEY, "end_ms"), RUN_KEY)
            .withColumn("until_ms", F.coalesce(F.lead("t_ms").over(ordered), F.col("end_ms")))
            .select(*PARTITION_KEY, "seq", "t_ms", "until_ms", "leader"))


def broker_down_intervals(events, runs):
    """Per run and broker, the intervals it could not serve: from ``broker_stopped`` or a
    ``pause`` fault until it registers again (``broker_started``/``broker_registered``) or
    resumes. Columns sweep_id, run_no, broker, down_ms, up_ms."""
    marks = events.where(
        F.col("broker").isNotNull()
        & (F.col("type").isin("broker_stopped", "broker_started", "broker_registered")
           | ((F.col("type") == "fault") & F.col("kind").isin("pause", "resume"))))
    marks = marks.select(*RUN_KEY, "broker", "seq", "t_ms",
                         (F.col("type").isin("broker_stopped") | (F.col("kind") == "pause")).alias("flag"))
    ordered = Window.partitionBy(*RUN_KEY, "broker").orderBy("t_ms", "seq")
    marks = (marks.join(runs.select(*RUN_KEY, "end_ms"), RUN_KEY)
             .withColumn("until_ms", F.coalesce(F.lead("t_ms").over(ordered), F.col("end_ms"))))
    changed = F.when(F.col("flag") != F.coalesce(F.lag("flag").over(ordered), F.lit(False)), 1).otherwise(0)
    islands = (marks.withColumn("change", changed)
               .withColumn("island", F.sum("change").over(ordered.rowsBetween(Window.unboundedPreceding, 0))))
    return (islands.where("flag").groupBy(*RUN_KEY, "broker", "island")
            .agg(F.min("t_ms").alias("down_ms"), F.max("until_ms").alias("up_ms"))
            .select(*RUN_KEY, "broker", "down_ms", "up_ms"))


def offline_steps(events, runs):
    """Pieces of time a partition had no serving leader, as steps (partition key, seq, t_ms,
    until_ms, flag=True): leader -1, or the leader's broker down (overlap of the leader step
    with the broker's down interval)."""
    leaders = leader_steps(events, runs)
    none = leaders.where(F.col("leader") == -1).select(*PARTITION_KEY, "seq", "t_ms", "until_ms")
    down = broker_down_intervals(events, runs)
    # joined on the run only, the broker matched after: both sides are then already partitioned
    # by the join key (the facts are partitioned by run), where joining on the broker as well
    # shuffled both sides again; a run has a handful of down intervals, so the pairs stay few
    overlap = (leaders.where(F.col("leader") >= 0).join(down, RUN_KEY)
               .where(F.col("leader") == F.col("broker"))
               .select(*PARTITION_KEY, "seq", F.greatest("t_ms", "down_ms").alias("t_ms"),
                       F.least("until_ms", "up_ms").alias("until_ms"))
               .where(F.col("until_ms") > F.col("t_ms")))
    return none.unionByName(overlap).withColumn("flag", F.lit(True))


def under_min_isr_steps(events, runs):
    return _state_steps(events, runs, "isr_size", lambda isr, min_isr: isr < min_isr)


def merge_pieces(pieces):
    """Merge flagged pieces of time of a partition that touch or overlap into intervals
    (partition key, start_ms, end_ms, duration_ms)."""
    ordered = Window.partitionBy(*PARTITION_KEY).orderBy("t_ms", "until_ms")
    reach = F.max("until_ms").over(ordered.rowsBetween(Window.unboundedPreceding, -1))
    starts = pieces.withColumn("new", F.when(reach.isNull() | (F.col("t_ms") > reach), 1).otherwise(0))
    grouped = starts.withColumn("island", F.sum("new").over(ordered.rowsBetween(Window.unboundedPreceding, 0)))
    return (grouped.groupBy(*PARTITION_KEY, "island")
            .agg(F.min("t_ms").alias("start_ms"), F.max("until_ms").alias("end_ms"))
            .withColumn("duration_ms", F.col("end_ms") - F.col("start_ms"))
            .select(*PARTITION_KEY, "start_ms", "end_ms", "duration_ms"))


def time_in(intervals_df):
    """Per run: total ms of the intervals (summed over partitions)."""
    return intervals_df.groupBy(*RUN_KEY).agg(F.sum("duration_ms").cast("long").alias("ms"))


def time_flagged(steps):
    """Per run: total ms its partitions spent flagged (summed over partitions)."""
    return (steps.where("flag").groupBy(*RUN_KEY)
            .agg(F.sum(F.col("until_ms") - F.col("t_ms")).cast("long").alias("ms")))


def fault_reactions(events, reaction):
    """Per disruptive fault: ms until the first event matching ``reaction`` (a Column over the
    events) at or after the fault and before the next disruptive fault. Columns sweep_id, run_no,
    fault_seq, fault_t_ms, kind, reaction_ms (faults with no reaction are left out)."""
    faults = (events.where((F.col("type") == "fault") & F.col("kind").isin(*sorted(DISRUPTIVE_OPS)))
              .select(*RUN_KEY, F.col("seq").alias("fault_seq"), F.col("t_ms").alias("fault_t_ms"), "kind"))
    ordered = Window.partitionBy(*RUN_KEY).orderBy("fault_t_ms", "fault_seq")
    faults = faults.withColumn("next_t_ms", F.lead("fault_t_ms").over(ordered))
    hits = events.where(reaction).select(*RUN_KEY, F.col("t_ms").alias("hit_t_ms"), F.col("seq").alias("hit_seq"))
    joined = faults.join(hits, RUN_KEY).where(
        (F.col("hit_t_ms") >= F.col("fault_t_ms")) & (F.col("hit_seq") > F.col("fault_seq"))
        & (F.col("next_t_ms").isNull() | (F.col("hit_t_ms") < F.col("next_t_ms"))))
    return (joined.groupBy(*RUN_KEY, "fault_seq", "fault_t_ms", "kind")
            .agg(F.min(F.col("hit_t_ms") - F.col("fault_t_ms")).cast("long").alias("reaction_ms")))


def detection_times(events):
    # KRaft: the controller's own shrinks (a fenced or shutting-down replica) are PartitionChangeRecords
    return fault_reactions(events, (F.col("type") == "isr_shrink")
                           | ((F.col("type") == "partition_change") & (F.col("kind") == "shrink")))


def failover_times(events):
    # KRaft with ELR (KIP-966) adds elections from the ELR and of the last known leader
    return fault_reactions(events, (F.col("type") == "leader_elected")
                           & F.col("kind").isin("clean", "unclean", "elr", "last_known_leader"))


def run_metrics(runs, events, offline_intervals=None):
    """One row per simulated run (status ok): its counts plus offline ms, ms under min ISR, ISR
    churn, NOT_ENOUGH_REPLICAS records, unclean elections, and its rank among its cell's runs
    (1 = worst). ``offline_intervals``: merge_pieces(offline_steps(...)) when the caller has them."""
    ok = runs.where(F.col("status") == "ok")
    if offline_intervals is None:
        offline_intervals = merge_pieces(offline_steps(events, ok))
    offline = time_in(offline_intervals).withColumnRenamed("ms", "offline_ms")
    under = time_flagged(under_min_isr_steps(events, ok)).withColumnRenamed("ms", "under_min_isr_ms")
    counts = (events.groupBy(*RUN_KEY).agg(
        F.sum(F.when(F.col("type").isin("isr_shrink", "isr_expand"), 1).otherwise(0)).cast("int").alias("isr_churn"),
        F.sum(F.when((F.col("type") == "produce_error") & F.col("kind").isin(*sorted(NER_ERRORS)),
                     F.coalesce(F.col("count"), F.lit(0))).otherwise(0)).cast("int").alias("ner_records"),
        F.sum(F.when((F.col("type") == "leader_elected") & (F.col("kind") == "unclean"), 1).otherwise(0))
        .cast("int").alias("unclean_elections")))
    out = (ok.select(*RUN_KEY, "run_key", "cell_id", "seed", "lost", "violations", "converged",
                     "records_sent", "failed", "partitions", "duration_ms", "lost_acks_all")
           .join(offline, RUN_KEY, "left").join(under, RUN_KEY, "left").join(counts, RUN_KEY, "left")
           .fillna(0, ["offline_ms", "under_min_isr_ms", "isr_churn", "ner_records", "unclean_elections"]))
    worst = Window.partitionBy(*CELL_KEY).orderBy(F.col("lost").desc(), F.col("violations").desc(),
                                                  F.col("offline_ms").desc(), F.col("run_no").asc())
    return out.withColumn("worst_rank", F.row_number().over(worst))


def invariant_counts(runs, events):
    """Per cell and invariant: runs that broke it and how often."""
    cells = runs.where(F.col("status") == "ok").select(*RUN_KEY, "cell_id")
    return (events.where(F.col("type") == "violation").join(cells, RUN_KEY)
            .groupBy(*CELL_KEY, F.col("kind").alias("invariant"))
            .agg(F.countDistinct("run_no").cast("int").alias("runs"), F.count("*").cast("int").alias("occurrences")))


def _percentiles(samples, column, prefix):
    return (samples.groupBy(*CELL_KEY).agg(
        F.count("*").cast("int").alias(f"{prefix}_samples"),
        F.percentile(F.col(column), 0.5).alias(f"{prefix}_ms_p50"),
        F.percentile(F.col(column), 0.95).alias(f"{prefix}_ms_p95")))


def histogram_percentiles(hist, quantiles=(("p50", 0.5), ("p95", 0.95), ("p99", 0.99))):
    """From per-cell histogram rows (sweep_id, cell_id, bucket_ms, count): the smallest bucket
    whose cumulative count reaches each quantile (columns latency_<name>_ms)."""
    per_bucket = hist.groupBy(*CELL_KEY, "bucket_ms").agg(F.sum("count").cast("long").alias("n"))
    ordered = Window.partitionBy(*CELL_KEY).orderBy("bucket_ms")
    whole = Window.partitionBy(*CELL_KEY)
    cum = (per_bucket.withColumn("cum", F.sum("n").over(ordered.rowsBetween(Window.unboundedPreceding, 0)))
           .withColumn("total", F.sum("n").over(whole)))
    aggs = [F.min(F.when(F.col("cum") >= F.col("total") * q, F.col("bucket_ms"))).cast("double")
            .alias(f"latency_{name}_ms") for name, q in quantiles]
    return cum.groupBy(*CELL_KEY).agg(*aggs)


def cell_latency(runs, latency):
    """Per cell and bucket, the records of its simulated runs (sweep_id, cell_id, bucket_ms,
    count) from per-run histogram rows (extract.cell_latency_query is the same in SQL)."""
    cells = runs.where(F.col("status") == "ok").select(*RUN_KEY, "cell_id")
    return (latency.join(cells, RUN_KEY).groupBy(*CELL_KEY, "bucket_ms")
            .agg(F.sum("count").cast("long").alias("count")))


def cell_metrics(runs, metrics, detection, failover, latency_hist, kafka_cells=None):
    """Per cell: the headline numbers (see the module docstring); one row per cell of ``runs``.
    ``kafka_cells``: kafka_metric_cells(...), or None (the km_* columns are then null)."""
    status = runs.groupBy(*CELL_KEY).agg(
        F.sum(F.when(F.col("status") == "invalid", 1).otherwise(0)).cast("int").alias("runs_invalid"),
        F.sum(F.when(F.col("status") == "error", 1).otherwise(0)).cast("int").alias("runs_error"),
        F.max(F.when(F.col("status") == "ok", F.col("latency_max_ms"))).cast("int").alias("latency_max_ms"))
    lost_runs = F.sum(F.when(F.col("lost") > 0, 1).otherwise(0)).cast("int")
    agg = metrics.groupBy(*CELL_KEY).agg(
        F.count("*").cast("int").alias("runs"),
        lost_runs.alias("runs_lost"),
        (F.sum("lost").cast("double") / F.count("*")).alias("lost_mean"),
        F.max("lost").cast("int").alias("lost_max"),
        F.sum(F.when(F.col("lost_acks_all") > 0, 1).otherwise(0)).cast("int").alias("runs_lost_acks_all"),
        F.sum(F.when(F.col("violations") > 0, 1).otherwise(0)).cast("int").alias("runs_violation"),
        (F.sum("violations").cast("double") / F.count("*")).alias("violations_mean"),
        (F.sum("offline_ms").cast("double") / F.count("*")).alias("offline_ms_mean"),
        F.max("offline_ms").cast("long").alias("offline_ms_max"),
        (F.sum("offline_ms").cast("double") / F.sum(F.col("partitions") * F.col("duration_ms"))).alias("offline_fraction"),
        (F.sum("under_min_isr_ms").cast("double") / F.count("*")).alias("under_min_isr_ms_mean"),
        (F.sum("under_min_isr_ms").cast("double") / F.sum(F.col("partitions") * F.col("duration_ms")))
        .alias("under_min_isr_fraction"),
        (F.sum("ner_records").cast("double") / F.sum("records_sent")).alias("ner_rate"),
        (F.sum("failed").cast("double") / F.sum("records_sent")).alias("failed_rate"),
        (F.sum("isr_churn").cast("double") / F.count("*")).alias("isr_churn_mean"),
        F.sum(F.when(~F.col("converged"), 1).otherwise(0)).cast("int").alias("nonconverged"),
        F.min(F.when(F.col("worst_rank") == 1, F.col("run_no"))).alias("worst_run_no"),
        F.min(F.when(F.col("worst_rank") == 1, F.col("run_key"))).alias("worst_run_key"))
    lo, hi = wilson(F.col("runs_lost"), F.col("runs"))
    agg = (agg.withColumn("p_loss", F.when(F.col("runs") > 0, F.col("runs_lost").cast("double") / F.col("runs")))
           .withColumn("p_loss_lo", lo).withColumn("p_loss_hi", hi))
    cells_of_runs = metrics.select(*RUN_KEY, "cell_id")
    detect = _percentiles(detection.join(cells_of_runs, RUN_KEY), "reaction_ms", "detect")
    fail = _percentiles(failover.join(cells_of_runs, RUN_KEY), "reaction_ms", "failover")
    out = (status.join(agg, CELL_KEY, "left").join(detect, CELL_KEY, "left").join(fail, CELL_KEY, "left")
           .join(histogram_percentiles(latency_hist), CELL_KEY, "left")
           .fillna(0, ["runs", "runs_lost", "runs_lost_acks_all", "runs_violation", "nonconverged",
                       "detect_samples", "failover_samples"]))
    if kafka_cells is not None:
        out = out.join(kafka_cells, CELL_KEY, "left")
    else:
        for name in KM_COLUMNS:
            out = out.withColumn(name, F.lit(None).cast(KM_TYPES.get(name, "double")))
    return out.select(*CELL_COLUMNS)


CELL_COLUMNS = ("sweep_id", "cell_id", "runs", "runs_invalid", "runs_error", "runs_lost", "p_loss", "p_loss_lo",
                "p_loss_hi", "lost_mean", "lost_max", "runs_lost_acks_all", "runs_violation", "violations_mean",
                "offline_ms_mean", "offline_ms_max", "offline_fraction", "under_min_isr_ms_mean",
                "under_min_isr_fraction", "ner_rate", "failed_rate", "isr_churn_mean", "detect_samples",
                "detect_ms_p50", "detect_ms_p95", "failover_samples", "failover_ms_p50", "failover_ms_p95",
                "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_max_ms", "nonconverged",
                "worst_run_no", "worst_run_key") + KM_COLUMNS


def distributions(metrics, detection, failover, offline_intervals, latency_hist):
    """Per cell histograms for the report: metric, bucket_ms, count (detect_ms, failover_ms,
    offline_ms = lengths of offline intervals, latency_ms)."""
    cells_of_runs = metrics.select(*RUN_KEY, "cell_id")

    def hist(df, column, name):
        return (df.join(cells_of_runs, RUN_KEY).groupBy(*CELL_KEY, bucket(F.col(column)).alias("bucket_ms"))
                .agg(F.count("*").cast("long").alias("count")).withColumn("metric", F.lit(name)))
    lat = (latency_hist.groupBy(*CELL_KEY, F.col("bucket_ms").cast("long").alias("bucket_ms"))
           .agg(F.sum("count").cast("long").alias("count")).withColumn("metric", F.lit("latency_ms")))
    parts = [hist(detection, "reaction_ms", "detect_ms"), hist(failover, "reaction_ms", "failover_ms"),
             hist(offline_intervals, "duration_ms", "offline_ms"), lat]
    out = parts[0]
    for p in parts[1:]:
        out = out.unionByName(p)
    return out.select("sweep_id", "cell_id", "metric", "bucket_ms", "count")


RUN_COLUMNS = ("sweep_id", "run_no", "run_key", "cell_id", "seed", "lost", "violations", "offline_ms",
               "under_min_isr_ms", "isr_churn", "ner_records", "unclean_elections", "converged", "worst_rank")


def analyse(runs, events, lat, cache=True, kafka_metrics=None):
    """Everything the report shows, from the facts (``lat``: the per-cell latency histogram,
    ``cell_latency``; ``kafka_metrics``: the runs' kafka_metrics rows, or None): a dict of result
    DataFrames. With ``cache``
    the intermediate results shared by several outputs are cached (the caller unpersists them
    with ``release``)."""
    keep = (lambda df: df.cache()) if cache else (lambda df: df)
    ok = runs.where(F.col("status") == "ok")
    offline_iv = merge_pieces(offline_steps(events, ok))
    metrics = keep(run_metrics(runs, events, offline_iv))
    detection = keep(detection_times(events))
    failover = keep(failover_times(events))
    lat = keep(lat)
    return {
        "analytics_cells": cell_metrics(runs, metrics, detection, failover, lat,
                                        None if kafka_metrics is None else kafka_metric_cells(runs, kafka_metrics)),
        "analytics_invariants": invariant_counts(runs, events),
        "analytics_distributions": distributions(metrics, detection, failover, offline_iv, lat),
        "analytics_runs": metrics.select(*RUN_COLUMNS),
        "_cached": [metrics, detection, failover, lat] if cache else [],
    }


def release(results):
    for df in results.get("_cached", []):
        df.unpersist()


def headline(runs, events, lat):
    """The headline numbers per cell (what scripts/bench_analysis.py also computes in a
    single-process engine): runs, runs losing acknowledged records, their probability with the
    Wilson interval, lost records per run, ISR churn per run, NOT_ENOUGH_REPLICAS rate, and
    produce latency p50 / p99 (``lat``: the per-cell latency histogram, ``cell_latency``)."""
    ok = runs.where(F.col("status") == "ok")
    churn = (events.where(F.col("type").isin("isr_shrink", "isr_expand")).groupBy(*RUN_KEY)
             .agg(F.count("*").alias("churn")))
    ner = (events.where((F.col("type") == "produce_error") & F.col("kind").isin(*sorted(NER_ERRORS)))
           .groupBy(*RUN_KEY).agg(F.sum("count").alias("ner")))
    per_run = ok.join(churn, RUN_KEY, "left").join(ner, RUN_KEY, "left").fillna(0, ["churn", "ner"])
    agg = per_run.groupBy(*CELL_KEY).agg(
        F.count("*").cast("long").alias("runs"),
        F.sum(F.when(F.col("lost") > 0, 1).otherwise(0)).cast("long").alias("runs_lost"),
        (F.sum("lost").cast("double") / F.count("*")).alias("lost_mean"),
        (F.sum("churn").cast("double") / F.count("*")).alias("isr_churn_mean"),
        (F.sum("ner").cast("double") / F.sum("records_sent")).alias("ner_rate"))
    lo, hi = wilson(F.col("runs_lost"), F.col("runs"))
    agg = (agg.withColumn("p_loss", F.col("runs_lost").cast("double") / F.col("runs"))
           .withColumn("p_loss_lo", lo).withColumn("p_loss_hi", hi))
    lat = histogram_percentiles(lat, (("p50", 0.5), ("p99", 0.99)))
    return agg.join(lat, CELL_KEY, "left").select(*HEADLINE_COLUMNS)


HEADLINE_COLUMNS = ("sweep_id", "cell_id", "runs", "runs_lost", "p_loss", "p_loss_lo", "p_loss_hi", "lost_mean",
                    "isr_churn_mean", "ner_rate", "latency_p50_ms", "latency_p99_ms")
