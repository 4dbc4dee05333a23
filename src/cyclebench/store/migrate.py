"""Opening a database: recognise it, create or upgrade its schema (Alembic), safely under
concurrency.

A database is one of: *empty* (no tables), *cyclebench's* (a ``meta`` table holding
``schema_version``; an ``alembic_version`` table once Alembic manages it) or *foreign*
(anything else: it is refused untouched, never turned into a cyclebench database). A
cyclebench database made before Alembic (schema version 1 or 2) is completed to revision 0001
and stamped, then upgraded.

What "cyclebench's, at the newest revision, whole" means is decided here for both readers: SQLAlchemy's
(``prepare``) and the standard library's read-only one (store/reads.py), through ``state_of`` and
``damage``; this module imports SQLAlchemy only in the functions that take its connections.

Concurrency (several commands opening a new database at once): the common case (already at
``HEAD``) only reads. Anything that writes the schema runs in one transaction that first takes
the database's write lock — ``BEGIN IMMEDIATE`` on SQLite (after ``busy_timeout``, and after
switching to WAL, which cannot happen inside a transaction), ``pg_advisory_xact_lock`` on
PostgreSQL — then looks again: whoever comes second finds the work done.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cyclebench.store.columns import HEAD_COLUMNS

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

# the revisions in migrations/versions, oldest first (a test checks)
KNOWN = ("0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008", "0009", "0010")
HEAD = KNOWN[-1]
BASE = KNOWN[0]  # the revision of a database made before Alembic (c7ecbb2's schema)
OURS = ("runs", "results", "samples", "meta", "fleet_jobs", "fleet_hosts", "predictions")
SCRIPTS = Path(__file__).parent / "migrations"
_PG_LOCK = 0x6379_636C_6562  # "cycleb": the advisory lock key of schema changes
SQLITE_BUSY_MS = 10_000


LEGACY_TABLES = ("meta", "results", "runs", "samples")  # what cyclebench before Alembic (c7ecbb2) created
ALEMBIC_SCHEMA_VERSION = "3"  # meta.schema_version as revision 0002 on write it (0002_kind_and_liveness)


class SchemaError(Exception):
    """The database cannot be used as is: foreign, absent (create=False), newer or damaged."""


@dataclass(frozen=True)
class State:
    kind: str  # empty | foreign | legacy | alembic | damaged
    tables: tuple[str, ...] = ()
    revision: str | None = None  # alembic: its revision; legacy: meta.schema_version


def state(conn: Connection) -> State:
    """What the database at ``conn`` holds (reads only)."""
    from sqlalchemy import inspect, text

    return state_of(inspect(conn).get_table_names(), lambda sql: conn.execute(text(sql)).all())


def state_of(names: Iterable[str], query: Callable[[str], Sequence[Sequence[Any]]]) -> State:
    """What a database holds, from its table names and ``query`` (an SQL text → its rows), which
    reads its ``meta`` and ``alembic_version`` tables when it has them: whatever the driver."""
    tables = tuple(sorted(t for t in names if not t.startswith("sqlite_")))
    if not tables:
        return State("empty")
    version = None
    if "meta" in tables:
        found = query("SELECT value FROM meta WHERE key = 'schema_version'")
        version = None if not found else str(found[0][0])
    if version is None:
        return State("foreign", tables)
    if "alembic_version" in tables:
        rows = query("SELECT version_num FROM alembic_version")
        if len(rows) == 1:
            return State("alembic", tables, str(rows[0][0]))
        return State("foreign", tables)
    if version == ALEMBIC_SCHEMA_VERSION or (version == "2" and set(tables) - set(LEGACY_TABLES)):
        return State("damaged", tables, version)  # made under Alembic, its alembic_version table gone
    return State("legacy", tables, version)


def _alembic_config(conn: Connection) -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(SCRIPTS))
    cfg.attributes["connection"] = conn
    return cfg


def _check(st: State, *, create: bool, where: str, dialect: str) -> None:
    """Raise SchemaError when the database must not be used or touched."""
    if st.kind == "foreign":
        clash = [t for t in st.tables if t in OURS]
        if dialect == "sqlite" or clash:
            shown = ", ".join(st.tables[:6]) + (", …" if len(st.tables) > 6 else "")
            raise SchemaError(f"{where} is not a cyclebench database (it has tables: {shown}); "
                              "refusing to touch it")
    if st.kind == "damaged":
        raise SchemaError(f"database {where} is damaged: it was made by cyclebench under Alembic but its "
                          "alembic_version table is missing, so its schema revision is unknown; refusing to touch it")
    if st.kind in ("empty", "foreign") and not create:
        raise SchemaError(f"no cyclebench database at {where}")
    if st.kind == "alembic" and st.revision not in KNOWN:
        raise SchemaError(f"database {where} has schema revision {st.revision}, newer than this cyclebench "
                          "(upgrade cyclebench)")
    if st.kind == "legacy":
        try:
            newer = int(st.revision or 0) > 2
        except ValueError:
            newer = True
        if newer:
            raise SchemaError(f"database {where} has schema {st.revision}, newer than this cyclebench")


# An empty SQLite database is made from this file: the statements a fresh database at HEAD holds
# (sqlite3's iterdump of one the migrations made; tests/unit/test_store_migrations.py holds the two
# equal). Replaying ten migrations cost ~0.5 s of CPU in every process that made a new database (a
# `run` into a new file: 1.2–1.4 s against 0.7 s into an existing one, on an AMD EPYC Zen 3 guest),
# Alembic's import included; these statements take milliseconds.
FRESH_SQLITE = SCRIPTS / "fresh_sqlite.sql"


def fresh_sqlite_statements(path: Path = FRESH_SQLITE) -> list[str] | None:
    """The statements of FRESH_SQLITE, or None when its first line names another revision than
    HEAD (a migration added and the file not made again: the migrations make the database)."""
    try:
        text = path.read_text()
    except OSError:
        return None
    head, _, body = text.partition("\n")
    if head != f"-- revision {HEAD}":
        return None
    out, buf = [], ""
    for line in body.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    return out


def make_fresh_sqlite(path: str) -> bool:
    """Make a new SQLite database at ``path`` from FRESH_SQLITE with the standard library alone
    (SQLAlchemy's import is ~0.2–0.4 s of CPU, and a new database needs nothing else of it), as
    ``_prepare_sqlite`` would: WAL, then in one ``BEGIN IMMEDIATE`` transaction look again and make
    the tables. True when the file then holds a database to open (made here, or by another process
    first); False when this cannot be done here — the file exists and is not empty, its directory
    is missing or not writable, FRESH_SQLITE is not at HEAD, SQLite refused — and the open through
    SQLAlchemy is left to make it, or to say what is wrong."""
    p = Path(path)
    try:  # an existing database (an older schema, a foreign one) is the common case here: no read of the file
        if p.exists() and (not p.is_file() or p.stat().st_size):
            return False
    except OSError:
        return False
    statements = fresh_sqlite_statements()
    if statements is None or not p.parent.is_dir() or not os.access(p.parent, os.W_OK | os.X_OK):
        return False
    try:
        con = sqlite3.connect(path, timeout=SQLITE_BUSY_MS / 1000, isolation_level=None)
    except (OSError, sqlite3.Error):
        return False
    try:
        _set_wal(con)
        con.execute("BEGIN IMMEDIATE")
        tables = [n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        if not tables:
            for statement in statements:
                con.execute(statement)
        con.execute("COMMIT")
        return True
    except sqlite3.Error:
        return False
    finally:
        con.close()  # an open transaction is rolled back: the file stays empty


def write_fresh_sqlite(path: Path = FRESH_SQLITE) -> None:
    """Make FRESH_SQLITE again from the migrations (after adding one):
    ``python -c "from cyclebench.store import migrate; migrate.write_fresh_sqlite()"``."""
    import tempfile

    from alembic import command
    from sqlalchemy import create_engine

    with tempfile.TemporaryDirectory() as d:
        eng = create_engine(f"sqlite:///{d}/fresh.db")
        with eng.begin() as conn:
            command.upgrade(_alembic_config(conn), "head")
        eng.dispose()
        con = sqlite3.connect(f"{d}/fresh.db")
        lines = [ln for ln in con.iterdump() if ln not in ("BEGIN TRANSACTION;", "COMMIT;")]
        con.close()
    path.write_text(f"-- revision {HEAD}\n" + "\n".join(lines) + "\n")


def _upgrade(conn: Connection, st: State) -> None:
    """Inside the locked transaction: an empty SQLite database gets FRESH_SQLITE's statements;
    otherwise stamp a pre-Alembic database, then upgrade to HEAD."""
    if st.kind == "empty" and conn.dialect.name == "sqlite" and (fresh := fresh_sqlite_statements()) is not None:
        for statement in fresh:
            conn.exec_driver_sql(statement)
        return
    from alembic import command

    from cyclebench.store.migrations import rev1

    cfg = _alembic_config(conn)
    if st.kind == "legacy":
        rev1.complete_legacy(conn)
        command.stamp(cfg, BASE)
    command.upgrade(cfg, "head")


def prepare(engine: Engine, *, create: bool, where: str) -> None:
    """Make the database behind ``engine`` usable at HEAD, or raise SchemaError. ``where``
    names it in messages (its URL without password)."""
    dialect = engine.dialect.name
    with engine.connect() as conn:
        st = state(conn)
        conn.rollback()
    _check(st, create=create, where=where, dialect=dialect)
    if at_head(st):
        with engine.connect() as conn:
            _verify(conn, where)
            conn.rollback()
        return
    if dialect == "sqlite":
        _prepare_sqlite(engine, create=create, where=where)
    else:
        with engine.connect() as conn, conn.begin():
            if dialect == "postgresql":
                from sqlalchemy import text

                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK})
            st = state(conn)
            _check(st, create=create, where=where, dialect=dialect)
            if not at_head(st):
                _upgrade(conn, st)


def at_head(st: State) -> bool:
    """Whether a database is cyclebench's at the newest revision: used as it is (once ``damage``
    finds nothing), nothing to upgrade."""
    return st.kind == "alembic" and st.revision == HEAD


def damage(where: str, columns: Callable[[str], Collection[str] | None]) -> str | None:
    """What keeps a database at HEAD from being used (the message), or None: a table or column of
    the newest schema (HEAD_COLUMNS, the fleet's tables included) it lacks. ``columns(table)``:
    the table's column names, None when there is no such table."""
    for table, wanted in HEAD_COLUMNS.items():
        have = columns(table)
        if have is None:
            return (f"database {where} is damaged: table {table} is missing (schema revision {HEAD} has it); "
                    "refusing to use it")
        gone = [c for c in wanted if c not in have]
        if gone:
            return (f"database {where} is damaged: column(s) {', '.join(f'{table}.{c}' for c in gone)} "
                    f"missing (schema revision {HEAD} has them); refusing to use it")
    return None


def _verify(conn: Connection, where: str) -> None:
    """Raise SchemaError unless every table and column of the newest schema is in the database
    (damage): one dropped by hand would otherwise surface only at the first write, after measuring
    ("no such table: samples")."""
    from sqlalchemy import inspect

    insp = inspect(conn)
    have = set(insp.get_table_names())
    problem = damage(where, lambda t: {c["name"] for c in insp.get_columns(t)} if t in have else None)
    if problem is not None:
        raise SchemaError(problem)


def _prepare_sqlite(engine: Engine, *, create: bool, where: str) -> None:
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        assert raw is not None
        _set_wal(raw)
        raw.execute("PRAGMA foreign_keys=OFF")  # a table rebuilt in batch mode must not cascade-delete samples
        try:
            with conn.execution_options(cyclebench_begin="IMMEDIATE").begin():
                st = state(conn)
                _check(st, create=create, where=where, dialect="sqlite")
                if not at_head(st):
                    _upgrade(conn, st)
        finally:
            raw.execute("PRAGMA foreign_keys=ON")


def _set_wal(raw: Any) -> None:
    """WAL journal (persistent in the file), so a reader never blocks the run writing it.
    Not possible inside a transaction; retried while another process holds the file."""
    deadline = time.monotonic() + SQLITE_BUSY_MS / 1000
    while True:
        try:
            mode = raw.execute("PRAGMA journal_mode=WAL").fetchone()
            if mode and str(mode[0]).lower() == "wal":
                return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) and "busy" not in str(e):
                raise
        if time.monotonic() > deadline:
            return  # keep the current journal: slower for readers, still correct
        time.sleep(0.02)
