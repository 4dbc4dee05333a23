"""results.kind (timing | simulated | scaling | stat | emulated), backfilled from unit/extra;
runs.host_id, runs.pid, runs.heartbeat_at (whether a 'running' run still runs: store/liveness.py).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

SCHEMA_VERSION = 3  # meta.schema_version: cyclebench before Alembic refuses a database newer than its 2


def kind_of(unit: str | None, extra: Any) -> str:
    """The kind of a stored row as cyclebench told them apart before the column existed
    (frozen copy: the store's own guess may learn new kinds, this one must not change)."""
    extra = extra if isinstance(extra, dict) else {}
    if extra.get("stat"):
        return "stat"  # `stat` rows (both backends)
    if unit == "emulated" or extra.get("emulated"):
        return "emulated"  # variants under qemu-user: verification only
    if unit == "ops/s" and "intervals_measured" in extra:
        return "scaling"  # commands/scale.is_scale_row
    if unit == "Ir" or extra.get("simulated"):
        return "simulated"  # callgrind
    return "timing"


def upgrade() -> None:
    with op.batch_alter_table("results") as b:
        b.add_column(sa.Column("kind", sa.String(20)))
    with op.batch_alter_table("runs") as b:
        b.add_column(sa.Column("host_id", sa.String(64)))
        b.add_column(sa.Column("pid", sa.Integer))
        b.add_column(sa.Column("heartbeat_at", sa.String(40)))

    conn = op.get_bind()
    results = sa.table("results", sa.column("id", sa.Integer), sa.column("unit", sa.String),
                       sa.column("extra", sa.JSON), sa.column("kind", sa.String))
    by_kind: dict[str, list[int]] = {}
    for rid, unit, extra in conn.execute(sa.select(results.c.id, results.c.unit, results.c.extra)):
        by_kind.setdefault(kind_of(unit, extra), []).append(rid)
    for kind, ids in by_kind.items():
        for i in range(0, len(ids), 500):
            conn.execute(sa.update(results).where(results.c.id.in_(ids[i:i + 500])).values(kind=kind))

    meta = sa.table("meta", sa.column("key", sa.String), sa.column("value", sa.String))
    conn.execute(sa.update(meta).where(meta.c.key == "schema_version").values(value=str(SCHEMA_VERSION)))


def downgrade() -> None:
    meta = sa.table("meta", sa.column("key", sa.String), sa.column("value", sa.String))
    op.get_bind().execute(sa.update(meta).where(meta.c.key == "schema_version").values(value="2"))
    with op.batch_alter_table("runs") as b:
        b.drop_column("heartbeat_at")
        b.drop_column("pid")
        b.drop_column("host_id")
    with op.batch_alter_table("results") as b:
        b.drop_column("kind")
