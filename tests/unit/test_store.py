from __future__ import annotations

import datetime as dt
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cyclebench.store import Store, StoreError, guess_kind, liveness, redact_argv, run_status, urls

from pgcluster import pg_cluster, pg_url  # noqa: F401  (fixtures: the filters are checked on PostgreSQL too)


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def test_wal_and_results_survive_reopen(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "w.db")
    s = Store(url)
    rid = s.begin_run(status="running")
    s.add_result(rid, {"bench": "a/b", "status": "ok", "per_op": 1.0})
    with s.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    assert Store(url).results(rid)[0]["bench"] == "a/b"


def test_finishing_marks_interrupted_and_failed_runs_and_keeps_results(tmp_path: Path) -> None:
    s = Store(sqlite_url(tmp_path / "f.db"))
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


# ---------------------------------------------------------------- kinds
@pytest.mark.parametrize(("fields", "kind"), [
    ({"unit": "ref-cycles", "extra": {"type": "result"}}, "timing"),
    ({"unit": "ns"}, "timing"),
    ({"unit": "Ir", "extra": {"simulated": True, "backend": "callgrind"}}, "simulated"),
    ({"unit": "Ir", "extra": None}, "simulated"),  # a failed callgrind row: no extra
    ({"unit": "ops/s", "extra": {"intervals_measured": 10}}, "scaling"),
    ({"unit": "ms", "extra": {"stat": True, "backend": "timing"}}, "stat"),
    ({"unit": "Ir", "extra": {"stat": True, "backend": "callgrind", "simulated": True}}, "stat"),
    ({"unit": "emulated", "extra": {"emulated": True, "verified": True}}, "emulated"),
])
def test_guess_kind(fields: dict, kind: str) -> None:
    assert guess_kind(fields) == kind


def test_add_result_stores_kind_given_or_guessed(tmp_path: Path) -> None:
    s = Store(sqlite_url(tmp_path / "k.db"))
    rid = s.begin_run()
    s.add_result(rid, {"bench": "a", "status": "ok", "unit": "Ir"})
    s.add_result(rid, {"bench": "b", "status": "ok", "unit": "ops/s", "kind": "scaling"})
    assert [r["kind"] for r in s.results(rid)] == ["simulated", "scaling"]
    with pytest.raises(StoreError, match="unknown result kind 'nope'"):
        s.add_result(rid, {"bench": "c", "status": "ok", "kind": "nope"})


# ---------------------------------------------------------------- foreign files, read-only opens
def test_foreign_sqlite_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE runs (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO runs (name) VALUES ('x');")
    con.commit()
    con.close()
    before = path.read_bytes()
    for create in (True, False):
        with pytest.raises(StoreError) as e:
            Store(sqlite_url(path), create=create)
        msg = str(e.value)
        assert "\n" not in msg and f"{path} is not a cyclebench database (it has tables: runs)" in msg
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]  # no -wal, no -shm


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite:///file::memory:?uri=true",
                                 "sqlite:///file:x?mode=memory&uri=true"])
def test_a_database_in_memory_is_refused_for_storing(url: str) -> None:
    """What a command stores there would vanish when it exits."""
    with pytest.raises(StoreError, match=r"is a database in memory: what is stored would vanish at exit"):
        Store(url)
    with pytest.raises(StoreError, match="no cyclebench database at"):
        Store(url, create=False)


def test_a_path_that_is_not_a_regular_file_is_refused_untouched(tmp_path: Path) -> None:
    """--db /dev/null made SQLite write /dev/null-journal; a FIFO would block its first read."""
    fifo = tmp_path / "fifo.db"
    os.mkfifo(fifo)
    journal = Path("/dev/null-journal")
    had_journal = journal.exists()
    for path in (Path("/dev/null"), fifo):
        for create in (True, False):
            with pytest.raises(StoreError, match=f"database sqlite:///{path}: {path} is not a regular file"):
                Store(sqlite_url(path), create=create)
    assert had_journal or not journal.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo.db"]


def _damaged(tmp_path: Path, sql: str) -> Path:
    path = tmp_path / "damaged.db"
    s = Store(sqlite_url(path))
    s.finish_run(s.begin_run(command=["x"]), "complete")
    s.close()
    con = sqlite3.connect(path)
    con.execute(sql)
    con.commit()
    con.close()
    return path


