"""Kafka's own metrics per cell of a sweep (the ``km_*`` columns; docs/model.md §22.7): pure
DataFrame functions over each run's ``kafka_metrics`` row, the summary of its metrics read every
100 ms of the run. Definitions are in ``app.analytics.transforms``' docstring; like the other
transforms, sums are integers divided at the end, so the numbers do not depend on partitioning."""
from pyspark.sql import functions as F

from app.sweeps.schemas import KAFKA_METRICS_SUMMARY

RUN_KEY = ["sweep_id", "run_no"]
CELL_KEY = ["sweep_id", "cell_id"]


def kafka_metric_runs(kafka_metrics):
    """One row per run with the fields of its Kafka metrics summary (the details JSON parsed)."""
    parsed = kafka_metrics.select(*RUN_KEY, F.from_json("details", KAFKA_METRICS_SUMMARY).alias("m"))
    return parsed.select(*RUN_KEY, "m.*")


def _mean(name):
    """Integer sum over the runs that have the value, divided at the end (exact, order-free)."""
    return F.sum(F.col(name)).cast("double") / F.count(F.col(name))


def kafka_metric_cells(runs, kafka_metrics):
    """Per cell of the simulated runs: the km_* columns (see the module docstring)."""
    ok = runs.where(F.col("status") == "ok").select(*RUN_KEY, "cell_id")
    per_run = kafka_metric_runs(kafka_metrics).join(ok, RUN_KEY)
    return per_run.groupBy(*CELL_KEY).agg(
        F.count("*").cast("int").alias("km_runs"),
        _mean("under_replicated_ms").alias("km_under_replicated_ms_mean"),
        _mean("under_min_isr_ms").alias("km_under_min_isr_ms_mean"),
        _mean("offline_ms").alias("km_offline_ms_mean"),
        F.max("offline_max").cast("int").alias("km_offline_max"),
        _mean("no_active_controller_ms").alias("km_no_controller_ms_mean"),
        _mean("unclean_elections").alias("km_unclean_elections_mean"),
        F.max("max_lag_peak").cast("long").alias("km_max_lag_peak"),
        _mean("record_errors").alias("km_record_errors_mean"),
        F.max("request_latency_avg_peak").alias("km_request_latency_peak_max"))


KM_COLUMNS = ("km_runs", "km_under_replicated_ms_mean", "km_under_min_isr_ms_mean", "km_offline_ms_mean",
              "km_offline_max", "km_no_controller_ms_mean", "km_unclean_elections_mean", "km_max_lag_peak",
              "km_record_errors_mean", "km_request_latency_peak_max")
KM_TYPES = {"km_runs": "int", "km_offline_max": "int", "km_max_lag_peak": "long"}
