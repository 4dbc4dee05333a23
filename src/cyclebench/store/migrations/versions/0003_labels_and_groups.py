"""runs.labels ({key: value} the user gave with --label) and runs.group_id (the first run of the
replicate runs one `run --runs N` made: compare takes the group as one side, and the spread
between its runs is the host's run-to-run spread for each benchmark; docs/method.md §7).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as b:
        b.add_column(sa.Column("labels", sa.JSON))
        b.add_column(sa.Column("group_id", sa.Integer))
        b.create_index("ix_runs_group_id", ["group_id"])


def downgrade() -> None:
    with op.batch_alter_table("runs") as b:
        b.drop_index("ix_runs_group_id")
        b.drop_column("group_id")
        b.drop_column("labels")
