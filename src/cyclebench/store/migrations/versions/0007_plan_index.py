"""results.plan_index: the place of a result's item in the plan `run` measured (0-based), so a
run's rows read back in the suite's order (model.suite_order, docs/exports.md "Order") although
`run --target-ci` stores a row when its last pass ends: rows that got extra passes are stored
last. Rows stored before this revision, and those of other commands, keep NULL: their order is
taken from their ids.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("results") as b:
        b.add_column(sa.Column("plan_index", sa.Integer))


def downgrade() -> None:
    with op.batch_alter_table("results") as b:
        b.drop_column("plan_index")
