"""Sweeps and their analysis: sweeps, cells, runs, compact events, latency histograms; the
analysis results per cell; re-simulation questions and their results (app.sweeps.tables).

Revision ID: 0002_sweeps_analytics
Revises: 0001_saved_runs
Create Date: 2025-11-22
"""
import sqlalchemy as sa
from alembic import op

revision = "0002_sweeps_analytics"
down_revision = "0001_saved_runs"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "analytics_cells",
        sa.Column("sweep_id", sa.String(40), nullable=False),
        sa.Column("cell_id", sa.Integer(), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("runs_invalid", sa.Integer(), nullable=False),
        sa.Column("runs_error", sa.Integer(), nullable=False),
        sa.Column("runs_lost", sa.Integer(), nullable=False),
        sa.Column("p_loss", sa.Float(), nullable=True),
        sa.Column("p_loss_lo", sa.Float(), nullable=True),
        sa.Column("p_loss_hi", sa.Float(), nullable=True),
        sa.Column("lost_mean", sa.Float(), nullable=True),
        sa.Column("lost_max", sa.Integer(), nullable=True),
        sa.Column("runs_lost_acks_all", sa.Integer(), nullable=False),
        sa.Column("runs_violation", sa.Integer(), nullable=False),
        sa.Column("violations_mean", sa.Float(), nullable=True),
        sa.Column("offline_ms_mean", sa.Float(), nullable=True),
        sa.Column("offline_ms_max", sa.BigInteger(), nullable=True),
        sa.Column("offline_fraction", sa.Float(), nullable=True),
        sa.Column("under_min_isr_ms_mean", sa.Float(), nullable=True),
        sa.Column("under_min_isr_fraction", sa.Float(), nullable=True),
        sa.Column("ner_rate", sa.Float(), nullable=True),
        sa.Column("failed_rate", sa.Float(), nullable=True),
        sa.Column("isr_churn_mean", sa.Float(), nullable=True),
        sa.Column("detect_samples", sa.Integer(), nullable=False),
        sa.Column("detect_ms_p50", sa.Float(), nullable=True),
        sa.Column("detect_ms_p95", sa.Float(), nullable=True),
        sa.Column("failover_samples", sa.Integer(), nullable=False),
        sa.Column("failover_ms_p50", sa.Float(), nullable=True),
        sa.Column("failover_ms_p95", sa.Float(), nullable=True),
        sa.Column("latency_p50_ms", sa.Float(), nullable=True),
        sa.Column("latency_p95_ms", sa.Float(), nullable=True),
        sa.Column("latency_p99_ms", sa.Float(), nullable=True),
        sa.Column("latency_max_ms", sa.Integer(), nullable=True),
        sa.Column("nonconverged", sa.Integer(), nullable=False),
        sa.Column("worst_run_no", sa.BigInteger(), nullable=True),
        sa.Column("worst_run_key", sa.String(20), nullable=True),
        sa.PrimaryKeyConstraint("sweep_id", "cell_id", name="pk_analytics_cells"),
    )
    op.create_table(
        "analytics_distributions",
        sa.Column("sweep_id", sa.String(40), nullable=False),
        sa.Column("cell_id", sa.Integer(), nullable=False),
        sa.Column("metric", sa.String(32), nullable=False),
        sa.Column("bucket_ms", sa.BigInteger(), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("sweep_id", "cell_id", "metric", "bucket_ms", name="pk_analytics_distributions"),
    )
    op.create_table(
        "analytics_invariants",
        sa.Column("sweep_id", sa.String(40), nullable=False),
        sa.Column("cell_id", sa.Integer(), nullable=False),
        sa.Column("invariant", sa.String(64), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("occurrences", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("sweep_id", "cell_id", "invariant", name="pk_analytics_invariants"),
    )
    op.create_table(
        "analytics_runs",
        sa.Column("sweep_id", sa.String(40), nullable=False),
        sa.Column("run_no", sa.BigInteger(), nullable=False),
        sa.Column("run_key", sa.String(20), nullable=False),
        sa.Column("cell_id", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("lost", sa.Integer(), nullable=False),
        sa.Column("violations", sa.Integer(), nullable=False),
        sa.Column("offline_ms", sa.BigInteger(), nullable=False),
        sa.Column("under_min_isr_ms", sa.BigInteger(), nullable=False),
        sa.Column("isr_churn", sa.Integer(), nullable=False),
        sa.Column("ner_records", sa.Integer(), nullable=False),
        sa.Column("unclean_elections", sa.Integer(), nullable=False),
        sa.Column("converged", sa.Boolean(), nullable=False),
        sa.Column("worst_rank", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("sweep_id", "run_no", name="pk_analytics_runs"),
    )
    op.create_index("ix_analytics_runs_sweep_id_cell_id_worst_rank", "analytics_runs", ["sweep_id", "cell_id", "worst_rank"])
    op.create_table(
        "resim_groups",
        sa.Column("question_id", sa.String(40), nullable=False),
        sa.Column("group_key", sa.String(200), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("broken", sa.Integer(), nullable=False),
        sa.Column("broken_before", sa.Integer(), nullable=False),
        sa.Column("p_broken", sa.Float(), nullable=True),
        sa.Column("p_broken_lo", sa.Float(), nullable=True),
        sa.Column("p_broken_hi", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("question_id", "group_key", name="pk_resim_groups"),
    )
    op.create_table(
        "resim_questions",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("label", sa.String(500), nullable=False),
        sa.Column("question_json", sa.Text(), nullable=False),
        sa.Column("engine_version", sa.String(32), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("broken", sa.Integer(), nullable=False),
        sa.Column("broken_before", sa.Integer(), nullable=False),
        sa.Column("exact", sa.Integer(), nullable=True),
        sa.Column("errors", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_resim_questions"),
    )
    op.create_table(
        "resim_results",
        sa.Column("question_id", sa.String(40), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("ref", sa.String(40), nullable=False),
        sa.Column("sweep_id", sa.String(40), nullable=True),
        sa.Column("cell_id", sa.Integer(), nullable=True),
        sa.Column("kafka_version", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("broken", sa.Boolean(), nullable=False),
        sa.Column("broken_before", sa.Boolean(), nullable=False),
        sa.Column("lost", sa.Integer(), nullable=False),
        sa.Column("violations", sa.Integer(), nullable=False),
        sa.Column("digest_match", sa.Boolean(), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("question_id", "source", "ref", name="pk_resim_results"),
    )
    op.create_table(
        "sweeps",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("doc_json", sa.Text(), nullable=False),
        sa.Column("doc_sha256", sa.String(64), nullable=False),
        sa.Column("engine_version", sa.String(32), nullable=False),
        sa.Column("cells", sa.Integer(), nullable=False),
        sa.Column("runs_total", sa.BigInteger(), nullable=False),
        sa.Column("runs_done", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.Column("updated_ms", sa.BigInteger(), nullable=False),
        sa.Column("wall_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_sweeps"),
    )
    op.create_table(
        "sweep_cells",
        sa.Column("sweep_id", sa.String(40), nullable=False),
        sa.Column("cell_id", sa.Integer(), nullable=False),
        sa.Column("settings_json", sa.Text(), nullable=False),
        sa.Column("label", sa.String(1000), nullable=False),
        sa.Column("profile", sa.String(40), nullable=False),
        sa.Column("kafka_version", sa.String(16), nullable=False),
        sa.ForeignKeyConstraint(["sweep_id"], ["sweeps.id"], name="fk_sweep_cells_sweep_id_sweeps", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("sweep_id", "cell_id", name="pk_sweep_cells"),
    )
    op.create_table(
        "sweep_events",
        sa.Column("sweep_id", sa.String(40), nullable=False),
        sa.Column("run_no", sa.BigInteger(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("t_ms", sa.BigInteger(), nullable=False),
        sa.Column("type", sa.String(40), nullable=False),
        sa.Column("topic", sa.String(255), nullable=True),
        sa.Column("partition", sa.Integer(), nullable=True),
        sa.Column("broker", sa.Integer(), nullable=True),
        sa.Column("leader", sa.Integer(), nullable=True),
        sa.Column("leader_epoch", sa.Integer(), nullable=True),
        sa.Column("isr_size", sa.Integer(), nullable=True),
        sa.Column("min_isr", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(64), nullable=True),
        sa.Column("count", sa.Integer(), nullable=True),
        sa.Column("details", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["sweep_id"], ["sweeps.id"], name="fk_sweep_events_sweep_id_sweeps", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("sweep_id", "run_no", "seq", name="pk_sweep_events"),
    )
    op.create_table(
        "sweep_latency",
        sa.Column("sweep_id", sa.String(40), nullable=False),
        sa.Column("run_no", sa.BigInteger(), nullable=False),
        sa.Column("bucket_ms", sa.Integer(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["sweep_id"], ["sweeps.id"], name="fk_sweep_latency_sweep_id_sweeps", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("sweep_id", "run_no", "bucket_ms", name="pk_sweep_latency"),
    )
    op.create_table(
        "sweep_runs",
        sa.Column("run_key", sa.String(20), nullable=False),
        sa.Column("sweep_id", sa.String(40), nullable=False),
        sa.Column("run_no", sa.BigInteger(), nullable=False),
        sa.Column("cell_id", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("kafka_version", sa.String(16), nullable=False),
        sa.Column("engine_version", sa.String(32), nullable=False),
        sa.Column("scenario_json", sa.Text(), nullable=False),
        sa.Column("history_sha256", sa.String(64), nullable=True),
        sa.Column("history_len", sa.Integer(), nullable=False),
        sa.Column("sim_events", sa.BigInteger(), nullable=False),
        sa.Column("cpu_ms", sa.Integer(), nullable=False),
        sa.Column("end_ms", sa.BigInteger(), nullable=False),
        sa.Column("duration_ms", sa.BigInteger(), nullable=False),
        sa.Column("fault_start_ms", sa.BigInteger(), nullable=False),
        sa.Column("fault_end_ms", sa.BigInteger(), nullable=False),
        sa.Column("brokers", sa.Integer(), nullable=False),
        sa.Column("partitions", sa.Integer(), nullable=False),
        sa.Column("faults", sa.Integer(), nullable=False),
        sa.Column("records_sent", sa.Integer(), nullable=False),
        sa.Column("acked", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("failed_ner", sa.Integer(), nullable=False),
        sa.Column("pending", sa.Integer(), nullable=False),
        sa.Column("lost", sa.Integer(), nullable=False),
        sa.Column("lost_acks_all", sa.Integer(), nullable=False),
        sa.Column("violations", sa.Integer(), nullable=False),
        sa.Column("converged", sa.Boolean(), nullable=False),
        sa.Column("offline_end", sa.Integer(), nullable=False),
        sa.Column("under_replicated_end", sa.Integer(), nullable=False),
        sa.Column("brokers_down_end", sa.Integer(), nullable=False),
        sa.Column("latency_count", sa.Integer(), nullable=False),
        sa.Column("latency_sum_ms", sa.BigInteger(), nullable=False),
        sa.Column("latency_max_ms", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["sweep_id"], ["sweeps.id"], name="fk_sweep_runs_sweep_id_sweeps", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_key", name="pk_sweep_runs"),
        sa.UniqueConstraint("sweep_id", "run_no", name="uq_sweep_runs_sweep_id_run_no"),
    )
    op.create_index("ix_sweep_runs_sweep_id_cell_id", "sweep_runs", ["sweep_id", "cell_id"])


def downgrade():
    op.drop_index("ix_sweep_runs_sweep_id_cell_id", table_name="sweep_runs")
    op.drop_table("sweep_runs")
    op.drop_table("sweep_latency")
    op.drop_table("sweep_events")
    op.drop_table("sweep_cells")
    op.drop_table("sweeps")
    op.drop_table("resim_results")
    op.drop_table("resim_questions")
    op.drop_table("resim_groups")
    op.drop_index("ix_analytics_runs_sweep_id_cell_id_worst_rank", table_name="analytics_runs")
    op.drop_table("analytics_runs")
    op.drop_table("analytics_invariants")
    op.drop_table("analytics_distributions")
    op.drop_table("analytics_cells")
