"""The store on a real PostgreSQL (a throwaway cluster, tests/pgcluster.py): migrations,
writing and reading runs, liveness across hosts, concurrent first use."""

from __future__ import annotations

import datetime as dt
import threading
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, text

from cyclebench.store import Store, StoreError, migrate
from cyclebench.store import runfile as rf
from cyclebench.store.db import now
from cyclebench.store.schema import metadata

from pgcluster import pg_cluster, pg_url  # noqa: F401  (fixtures)


def test_fresh_database_is_at_head_and_equals_db_py(pg_url: str) -> None:  # noqa: F811
    s = Store(pg_url)
    assert s.engine.dialect.name == "postgresql" and s.engine.dialect.driver == "psycopg"
    with s.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == migrate.HEAD
        assert conn.execute(text("SELECT value FROM meta")).scalar() == "3"
    s.close()


def test_write_and_read_a_run(pg_url: str) -> None:  # noqa: F811
    s = Store(pg_url)
    rid = s.begin_run(command=["cyclebench", "run", "--db", "postgresql://u:S3cret@h/d"], host="h",
                      env={"kernel": {"release": "6.1"}}, cpu=1)
    big = 2**62
    res = s.add_result(rid, {"bench": "a/b", "param": big, "status": "ok", "unit": "ref-cycles", "per_op": 1.5,
                             "extra": {"type": "result", "n": [1, 2]}}, [(1, 2, 3, 0, None), (2, big, None, 1, 7)])
    s.add_result(rid, {"bench": "c/d", "status": "ok", "unit": "Ir", "per_op": 10.0})
    s.finish_run(rid, "complete")
    run = s.get_run(rid)
    assert run["status"] == "complete" and run["env"] == {"kernel": {"release": "6.1"}}
    assert run["command"][-1] == "postgresql://u:***@h/d"
    rows = s.results(rid)
    assert [(r["bench"], r["kind"], r["param"]) for r in rows] == [("a/b", "timing", big), ("c/d", "simulated", None)]
    assert rows[0].line == {"type": "result", "n": [1, 2]} and rows[1].line is None
    assert s.samples(res) == [(1, 2, 3, 0, None), (2, big, None, 1, 7)]
    assert [r["id"] for r in s.list_runs(-1)] == [rid] and s.last_run_id() == rid
    # round trip through the run file, into the same database
    data = rf.run_to_dict(s, rid)
    rid2 = rf.import_run(s, data)
    again = rf.run_to_dict(s, rid2)
    again.pop("source"), data.pop("source")
    assert again == data
    s.close()


def _insert_running(s: Store, **kw: Any) -> int:
    return s.insert_run({"started_at": now(), "status": "running", **kw}, [])


def test_abandoned_runs_by_heartbeat_and_pid(pg_url: str) -> None:  # noqa: F811
    s = Store(pg_url)
    s.heartbeat_every = 0
    old = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=5)).isoformat()
    fresh_elsewhere = _insert_running(s, host_id="another-host", pid=999_999, heartbeat_at=now())
    stale_elsewhere = _insert_running(s, host_id="another-host", pid=1, heartbeat_at=old)
    dead_here = _insert_running(s, host_id=s.host_id, pid=999_999_9, heartbeat_at=now())
    mine = s.begin_run(command=["cyclebench", "run"])
    status = {r["id"]: r["status"] for r in s.list_runs(None)}
    assert status == {fresh_elsewhere: "running", stale_elsewhere: "abandoned", dead_here: "abandoned",
                      mine: "running"}
    assert sorted(s.reconcile()) == sorted([stale_elsewhere, dead_here])
    with s.engine.connect() as conn:
        stored = dict(conn.execute(text("SELECT id, status FROM runs")).all())
    assert stored == {fresh_elsewhere: "running", stale_elsewhere: "abandoned", dead_here: "abandoned",
                      mine: "running"}
    s.close()


def test_upgrade_from_revision_0001(pg_url: str) -> None:  # noqa: F811
    """A database at the c7ecbb2 schema (revision 0001) with its rows: upgraded on open,
    kinds (0002) and identity columns (0004) backfilled."""
    eng = create_engine(pg_url.replace("postgresql://", "postgresql+psycopg://"))
    with eng.begin() as conn:
        command.upgrade(migrate._alembic_config(conn), "0001")
        conn.execute(text("INSERT INTO runs (started_at, status, env, code_rev) VALUES ('2026-11-20T10:00:00+00:00', "
                          "'running', CAST(:env AS JSON), 'abc123-dirty')"),
                     {"env": '{"kernel": {"release": "6.1.0-18-amd64"}, "cpu_info": {"microcode": "0xa0011d1"}}'})
        for unit, extra in (("ref-cycles", '{"type": "result"}'), ("Ir", '{"simulated": true}'),
                            ("ms", '{"stat": true}'), ("ops/s", '{"intervals_measured": 4}'),
                            ("emulated", '{"emulated": true}')):
            conn.execute(text("INSERT INTO results (run_id, bench, variant, status, created_at, unit, extra) "
                              "VALUES (1, 'b', '', 'ok', 'now', :u, CAST(:e AS JSON))"), {"u": unit, "e": extra})
        conn.execute(text("INSERT INTO samples (result_id, idx, iters, ticks) VALUES (1, 0, 10, 20)"))
    eng.dispose()
    s = Store(pg_url)
    assert [r["kind"] for r in s.results(1)] == ["timing", "simulated", "stat", "scaling", "emulated"]
    assert s.samples(1) == [(10, 20, None, None, None)]
    run = s.get_run(1)
    assert run["status"] == "abandoned"  # no heartbeat, started days ago
    assert (run["kernel_release"], run["microcode"], run["code_dirty"], run["boot_id"]) == (  # 0004's backfill
        "6.1.0-18-amd64", "0xa0011d1", True, None)
    s.close()


def test_concurrent_first_use(pg_url: str) -> None:  # noqa: F811
    outcomes: list[str] = []
    barrier = threading.Barrier(4)

    def open_and_write() -> None:
        try:
            barrier.wait()
            s = Store(pg_url)
            rid = s.begin_run()
            s.add_result(rid, {"bench": "a", "status": "ok"})
            s.finish_run(rid, "complete")
            s.close()
            outcomes.append("ok")
        except Exception as e:
            outcomes.append(repr(e))

    threads = [threading.Thread(target=open_and_write) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes == ["ok"] * 4
    s = Store(pg_url, create=False)
    assert len(s.list_runs(None)) == 4
    s.close()


def test_refusals_and_read_only_open(pg_url: str, pg_cluster: Any) -> None:  # noqa: F811
    with pytest.raises(StoreError, match=r"^no cyclebench database at postgresql://postgres@/"):
        Store(pg_url, create=False)
    eng = create_engine(pg_url.replace("postgresql://", "postgresql+psycopg://"))
    with eng.begin() as conn:
        conn.execute(text("CREATE TABLE runs (id serial PRIMARY KEY, name text)"))
    with pytest.raises(StoreError, match="is not a cyclebench database \\(it has tables: runs\\)"):
        Store(pg_url)
    with eng.begin() as conn:
        conn.execute(text("DROP TABLE runs"))
        conn.execute(text("CREATE TABLE someone_elses (id int)"))  # other tables may share a PostgreSQL database
    eng.dispose()
    Store(pg_url).close()
    with pytest.raises(StoreError) as e:  # a password in the URL: never in the message
        Store(pg_cluster.url("no_such_db").replace("postgres@", "postgres:S3cretPW@"))
    assert "S3cretPW" not in str(e.value) and "postgres:***@" in str(e.value)
