"""The schema under Alembic: databases made before it upgrade on open, a fresh one equals
the tables in db.py, and revision 0001 equals what c7ecbb2 created."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect

from cyclebench.store import Store, StoreError, migrate
from cyclebench.store.schema import metadata

from conftest import FIXTURES

C7ECBB2 = FIXTURES / "db" / "c7ecbb2.db"  # made by cyclebench c7ecbb2 (tests/fixtures/db/README.md)


def copy_fixture(tmp_path: Path) -> Path:
    path = tmp_path / "old.db"
    shutil.copy(C7ECBB2, path)
    return path


def reflect(path: Path) -> dict[str, Any]:
    """Tables → columns (name, type, nullable, pk), indexes and foreign keys, as SQLite has them."""
    eng = create_engine(f"sqlite:///{path}")
    insp = inspect(eng)
    out = {}
    for t in sorted(insp.get_table_names()):
        if t == "alembic_version":
            continue
        cols = [(c["name"], str(c["type"]), c["nullable"], c["primary_key"]) for c in insp.get_columns(t)]
        ix = sorted((i["name"], tuple(i["column_names"])) for i in insp.get_indexes(t))
        fks = sorted((tuple(f["constrained_columns"]), f["referred_table"], f["options"].get("ondelete"))
                     for f in insp.get_foreign_keys(t))
        out[t] = (cols, ix, fks)
    eng.dispose()
    return out


def test_known_revisions_are_the_scripts() -> None:
    script = ScriptDirectory(str(migrate.SCRIPTS))
    assert script.get_current_head() == migrate.HEAD
    chain = [s.revision for s in script.walk_revisions()][::-1]
    assert tuple(chain) == migrate.KNOWN and chain[0] == migrate.BASE


def test_fresh_database_equals_the_tables_in_db_py(tmp_path: Path) -> None:
    s = Store(f"sqlite:///{tmp_path / 'new.db'}")
    with s.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
        assert conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() == migrate.HEAD
        assert conn.exec_driver_sql("SELECT value FROM meta WHERE key = 'schema_version'").scalar() == "3"


def test_a_new_sqlite_database_is_what_the_migrations_make(tmp_path: Path) -> None:
    """An empty SQLite database is made from store/migrations/fresh_sqlite.sql, not by replaying the
    migrations: the same tables, columns, indexes, keys and rows as the migrations give."""
    assert migrate.fresh_sqlite_statements() is not None, (
        "store/migrations/fresh_sqlite.sql is not at revision HEAD: make it again with "
        '`python -c "from cyclebench.store import migrate; migrate.write_fresh_sqlite()"`')
    Store(f"sqlite:///{tmp_path / 'fresh.db'}")  # made with sqlite3 alone (migrate.make_fresh_sqlite)
    Store(f"sqlite:///{tmp_path / 'new' / 'dir' / 'fresh.db'}")  # a directory to make: SQLAlchemy's open
    eng = create_engine(f"sqlite:///{tmp_path / 'migrated.db'}")
    with eng.begin() as conn:
        command.upgrade(migrate._alembic_config(conn), "head")
    eng.dispose()
    for made in (tmp_path / "fresh.db", tmp_path / "new" / "dir" / "fresh.db"):
        assert reflect(made) == reflect(tmp_path / "migrated.db"), made

    def contents(path: Path) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
        con = sqlite3.connect(path)
        objects = con.execute("SELECT type, name, tbl_name FROM sqlite_master ORDER BY name").fetchall()
        rows = [*con.execute("SELECT * FROM alembic_version"), *con.execute("SELECT * FROM meta ORDER BY key")]
        con.close()
        return objects, rows

    for made in (tmp_path / "fresh.db", tmp_path / "new" / "dir" / "fresh.db"):
        assert contents(made) == contents(tmp_path / "migrated.db"), made


def test_a_new_sqlite_database_needs_no_alembic(tmp_path: Path) -> None:
    """Alembic and ten migration scripts were ~0.5 s of CPU in every process that made a database."""
    code = ("import sys; from cyclebench.store import Store; Store(sys.argv[1]); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))")
    r = subprocess.run([sys.executable, "-c", code, f"sqlite:///{tmp_path / 'new.db'}"], capture_output=True,
                       text=True, check=True)
    assert r.stdout.strip() == "[]", r.stdout


def test_a_fresh_file_of_another_revision_is_not_used(tmp_path: Path) -> None:
    stale = tmp_path / "fresh.sql"
    stale.write_text(migrate.FRESH_SQLITE.read_text().replace(f"-- revision {migrate.HEAD}", "-- revision 0009", 1))
    assert migrate.fresh_sqlite_statements(stale) is None
    assert migrate.fresh_sqlite_statements(tmp_path / "absent.sql") is None


def test_revision_0001_is_the_schema_c7ecbb2_created(tmp_path: Path) -> None:
    path = tmp_path / "r1.db"
    eng = create_engine(f"sqlite:///{path}")
    with eng.begin() as conn:
        command.upgrade(migrate._alembic_config(conn), "0001")
    eng.dispose()
    assert reflect(path) == reflect(C7ECBB2)


def test_c7ecbb2_database_upgrades_on_open_and_reads_back(tmp_path: Path) -> None:
    path = copy_fixture(tmp_path)
    before = sqlite3.connect(path)
    old_rows = before.execute("SELECT id, bench, per_op, extra FROM results ORDER BY id").fetchall()
    old_samples = before.execute("SELECT * FROM samples ORDER BY result_id, idx").fetchall()
    before.close()

    s = Store(f"sqlite:///{path}")
    with s.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() == migrate.HEAD
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    runs = {r["id"]: r for r in s.list_runs(None)}
    assert [r["command"][1] for r in runs.values()] == ["run", "variants", "scale", "run", "stat", "run"]
    assert runs[6]["status"] == "abandoned"  # left 'running' by a killed c7ecbb2, no heartbeat
    assert "S3cret" not in str(runs[6]["command"])  # stored before redaction: masked on read
    kinds = {r["bench"] + "|" + r["variant"] + "|" + str(r["run_id"]): r["kind"]
             for rid in runs for r in s.results(rid)}
    # 0009: each run's purpose, told from its command line and labels
    assert [r["purpose"] for r in runs.values()] == ["run", "variants", "run", "run", "run", "run"]
    assert kinds["timer/rdtsc||1"] == "timing" and kinds["loop/empty||1"] == "timing"
    assert kinds["timer/rdtsc||3"] == "simulated"  # callgrind, unit Ir
    assert kinds["stat:true/wall||2"] == "stat" and kinds["stat:true/page-faults||2"] == "stat"
    assert kinds["contend/padded|threads|4"] == "scaling"
    assert kinds["x/sum|aarch64 -O2|5"] == "emulated" and kinds["x/sum|-O2|5"] == "timing"
    new_rows = [(r["id"], r["bench"], r["per_op"]) for rid in sorted(runs) for r in s.results(rid)]
    assert new_rows == [(i, b, p) for i, b, p, _ in old_rows]
    assert (s.results(1)[1].line or {})["type"] == "result"
    got = [(r["id"], *smp) for rid in sorted(runs) for r in s.results(rid) for smp in s.samples(r["id"])]
    assert [(g[0], g[1], g[2]) for g in got] == [(rid, it, tk) for rid, _i, it, tk, *_ in old_samples]
    # 0004: the identity columns are backfilled from what the old runs kept (no boot id then)
    assert (runs[1]["kernel_release"], runs[1]["microcode"], runs[1]["compiler"], runs[1]["code_dirty"]) == (
        "6.18.44-fc-v657", "0x1", "cc (Debian 12.2.0-14+deb12u1) 12.2.0", False)
    assert runs[1]["kernel_version"] and runs[1]["boot_id"] is None
    assert runs[2]["kernel_release"] == "6.18.44-fc-v657" and runs[2]["compiler"] is None  # stat: nothing built
    assert all(runs[i][c] is None for i in (5, 6) for c in ("kernel_release", "microcode", "compiler", "code_dirty"))
    # and it goes on working: a new run next to the old ones
    rid = s.begin_run(command=["cyclebench", "run"])
    s.add_result(rid, {"bench": "a/b", "status": "ok", "per_op": 1.0}, [(1, 2, 3, 0, None)])
    assert rid == 7 and s.results(rid)[0]["kind"] == "timing"


def test_upgrade_is_done_once(tmp_path: Path) -> None:
    path = copy_fixture(tmp_path)
    Store(f"sqlite:///{path}")
    snapshot = reflect(path)
    s = Store(f"sqlite:///{path}", create=False)
    assert reflect(path) == snapshot and len(s.list_runs(None)) == 6


def test_schema_version_1_database_gains_new_columns(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE meta (key VARCHAR(40) PRIMARY KEY, value VARCHAR(255));
        INSERT INTO meta VALUES ('schema_version', '1');
        CREATE TABLE runs (id INTEGER PRIMARY KEY, started_at VARCHAR(40) NOT NULL, status VARCHAR(20) NOT NULL);
        INSERT INTO runs (started_at, status) VALUES ('2026-01-01', 'complete');
        CREATE TABLE results (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, bench VARCHAR(255) NOT NULL,
            variant VARCHAR(255) NOT NULL, status VARCHAR(20) NOT NULL, created_at VARCHAR(40) NOT NULL,
            per_op FLOAT, unit VARCHAR(20));
        INSERT INTO results (run_id, bench, variant, status, created_at, per_op, unit)
            VALUES (1, 'x/y', '', 'ok', 'now', 3.5, 'Ir');
    """)
    con.commit()
    con.close()
    store = Store(f"sqlite:///{path}")
    rid = store.begin_run(status="running")
    store.add_result(rid, {"bench": "a/b", "status": "ok", "per_op": 1.0, "cycles_per_op": 2.0}, [(1, 2, 3, 0)])
    old = store.results(1)[0]
    assert old["per_op"] == 3.5 and old["cycles_per_op"] is None and old["kind"] == "simulated"
    assert store.results(rid)[0]["cycles_per_op"] == 2.0
    assert store.samples(store.results(rid)[0]["id"]) == [(1, 2, 3, 0, None)]
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM meta").fetchone()[0] == "3"
    assert con.execute("SELECT version_num FROM alembic_version").fetchone()[0] == migrate.HEAD


