"""The schema of revision 0001, exactly as cyclebench c7ecbb2 created it (its SCHEMA_VERSION 2).

Frozen: revision 0001 creates these tables, and a database made before Alembic (schema
version 1 or 2 in ``meta``) is completed to them column by column before being stamped 0001.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    inspect,
    text,
)

SCHEMA_VERSION = 2  # the value c7ecbb2 wrote to meta.schema_version

metadata = MetaData()

Table(
    "runs", metadata,
    Column("id", Integer, primary_key=True),
    Column("started_at", String(40), nullable=False),
    Column("finished_at", String(40)),
    Column("status", String(20), nullable=False),
    Column("command", JSON),
    Column("host", String(255)),
    Column("cpu_model", String(255)),
    Column("cpu", Integer),
    Column("tool_version", String(40)),
    Column("code_rev", String(80)),
    Column("build", JSON),
    Column("calibration", JSON),
    Column("env", JSON),
    Column("summary", JSON),
)

Table(
    "results", metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("bench", String(255), nullable=False, index=True),
    Column("param", BigInteger),
    Column("variant", String(255), nullable=False),
    Column("status", String(20), nullable=False),
    Column("reason", Text),
    Column("unit", String(20)),
    *(Column(name, Float) for name in (
        "per_op", "ci_low", "ci_high", "intercept", "median", "median_ci_low", "median_ci_high", "min", "mad",
        "mean", "cv", "rcv", "confidence")),
    Column("method", String(20)),
    Column("rounds", Integer),
    *(Column(name, Float) for name in (
        "ns_per_op", "cycles_per_op", "cycles_ci_low", "cycles_ci_high", "cycles_min", "cycles_rcv", "core_ghz",
        "ratio_rcv", "chain_agreement")),
    Column("n_disturbed", Integer),
    Column("n_trimmed", Integer),
    *(Column(name, Float) for name in (
        "pmu_cycles_per_op", "pmu_ci_low", "pmu_ci_high", "pmu_agreement", "net_per_op", "net_ci_low",
        "net_ci_high", "cycles_net", "cycles_net_ci_low", "cycles_net_ci_high")),
    Column("n_samples", Integer),
    Column("outliers", Integer),
    Column("timer_overhead", Float),
    Column("wall_s", Float),
    Column("created_at", String(40), nullable=False),
    Column("extra", JSON),
)

Table(
    "samples", metadata,
    Column("result_id", Integer, ForeignKey("results.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("idx", Integer, nullable=False),
    Column("iters", BigInteger, nullable=False),
    Column("ticks", BigInteger, nullable=False),
    Column("cal", BigInteger),
    Column("disturbed", Integer),
    Column("pmu", BigInteger),
)

Table("meta", metadata, Column("key", String(40), primary_key=True), Column("value", String(255)))


def complete_legacy(conn: Any) -> list[str]:
    """Bring a pre-Alembic database (schema version 1 or 2) to revision 0001 in place: the
    columns it lacks are added (all nullable, as c7ecbb2's ``_add_missing_columns`` did), and
    missing tables/indexes created. Returns the columns added, as ``table.column``."""
    added = []
    insp = inspect(conn)
    have_tables = set(insp.get_table_names())
    for table in metadata.sorted_tables:
        if table.name not in have_tables:
            table.create(conn)
            continue
        have = {c["name"] for c in insp.get_columns(table.name)}
        for col in table.columns:
            if col.name not in have:
                ddl = col.type.compile(dialect=conn.dialect)
                conn.execute(text(f'ALTER TABLE {table.name} ADD COLUMN "{col.name}" {ddl}'))
                added.append(f"{table.name}.{col.name}")
        have_ix = {ix["name"] for ix in insp.get_indexes(table.name)}
        for ix in table.indexes:
            if ix.name not in have_ix:
                ix.create(conn)
    return added
