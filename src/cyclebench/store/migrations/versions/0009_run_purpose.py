"""runs.purpose: why a run was measured (model.PURPOSES: run, revision, variants, compare, fleet),
so that every reader of the past compares like with like (model.series_key): the runs a bisect
or `compare --rev` measured for each revision, a `variants` build, a fleet job are not points of a
benchmark's ordinary history. Runs stored before are given the purpose their command line and
labels tell (model.infer_purpose), a fleet job's runs (fleet_hosts.run_ids) ``fleet``.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

from cyclebench.model import FLEET, RUN, infer_purpose

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def _json(value: object) -> object:
    """A JSON column as read by a plain SELECT: text on SQLite, decoded on PostgreSQL; None when damaged."""
    if isinstance(value, (str, bytes)):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def upgrade() -> None:
    with op.batch_alter_table("runs") as b:
        b.add_column(sa.Column("purpose", sa.String(20)))
    conn = op.get_bind()
    fleet: set[int] = set()
    for (ids,) in conn.execute(sa.text("SELECT run_ids FROM fleet_hosts")):
        got = _json(ids)
        if isinstance(got, list):
            fleet.update(i for i in got if isinstance(i, int))
    by_purpose: dict[str, list[int]] = {}
    for rid, command, labels in conn.execute(sa.text("SELECT id, command, labels FROM runs")):
        purpose = infer_purpose(_json(command), _json(labels))  # type: ignore[arg-type]
        if purpose == RUN and rid in fleet:
            purpose = FLEET
        by_purpose.setdefault(purpose, []).append(int(rid))
    for purpose, ids in by_purpose.items():
        for i in range(0, len(ids), 500):
            conn.execute(sa.text("UPDATE runs SET purpose = :p WHERE id IN :ids")
                         .bindparams(sa.bindparam("ids", expanding=True)), {"p": purpose, "ids": ids[i:i + 500]})


def downgrade() -> None:
    with op.batch_alter_table("runs") as b:
        b.drop_column("purpose")
