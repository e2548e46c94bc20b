"""Tables of sweeps, their runs and the analysis results (SQLAlchemy Core; no Flask, no engine).

Created by the Alembic revision ``0002_sweeps_analytics`` (migrations/versions/), on top of the
store's saved-run tables; ``0003_kafka_metrics`` adds the Kafka-metric columns of ``analytics_cells``. Like the store: times are integer milliseconds, ids explicit, details
JSON text, so Spark's JDBC reader needs no DATETIME or JSON types.

Facts (append-only, written by sweeps): ``sweeps``, ``sweep_cells``, ``sweep_runs`` (one row per
run; ``run_key`` = hash(sweep id, cell, seed) is the primary key, so no run is stored twice),
``sweep_events`` (the compact replication events of each run) and ``sweep_latency`` (each run's
produce-latency histogram). A run's row is written after its events: a run without a row is
not done, and its stray events are removed before a resumed sweep redoes it.

Results (replaced whole by each analysis, per sweep or per question): ``analytics_cells``,
``analytics_invariants``, ``analytics_distributions``, ``analytics_runs``; re-simulation
questions: ``resim_questions``, ``resim_results``, ``resim_groups``.
"""
from sqlalchemy import (BigInteger, Boolean, Column, Float, ForeignKeyConstraint, Index, Integer,
                        MetaData, PrimaryKeyConstraint, String, Table, Text, UniqueConstraint)

from app.store.models import NAMING

metadata = MetaData(naming_convention=NAMING)


def _sweep_fk(table):
    return ForeignKeyConstraint(["sweep_id"], ["sweeps.id"], name=f"fk_{table}_sweep_id_sweeps",
                                ondelete="CASCADE")


