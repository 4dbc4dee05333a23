from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cyclebench.store import Store, StoreError
from cyclebench.store.db import SCHEMA_VERSION


def test_old_database_gains_new_columns(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE meta (key VARCHAR(40) PRIMARY KEY, value VARCHAR(255));
        INSERT INTO meta VALUES ('schema_version', '1');
        CREATE TABLE runs (id INTEGER PRIMARY KEY, started_at VARCHAR(40) NOT NULL, status VARCHAR(20) NOT NULL);
        INSERT INTO runs (started_at, status) VALUES ('2026-01-01', 'complete');
        CREATE TABLE results (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, bench VARCHAR(255) NOT NULL,
            variant VARCHAR(255) NOT NULL, status VARCHAR(20) NOT NULL, created_at VARCHAR(40) NOT NULL,
            per_op FLOAT);
        INSERT INTO results (run_id, bench, variant, status, created_at, per_op)
            VALUES (1, 'x/y', '', 'ok', 'now', 3.5);
    """)
    con.commit()
    con.close()
    store = Store(f"sqlite:///{path}")
    rid = store.begin_run(status="running")
    store.add_result(rid, {"bench": "a/b", "status": "ok", "per_op": 1.0, "cycles_per_op": 2.0}, [(1, 2, 3, 0)])
    old = store.results(1)[0]
    assert old["per_op"] == 3.5 and old["cycles_per_op"] is None  # kept, new columns empty
    assert store.results(rid)[0]["cycles_per_op"] == 2.0
    assert store.samples(store.results(rid)[0]["id"]) == [(1, 2, 3, 0, None)]
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM meta").fetchone()[0] == str(SCHEMA_VERSION)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    Store(f"sqlite:///{path}")
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value = '999'")
    con.commit()
    with pytest.raises(StoreError, match="newer than this cyclebench"):
        Store(f"sqlite:///{path}")


def test_wal_and_results_survive_reopen(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'w.db'}"
    s = Store(url)
    rid = s.begin_run(status="running")
    s.add_result(rid, {"bench": "a/b", "status": "ok", "per_op": 1.0})
    with s.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    assert Store(url).results(rid)[0]["bench"] == "a/b"


def test_finishing_marks_interrupted_and_failed_runs_and_keeps_results(tmp_path: Path) -> None:
    s = Store(f"sqlite:///{tmp_path / 'f.db'}")
    for exc, status in ((KeyboardInterrupt, "interrupted"), (RuntimeError, "failed")):
        rid = s.begin_run(status="running")
        with pytest.raises(exc), s.finishing(rid):
            s.add_result(rid, {"bench": "a/b", "status": "ok", "per_op": 1.0})
            raise exc()
        assert s.get_run(rid)["status"] == status and len(s.results(rid)) == 1
    rid = s.begin_run(status="running")
    with s.finishing(rid):
        pass
    assert s.get_run(rid)["status"] == "running"  # a normal end is the caller's to mark