@pytest.mark.parametrize(("sql", "says"), [
    ("DROP TABLE samples", "is damaged: table samples is missing (schema revision 0010 has it)"),
    ("DROP TABLE fleet_hosts", "is damaged: table fleet_hosts is missing"),
    ("ALTER TABLE runs DROP COLUMN labels", "is damaged: column(s) runs.labels missing"),
    ("DROP TABLE alembic_version", "is damaged: it was made by cyclebench under Alembic but its alembic_version "
                                   "table is missing"),
])
def test_a_damaged_database_is_refused_on_open_untouched(tmp_path: Path, sql: str, says: str) -> None:
    path = _damaged(tmp_path, sql)
    before = path.read_bytes()
    for create in (True, False):
        with pytest.raises(StoreError) as e:
            Store(sqlite_url(path), create=create)
        assert says in str(e.value) and "\n" not in str(e.value)
    assert path.read_bytes() == before


def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some text, long enough to be read as a database header " * 3)
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"cannot open database .*: .*file is not a database"):
        Store(sqlite_url(path))
    assert path.read_bytes() == before


def test_create_false_creates_nothing_for_a_mistyped_path(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "results.db"
    with pytest.raises(StoreError, match=f"^no cyclebench database at {missing}$"):
        Store(sqlite_url(missing), create=False)
    assert not (tmp_path / "no").exists()
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(StoreError, match="no cyclebench database at"):
        Store(sqlite_url(empty), create=False)
    assert empty.read_bytes() == b""
    url = sqlite_url(tmp_path / "real.db")
    rid = Store(url).begin_run(status="complete")
    assert Store(url, create=False).get_run(rid)["status"] == "complete"


# ---------------------------------------------------------------- URLs and passwords
def test_unsupported_dialects_are_refused_in_one_line() -> None:
    for url, name in (("mysql://u:secret@h/db", "mysql"), ("oracle+cx_oracle://u:secret@h/db", "oracle"),
                      ("mssql+pyodbc://u:secret@dsn", "mssql")):
        with pytest.raises(StoreError) as e:
            Store(url)
        msg = str(e.value)
        assert f"unsupported database '{name}'" in msg and "secret" not in msg and "\n" not in msg
    with pytest.raises(StoreError, match="not a database URL") as e:
        Store("this is not a url://u:secret@")
    assert "secret" not in str(e.value)


def test_postgresql_without_psycopg_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for mod in ("psycopg", "psycopg.pq", "psycopg_binary"):
        monkeypatch.setitem(sys.modules, mod, None)  # import fails as if not installed
    with pytest.raises(StoreError) as e:
        Store("postgresql://bench:S3cretPW@localhost:1/cb")
    msg = str(e.value)
    assert "pip install 'cyclebench[postgres]'" in msg and "S3cretPW" not in msg and "\n" not in msg


def test_password_is_never_shown() -> None:
    assert urls.display("postgresql://bench:S3cretPW@db.example/cb") == "postgresql://bench:***@db.example/cb"
    # a server that cannot be reached: the error names the URL, without its password
    pytest.importorskip("psycopg", reason="psycopg not installed (pip install 'cyclebench[postgres]')")
    with pytest.raises(StoreError) as e:
        Store("postgresql://bench:S3cretPW@127.0.0.1:1/cb?connect_timeout=2")
    assert "S3cretPW" not in str(e.value) and "bench:***@127.0.0.1:1" in str(e.value)


def test_redact_argv() -> None:
    argv = ["cyclebench", "run", "--db", "postgresql://u:pw@h/db", "--db=postgresql+psycopg://u:p%40ss@h:5/d",
            "-b", "x", "--db", "sqlite:////tmp/x.db", "--note", "mysql://a:b@c/d", "--db", "plain.db"]
    assert redact_argv(argv) == [
        "cyclebench", "run", "--db", "postgresql://u:***@h/db", "--db=postgresql+psycopg://u:***@h:5/d",
        "-b", "x", "--db", "sqlite:////tmp/x.db", "--note", "mysql://a:***@c/d", "--db", "plain.db"]
    assert redact_argv(["--db"]) == ["--db"]


def test_begin_run_stores_the_command_without_password(tmp_path: Path) -> None:
    s = Store(sqlite_url(tmp_path / "p.db"))
    rid = s.begin_run(command=["cyclebench", "run", "--db", "postgresql://u:S3cret@h/db"])
    con = sqlite3.connect(tmp_path / "p.db")
    stored = con.execute("SELECT command FROM runs WHERE id = ?", (rid,)).fetchone()[0]
    assert "S3cret" not in stored and "postgresql://u:***@h/db" in stored


# ---------------------------------------------------------------- liveness: runs whose process died
NOW = dt.datetime(2026, 11, 23, 12, 0, 0, tzinfo=dt.timezone.utc)


def _run(**kw: object) -> dict:
    return {"status": "running", "started_at": "2026-11-23T11:00:00+00:00", "host_id": "me", "pid": 100,
            "heartbeat_at": (NOW - dt.timedelta(seconds=10)).isoformat(), **kw}


@pytest.mark.parametrize(("run", "alive", "expected"), [
    (_run(status="complete"), False, "complete"),  # only 'running' is ever reconsidered
    (_run(), True, "running"),  # fresh heartbeat, live pid
    (_run(), False, "abandoned"),  # this host, pid gone (or another process's now)
    (_run(heartbeat_at="2026-11-23T11:58:00+00:00"), True, "running"),  # this host: stopped (SIGSTOP), not dead
    (_run(heartbeat_at="2026-11-23T11:58:00+00:00"), False, "abandoned"),
    (_run(host_id="other"), False, "running"),  # other host: its pid means nothing, heartbeat fresh
    (_run(host_id="other", heartbeat_at="2026-11-23T11:58:00+00:00"), True, "abandoned"),
    (_run(host_id=None, pid=None, heartbeat_at=None, started_at="2026-11-23T11:59:30+00:00"), True, "running"),
    (_run(host_id=None, pid=None, heartbeat_at=None), True, "abandoned"),  # legacy row: started long ago
    (_run(heartbeat_at="garbage", started_at="garbage"), True, "running"),  # this host: the process answers
    (_run(host_id="other", heartbeat_at="garbage", started_at="garbage"), True, "abandoned"),
])
def test_run_status_is_a_pure_decision(run: dict, alive: bool, expected: str) -> None:
    assert run_status(run, now=NOW, host_id="me", pid_alive=lambda _pid, _start: alive) == expected


def test_run_status_asks_about_the_process_that_started_the_run() -> None:
    asked = []
    run_status(_run(pid_start=4242), now=NOW, host_id="me", pid_alive=lambda *a: asked.append(a) or True)
    run_status(_run(), now=NOW, host_id="me", pid_alive=lambda *a: asked.append(a) or True)  # before migration 0006
    assert asked == [(100, 4242), (100, None)]


def test_a_reused_pid_is_not_the_run_s_process() -> None:
    """proc(5): field 22 of /proc/PID/stat is the start time; a live pid with another start
    time is a later process given the same pid."""
    me, start = os.getpid(), liveness.process_start(os.getpid())
    assert isinstance(start, int) and start > 0
    assert liveness.pid_alive(me, start) and liveness.pid_alive(me)
    assert not liveness.pid_alive(me, start + 1)
    p = subprocess.Popen(["sleep", "30"])
    try:
        os.kill(p.pid, signal.SIGSTOP)  # stopped is alive
        assert liveness.pid_alive(p.pid, liveness.process_start(p.pid))
    finally:
        p.kill()
        p.wait()


def test_pid_alive() -> None:
    assert liveness.pid_alive(os.getpid())
    p = subprocess.Popen(["true"])
    p.wait()
    assert not liveness.pid_alive(p.pid)
    z = subprocess.Popen(["true"])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and liveness.pid_alive(z.pid):
        time.sleep(0.01)  # a zombie (not yet reaped) counts as gone
    assert not liveness.pid_alive(z.pid)
    z.wait()


def test_host_id_is_stable_and_hashed() -> None:
    a = liveness.host_id()
    assert a == liveness.host_id() and len(a) == 32
    machine = Path("/etc/machine-id")
    if machine.exists():
        assert machine.read_text().strip() not in a


def test_a_killed_run_reads_abandoned_and_reconcile_writes_it(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "killed.db")
    code = ("import os, sys; from cyclebench.store import Store; s = Store(sys.argv[1]); "
            "rid = s.begin_run(command=['cyclebench', 'run']); print(rid, flush=True); os.kill(os.getpid(), 9)")
    p = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert p.returncode == -9, p.stderr
    killed = int(p.stdout)
    s = Store(url)
    mine = s.begin_run(command=["cyclebench", "run"])
    assert s.get_run(killed)["status"] == "abandoned"  # same host, pid gone: at once
    assert {r["id"]: r["status"] for r in s.list_runs()} == {killed: "abandoned", mine: "running"}
    con = sqlite3.connect(tmp_path / "killed.db")
    assert con.execute("SELECT status FROM runs WHERE id = ?", (killed,)).fetchone()[0] == "running"  # read only
    assert s.reconcile() == [killed]
    row = con.execute("SELECT status, finished_at, heartbeat_at FROM runs WHERE id = ?", (killed,)).fetchone()
    assert row[0] == "abandoned" and row[1] == row[2]  # finished at its last sign of life
    assert s.reconcile() == [] and s.get_run(mine)["status"] == "running"


@pytest.mark.parametrize("existing", [False, True])
def test_heartbeat_thread_keeps_a_run_fresh_until_finished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           existing: bool) -> None:
    """On a database that already existed the run's writes go through store/writes.py's sqlite3
    connection, which refused the heartbeat's thread: the run never beat."""
    monkeypatch.setattr(Store, "heartbeat_every", 0.05)
    if existing:
        Store(sqlite_url(tmp_path / "hb.db")).close()
    s = Store(sqlite_url(tmp_path / "hb.db"))
    rid = s.begin_run()
    first = s.get_run(rid)["heartbeat_at"]
    deadline = time.monotonic() + 10
    while s.get_run(rid)["heartbeat_at"] == first and time.monotonic() < deadline:
        time.sleep(0.05)
    assert s.get_run(rid)["heartbeat_at"] > first
    s.finish_run(rid, "complete")
    time.sleep(0.2)
    last = s.get_run(rid)["heartbeat_at"]
    time.sleep(0.2)
    assert s.get_run(rid)["heartbeat_at"] == last and s.get_run(rid)["status"] == "complete"
    assert not s.heartbeat(rid)  # a finished run no longer beats


