"""runs.pid_start: when the measuring process started (field 22 of /proc/PID/stat, clock ticks
after boot; proc(5)), so that on its own host a run is 'running' exactly while that very
process lives — a pid alone may be reused, a heartbeat alone may pause (SIGSTOP, Ctrl-Z) longer
than its window. Runs stored before this revision keep NULL: for them a live pid is enough.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as b:
        b.add_column(sa.Column("pid_start", sa.BigInteger))


def downgrade() -> None:
    with op.batch_alter_table("runs") as b:
        b.drop_column("pid_start")
