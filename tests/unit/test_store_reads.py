"""A read-only open of a SQLite file at the newest schema lists runs through the standard library's
sqlite3 (store/reads.py), without importing SQLAlchemy: the same records as SQLAlchemy's reading, for
every filter, over the lab fixture (every kind of run) with damaged, abandoned and odd rows added;
`cyclebench runs` never imports SQLAlchemy there; what reads.open_head refuses goes the old way."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cyclebench.store import Store, StoreError, columns, liveness, migrate, predictions, reads, urls

LAB_DB = Path(__file__).resolve().parents[1] / "data" / "lab" / "lab.db"


def _count(table: str) -> int:
    con = sqlite3.connect(f"file:{LAB_DB}?mode=ro", uri=True)
    try:
        return int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        con.close()


LAB_RUNS, LAB_RESULTS = _count("runs"), _count("results")  # the fixture's; `lab` below adds 4 runs
DAMAGED, ODD = LAB_RUNS + 1, LAB_RUNS + 4  # the first run it adds (damaged JSON, text, a password), the last


def _dead_pid() -> int:
    p = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                       check=True)
    return int(p.stdout)


def _add_run(con: sqlite3.Connection, **columns: object) -> int:
    """A copy of the lab's first run with ``columns`` written as given (SQLite keeps any value)."""
    names = [r[1] for r in con.execute("PRAGMA table_info(runs)") if r[1] != "id"]
    row = dict(zip(names, con.execute(f"SELECT {', '.join(names)} FROM runs WHERE id = 1").fetchone(), strict=True))
    row.update(columns)
    cur = con.execute(f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
    assert cur.lastrowid is not None
    return cur.lastrowid


@pytest.fixture
def lab(tmp_path: Path) -> str:
    """The lab fixture's database, and runs it does not hold: damaged JSON, a number column holding
    text, a JSON column holding a bare number, a boolean of 2, a command with a password, runs whose
    process is gone (on this host, and stale on another), one still running, labels of every shape."""
    path = tmp_path / "lab.db"
    shutil.copy(LAB_DB, path)
    con = sqlite3.connect(path)
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
    old = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=2)).isoformat(timespec="milliseconds")
    me = os.getpid()
    _add_run(con, env="{not json", summary=5, cpu="abc", code_dirty=2, labels='{"lab": "odd", "n": 1}',
             command=json.dumps(["cyclebench", "run", "--db", "postgresql://u:secret@h/db"]))
    _add_run(con, status="running", host_id=liveness.host_id(), pid=_dead_pid(), pid_start=None, heartbeat_at=now,
             started_at=now, finished_at=None, host="here")
    _add_run(con, status="running", host_id="elsewhere", pid=1, heartbeat_at=old, started_at=old, host="there",
             labels='{"lab": "plain", "k=v": "a, b"}')
    _add_run(con, status="running", host_id=liveness.host_id(), pid=me, pid_start=liveness.process_start(me),
             heartbeat_at=now, started_at=now, host="here", build="[1, 2]", calibration=2.5)
    con.commit()
    con.close()
    return f"sqlite:///{path}"


FILTERS: list[dict[str, object]] = [
    {}, {"limit": None}, {"limit": -1}, {"limit": 0}, {"limit": 3}, {"limit": 1000},
    {"host": "vm"}, {"host": "here", "limit": None}, {"host": "elsewhere"}, {"host": "nowhere"},
    {"since": dt.date(2026, 11, 27)}, {"since": dt.date(2026, 11, 28), "limit": None}, {"since": dt.date(2000, 1, 1)},
    {"labels": {"lab": "plain"}}, {"labels": {"build": "a"}, "limit": 2}, {"labels": {"n": "1"}},
    {"labels": {"lab": "plain", "k=v": "a, b"}}, {"labels": {"bisect": "e225e4b6", "step": "1"}},
    {"labels": {"lab": "nope"}},
    {"bench": "chain/*"}, {"bench": "chain"}, {"bench": "chain/add2??"}, {"bench": "alloc*", "limit": None},
    {"bench": "[!c]*"}, {"bench": "nothing*"},
    {"host": "vm", "since": dt.date(2026, 11, 27), "labels": {"build": "b"}, "bench": "chain", "limit": 2},
]


def _through_sqlalchemy(url: str) -> Store:
    """The same file opened through SQLAlchemy: a URL with a query, which open_head leaves to it."""
    store = Store(url + "?timeout=10")
    assert store._reads is None and store._engine is not None
    return store


