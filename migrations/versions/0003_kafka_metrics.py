"""Kafka's own metrics as sweep outputs (docs/sweeps.md, docs/model.md §22.7): per cell of the
analysis, what the runs' ``kafka_metrics`` event rows say (the run facts need no new column: the
summary travels in ``sweep_events.details``). Nullable: a sweep analysed before, or whose runs
were stored before the metrics existed, has none.

Revision ID: 0003_kafka_metrics
Revises: 0002_sweeps_analytics
Create Date: 2025-11-28
"""
import sqlalchemy as sa
from alembic import op

revision = "0003_kafka_metrics"
down_revision = "0002_sweeps_analytics"
branch_labels = None
depends_on = None

COLUMNS = (
    ("km_runs", sa.Integer()),
    ("km_under_replicated_ms_mean", sa.Float()),
    ("km_under_min_isr_ms_mean", sa.Float()),
    ("km_offline_ms_mean", sa.Float()),
    ("km_offline_max", sa.Integer()),
    ("km_no_controller_ms_mean", sa.Float()),
    ("km_unclean_elections_mean", sa.Float()),
    ("km_max_lag_peak", sa.BigInteger()),
    ("km_record_errors_mean", sa.Float()),
    ("km_request_latency_peak_max", sa.Float()),
)


def upgrade():
    with op.batch_alter_table("analytics_cells") as batch:
        for name, type_ in COLUMNS:
            batch.add_column(sa.Column(name, type_, nullable=True))


def downgrade():
    with op.batch_alter_table("analytics_cells") as batch:
        for name, _type in reversed(COLUMNS):
            batch.drop_column(name)
