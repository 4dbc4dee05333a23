"""The identity of a run as columns it can be filtered on (`cyclebench runs`): runs.kernel_release and
runs.kernel_version (uname -r / -v), runs.boot_id (/proc/sys/kernel/random/boot_id),
runs.microcode (/proc/cpuinfo), runs.compiler (first line of ``cc --version``) and
runs.code_dirty (the measured sources differ from runs.code_rev). Backfilled from what older
runs kept: the env JSON (kernel, cpu_info.microcode), build.cc_version, a code_rev ending in
"-dirty". No run before this revision recorded its boot id: those stay NULL.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

NEW = ("kernel_release", "kernel_version", "boot_id", "microcode", "compiler", "code_dirty")


def _text(value: Any, n: int) -> str | None:
    return value[:n] if isinstance(value, str) and value else None


def backfill(env: Any, build: Any, code_rev: Any) -> dict[str, Any]:
    """The new columns of a stored run, from its env and build JSON and its code_rev (frozen
    copy of env.identity.columns as of this revision)."""
    env = env if isinstance(env, dict) else {}
    kernel = env.get("kernel") if isinstance(env.get("kernel"), dict) else {}
    cpu = env.get("cpu_info") if isinstance(env.get("cpu_info"), dict) else {}
    build = build if isinstance(build, dict) else {}
    return {
        "kernel_release": _text(kernel.get("release"), 255),
        "kernel_version": _text(kernel.get("version"), 255),
        "boot_id": _text(env.get("boot_id"), 64),
        "microcode": _text(cpu.get("microcode"), 40),
        "compiler": _text(build.get("cc_version"), 255),
        "code_dirty": code_rev.endswith("-dirty") if isinstance(code_rev, str) and code_rev else None,
    }


def upgrade() -> None:
    with op.batch_alter_table("runs") as b:
        b.add_column(sa.Column("kernel_release", sa.String(255)))
        b.add_column(sa.Column("kernel_version", sa.String(255)))
        b.add_column(sa.Column("boot_id", sa.String(64)))
        b.add_column(sa.Column("microcode", sa.String(40)))
        b.add_column(sa.Column("compiler", sa.String(255)))
        b.add_column(sa.Column("code_dirty", sa.Boolean))

    conn = op.get_bind()
    runs = sa.table("runs", sa.column("id", sa.Integer), sa.column("env", sa.JSON), sa.column("build", sa.JSON),
                    sa.column("code_rev", sa.String), *(sa.column(c) for c in NEW[:-1]),
                    sa.column("code_dirty", sa.Boolean))
    for rid, env, build, code_rev in conn.execute(sa.select(runs.c.id, runs.c.env, runs.c.build, runs.c.code_rev)):
        values = {k: v for k, v in backfill(env, build, code_rev).items() if v is not None}
        if values:
            conn.execute(sa.update(runs).where(runs.c.id == rid).values(**values))


def downgrade() -> None:
    with op.batch_alter_table("runs") as b:
        for name in reversed(NEW):
            b.drop_column(name)
