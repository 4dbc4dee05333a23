"""predictions: a static model's cycles for a result's hot loop (llvm-mca, OSACA; `--predict` and
`explain`, docs/method.md §12), one row per benchmark × parameter × variant × tool, deleted with
its run.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "predictions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("bench", sa.String(255), nullable=False),
        sa.Column("param", sa.BigInteger),
        sa.Column("variant", sa.String(255), nullable=False),
        sa.Column("tool", sa.String(20), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("tool_version", sa.String(40)),
        sa.Column("mcpu", sa.String(40)),
        sa.Column("cpu_model", sa.String(255)),
        sa.Column("cycles_per_iter", sa.Float),
        sa.Column("trips_per_op", sa.Float),
        sa.Column("cycles_per_op", sa.Float),
        sa.Column("throughput", sa.Float),
        sa.Column("lcd", sa.Float),
        sa.Column("detail", sa.JSON),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_predictions_run_id", "predictions", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_predictions_run_id", table_name="predictions")
    op.drop_table("predictions")