def test_list_runs_reads_the_same_records_without_sqlalchemy(lab: str) -> None:
    light, full = Store(lab, create=False), _through_sqlalchemy(lab)
    assert light._reads is not None  # which reader each one is
    statuses = {r.status for r in full.list_runs(None)}
    assert {"complete", "abandoned", "running"} <= statuses
    damaged = {r.id: set(r.damaged) for r in full.list_runs(None) if r.damaged}
    # JSON that does not decode, text in a number's column, JSON of another shape (a bare number
    # where an object belongs, a list for the build)
    assert damaged == {DAMAGED: {"env", "cpu", "summary"}, ODD: {"build", "calibration"}}, damaged
    for filters in FILTERS:
        args = dict(filters)
        limit = args.pop("limit", 20)
        got = light.list_runs(limit, **args)  # type: ignore[arg-type]
        assert got == full.list_runs(limit, **args), filters  # type: ignore[arg-type]
        assert [r.damaged for r in got] == [r.damaged for r in full.list_runs(limit, **args)]  # type: ignore[arg-type]
    assert len(light.list_runs(None)) == LAB_RUNS + 4 and light.list_runs(0) == []
    assert light.url + "?timeout=10" == full.url and light.file == full.file


def test_runs_and_results_read_the_same_records_without_sqlalchemy(lab: str) -> None:
    """get_run, results and results_of (with the raw chains and without), last_run_id and a run's
    predictions through sqlite3, for a writer's open and a reader's, give SQLAlchemy's records:
    every run of the lab and its damaged and odd rows, every result of every kind, every prediction."""
    full = _through_sqlalchemy(lab)
    ids = [r["id"] for r in full.list_runs(None)]
    assert len(ids) == LAB_RUNS + 4
    for light in (Store(lab, create=False), Store(lab)):
        assert light._reads is not None and light._engine is None
        for rid in [*ids, 0, 10**6, 10**23]:
            assert light.get_run(rid) == full.get_run(rid), rid
        for raw in (True, False):
            got = light.results_of([*ids, 10**6], raw=raw)
            assert got == full.results_of([*ids, 10**6], raw=raw), raw
            assert sum(map(len, got.values())) == LAB_RESULTS and got[10**6] == []
        assert light.results(ids[-1]) == full.results(ids[-1]) and light.results_of([]) == {}
        assert light.last_run_id() == full.last_run_id() == max(ids)
        stored = [predictions.of_run(light, rid) for rid in ids]
        assert stored == [predictions.of_run(full, rid) for rid in ids] and sum(map(len, stored)) == 8
        assert light._engine is None  # read through sqlite3 alone


def test_a_damaged_label_column_is_the_same_error_either_way(lab: str) -> None:
    con = sqlite3.connect(lab.removeprefix("sqlite:///"))
    con.execute("UPDATE runs SET labels = '{broken' WHERE id = 2")
    con.commit()
    con.close()
    said = []
    for store in (Store(lab, create=False), _through_sqlalchemy(lab)):
        assert len(store.list_runs(None)) == LAB_RUNS + 4  # no label filter: damaged, not fatal
        with pytest.raises(StoreError) as e:
            store.list_runs(labels={"lab": "plain"})
        said.append(str(e.value))
    assert said[0] == said[1] == "database error: (sqlite3.OperationalError) malformed JSON"


def test_runs_imports_no_sqlalchemy_on_a_database_at_the_newest_schema(lab: str) -> None:
    """`runs`, with every filter, and `show` (the newest run, a run, a run with predictions) in a
    fresh interpreter: their rows printed, SQLAlchemy never imported. A stored ``--db`` URL with an
    ``@`` is masked by SQLAlchemy's URL parser (urls._mask): here a file's."""
    con = sqlite3.connect(lab.removeprefix("sqlite:///"))
    con.execute("""UPDATE runs SET command = '["cyclebench", "run", "--db", "sqlite:///r.db"]' WHERE id = ?""",
                (DAMAGED,))
    con.commit()
    con.close()
    code = ("import sys\nfrom cyclebench.cli import main\n"
            "try:\n    main(sys.argv[1:], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            "print('SQLALCHEMY' if 'sqlalchemy' in sys.modules else 'NONE')\n")
    env = {**os.environ, "CYCLEBENCH_DB": lab, "COLUMNS": "200"}
    for argv, shown in ((["runs", "-n", "100"], "abandoned"), (["runs", "--label", "lab=plain"], "there"),
                        (["runs", "--bench", "chain", "--host", "vm", "--since", "2026-11-27"], "build=b"),
                        (["show", "1"], "chain/add200"), (["show"], f"run #{ODD}"), (["show", "26"], "OSACA/meas")):
        p = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, timeout=120)
        assert p.returncode == 0, p.stderr
        assert shown in p.stdout, p.stdout
        assert p.stdout.rstrip().endswith("NONE"), argv


