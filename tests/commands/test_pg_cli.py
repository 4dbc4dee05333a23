"""PostgreSQL end to end through the CLI (docs/fleet.md "PostgreSQL for the lab"), on a throwaway cluster the tests
start themselves (tests/pgcluster.py): run → runs/show/compare/delete; four `run` processes
writing at once lose nothing; SQLite and PostgreSQL show the same text for the same run file;
a bad URL, an unreachable server and a missing driver are each one line and exit 2."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cyclebench.store import Store

from conftest import DATA, cli, cli_at, cli_subprocess
from pgcluster import pg_cluster, pg_own_cluster, pg_url  # noqa: F401  (fixtures)

CHAIN = [str(DATA / "chain.c"), "-b", "chain/add200", "--min-time", "0.01", "--repeat", "10"]


def _complete_with_every_result(store: Store, run: dict[str, Any]) -> None:
    """A run that lost nothing: complete, both benchmarks ok, every sample of each stored."""
    assert run["status"] == "complete", run
    rows = store.results(run["id"])
    assert sorted(r["bench"] for r in rows) == ["chain/add200", "loop/empty"]
    for r in rows:
        assert r["status"] == "ok" and r["per_op"] is not None, r
        kept = r["n_samples"] + (r["n_disturbed"] or 0) + (r["n_trimmed"] or 0)
        assert len(store.samples(r["id"])) == kept > 0


def test_run_then_runs_show_compare_and_delete_on_postgresql(pg_url: str) -> None:  # noqa: F811
    for side in ("a", "b"):
        r = cli("run", *CHAIN, "-q", "--label", f"side={side}", "--db", pg_url)
        assert r.exit_code == 0, r.output
    store = Store(pg_url, create=False)
    assert store.engine.dialect.name == "postgresql"
    first, second = sorted(r["id"] for r in store.list_runs(None))
    for run in store.list_runs(None):
        _complete_with_every_result(store, run)
        assert run["kernel_release"] == os.uname().release and run["boot_id"] and run["compiler"]

    r = cli("runs", "--db", pg_url)
    assert r.exit_code == 0 and "side=a" in r.output and "side=b" in r.output
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    r = cli("runs", "--db", pg_url, "--label", "side=b", "--bench", "chain", "--host", socket.gethostname(),
            "--since", today)
    listed = [ln.split()[0] for ln in r.output.splitlines() if ln.split()[:1] and ln.split()[0].isdigit()]
    assert r.exit_code == 0 and listed == [str(second)], r.output

    r = cli("show", str(second), "--db", pg_url)
    assert r.exit_code == 0 and "chain/add200" in r.output and "loop/empty" in r.output
    assert f"kernel {os.uname().release}" in r.output and "labels side=b" in r.output

    r = cli("compare", str(first), str(second), "--db", pg_url)
    assert r.exit_code == 0, r.output
    assert "chain/add200" in r.output and "side=a" in r.output  # labels name the sides

    r = cli("delete", "--yes", str(first), "--db", pg_url)
    assert r.exit_code == 0 and "deleted 1 run(s), 2 result(s)" in r.output
    assert [x["id"] for x in store.list_runs(None)] == [second] and store.results(first) == []
    store.close()


def test_four_run_processes_writing_at_once_lose_nothing(pg_url: str) -> None:  # noqa: F811
    assert cli("run", *CHAIN, "--list").exit_code == 0  # built once: the four only measure and store
    procs = [cli_subprocess("run", *CHAIN, "-q", "--label", f"writer={i}", "--db", pg_url) for i in range(4)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_, stderr) in zip(procs, outs, strict=True):
        assert p.returncode == 0, stderr
    store = Store(pg_url, create=False)
    runs = store.list_runs(None)
    assert sorted(r["labels"]["writer"] for r in runs) == ["0", "1", "2", "3"]
    for run in runs:
        _complete_with_every_result(store, run)
    store.close()


def _show_text(url: str, rid: int) -> str:
    """`show RID` as a user reads it (stdout and stderr), at a fixed width: in this process as
    one of its own prints it (conftest.cli_at), ~0.5 s of CPU less a show."""
    r = cli_at(160, "show", str(rid), "--db", url)
    assert r.exit_code == 0, r.stderr
    return r.stdout + "\n--- stderr ---\n" + r.stderr


def test_sqlite_and_postgresql_show_the_same(pg_url: str, tmp_path: Path) -> None:  # noqa: F811
    sqlite = f"sqlite:///{tmp_path / 'made.db'}"
    files = [tmp_path / "run.json", tmp_path / "stat.json"]
    assert cli("run", *CHAIN, "-q", "--label", "k=v", "--db", sqlite, "--json", str(files[0])).exit_code == 0
    assert cli("stat", "-r", "2", "-q", "--db", sqlite, "--", "true").exit_code == 0
    assert cli("export", "--db", sqlite, "--json", str(files[1])).exit_code == 0
    other = f"sqlite:///{tmp_path / 'other.db'}"
    for f in files:
        for url in (other, pg_url):
            r = cli("import", str(f), "--db", url)
            assert r.exit_code == 0, r.output
    for rid in (1, 2):
        lite, pg = _show_text(other, rid), _show_text(pg_url, rid)
        assert lite == pg
        assert ("chain/add200" if rid == 1 else "task-clock") in lite and "host " in lite
    exports = []
    for url in (other, pg_url):
        out = tmp_path / "again.json"
        assert cli("export", "1", "--db", url, "--json", str(out)).exit_code == 0
        data = json.loads(out.read_text())
        data.pop("source")
        exports.append(data)
    assert exports[0] == exports[1]


# ---------------------------------------------------------------- what cannot be opened: one line, exit 2
def _one_line_exit_2(p: subprocess.CompletedProcess[str] | Any) -> str:
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    return lines[0]


def _cli(*args: str, block_psycopg: bool = False) -> subprocess.CompletedProcess[str]:
    code = "import sys\nfrom cyclebench.cli import main\nsys.argv[0] = 'cyclebench'\n"
    if block_psycopg:  # as if psycopg were not installed
        code = "import sys\nsys.modules['psycopg'] = None\n" + code
    return subprocess.run([sys.executable, "-c", code + "main()", *args], text=True, capture_output=True,
                          timeout=120, check=False, env={**os.environ, "COLUMNS": "300"})


COMMANDS = [["runs"], ["show", "1"], ["delete", "--yes", "1"], ["import", str(DATA / "run.json")],
            ["run", *CHAIN, "-q"]]  # run.json: a file made in the test's tmp_path


@pytest.mark.parametrize("argv", [COMMANDS[0], COMMANDS[-1]], ids=["runs", "run"])  # one reader, one writer
@pytest.mark.parametrize(("url", "says"), [
    ("postgresql://u@h:notaport/db", "not a database URL"),
    ("postgresql+psycopg2://u@h/db", "unsupported PostgreSQL driver 'psycopg2'"),
    ("mysql://u:S3cret@h/db", "unsupported database 'mysql'"),
], ids=["malformed", "other-driver", "other-database"])
def test_a_bad_url_is_one_line(argv: list[str], url: str, says: str, tmp_path: Path) -> None:
    argv = [str(tmp_path / "r.json") if a == str(DATA / "run.json") else a for a in argv]
    (tmp_path / "r.json").write_text("{}")
    r = cli_at(300, *argv, "--db", url)  # refused before connecting: in this process, ~0.5 s of CPU less a call
    line = _one_line_exit_2(subprocess.CompletedProcess(argv, r.exit_code, r.stdout, r.stderr))
    assert says in line and "S3cret" not in line


@pytest.mark.parametrize("argv", COMMANDS, ids=[a[0] for a in COMMANDS])
def test_an_unreachable_server_is_one_line(argv: list[str], tmp_path: Path) -> None:
    pytest.importorskip("psycopg", reason="psycopg not installed (pip install 'cyclebench[postgres]')")
    argv = [str(tmp_path / "r.json") if a == str(DATA / "run.json") else a for a in argv]
    (tmp_path / "r.json").write_text("{}")
    for url in (f"postgresql://bench:S3cret@/cb?host={tmp_path}&port=5999",  # no server on that socket
                "postgresql://bench:S3cret@127.0.0.1:1/cb?connect_timeout=3"):  # nothing listens on port 1
        line = _one_line_exit_2(_cli(*argv, "--db", url))
        assert "cannot open database postgresql://bench:***@" in line and "S3cret" not in line


@pytest.mark.parametrize("argv", COMMANDS, ids=[a[0] for a in COMMANDS])
def test_a_missing_driver_is_one_line(argv: list[str], tmp_path: Path) -> None:
    argv = [str(tmp_path / "r.json") if a == str(DATA / "run.json") else a for a in argv]
    (tmp_path / "r.json").write_text("{}")
    line = _one_line_exit_2(_cli(*argv, "--db", "postgresql://bench:S3cret@db.example/cb", block_psycopg=True))
    assert "PostgreSQL needs the psycopg driver" in line and "pip install 'cyclebench[postgres]'" in line
    assert "S3cret" not in line


def test_postgresql_stopping_mid_run_is_one_line(pg_own_cluster: Any) -> None:  # noqa: F811
    """The server stops (pg_ctl stop -m fast) while `run` measures: psycopg logged "error ignored
    terminating <psycopg.Pipeline [BAD] …>" before the real error; only cyclebench's one line
    shows (exit 2), no traceback."""
    import time

    from pgcluster import Owned

    owned: Owned = pg_own_cluster
    url = owned.cluster.url("postgres")
    proc = cli_subprocess("run", str(DATA / "slow.c"), "-b", "slow/*", "-p", "1,2,3,4,5,6,7,8", "--min-time", "0.05",
                          "--repeat", "5", "--warmup", "0", "-q", "--db", url)
    deadline, rid = time.monotonic() + 120, None
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
        try:
            store = Store(url, create=False)
        except Exception:  # no schema yet
            continue
        rid = store.last_run_id()
        done = rid is not None and bool(store.results(rid))
        store.close()
        if done:
            break
    assert rid is not None and proc.poll() is None, "the run never stored a result"
    owned.stop()
    _out, err = proc.communicate(timeout=300)
    lines = err.strip().splitlines()
    assert proc.returncode == 2 and "Traceback" not in err, err
    assert "error ignored" not in err and "Pipeline" not in err, err
    assert len(lines) == 1 and lines[0].startswith("cyclebench: error: database error:"), err


_STORE_MANY_SAMPLES = """
import sys
from cyclebench.store import Store, StoreError
s = Store(sys.argv[1])
rid = s.begin_run(command=["cyclebench", "run"])
print("begun", flush=True)
try:
    for _ in range(20):  # samples go in as one executemany: psycopg runs it in a pipeline
        s.add_result(rid, {"bench": "x/y", "status": "ok"}, [(1000, 2000, 3, 0, None)] * 200_000)
except StoreError as e:
    print(f"cyclebench: error: {e}", file=sys.stderr)
    sys.exit(2)
"""


def test_postgresql_stopping_inside_a_pipeline_prints_only_the_error(pg_own_cluster: Any,  # noqa: F811
                                                                     tmp_path: Path) -> None:
    """The server stops while samples are being written (psycopg's pipeline): psycopg's own
    logger printed "error ignored terminating <psycopg.Pipeline [BAD] …>" on stderr before the
    error cyclebench reports; only that one line must show."""
    import time

    owned = pg_own_cluster
    script = tmp_path / "many.py"
    script.write_text(_STORE_MANY_SAMPLES)
    proc = subprocess.Popen([sys.executable, str(script), owned.cluster.url("postgres")], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "begun"
    time.sleep(1.0)  # into the writes (each executemany of 200 000 rows takes seconds here)
    owned.stop()
    _out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, err
    assert "error ignored" not in err and "Pipeline" not in err, err
    assert len(err.strip().splitlines()) == 1, err