@pytest.mark.parametrize(("sql", "match"), [
    ("UPDATE meta SET value = '999'", "has schema 999, newer than this cyclebench"),
    ("UPDATE alembic_version SET version_num = 'ffff'", "schema revision ffff, newer than this cyclebench"),
])
def test_newer_schema_is_refused(tmp_path: Path, sql: str, match: str) -> None:
    path = tmp_path / "new.db"
    Store(f"sqlite:///{path}")
    con = sqlite3.connect(path)
    if "meta" in sql:
        con.execute("DROP TABLE alembic_version")  # a pre-Alembic cyclebench of the future
    con.execute(sql)
    con.commit()
    con.close()
    with pytest.raises(StoreError, match=match):
        Store(f"sqlite:///{path}")


def test_c7ecbb2_refuses_an_upgraded_database(tmp_path: Path) -> None:
    """meta.schema_version moves to 3, so cyclebench before Alembic (which knew 2) refuses the
    database instead of altering it."""
    path = copy_fixture(tmp_path)
    Store(f"sqlite:///{path}")
    con = sqlite3.connect(path)
    assert int(con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]) > 2


def test_downgrade_to_0001_and_back_keeps_every_sample(tmp_path: Path) -> None:
    path = copy_fixture(tmp_path)
    Store(f"sqlite:///{path}").engine.dispose()
    eng = create_engine(f"sqlite:///{path}")
    n = sqlite3.connect(path).execute("SELECT count(*) FROM samples").fetchone()[0]
    with eng.begin() as conn:  # foreign_keys is off on this plain engine, as migrate keeps it
        command.downgrade(migrate._alembic_config(conn), "0001")
    eng.dispose()
    assert reflect(path) == reflect(C7ECBB2)
    s = Store(f"sqlite:///{path}")
    assert sqlite3.connect(path).execute("SELECT count(*) FROM samples").fetchone()[0] == n > 0
    assert s.results(2)[0]["kind"] == "stat" and s.results(3)[0]["kind"] == "simulated"


def test_model_result_names_every_column_of_the_results_table() -> None:
    """model.Result is the one typed record of a result row: it must not drift from the table.
    Its columns are its fields but ``extra``, which holds its typed parts (store.rows)."""
    from cyclebench.model import Result
    from cyclebench.store.rows import ADDED, MEASURED, READ
    from cyclebench.store.schema import results

    assert set(Result.__annotations__) == {c.name for c in results.columns} - {"extra"} | {*MEASURED, *ADDED, *READ}
