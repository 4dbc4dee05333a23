"""Several processes opening the same database at once — a new one (schema created,
WAL set up) or an old one (upgraded) — all succeed, and the schema is made once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES

# Run in a fresh interpreter (no threads of other tests to inherit): forks `procs` workers per
# trial, released together by a barrier; each opens the database, writes a run and a result.
TRIALS = r"""
import json, multiprocessing as mp, shutil, sys

def worker(url, barrier, q):
    try:
        from cyclebench.store import Store
        barrier.wait()
        s = Store(url)
        rid = s.begin_run(command=["cyclebench", "run"])
        s.add_result(rid, {"bench": "a/b", "status": "ok", "per_op": 1.0}, [(1, 2), (2, 4)])
        s.finish_run(rid, "complete")
        q.put("ok")
    except BaseException as e:
        q.put(f"{type(e).__name__}: {e}")

if __name__ == "__main__":
    import cyclebench.store, alembic.command  # imported once, before forking
    root, template, trials, procs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    ctx = mp.get_context("fork")
    out = []
    for t in range(trials):
        path = f"{root}/t{t}.db"
        if template:
            shutil.copy(template, path)
        barrier, q = ctx.Barrier(procs), ctx.Queue()
        ps = [ctx.Process(target=worker, args=(f"sqlite:///{path}", barrier, q)) for _ in range(procs)]
        for p in ps:
            p.start()
        out.append([q.get(timeout=60) for _ in ps])
        for p in ps:
            p.join()
    print(json.dumps(out))
"""


def trials(tmp_path: Path, template: Path | None, n: int, procs: int = 4) -> list[list[str]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    p = subprocess.run([sys.executable, "-c", TRIALS, str(tmp_path), str(template or ""), str(n), str(procs)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def check_db(path: Path, runs: int) -> None:
    from cyclebench.store import Store

    s = Store(f"sqlite:///{path}", create=False)
    assert len([r for r in s.list_runs(None) if r["status"] == "complete"]) >= runs
    with s.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("SELECT count(*) FROM alembic_version").scalar() == 1
        assert conn.exec_driver_sql("SELECT count(*) FROM meta").scalar() == 1


def test_four_processes_create_a_new_database_at_once(tmp_path: Path) -> None:
    out = trials(tmp_path, None, 4)
    assert out == [["ok"] * 4] * 4
    for t in range(4):
        check_db(tmp_path / f"t{t}.db", 4)


def test_four_processes_upgrade_an_old_database_at_once(tmp_path: Path) -> None:
    template = tmp_path / "template.db"
    shutil.copy(FIXTURES / "db" / "c7ecbb2.db", template)
    out = trials(tmp_path, template, 2)
    assert out == [["ok"] * 4] * 2
    for t in range(2):
        check_db(tmp_path / f"t{t}.db", 5 + 4)