def test_stale_heartbeat_reads_abandoned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run elsewhere whose last sign of life is older than stale_after reads abandoned, and a
    heartbeat brings it back. Each read has a second's slack: with stale_after at 0.2 s all
    along, a phase-1 worker that stalled 0.2 s between the heartbeat and the next read failed it."""
    monkeypatch.setattr(Store, "heartbeat_every", 0)  # no thread: the run goes quiet
    monkeypatch.setattr(Store, "stale_after", 60.0)
    s = Store(sqlite_url(tmp_path / "st.db"))
    rid = s.begin_run(host_id="another host")  # on its own host only the process counts
    assert s.get_run(rid)["status"] == "running"
    time.sleep(1.5)
    monkeypatch.setattr(Store, "stale_after", 1.0)  # its start is 1.5 s old now
    assert s.get_run(rid)["status"] == "abandoned"
    assert s.heartbeat(rid)
    assert s.get_run(rid)["status"] == "running"  # the heartbeat's time counts, not the start's


def test_a_run_written_off_elsewhere_while_stopped_takes_its_status_back(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Another host reads only heartbeats: it writes off a run whose process was stopped longer
    than STALE_AFTER; the process, continued, beats again and the run is 'running' again."""
    monkeypatch.setattr(Store, "heartbeat_every", 0)
    s = Store(sqlite_url(tmp_path / "back.db"))
    rid = s.begin_run()
    with sqlite3.connect(tmp_path / "back.db") as con:  # what the other host's reconcile writes
        con.execute("UPDATE runs SET status = 'abandoned', finished_at = heartbeat_at WHERE id = ?", (rid,))
    assert s.get_run(rid)["status"] == "abandoned"
    assert s.heartbeat(rid)
    run = s.get_run(rid)
    assert run["status"] == "running" and run["finished_at"] is None


