"""fleet_jobs and fleet_hosts: the jobs `cyclebench fleet run` drove through Ansible and each
host's outcome in them, for `cyclebench fleet status` (docs/fleet.md; store/fleet.py).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "fleet_jobs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("started_at", sa.String(40), nullable=False),
        sa.Column("finished_at", sa.String(40)),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("inventory", sa.Text),
        sa.Column("command", sa.JSON),
        sa.Column("mode", sa.String(20)),
    )
    op.create_table(
        "fleet_hosts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("job_id", sa.Integer, sa.ForeignKey("fleet_jobs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("finished_at", sa.String(40)),
        sa.Column("check", sa.JSON),
        sa.Column("run_ids", sa.JSON),
        sa.Column("machine", sa.JSON),
    )
    op.create_index("ix_fleet_hosts_job_id", "fleet_hosts", ["job_id"])
    op.create_index("ix_fleet_hosts_host", "fleet_hosts", ["host"])


def downgrade() -> None:
    op.drop_index("ix_fleet_hosts_host", "fleet_hosts")
    op.drop_index("ix_fleet_hosts_job_id", "fleet_hosts")
    op.drop_table("fleet_hosts")
    op.drop_table("fleet_jobs")
