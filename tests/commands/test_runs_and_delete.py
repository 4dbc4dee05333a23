"""Labels and identity with every stored run, `runs` filters and `delete`."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from cyclebench import __version__
from cyclebench.store import Store, liveness

from conftest import DATA, cli

CHAIN = [str(DATA / "chain.c"), "-b", "chain/add200", "--min-time", "0.01", "--repeat", "10"]


def _microcode() -> str | None:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("microcode"):
            return line.split(":", 1)[1].strip()
    return None


def test_run_stores_its_identity_and_labels(db: str) -> None:
    r = cli("run", *CHAIN, "-q", "--label", "kernel=r333291", "--label", "build = a b ")
    assert r.exit_code == 0, r.output
    store = Store(db, create=False)
    run = store.get_run(store.last_run_id())
    assert run["labels"] == {"kernel": "r333291", "build": "a b"}
    u = os.uname()
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    assert (run["host"], run["host_id"]) == (socket.gethostname(), liveness.host_id())
    assert (run["kernel_release"], run["kernel_version"], run["boot_id"]) == (u.release, u.version, boot)
    assert run["microcode"] == _microcode() and run["cpu_model"]
    assert run["compiler"] == run["build"]["cc_version"] and run["compiler"]
    assert run["tool_version"] == __version__
    assert run["code_rev"] and run["code_rev"].endswith("-dirty") == run["code_dirty"]  # tests/data is in git

    r = cli("show")
    assert r.exit_code == 0
    line = next(ln for ln in r.output.splitlines() if ln.startswith("host "))
    for part in (f"kernel {u.release}", f"boot {boot[:8]}", f"cyclebench {__version__}", run["compiler"],
                 f"code {run['code_rev']}", "labels kernel=r333291, build=a b"):
        assert part in line, part
    r = cli("runs")
    assert "kernel=r333291" in r.output


@pytest.mark.parametrize("argv", [
    ["compare", "chain/add200", "chain/add400", "-f", str(DATA / "chain.c"), "--repeat", "12", "--processes", "2",
     "--min-time", "0.01"],
    ["variants", str(DATA / "chain.c"), "--flags", "-O1", "--flags", "-O2", "-b", "chain/add200", "--rounds", "6",
     "--min-time", "0.01"],
    ["scale", "chain/add200", "-f", str(DATA / "chain.c"), "--tasks", "1", "--duration", "0.05", "--passes", "1",
     "--warmup", "0"],
    ["stat", "--", "true"],
], ids=["compare", "variants", "scale", "stat"])
def test_every_storing_command_keeps_labels_and_identity(db: str, argv: list[str]) -> None:
    at = argv.index("--") if "--" in argv else len(argv)
    r = cli(*argv[:at], "--label", "who=me", *argv[at:])
    assert r.exit_code == 0, r.output
    store = Store(db, create=False)
    run = store.get_run(store.last_run_id())
    assert run["labels"] == {"who": "me"}
    assert run["kernel_release"] == os.uname().release and run["boot_id"] and run["host_id"]
    assert (run["compiler"] is None) == (argv[0] == "stat")  # stat builds nothing of the user's
    assert [r["id"] for r in store.list_runs(None, labels={"who": "me"})] == [run["id"]]


# ---------------------------------------------------------------- no compiler from here: rows written directly
def _stored(db: str) -> dict[str, int]:
    s = Store(db)
    s.heartbeat_every = 0
    ids = {
        "old": s.insert_run({"started_at": "2026-01-05T10:00:00.000+00:00", "status": "complete", "host": "lab1",
                             "labels": {"kernel": "r1"}},
                            [({"bench": "chain/add200", "status": "ok"}, [(1, 2), (2, 4)])]),
        "new": s.insert_run({"started_at": "2026-03-01T10:00:00.000+00:00", "status": "complete", "host": "lab2",
                             "labels": {"kernel": "r2", "build": "O2"}},
                            [({"bench": "copy/memcpy", "param": 64, "status": "ok"}, [(1, 2)]),
                             ({"bench": "loop/empty", "status": "ok"}, [])]),
        "other": s.insert_run({"started_at": "2026-03-02T10:00:00.000+00:00", "status": "complete", "host": "lab1",
                               "labels": {"kernel": "r2"}}, [({"bench": "chain/add400", "status": "ok"}, [])]),
    }
    s.close()
    return ids


def _listed(*args: str) -> list[int]:
    r = cli("runs", *args)
    assert r.exit_code == 0, r.output
    return [int(ln.split()[0]) for ln in r.output.splitlines() if ln.split()[:1] and ln.split()[0].isdigit()]


def test_runs_filters(db: str) -> None:
    ids = _stored(db)
    assert _listed() == [ids["other"], ids["new"], ids["old"]]
    assert _listed("--bench", "chain") == [ids["other"], ids["old"]]  # a group name, as run -b reads it
    assert _listed("--bench", "chain/add2*") == [ids["old"]]
    assert _listed("--bench", "copy/memcpy") == [ids["new"]]
    assert _listed("--host", "lab1") == [ids["other"], ids["old"]]
    assert _listed("--label", "kernel=r2") == [ids["other"], ids["new"]]
    assert _listed("--label", "kernel=r2", "--label", "build=O2") == [ids["new"]]
    assert _listed("--since", "2026-03-01") == [ids["other"], ids["new"]]
    assert _listed("--since", "2026-03-01", "--host", "lab1", "--bench", "chain/*", "--label", "kernel=r2") == [
        ids["other"]]
    assert _listed("-n", "1", "--host", "lab1") == [ids["other"]]
    r = cli("runs", "--label", "kernel=r9")
    assert r.exit_code == 0 and "no run in" in r.output and "passes these filters" in r.output
    assert "kernel=r2, build=O2" in cli("runs").output
    for bad, says in ((["--since", "2026-13-01"], "does not match the format"), (["--label", "x"], "is not KEY=VALUE")):
        r = cli("runs", *bad)
        assert r.exit_code == 2 and says in r.output and "Traceback" not in r.output


def _delete_on_a_terminal(db: str, args: list[str], answer: bytes) -> tuple[int, str]:
    """`cyclebench delete ARGS` with a pseudo-terminal on stdin, typing ``answer`` (b"": Ctrl-D)."""
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    try:
        p = subprocess.Popen([sys.executable, "-m", "cyclebench", "delete", *args, "--db", db], stdin=slave,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        os.close(slave)
        os.write(master, answer or b"\x04")
        out, err = p.communicate(timeout=60)
    finally:
        os.close(master)
    return p.returncode, out + err


def test_delete_asks_then_removes_runs_with_their_results_and_samples(db: str) -> None:
    ids = _stored(db)
    code, output = _delete_on_a_terminal(db, [str(ids["old"])], b"n\n")
    assert code == 1 and "nothing deleted" in output and f"run #{ids['old']} · complete" in output, output
    assert "1 result(s) · kernel=r1" in output
    code, output = _delete_on_a_terminal(db, [str(ids["old"])], b"")  # Ctrl-D, no answer: no
    assert code == 1 and "Traceback" not in output and Store(db).get_run(ids["old"]) is not None, output
    code, output = _delete_on_a_terminal(db, [str(ids["old"]), str(ids["new"])], b"y\n")
    assert code == 0, output
    assert "deleted 2 run(s), 3 result(s) and 3 sample(s)" in output
    s = Store(db)
    assert s.get_run(ids["old"]) is None and s.get_run(ids["new"]) is None and s.results(ids["new"]) == []
    assert [x["id"] for x in s.list_runs(None)] == [ids["other"]]
    with s.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM samples").scalar() == 0


@pytest.mark.parametrize("stdin", ["closed", "devnull", "pipe"])
def test_delete_without_a_terminal_asks_for_yes(db: str, stdin: str) -> None:
    """No terminal to ask on (stdin closed, /dev/null, a pipe): one line, exit 2, nothing deleted."""
    import subprocess
    import sys

    ids = _stored(db)
    argv = [sys.executable, "-m", "cyclebench", "delete", str(ids["old"]), "--db", db]
    if stdin == "closed":
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60, preexec_fn=lambda: os.close(0))
    elif stdin == "devnull":
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    else:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60, input="y\n")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip().splitlines() == [
        "cyclebench: error: delete asks before deleting and stdin is not a terminal: nothing deleted (--yes deletes "
        "without asking)"]
    assert Store(db).get_run(ids["old"]) is not None


def test_delete_refuses_unknown_ids_and_running_runs(db: str) -> None:
    ids = _stored(db)
    r = cli("delete", "--yes", str(ids["old"]), "99", "123")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.output.strip().splitlines()[-1].endswith("no run #99, #123 in " + db + ": nothing deleted")
    assert Store(db).get_run(ids["old"]) is not None
    s = Store(db)
    s.heartbeat_every = 0
    live = s.begin_run(command=["cyclebench", "run"])  # this process: alive
    r = cli("delete", "--yes", str(live), str(ids["old"]))
    assert r.exit_code == 2 and f"run #{live} (host " in r.output and "is still running: nothing deleted" in r.output
    assert s.get_run(ids["old"]) is not None
    r = cli("delete", "--yes", "--force", str(live))
    assert r.exit_code == 0 and s.get_run(live) is None
    assert f"run #{live} was still running (host " in r.output and "nothing it measured is kept" in r.output
    dead = s.insert_run({"started_at": "2026-01-01T00:00:00+00:00", "status": "running", "host_id": s.host_id,
                         "pid": 999_999_999}, [])
    assert cli("delete", "--yes", str(dead)).exit_code == 0  # abandoned (its process is gone): no --force needed
    r = cli("delete", "--yes", "1", "--db", "sqlite:////nonexistent/x.db")
    assert r.exit_code == 2 and "no cyclebench database" in r.output


def test_a_stopped_run_is_still_running_and_survives(tmp_path: Path) -> None:
    """A run whose process is stopped (Ctrl-Z, SIGSTOP) beats no more, yet lives and goes on when
    continued: on its own host it reads 'running' however old its heartbeat, a writing command's
    reconcile leaves it alone, `delete` without --force refuses it, and after SIGCONT it ends
    complete with all its results."""
    import datetime as dt
    import signal
    import sqlite3
    import time

    from conftest import cli_subprocess

    path = tmp_path / "stop.db"
    url = f"sqlite:///{path}"
    proc = cli_subprocess("run", str(DATA / "slow.c"), "-b", "slow/*", "-p", "1,2,3,4,5,6", "--min-time", "0.05",
                          "--repeat", "5", "--warmup", "0", "-q", "--db", url, start_new_session=True)
    try:
        deadline, rid = time.monotonic() + 120, None
        while time.monotonic() < deadline:
            time.sleep(0.1)
            try:
                s = Store(url, create=False)
                rid = s.last_run_id()
                if rid is not None and s.results(rid):
                    break
            except Exception:  # not created yet
                continue
        assert rid is not None, proc.stderr.read() if proc.poll() is not None else "no result in 120 s"
        # 75 s of silence as the database then sees it: the last heartbeat 75 s old (more than STALE_AFTER)
        old = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=75)).isoformat(timespec="milliseconds")
        for _ in range(50):
            os.killpg(proc.pid, signal.SIGSTOP)  # what Ctrl-Z does to the job: the CLI and its runner
            try:
                with sqlite3.connect(path, timeout=0.5) as con:
                    con.execute("UPDATE runs SET heartbeat_at = ? WHERE id = ?", (old, rid))
                break
            except sqlite3.OperationalError:  # stopped inside a write: let it finish it, stop it again
                os.killpg(proc.pid, signal.SIGCONT)
                time.sleep(0.05)
        r = cli("runs", "--db", url)
        assert r.exit_code == 0 and " running " in r.output and "abandoned" not in r.output, r.output
        assert Store(url).reconcile() == []  # what every writing command does first
        r = cli("delete", "--yes", str(rid), "--db", url)
        assert r.exit_code == 2 and "is still running: nothing deleted" in r.output, r.output
        assert Store(url, create=False).get_run(rid)["status"] == "running"
    finally:
        os.killpg(proc.pid, signal.SIGCONT)
    _out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and "Traceback" not in err, err
    s = Store(url, create=False)
    assert s.get_run(rid)["status"] == "complete" and len(s.results(rid)) == 7  # loop/empty + 6 params


def test_delete_force_of_a_live_run_is_told_truthfully_on_both_sides(tmp_path: Path) -> None:
    """delete --force of a run still measuring: delete says the run was running; the run's own
    process then stops in one line saying its results went with it (not that they are kept)."""
    import time

    from conftest import cli_subprocess

    url = f"sqlite:///{tmp_path / 'force.db'}"
    proc = cli_subprocess("run", str(DATA / "slow.c"), "-b", "slow/*", "-p", "1,2,3,4,5,6", "--min-time", "0.05",
                          "--repeat", "5", "--warmup", "0", "-q", "--db", url)
    deadline, rid = time.monotonic() + 120, None
    while time.monotonic() < deadline:
        time.sleep(0.1)
        try:
            s = Store(url, create=False)
            rid = s.last_run_id()
            if rid is not None and s.results(rid):
                break
        except Exception:  # not created yet
            continue
    assert rid is not None
    r = cli("delete", "--yes", "--force", str(rid), "--db", url)
    assert r.exit_code == 0 and f"run #{rid} was still running" in r.output, r.output
    _out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2 and "Traceback" not in err, err
    assert f"run #{rid} was deleted from {url} while it ran" in err and "are kept" not in err, err
    assert Store(url, create=False).get_run(rid) is None


def test_run_refuses_a_damaged_database_before_measuring(tmp_path: Path) -> None:
    """A table dropped at the current revision: `run` measured everything, then failed at its
    first write ("no such table: samples"). Now it is one line, exit 2, before anything runs."""
    import sqlite3

    path = tmp_path / "nosamples.db"
    Store(f"sqlite:///{path}").close()
    with sqlite3.connect(path) as con:
        con.execute("DROP TABLE samples")
    r = cli("run", *CHAIN, "-q", "--db", f"sqlite:///{path}")
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert "is damaged: table samples is missing" in r.output and "no such table" not in r.output, r.output
    with sqlite3.connect(path) as con:  # refused at open: no run was begun, nothing measured
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