def test_what_open_head_refuses_sqlalchemy_opens_as_before(lab: str, tmp_path: Path) -> None:
    """Another URL form, a missing file, an older revision, a foreign file: no Reads, and Store's
    open (SQLAlchemy's) says what it always said."""
    path = Path(lab.removeprefix("sqlite:///"))
    assert reads.open_head(lab) is not None
    for other in (f"sqlite:///{path}?mode=ro", "sqlite://", "sqlite:///:memory:", "postgresql://u@h/db",
                  f"sqlite+pysqlite:///{path}", f"sqlite:///{tmp_path / 'missing.db'}"):
        assert reads.open_head(other) is None, other
    con = sqlite3.connect(path)
    con.execute("UPDATE alembic_version SET version_num = ?", (migrate.KNOWN[-2],))
    con.commit()
    con.close()
    assert reads.open_head(lab) is None  # an older revision: Store upgrades it (the next test)
    foreign = tmp_path / "foreign.db"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    assert reads.open_head(f"sqlite:///{foreign}") is None
    with pytest.raises(StoreError, match="is not a cyclebench database"):
        Store(f"sqlite:///{foreign}", create=False)


def test_an_older_database_opened_read_only_is_upgraded_then_read_without_sqlalchemy(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    s = Store(f"sqlite:///{path}")
    s.finish_run(s.begin_run(command=["x"], labels={"a": "b"}), "complete")
    s.close()
    con = sqlite3.connect(path)
    con.execute("ALTER TABLE predictions DROP COLUMN coverage")  # as migration 0009 left it
    con.execute("UPDATE alembic_version SET version_num = '0009'")
    con.commit()
    con.close()
    url = f"sqlite:///{path}"
    assert reads.open_head(url) is None
    upgraded = Store(url, create=False)
    assert upgraded._reads is None and [r.labels for r in upgraded.list_runs()] == [{"a": "b"}]
    assert reads.open_head(url) is not None


@pytest.mark.parametrize("path", ["/tmp/plain.db", "relative.db", "/tmp/a b+c/é#x.db", "//tmp/x.db", "~/x.db"])
def test_plain_sqlite_urls_read_as_sqlalchemy_reads_them(path: str) -> None:
    raw = f"sqlite:///{path}"
    parsed = urls.parse(raw)
    assert urls.plain_sqlite(raw) == (urls.sqlite_path(parsed), urls.display(raw))


def test_the_newest_schema_as_names_is_store_schema() -> None:
    """store/columns.py says store/schema.py's tables without SQLAlchemy: every table, its columns
    in order, and the columns of each type the standard library's readers and writers convert."""
    from sqlalchemy import JSON, Boolean, Float, Integer

    from cyclebench.store.schema import PREDICTION_FIELDS, RESULT_FIELDS, RUN_FIELDS, metadata

    assert list(columns.HEAD_COLUMNS.items()) == [(t.name, tuple(c.name for c in t.columns))
                                                  for t in metadata.sorted_tables]
    for t in metadata.sorted_tables:
        for kind, named in ((Integer, columns.INTEGER), (Float, columns.FLOAT), (JSON, columns.JSON),
                            (Boolean, columns.BOOLEAN)):
            assert {c.name for c in t.columns if isinstance(c.type, kind)} == named[t.name], (t.name, kind)
    assert (columns.RUN_FIELDS, columns.RESULT_FIELDS, columns.PREDICTION_FIELDS) == (
        RUN_FIELDS, RESULT_FIELDS, PREDICTION_FIELDS)


def test_reading_leaves_no_file_beside_the_database(tmp_path: Path) -> None:
    """The WAL database read through sqlite3 alone keeps no -wal or -shm beside it once read, as
    SQLAlchemy's open did not (a site's directory holding the database was refused for them)."""
    path = tmp_path / "c.db"
    store = Store(f"sqlite:///{path}")
    store.finish_run(store.begin_run(command=["cyclebench", "run"], host="h"), "complete")
    store.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.db"]
    reader = Store(f"sqlite:///{path}", create=False)
    assert reader._reads is not None and len(reader.list_runs(None)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.db"]