sweeps = Table(
    "sweeps", metadata,
    Column("id", String(40), nullable=False),
    Column("name", String(200), nullable=False),
    Column("description", Text, nullable=False),
    Column("doc_json", Text, nullable=False),                 # the normalised sweep document
    Column("doc_sha256", String(64), nullable=False),
    Column("engine_version", String(32), nullable=False),
    Column("cells", Integer, nullable=False),
    Column("runs_total", BigInteger, nullable=False),
    Column("runs_done", BigInteger, nullable=False),
    Column("status", String(16), nullable=False),             # planned running stopped done failed
    Column("message", Text, nullable=True),
    Column("created_ms", BigInteger, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
    Column("wall_ms", BigInteger, nullable=False),            # execution time, all attempts
    PrimaryKeyConstraint("id", name="pk_sweeps"),
)

sweep_cells = Table(
    "sweep_cells", metadata,
    Column("sweep_id", String(40), nullable=False),
    Column("cell_id", Integer, nullable=False),
    Column("settings_json", Text, nullable=False),
    Column("label", String(1000), nullable=False),
    Column("profile", String(40), nullable=False),
    Column("kafka_version", String(16), nullable=False),
    PrimaryKeyConstraint("sweep_id", "cell_id", name="pk_sweep_cells"),
    _sweep_fk("sweep_cells"),
)

sweep_runs = Table(
    "sweep_runs", metadata,
    Column("run_key", String(20), nullable=False),
    Column("sweep_id", String(40), nullable=False),
    Column("run_no", BigInteger, nullable=False),
    Column("cell_id", Integer, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("status", String(16), nullable=False),             # ok invalid error
    Column("error", Text, nullable=True),
    Column("kafka_version", String(16), nullable=False),
    Column("engine_version", String(32), nullable=False),
    Column("scenario_json", Text, nullable=False),            # replays the run exactly
    Column("history_sha256", String(64), nullable=True),      # digest of the whole history
    Column("history_len", Integer, nullable=False),
    Column("sim_events", BigInteger, nullable=False),
    Column("cpu_ms", Integer, nullable=False),
    Column("end_ms", BigInteger, nullable=False),
    Column("duration_ms", BigInteger, nullable=False),
    Column("fault_start_ms", BigInteger, nullable=False),
    Column("fault_end_ms", BigInteger, nullable=False),
    Column("brokers", Integer, nullable=False),
    Column("partitions", Integer, nullable=False),
    Column("faults", Integer, nullable=False),
    Column("records_sent", Integer, nullable=False),
    Column("acked", Integer, nullable=False),
    Column("failed", Integer, nullable=False),
    Column("failed_ner", Integer, nullable=False),
    Column("pending", Integer, nullable=False),
    Column("lost", Integer, nullable=False),
    Column("lost_acks_all", Integer, nullable=False),
    Column("violations", Integer, nullable=False),
    Column("converged", Boolean, nullable=False),
    Column("offline_end", Integer, nullable=False),
    Column("under_replicated_end", Integer, nullable=False),
    Column("brokers_down_end", Integer, nullable=False),
    Column("latency_count", Integer, nullable=False),
    Column("latency_sum_ms", BigInteger, nullable=False),
    Column("latency_max_ms", Integer, nullable=False),
    PrimaryKeyConstraint("run_key", name="pk_sweep_runs"),
    UniqueConstraint("sweep_id", "run_no", name="uq_sweep_runs_sweep_id_run_no"),
    _sweep_fk("sweep_runs"),
    Index("ix_sweep_runs_sweep_id_cell_id", "sweep_id", "cell_id"),
)

sweep_events = Table(
    "sweep_events", metadata,
    Column("sweep_id", String(40), nullable=False),
    Column("run_no", BigInteger, nullable=False),
    Column("seq", Integer, nullable=False),                   # index in the run's full history
    Column("t_ms", BigInteger, nullable=False),
    Column("type", String(40), nullable=False),
    Column("topic", String(255), nullable=True),
    Column("partition", Integer, nullable=True),
    Column("broker", Integer, nullable=True),
    Column("leader", Integer, nullable=True),                 # state-znode writes only
    Column("leader_epoch", Integer, nullable=True),
    Column("isr_size", Integer, nullable=True),               # state-znode writes only
    Column("min_isr", Integer, nullable=True),                # the topic's min.insync.replicas
    Column("kind", String(64), nullable=True),                # election kind, fault op, error, invariant
    Column("count", Integer, nullable=True),                  # records involved
    Column("details", Text, nullable=True),                   # the event's other fields (JSON)
    PrimaryKeyConstraint("sweep_id", "run_no", "seq", name="pk_sweep_events"),
    _sweep_fk("sweep_events"),
)

sweep_latency = Table(
    "sweep_latency", metadata,
    Column("sweep_id", String(40), nullable=False),
    Column("run_no", BigInteger, nullable=False),
    Column("bucket_ms", Integer, nullable=False),
    Column("count", Integer, nullable=False),
    PrimaryKeyConstraint("sweep_id", "run_no", "bucket_ms", name="pk_sweep_latency"),
    _sweep_fk("sweep_latency"),
)

# -- results of the analysis (replaced per sweep) -----------------------------------------------------
analytics_cells = Table(
    "analytics_cells", metadata,
    Column("sweep_id", String(40), nullable=False),
    Column("cell_id", Integer, nullable=False),
    Column("runs", Integer, nullable=False),                  # runs that simulated (status ok)
    Column("runs_invalid", Integer, nullable=False),
    Column("runs_error", Integer, nullable=False),
    Column("runs_lost", Integer, nullable=False),             # >= 1 acknowledged record lost
    Column("p_loss", Float, nullable=True),
    Column("p_loss_lo", Float, nullable=True),                # Wilson score interval, 95%
    Column("p_loss_hi", Float, nullable=True),
    Column("lost_mean", Float, nullable=True),
    Column("lost_max", Integer, nullable=True),
    Column("runs_lost_acks_all", Integer, nullable=False),
    Column("runs_violation", Integer, nullable=False),
    Column("violations_mean", Float, nullable=True),
    Column("offline_ms_mean", Float, nullable=True),          # partition-ms offline per run
    Column("offline_ms_max", BigInteger, nullable=True),
    Column("offline_fraction", Float, nullable=True),         # of partition-time
    Column("under_min_isr_ms_mean", Float, nullable=True),
    Column("under_min_isr_fraction", Float, nullable=True),
    Column("ner_rate", Float, nullable=True),                 # records answered NOT_ENOUGH_REPLICAS / sent
    Column("failed_rate", Float, nullable=True),
    Column("isr_churn_mean", Float, nullable=True),           # ISR shrinks + expansions per run
    Column("detect_samples", Integer, nullable=False),
    Column("detect_ms_p50", Float, nullable=True),
    Column("detect_ms_p95", Float, nullable=True),
    Column("failover_samples", Integer, nullable=False),
    Column("failover_ms_p50", Float, nullable=True),
    Column("failover_ms_p95", Float, nullable=True),
    Column("latency_p50_ms", Float, nullable=True),
    Column("latency_p95_ms", Float, nullable=True),
    Column("latency_p99_ms", Float, nullable=True),
    Column("latency_max_ms", Integer, nullable=True),
    Column("nonconverged", Integer, nullable=False),
    Column("worst_run_no", BigInteger, nullable=True),
    Column("worst_run_key", String(20), nullable=True),
    # Kafka's own metrics of the runs (revision 0003; the kafka_metrics event rows, docs/sweeps.md)
    Column("km_runs", Integer, nullable=True),                # runs that carry them
    Column("km_under_replicated_ms_mean", Float, nullable=True),   # time with URP > 0, per run
    Column("km_under_min_isr_ms_mean", Float, nullable=True),      # time with UnderMinIsr > 0
    Column("km_offline_ms_mean", Float, nullable=True),            # time with OfflinePartitions > 0
    Column("km_offline_max", Integer, nullable=True),              # peak OfflinePartitionsCount
    Column("km_no_controller_ms_mean", Float, nullable=True),      # time with ActiveControllerCount 0
    Column("km_unclean_elections_mean", Float, nullable=True),     # UncleanLeaderElectionsPerSec marks
    Column("km_max_lag_peak", BigInteger, nullable=True),          # peak MaxLag
    Column("km_record_errors_mean", Float, nullable=True),         # record-error-total
    Column("km_request_latency_peak_max", Float, nullable=True),   # peak request-latency-avg (ms)
    PrimaryKeyConstraint("sweep_id", "cell_id", name="pk_analytics_cells"),
)

analytics_invariants = Table(
    "analytics_invariants", metadata,
    Column("sweep_id", String(40), nullable=False),
    Column("cell_id", Integer, nullable=False),
    Column("invariant", String(64), nullable=False),
    Column("runs", Integer, nullable=False),
    Column("occurrences", Integer, nullable=False),
    PrimaryKeyConstraint("sweep_id", "cell_id", "invariant", name="pk_analytics_invariants"),
)

analytics_distributions = Table(
    "analytics_distributions", metadata,
    Column("sweep_id", String(40), nullable=False),
    Column("cell_id", Integer, nullable=False),
    Column("metric", String(32), nullable=False),             # detect_ms failover_ms offline_ms latency_ms
    Column("bucket_ms", BigInteger, nullable=False),
    Column("count", BigInteger, nullable=False),
    PrimaryKeyConstraint("sweep_id", "cell_id", "metric", "bucket_ms", name="pk_analytics_distributions"),
)

analytics_runs = Table(
    "analytics_runs", metadata,
    Column("sweep_id", String(40), nullable=False),
    Column("run_no", BigInteger, nullable=False),
    Column("run_key", String(20), nullable=False),
    Column("cell_id", Integer, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("lost", Integer, nullable=False),
    Column("violations", Integer, nullable=False),
    Column("offline_ms", BigInteger, nullable=False),
    Column("under_min_isr_ms", BigInteger, nullable=False),
    Column("isr_churn", Integer, nullable=False),
    Column("ner_records", Integer, nullable=False),
    Column("unclean_elections", Integer, nullable=False),
    Column("converged", Boolean, nullable=False),
    Column("worst_rank", Integer, nullable=False),            # 1 = the cell's worst run
    PrimaryKeyConstraint("sweep_id", "run_no", name="pk_analytics_runs"),
    Index("ix_analytics_runs_sweep_id_cell_id_worst_rank", "sweep_id", "cell_id", "worst_rank"),
)

# -- re-simulation questions (replaced per question) -------------------------------------------------
resim_questions = Table(
    "resim_questions", metadata,
    Column("id", String(40), nullable=False),
    Column("label", String(500), nullable=False),
    Column("question_json", Text, nullable=False),
    Column("engine_version", String(32), nullable=False),
    Column("runs", Integer, nullable=False),
    Column("broken", Integer, nullable=False),
    Column("broken_before", Integer, nullable=False),         # broken in the stored run already
    Column("exact", Integer, nullable=True),                  # replays whose history digest matched
    Column("errors", Integer, nullable=False),
    PrimaryKeyConstraint("id", name="pk_resim_questions"),
)

resim_results = Table(
    "resim_results", metadata,
    Column("question_id", String(40), nullable=False),
    Column("source", String(16), nullable=False),             # sweep, or the saved run's source
    Column("ref", String(40), nullable=False),                # run_key, or the saved run's id
    Column("sweep_id", String(40), nullable=True),
    Column("cell_id", Integer, nullable=True),
    Column("kafka_version", String(16), nullable=False),      # of the stored run
    Column("status", String(16), nullable=False),             # ok invalid error
    Column("broken", Boolean, nullable=False),
    Column("broken_before", Boolean, nullable=False),
    Column("lost", Integer, nullable=False),
    Column("violations", Integer, nullable=False),
    Column("digest_match", Boolean, nullable=True),           # None when the question changes the run
    Column("detail", Text, nullable=True),
    PrimaryKeyConstraint("question_id", "source", "ref", name="pk_resim_results"),
)

resim_groups = Table(
    "resim_groups", metadata,
    Column("question_id", String(40), nullable=False),
    Column("group_key", String(200), nullable=False),         # "sweep:<id>:<cell>" or "<source>:<era>"
    Column("runs", Integer, nullable=False),
    Column("broken", Integer, nullable=False),
    Column("broken_before", Integer, nullable=False),
    Column("p_broken", Float, nullable=True),
    Column("p_broken_lo", Float, nullable=True),
    Column("p_broken_hi", Float, nullable=True),
    PrimaryKeyConstraint("question_id", "group_key", name="pk_resim_groups"),
)

FACT_TABLES = (sweeps, sweep_cells, sweep_runs, sweep_events, sweep_latency)
RESULT_TABLES = (analytics_cells, analytics_invariants, analytics_distributions, analytics_runs)
RESIM_TABLES = (resim_questions, resim_results, resim_groups)
