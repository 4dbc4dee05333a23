"""A writing command's store on a SQLite file at the newest schema writes through the standard
library's sqlite3 (store/writes.py), without SQLAlchemy: every run, result and sample of the lab
fixture (every kind of run a lab accumulates) and a record of every kind with every part, written
both ways, are the same bytes of the same storage classes in every column; the heartbeat and the
sweep of dead runs change the same rows; a result whose run was deleted, a read-only file and a
busy database say what SQLAlchemy's path said."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.unit.test_result_parts import records

from cyclebench.store import RunGone, Store, columns, liveness

LAB_DB = Path(__file__).resolve().parents[1] / "data" / "lab" / "lab.db"


def _two_stores(tmp_path: Path) -> tuple[Store, Store]:
    """Two empty databases at the newest schema: one written through sqlite3, one through SQLAlchemy
    (a URL with a query, which store/reads.py leaves to SQLAlchemy)."""
    Store(f"sqlite:///{tmp_path / 'a.db'}").close()
    shutil.copy(tmp_path / "a.db", tmp_path / "b.db")
    lite, alchemy = Store(f"sqlite:///{tmp_path / 'a.db'}"), Store(f"sqlite:///{tmp_path / 'b.db'}?timeout=10")
    assert lite._writes is not None and alchemy._writes is None and alchemy._engine is not None
    return lite, alchemy


def _dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, each column as SQL text (quote) with its storage class (typeof)."""
    con = sqlite3.connect(path)
    try:
        out = {}
        for table, names in columns.HEAD_COLUMNS.items():
            cols = ", ".join(f'quote("{c}"), typeof("{c}")' for c in names)
            out[table] = con.execute(f"SELECT {cols} FROM {table} ORDER BY rowid").fetchall()
        return out
    finally:
        con.close()


def _lab() -> tuple[list[dict[str, Any]], dict[int, list[dict[str, Any]]], dict[int, list[tuple[Any, ...]]]]:
    """The lab fixture's runs, their results (``extra`` decoded) and each result's samples, as stored."""
    con = sqlite3.connect(LAB_DB)
    con.row_factory = sqlite3.Row
    try:
        runs = [dict(r) for r in con.execute("SELECT * FROM runs ORDER BY id")]
        results: dict[int, list[dict[str, Any]]] = {}
        for r in con.execute("SELECT * FROM results ORDER BY id"):
            results.setdefault(r["run_id"], []).append(dict(r))
        samples: dict[int, list[tuple[Any, ...]]] = {}
        query = "SELECT result_id, iters, ticks, cal, disturbed, pmu FROM samples ORDER BY result_id, idx"
        for s in con.execute(query):
            samples.setdefault(s[0], []).append(tuple(s)[1:])
        return runs, results, samples
    finally:
        con.close()


def _replay(store: Store) -> None:
    """The lab's runs written as commands write them (begin_run, results one at a time or many at
    once, update_run, the run's end), then a record of every kind with every part."""
    runs, results, samples = _lab()
    for run in runs:
        fields = {k: v for k, v in run.items() if k not in ("id", "status", "finished_at", "summary")}
        for k in columns.JSON["runs"] - {"summary"}:
            fields[k] = None if fields[k] is None else json.loads(fields[k])
        fields["group_id"] = None  # ids of the lab's own runs
        rid = store.begin_run(**fields)
        store._stop_heartbeats(rid)
        rows = []
        for r in results.get(run["id"], []):
            row = {k: v for k, v in r.items() if k not in ("id", "run_id")}
            row["extra"] = None if row["extra"] is None else json.loads(row["extra"])
            rows.append((row, samples.get(r["id"], [])))
        if rows and all(not s for _, s in rows) and len(rows) > 1:
            store.add_results(rid, [row for row, _ in rows])  # a profile's functions: one transaction
        else:
            for row, smp in rows:
                store.add_result(rid, row, smp)
        summary = None if run["summary"] is None else json.loads(run["summary"])
        store.update_run(rid, summary=summary, env=fields["env"], code_dirty=run["code_dirty"])
        store.update_run(rid, status=run["status"], finished_at=run["finished_at"])
    rid = store.begin_run(command=["cyclebench", "run", "--db", "postgresql://u:secret@h/db"], host="h",
                          started_at="2026-01-01T00:00:00.000+00:00", heartbeat_at=None, labels={"k=v": "a, b"},
                          code_dirty=False, env=None, calibration={"rate": float("nan")})
    store._stop_heartbeats(rid)
    for record in records():
        stored = store.record(rid, record, [(1000, 2500, 2400, 0, None), (2000, 5000)])
        assert stored.id is not None and stored.run_id == rid
    store.update_run(rid, summary=None, labels=None, code_dirty=None)