def test_list_runs_negative_limit_lists_all(tmp_path: Path) -> None:
    s = Store(sqlite_url(tmp_path / "l.db"))
    ids = [s.begin_run(status="complete") for _ in range(3)]
    assert [r["id"] for r in s.list_runs(-1)] == ids[::-1]
    assert [r["id"] for r in s.list_runs(2)] == ids[:0:-1]


def test_ids_and_values_beyond_64_bits(tmp_path: Path) -> None:
    s = Store(sqlite_url(tmp_path / "o.db"))
    assert s.get_run(10**23) is None
    rid = s.begin_run()
    with pytest.raises(StoreError, match="a value does not fit the database"):
        s.add_result(rid, {"bench": "copy/memcpy", "param": 10**23, "status": "ok"})
    assert s.results(rid) == []


# ---------------------------------------------------------------- filters and delete, on both backends
KEYS = ["a", "a.b", 'a"b', "a b", "a\\b", "ü", "$x", "[0]", "a'b"]  # label keys a JSON path would trip on


@pytest.fixture(params=["sqlite", "postgresql"])
def any_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "f.db")
    return str(request.getfixturevalue("pg_url"))


def test_list_runs_filters_in_sql(any_url: str) -> None:
    s = Store(any_url)
    s.heartbeat_every = 0
    ids = {}
    for i, k in enumerate(KEYS):
        ids[k] = s.insert_run({"started_at": f"2026-11-2{i}T10:00:00.000+00:00", "labels": {k: "v1", "n": str(i)},
                               "host": f"h{i % 2}", "host_id": f"id{i % 2}"},
                              [({"bench": f"g{i}/{k}", "status": "ok"}, []), ({"bench": "loop/empty", "status": "ok"},
                                                                              [])])
    none = s.insert_run({"started_at": "2026-10-01T00:00:00+00:00", "labels": None}, [])
    s.begin_run(labels=None)  # stored as JSON null, not SQL NULL
    for i, k in enumerate(KEYS):
        assert [r["id"] for r in s.list_runs(None, labels={k: "v1"})] == [ids[k]], k
        assert [r["id"] for r in s.list_runs(None, bench=f"g{i}/" + k.replace("[", "[[]"))] == [ids[k]], k
        assert [r["id"] for r in s.list_runs(None, bench=f"g{i}")] == [ids[k]], k  # a group name selects its group
    assert s.list_runs(None, labels={"a": "v2"}) == [] and s.list_runs(None, labels={"a": "v1", "n": "1"}) == []
    assert [r["id"] for r in s.list_runs(None, labels={"a": "v1", "n": "0"})] == [ids["a"]]
    assert len(s.list_runs(None, bench="loop/*")) == len(KEYS) and s.list_runs(None, bench="LOOP/*") == []
    assert [r["id"] for r in s.list_runs(None, bench="g[0-1]/*")] == [ids["a.b"], ids["a"]]
    since = {r["id"] for r in s.list_runs(None, since=dt.date(2026, 11, 25))}  # from 00:00 UTC that day on
    assert since & set(ids.values()) == {ids[k] for k in KEYS[5:]} and none not in since
    assert {r["host"] for r in s.list_runs(None, host="h1")} == {"h1"} and len(s.list_runs(None, host="id1")) == 4
    assert [r["id"] for r in s.list_runs(2, host="h0", since=dt.date(2026, 11, 21))] == [ids[KEYS[8]], ids[KEYS[6]]]
    assert none in [r["id"] for r in s.list_runs(None)]
    # delete: its results and samples go with it, all in one transaction; unknown ids are passed over
    rid = s.insert_run({"started_at": "2026-11-30T00:00:00+00:00"},
                       [({"bench": "x/y", "status": "ok"}, [(1, 2), (2, 4)])])
    kept = s.results(ids["a"])[0]["id"]
    assert s.delete_runs([rid, ids["a.b"], 10**6, 10**23]) == (2, 3, 2)
    assert s.get_run(rid) is None and s.results(rid) == [] and s.get_run(ids["a.b"]) is None
    assert s.results(ids["a"])[0]["id"] == kept and s.delete_runs([]) == (0, 0, 0)
    with s.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM samples").scalar() == 0
        orphans = "SELECT count(*) FROM results WHERE run_id NOT IN (SELECT id FROM runs)"
        assert conn.exec_driver_sql(orphans).scalar() == 0
    s.close()


