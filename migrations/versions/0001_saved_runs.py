"""Saved runs: runs, their replication events and violations, seek indexes and snapshots.

Revision ID: 0001_saved_runs
Revises:
Create Date: 2025-11-22
"""
import sqlalchemy as sa
from alembic import op

revision = "0001_saved_runs"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("slug", sa.String(16), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("scenario_name", sa.String(200), nullable=False),
        sa.Column("kafka_version", sa.String(16), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("engine_version", sa.String(32), nullable=False),
        sa.Column("scenario_json", sa.Text(), nullable=False),
        sa.Column("scenario_sha256", sa.String(64), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("parent_run_id", sa.Integer(), nullable=True),
        sa.Column("fork_t_ms", sa.BigInteger(), nullable=True),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.Column("end_ms", sa.BigInteger(), nullable=False),
        sa.Column("duration_ms", sa.BigInteger(), nullable=False),
        sa.Column("finished", sa.Boolean(), nullable=False),
        sa.Column("brokers", sa.Integer(), nullable=False),
        sa.Column("partitions", sa.Integer(), nullable=False),
        sa.Column("records_total", sa.Integer(), nullable=False),
        sa.Column("acked_count", sa.Integer(), nullable=False),
        sa.Column("failed_count", sa.Integer(), nullable=False),
        sa.Column("lost_count", sa.Integer(), nullable=False),
        sa.Column("violations_count", sa.Integer(), nullable=False),
        sa.Column("events_count", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.ForeignKeyConstraint(["parent_run_id"], ["runs.id"], name="fk_runs_parent_run_id_runs",
                                ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
        sa.UniqueConstraint("slug", name="uq_runs_slug"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_runs_created_ms", "runs", ["created_ms"])
    op.create_index("ix_runs_outcome_created_ms", "runs", ["outcome", "created_ms"])
    op.create_index("ix_runs_kafka_version_created_ms", "runs", ["kafka_version", "created_ms"])
    op.create_index("ix_runs_scenario_name", "runs", ["scenario_name"])

    op.create_table(
        "run_events",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("t_ms", sa.BigInteger(), nullable=False),
        sa.Column("type", sa.String(40), nullable=False),
        sa.Column("topic", sa.String(255), nullable=True),
        sa.Column("partition", sa.Integer(), nullable=True),
        sa.Column("broker", sa.Integer(), nullable=True),
        sa.Column("details", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_run_events_run_id_runs",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "seq", name="pk_run_events"),
    )
    op.create_index("ix_run_events_run_id_t_ms", "run_events", ["run_id", "t_ms"])

    op.create_table(
        "run_violations",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("t_ms", sa.BigInteger(), nullable=False),
        sa.Column("invariant", sa.String(64), nullable=False),
        sa.Column("topic", sa.String(255), nullable=True),
        sa.Column("partition", sa.Integer(), nullable=True),
        sa.Column("details", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_run_violations_run_id_runs",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "seq", name="pk_run_violations"),
    )

    op.create_table(
        "seek_indexes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("engine_version", sa.String(32), nullable=False),
        sa.Column("format", sa.Integer(), nullable=False),
        sa.Column("snapshots", sa.Integer(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("built_ms", sa.BigInteger(), nullable=False),
        sa.Column("build_wall_ms", sa.Integer(), nullable=False),
        sa.Column("history_matches", sa.Boolean(), nullable=False),
        sa.Column("details", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_seek_indexes_run_id_runs",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_seek_indexes"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_seek_indexes_run_id_engine_version", "seek_indexes",
                    ["run_id", "engine_version"], unique=True)

    op.create_table(
        "run_snapshots",
        sa.Column("index_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("t_ms", sa.BigInteger(), nullable=False),
        sa.Column("history_len", sa.Integer(), nullable=False),
        sa.Column("pool", sa.LargeBinary(), nullable=False),
        sa.Column("state", sa.LargeBinary(), nullable=False),
        sa.Column("mac", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["index_id"], ["seek_indexes.id"],
                                name="fk_run_snapshots_index_id_seek_indexes", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("index_id", "seq", name="pk_run_snapshots"),
    )


def downgrade():
    op.drop_table("run_snapshots")
    op.drop_index("ix_seek_indexes_run_id_engine_version", table_name="seek_indexes")
    op.drop_table("seek_indexes")
    op.drop_table("run_violations")
    op.drop_index("ix_run_events_run_id_t_ms", table_name="run_events")
    op.drop_table("run_events")
    op.drop_index("ix_runs_scenario_name", table_name="runs")
    op.drop_index("ix_runs_kafka_version_created_ms", table_name="runs")
    op.drop_index("ix_runs_outcome_created_ms", table_name="runs")
    op.drop_index("ix_runs_created_ms", table_name="runs")
    op.drop_table("runs")
