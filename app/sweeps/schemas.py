"""Spark schemas of the tables the jobs read and write (explicit: JDBC never guesses a type)."""
from pyspark.sql.types import (ArrayType, BooleanType, DoubleType, IntegerType, LongType, StringType,
                               StructField, StructType)

from engine.tools.sweep_run import EVENT_FIELDS, RUN_FIELDS

S, I, L, B, D = StringType(), IntegerType(), LongType(), BooleanType(), DoubleType()

_RUN_TYPES = {
    "run_key": S, "sweep_id": S, "run_no": L, "cell_id": I, "seed": L, "status": S, "error": S,
    "kafka_version": S, "engine_version": S, "scenario_json": S, "history_sha256": S, "history_len": I,
    "sim_events": L, "cpu_ms": I, "end_ms": L, "duration_ms": L, "fault_start_ms": L, "fault_end_ms": L,
    "brokers": I, "partitions": I, "faults": I, "records_sent": I, "acked": I, "failed": I,
    "failed_ner": I, "pending": I, "lost": I, "lost_acks_all": I, "violations": I, "converged": B,
    "offline_end": I, "under_replicated_end": I, "brokers_down_end": I, "latency_count": I,
    "latency_sum_ms": L, "latency_max_ms": I,
}
RUN_SCHEMA = StructType([StructField(f, _RUN_TYPES[f], True) for f in RUN_FIELDS])

_EVENT_TYPES = {"seq": I, "t_ms": L, "type": S, "topic": S, "partition": I, "broker": I, "leader": I,
                "leader_epoch": I, "isr_size": I, "min_isr": I, "kind": S, "count": I, "details": S}
EVENT_STRUCT = StructType([StructField(f, _EVENT_TYPES[f], True) for f in EVENT_FIELDS])
LATENCY_STRUCT = StructType([StructField("bucket_ms", I, False), StructField("count", I, False)])

#: what an executor returns for one run: the run row, its events, its latency histogram
RESULT_SCHEMA = StructType([
    StructField("run", RUN_SCHEMA, False),
    StructField("events", ArrayType(EVENT_STRUCT, False), False),
    StructField("latency", ArrayType(LATENCY_STRUCT, False), False),
])

#: sweep_events as stored (the key columns, then the event)
EVENTS_TABLE_SCHEMA = StructType([StructField("sweep_id", S, False), StructField("run_no", L, False)]
                                 + list(EVENT_STRUCT.fields))
#: the columns of sweep_events the analysis reads (not leader_epoch, not the details text)
EVENTS_READ_SCHEMA = StructType([f for f in EVENTS_TABLE_SCHEMA.fields if f.name not in ("leader_epoch", "details")])
LATENCY_TABLE_SCHEMA = StructType([StructField("sweep_id", S, False), StructField("run_no", L, False),
                                   StructField("bucket_ms", I, False), StructField("count", I, False)])

#: the columns of sweep_runs the analysis reads (not the scenario text)
RUNS_READ_FIELDS = ("run_key", "sweep_id", "run_no", "cell_id", "seed", "status", "kafka_version",
                    "end_ms", "duration_ms", "fault_start_ms", "fault_end_ms", "partitions", "faults",
                    "records_sent", "acked", "failed", "failed_ner", "pending", "lost", "lost_acks_all",
                    "violations", "converged", "latency_max_ms")
RUNS_READ_SCHEMA = StructType([StructField(f, _RUN_TYPES[f], True) for f in RUNS_READ_FIELDS])

#: the kafka_metrics event rows (engine.tools.sweep_run.METRICS_TYPE): the run and its summary JSON
KAFKA_METRICS_READ_SCHEMA = StructType([StructField("sweep_id", S, False), StructField("run_no", L, False),
                                        StructField("details", S, True)])
#: the summary's fields the analysis reads (engine.metrics.run_summary.OUTPUTS)
KAFKA_METRICS_SUMMARY = StructType([StructField(f, t, True) for f, t in (
    ("under_replicated_ms", L), ("under_min_isr_ms", L), ("offline_ms", L), ("offline_max", I),
    ("no_active_controller_ms", L), ("unclean_elections", I), ("max_lag_peak", L), ("record_errors", L),
    ("request_latency_avg_peak", D))])

#: the produce latency histogram of a cell: its simulated runs' sweep_latency rows summed per bucket
CELL_LATENCY_SCHEMA = StructType([StructField("sweep_id", S, False), StructField("cell_id", I, False),
                                  StructField("bucket_ms", I, False), StructField("count", L, False)])

CELLS_SCHEMA = StructType([StructField("sweep_id", S, False), StructField("cell_id", I, False),
                           StructField("settings_json", S, False), StructField("label", S, False),
                           StructField("profile", S, False), StructField("kafka_version", S, False)])

#: a stored run of any source, for re-simulation
STORED_RUN_SCHEMA = StructType([
    StructField("source", S, False), StructField("ref", S, False), StructField("sweep_id", S, True),
    StructField("cell_id", I, True), StructField("kafka_version", S, False),
    StructField("scenario_json", S, False), StructField("history_sha256", S, True),
    StructField("lost", I, True), StructField("violations", I, True),
])
SAVED_RUNS_SCHEMA = StructType([StructField("id", L, False), StructField("source", S, False),
                                StructField("kafka_version", S, False), StructField("scenario_json", S, False),
                                StructField("lost_count", I, False), StructField("violations_count", I, False),
                                StructField("finished", B, False)])
