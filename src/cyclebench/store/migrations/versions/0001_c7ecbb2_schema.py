"""The schema as cyclebench c7ecbb2 created it (its SCHEMA_VERSION 2): runs, results, samples, meta.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from cyclebench.store.migrations import rev1

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    rev1.metadata.create_all(bind)
    meta = sa.table("meta", sa.column("key", sa.String), sa.column("value", sa.String))
    op.bulk_insert(meta, [{"key": "schema_version", "value": str(rev1.SCHEMA_VERSION)}])


def downgrade() -> None:
    rev1.metadata.drop_all(op.get_bind())
