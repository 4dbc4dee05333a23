"""predictions.coverage: the share of an op's executed instructions (callgrind's Ir) a prediction
prices — its loop's, or its blocks' where the op's code is priced block by block (docs/method.md
§12). NULL for the predictions stored before, and for one read statically (no counts).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("predictions") as b:
        b.add_column(sa.Column("coverage", sa.Float))


def downgrade() -> None:
    with op.batch_alter_table("predictions") as b:
        b.drop_column("coverage")