def test_every_kind_of_run_is_stored_as_sqlalchemy_stores_it(tmp_path: Path) -> None:
    lite, alchemy = _two_stores(tmp_path)
    for store in (lite, alchemy):
        _replay(store)
        store.close()
    a, b = _dump(tmp_path / "a.db"), _dump(tmp_path / "b.db")
    lab = sqlite3.connect(f"file:{LAB_DB}?mode=ro", uri=True)
    runs, results = (int(lab.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in ("runs", "results"))
    lab.close()
    assert len(a["runs"]) == runs + 1 and len(a["results"]) == results + len(records()) and len(a["samples"]) > 22000
    for table in a:
        assert a[table] == b[table], table
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.db", "b.db"]  # closed: no -wal, no -shm left


def test_the_heartbeat_and_the_sweep_change_the_same_rows(tmp_path: Path) -> None:
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout)
    lite, alchemy = _two_stores(tmp_path)
    t = "2026-01-01T00:00:00.000+00:00"
    for store in (lite, alchemy):
        mine = store.begin_run(command=["cyclebench", "run"], started_at=t, heartbeat_at=t)
        gone = store.begin_run(command=["cyclebench", "run"], started_at=t, heartbeat_at=t, pid=dead)
        other = store.begin_run(command=["cyclebench", "run"], started_at=t, heartbeat_at=None, host_id="elsewhere")
        done = store.begin_run(command=["cyclebench", "run"], started_at=t, heartbeat_at=t)
        store._stop_heartbeats()
        store.update_run(done, status="complete", finished_at=t)
        store.update_run(mine, status=liveness.ABANDONED)  # written off by another host while stopped
        assert store.heartbeat(mine) and not store.heartbeat(done)  # its own run comes back; a finished one does not
        assert store.reconcile() == [gone, other]
        assert store.heartbeat(gone) is False  # another process's, written off: stays so
        store.update_run(mine, heartbeat_at=t)  # the beat's time: the one column that differs
        store.close()
    assert _dump(tmp_path / "a.db") == _dump(tmp_path / "b.db")
    run = Store(f"sqlite:///{tmp_path / 'a.db'}", create=False).list_runs(None)
    assert [r["status"] for r in run] == ["complete", liveness.ABANDONED, liveness.ABANDONED, liveness.RUNNING]


# a read-only file opened to write, in a process without root's file capabilities (as the audit's
# harness runs one): each store's message, one a line
_READ_ONLY = """
import sys
from cyclebench.store import Store, StoreError
for url in sys.argv[1:]:
    try:
        Store(url).begin_run(command=["cyclebench", "run"])
        print("stored")
    except StoreError as e:
        print(e)
"""
_NO_DAC = ["setpriv", "--inh-caps=-dac_override,-dac_read_search,-fowner",
           "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]


def test_a_result_of_a_deleted_run_and_a_read_only_file_are_said_as_before(tmp_path: Path) -> None:
    lite, alchemy = _two_stores(tmp_path)
    for store in (lite, alchemy):
        rid = store.begin_run(command=["cyclebench", "run"])
        store._stop_heartbeats()
        assert store.file is not None
        with sqlite3.connect(store.file) as con:  # `delete --force` from another process
            con.execute("DELETE FROM runs WHERE id = ?", (rid,))
        with pytest.raises(RunGone, match=f"run #{rid} was deleted from"):
            store.add_result(rid, {"bench": "a", "status": "ok"}, [(1, 2)])
        with pytest.raises(RunGone):
            store.add_results(rid, [{"bench": "a", "status": "ok"}])
        store.close()
        store.file.chmod(0o444)
    wrap = _NO_DAC if os.geteuid() == 0 else []
    if wrap and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv (util-linux): a read-only file is writable to root")
    urls = [f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}?timeout=10"]
    p = subprocess.run([*wrap, sys.executable, "-c", _READ_ONLY, *urls], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    said = [line.replace(str(tmp_path), "T").replace("?timeout=10", "").replace("b.db", "a.db")
            for line in p.stdout.splitlines()]
    assert len(said) == 2 and said[0] == said[1] and "readonly database" in said[0], said
