"""Labels and identity with every stored run, `runs` filters and `delete` (issue 14, item 1)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from cyclebench import __version__
from cyclebench.cli import main
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
    return [int(ln.split("│")[1]) for ln in r.output.splitlines() if ln.startswith("│") and ln.split("│")[1].strip()]


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


def test_delete_asks_then_removes_runs_with_their_results_and_samples(db: str) -> None:
    ids = _stored(db)
    r = CliRunner().invoke(main, ["delete", str(ids["old"])], input="n\n")
    assert r.exit_code == 1 and "nothing deleted" in r.output and f"run #{ids['old']} · complete" in r.output
    assert "1 result(s) · kernel=r1" in r.output
    r = CliRunner().invoke(main, ["delete", str(ids["old"])], input="")  # no answer: no
    assert r.exit_code == 1 and Store(db).get_run(ids["old"]) is not None
    r = CliRunner().invoke(main, ["delete", str(ids["old"]), str(ids["new"])], input="y\n")
    assert r.exit_code == 0, r.output
    assert "deleted 2 run(s), 3 result(s) and 3 sample(s)" in r.output
    s = Store(db)
    assert s.get_run(ids["old"]) is None and s.get_run(ids["new"]) is None and s.results(ids["new"]) == []
    assert [x["id"] for x in s.list_runs(None)] == [ids["other"]]
    with s.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM samples").scalar() == 0


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
    dead = s.insert_run({"started_at": "2026-01-01T00:00:00+00:00", "status": "running", "host_id": s.host_id,
                         "pid": 999_999_999}, [])
    assert cli("delete", "--yes", str(dead)).exit_code == 0  # abandoned (its process is gone): no --force needed
    r = cli("delete", "--yes", "1", "--db", "sqlite:////nonexistent/x.db")
    assert r.exit_code == 2 and "no cyclebench database" in r.output