def test_bench_regex_reads_globs_as_run_does() -> None:
    import fnmatch
    import re

    from cyclebench.store.db import bench_regex

    names = ["chain/add200", "chain/add400", "loop/empty", "a.b/c", "a[1]/x", "x/y+z", "chain", "chainx/add",
             "a\\b/c", "grp/é", "a-b/c_d", "a b/c", "(x)/|y|"]
    for pat in ["chain", "chain/*", "*/add?00", "chain/add[24]00", "chain/add[!2]00", "a.b", "a[1]/x", "a[[]1]/x",
                "x/y+z", "*", "chain/add[0-3]*", "a\\b/c", "grp/?", "a-b/c_d", "[", "a b", "[]]", "[!]]", "ch*n",
                "(x)/|y|", "^chain$"]:
        globs = [pat, f"{pat}/*"] if "/" not in pat else [pat]
        for name in names:
            assert bool(re.search(bench_regex(pat), name)) == any(fnmatch.fnmatchcase(name, g) for g in globs), (pat,
                                                                                                             name)


def test_results_of_several_runs_in_one_query(tmp_path: Path) -> None:
    s = Store(f"sqlite:///{tmp_path / 'r.db'}")
    a, b = (s.begin_run(command=["cyclebench"], host="h") for _ in range(2))
    s.add_result(a, {"bench": "x/a", "status": "ok", "per_op": 1.0})
    s.add_result(b, {"bench": "x/b", "status": "ok", "per_op": 2.0})
    s.add_result(b, {"bench": "x/c", "status": "ok", "per_op": 3.0})
    got = s.results_of([a, b, 999])
    assert [r["bench"] for r in got[a]] == ["x/a"] and [r["bench"] for r in got[b]] == ["x/b", "x/c"]
    assert got[999] == [] and s.results_of([]) == {}
    assert got[b] == s.results(b)
    s.close()
