"""The fleet's planning and plumbing without hosts (docs/fleet.md): what is refused before anything
runs, how C files map into a job's directory, the tether that ends a remote agent with its
ssh session, the wheelhouse key, and the fleet records in the database."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest

from cyclebench.build import wheelhouse
from cyclebench.cli import main
from cyclebench.commands.fleet import job_plan
from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.fleet.plan import Plan, labelled
from cyclebench.model import FleetHost
from cyclebench.runner import tether
from cyclebench.store import Store
from cyclebench.store import fleet as jobs

from conftest import DATA, cli


@pytest.fixture(autouse=True)
def _in_the_cli() -> object:
    """job_plan() finds the command to run through click's context, as under `cyclebench fleet run`."""
    with click.Context(main):
        yield


def plan(args: list[str], job_label: str | None = None) -> Plan:
    """What `fleet run` sends every host for ``args``, with the job's label when given."""
    line, p = job_plan(args)
    return p if job_label is None else labelled(p, line, job_label)


@pytest.mark.parametrize(("args", "says"), [
    (["show", "3"], "takes a run id"), (["compare", "12", "14"], "differ per host"),
    (["compare", "g4", "g7"], "differ per host"), (["delete", "3"], "takes run ids"),
    (["history", "x/y"], "reads the database"), (["nosuch"], "no command 'nosuch'"),
    (["run", "--db", "sqlite:///x.db"], "give --db (and --direct) to `fleet run`"),
    (["run", "--repeat", "zero"], "-- run:"), (["run", "-f", "/nonexistent/*.c"], "matches no file"),
])
def test_what_cannot_run_on_every_host_alike_is_refused(args: list[str], says: str) -> None:
    with pytest.raises((click.UsageError, ExperimentError)) as e:  # its options: click's; the rest: the design's
        plan(args)
    assert says in str(e.value)


def test_c_files_and_their_headers_go_into_the_job_directory(tmp_path: Path) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "mine.c").write_text("x")
    (tmp_path / "mine.h").write_text("x")
    p = plan(["run", "-f", str(tmp_path / "*.c"), "-b", "mine/*", f"--file={DATA / 'chain.c'}", "-I",
              str(tmp_path / "inc"), "--min-time", "0.01"], "fleet=7")
    assert p.args == ("run", "-f", "mine.c", "-b", "mine/*", "-f", "chain.c", "-I", "inc0", "--min-time", "0.01",
                      "--label", "fleet=7")
    dests = {d: s for s, d in p.files}
    assert dests["mine.c"] == tmp_path / "mine.c" and dests["mine.h"] == tmp_path / "mine.h"
    assert dests["chain.c"] == DATA / "chain.c" and dests["inc0/"] == tmp_path / "inc"


def test_two_files_of_one_name_are_refused(tmp_path: Path) -> None:
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "x.c").write_text("x")
    with pytest.raises(ExperimentError, match=r"two files named x\.c"):
        plan(["run", "-f", str(tmp_path / "a" / "x.c"), "-f", str(tmp_path / "b" / "x.c")])


def test_a_command_without_labels_gets_no_job_label() -> None:
    assert plan(["check", "--cpu", "1"], "fleet=3").args == ("check", "--cpu", "1")


def test_fleet_run_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    inv = tmp_path / "hosts.ini"
    inv.write_text("h1 ansible_connection=local\n")
    for args, says in ((["--", "show", "3"], "takes a run id"), (["--", "compare", "12", "14"], "differ per host"),
                       (["--direct", "--db", f"sqlite:///{tmp_path / 'x.db'}", "--", "run"], "postgresql://")):
        r = cli("fleet", "run", "-i", str(inv), *args)
        assert r.exit_code == 2 and says in r.output and "Traceback" not in r.output, r.output
    assert not (tmp_path / "x.db").exists()  # refused before the database was opened


def test_tether_signals_when_an_ancestor_ends(tmp_path: Path) -> None:
    """A middle process starts a tethered grandchild, then dies: the grandchild gets SIGTERM."""
    mark, ready = tmp_path / "got", tmp_path / "tethered"
    script = (
        "import os, signal, sys, time\n"
        "from cyclebench.runner.tether import tether\n"
        f"signal.signal(signal.SIGTERM, lambda *a: (open({str(mark)!r}, 'w').write('term'), os._exit(0)))\n"
        "tether(poll=0.05)\n"
        f"open({str(ready)!r}, 'w').close()\n"
        "time.sleep(30)\n")
    # the middle ends once the grandchild is tethered: a fixed 1 s could end before (it failed once
    # beside three busy test workers), and a grandchild tethered after that has no ancestor to lose
    middle = subprocess.Popen([sys.executable, "-c",
                               "import os, subprocess, sys, time\n"
                               "subprocess.Popen([sys.executable, '-c', sys.argv[1]])\n"
                               "t = time.monotonic()\n"
                               "while not os.path.exists(sys.argv[2]) and time.monotonic() - t < 60: time.sleep(0.02)",
                               script, str(ready)], env={**os.environ})
    middle.wait(timeout=90)
    assert ready.exists()
    deadline = time.monotonic() + 10
    # the handler's open() makes the file before its write reaches it: once read empty beside busy
    # test workers, so what is awaited is the word, not the file
    while not (mark.exists() and mark.read_text() == "term") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert mark.exists() and mark.read_text() == "term"


def test_tether_sees_the_chain_of_ancestors() -> None:
    chain = tether.ancestors()
    assert chain and chain[0][0] == os.getppid()
    assert tether.lost(chain) is None
    assert tether.lost([(2**22 + 1, 0)]) == 2**22 + 1  # a pid above pid_max: gone


def test_wheelhouse_key_follows_the_source(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "src" / "cyclebench").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\n")
    (root / "src" / "cyclebench" / "a.py").write_text("x = 1\n")
    k1 = wheelhouse.content_key(root)
    assert k1 == wheelhouse.content_key(root)
    (root / "src" / "cyclebench" / "a.py").write_text("x = 2\n")
    assert wheelhouse.content_key(root) != k1 and k1.startswith(wheelhouse.cyclebench.__version__ + "-")
    assert wheelhouse.content_key(None) == wheelhouse.cyclebench.__version__


def test_fleet_records_keep_each_hosts_last_job(tmp_path: Path) -> None:
    s = Store(f"sqlite:///{tmp_path / 'f.db'}")
    j1 = jobs.begin_job(s, "inv", ["run"], "bundles")
    jobs.record_host(s, j1, FleetHost(host="a", status="ok", run_ids=(1,)))
    jobs.record_host(s, j1, FleetHost(host="b", status="unreachable", reason="refused"))
    jobs.finish_job(s, j1, "complete")
    j2 = jobs.begin_job(s, "inv", ["run", "-b", "x"], "bundles")
    jobs.record_host(s, j2, FleetHost(host="a", status="failed", reason="exit 1"))
    jobs.record_host(s, j2, FleetHost(host="a", status="check failed", reason="no C compiler"))  # again: replaced
    last = {r.host: r for r in jobs.last_per_host(s)}
    assert (last["a"].job_id, last["a"].status, last["a"].reason) == (j2, "check failed", "no C compiler")
    assert (last["b"].job_id, last["b"].status) == (j1, "unreachable")
    assert [r.host for r in jobs.last_per_host(s, ["b"])] == ["b"]
    assert len(jobs.hosts_of(s, j2)) == 1
    s.close()


def test_status_of_a_database_without_fleet_jobs_is_one_line(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'f.db'}"
    Store(db).close()
    r = cli("fleet", "status", "--db", db)
    assert r.exit_code == 2 and "no fleet job" in r.output


def test_compare_by_host_needs_two_hosts_and_takes_run_ids_only(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'f.db'}"
    s = Store(db)
    for host, per_op in (("intel1", 300.0), ("amd1", 150.0)):
        rid = s.begin_run(command=["run"], host=host, cpu_model=f"{host} cpu")
        s.add_result(rid, {"bench": "syscall/getpid", "status": "ok", "unit": "ref-cycles", "per_op": per_op,
                           "ci_low": per_op - 1, "ci_high": per_op + 1})
        s.finish_run(rid, "complete")
    s.close()
    r = cli("compare", "--by", "host", "--db", db)
    assert r.exit_code == 0, r.output
    header = next(line for line in r.output.splitlines() if "benchmark" in line)
    assert header.index("intel1") < header.index("amd1")  # in the order the runs were made
    row = next(line for line in r.output.splitlines() if "syscall/getpid" in line)
    assert "300.0 ±1.0 " in row and "150.0 ±1.0 " in row and "2.00×" in row and "ref-cycles" in row
    assert "amd1: amd1 cpu" in " ".join(r.output.split())  # the caption names each host's CPU
    for args, says in ((["1", "g2"], "takes stored run ids"), (["--format", "csv"], "use --json")):
        bad = cli("compare", "--by", "host", *args, "--db", db)
        assert bad.exit_code == 2 and says in bad.output, bad.output
    one = cli("compare", "--by", "host", "1", "--db", db)
    assert one.exit_code == 2 and "two hosts or more" in one.output


@pytest.mark.parametrize("args", [["run", "--json", "x.json"], ["run", "-o", "x.csv"], ["run", "--plot", "x.png"]])
def test_files_written_on_the_hosts_are_refused(args: list[str]) -> None:
    with pytest.raises(ExperimentError, match="do not come back"):
        plan(args)


def test_an_interrupted_job_keeps_the_hosts_that_finished(tmp_path: Path) -> None:
    """After Ctrl-C, a host whose bundle came back is imported and ok; one still measuring is
    'interrupted' with nothing imported (experiments/fleet/job.land)."""
    import json

    from cyclebench.experiments.fleet.ansible import HostState
    from cyclebench.experiments.fleet.job import land
    from cyclebench.store import runfile

    there = Store(f"sqlite:///{tmp_path / 'host.db'}")
    rid = there.begin_run(command=["run"], host="alpha")
    there.add_result(rid, {"bench": "syscall/getpid", "status": "ok", "unit": "ref-cycles", "per_op": 300.0})
    there.finish_run(rid, "complete")
    (tmp_path / "fetched" / "alpha").mkdir(parents=True)
    runfile.dump(runfile.run_to_dict(there, rid), tmp_path / "fetched" / "alpha" / "run-1.json")
    (tmp_path / "fetched" / "alpha" / "agent.json").write_text(json.dumps(
        {"fatal": None, "returncode": 0, "runs": [rid], "bundles": ["run-1.json"], "check": [], "machine": {}}))
    there.close()
    ctl = Store(f"sqlite:///{tmp_path / 'ctl.db'}")
    job = jobs.begin_job(ctl, "inv", ["run"], "bundles")
    alpha = land(ctl, job, "alpha", HostState(task="clean up", done=True), tmp_path / "fetched", False, True)
    beta = land(ctl, job, "beta", HostState(task="measure"), tmp_path / "fetched", False, True)
    assert alpha.status == "ok" and len(alpha.run_ids) == 1 and alpha.results == 1
    assert ctl.get_run(alpha.run_ids[0])["host"] == "alpha"
    assert beta.status == "interrupted" and beta.run_ids == () and beta.reason and "measure" in beta.reason
    assert {r.host: r.status for r in jobs.hosts_of(ctl, job)} == {"alpha": "ok", "beta": "interrupted"}
    ctl.close()


@pytest.mark.parametrize(("name", "text", "says"), [
    ("hosts.ini", "[lab\nh1 ansible_connection=local\n", "not enough values to unpack"),
    ("hosts.ini", "[lab]\nh1 ansible_connection=local stray\n", "Expected key=value host variable assignment"),
    ("hosts.yml", "all:\n  hosts:\n\th1:\n", "line 3: YAML parsing failed: Tabs are usually invalid in YAML"),
])
def test_an_inventory_ansible_cannot_parse_is_one_line(tmp_path: Path, name: str, text: str, says: str) -> None:
    pytest.importorskip("ansible", reason="ansible-core not installed (pip install 'cyclebench[fleet]')")
    inv = tmp_path / name
    inv.write_text(text)
    for args in (["run", "-i", str(inv), "--db", f"sqlite:///{tmp_path / 'x.db'}", "--", "run"],
                 ["status", "-i", str(inv), "--db", f"sqlite:///{tmp_path / 'x.db'}"]):
        r = cli("fleet", *args)
        assert r.exit_code == 2 and "Traceback" not in r.output, r.output
        (line,) = r.output.strip().splitlines()
        assert f"cannot parse the inventory {inv}" in line and says in line, line
    assert not (tmp_path / "x.db").exists()  # refused before the database was opened


def test_an_inventory_directory_is_read_whole(tmp_path: Path) -> None:
    pytest.importorskip("ansible", reason="ansible-core not installed (pip install 'cyclebench[fleet]')")
    from cyclebench.experiments.fleet.inventory import inventory_hosts

    (tmp_path / "group_vars").mkdir()
    (tmp_path / "group_vars" / "all.yml").write_text("cyclebench_dir: /srv/cb\n")
    (tmp_path / "a.ini").write_text("[lab]\nh1 ansible_connection=local\n")
    (tmp_path / "b.yml").write_text("all:\n  hosts:\n    h2:\n")
    assert inventory_hosts(tmp_path) == ["h1", "h2"]
    (tmp_path / "c.yml").write_text("all:\n  hosts:\n\th3:\n")
    with pytest.raises(Exception, match=r"cannot parse the inventory .*c\.yml: line 3"):
        inventory_hosts(tmp_path)


def test_the_wheel_is_built_from_the_source_not_a_stale_build_directory(tmp_path: Path) -> None:
    """A module left in setuptools' build/lib (deleted from src/ since) stays out of the wheels."""
    root = tmp_path / "tree"
    (root / "src" / "cyclebench").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\n")
    (root / "src" / "cyclebench" / "a.py").write_text("x = 1\n")
    (root / "build" / "lib" / "cyclebench").mkdir(parents=True)
    (root / "build" / "lib" / "cyclebench" / "gone.py").write_text("x = 0\n")
    copy = wheelhouse.clean_copy(root, tmp_path / "copy")
    assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*")) == [
        "pyproject.toml", "src", "src/cyclebench", "src/cyclebench/a.py"]


def test_tether_watches_a_chain_recorded_before_exec(tmp_path: Path) -> None:
    """An ancestor gone before the tethered process started (it imports for seconds after the
    bootstrap exec'd it) is missed by its own ancestors, not by the chain handed down."""
    assert tether.inherited("12:34,x:1,,56:78") == [(12, 34), (56, 78)]
    gone = subprocess.Popen(["true"])
    gone.wait()
    mark = tmp_path / "got"
    script = (
        "import os, signal, sys, time\n"
        "from cyclebench.runner.tether import CHAIN_ENV, inherited, tether\n"
        f"signal.signal(signal.SIGTERM, lambda *a: (open({str(mark)!r}, 'w').write('term'), os._exit(0)))\n"
        "tether(poll=0.05, chain=inherited(os.environ[CHAIN_ENV]))\n"
        "time.sleep(30)\n")
    child = subprocess.run([sys.executable, "-c", script], timeout=30,
                           env={**os.environ, tether.CHAIN_ENV: f"{gone.pid}:1"})
    assert child.returncode == 0 and mark.read_text() == "term"


def test_agent_json_crosses_the_wire_and_back(tmp_path: Path) -> None:
    """What the agent writes is what the controller reads; a row the bootstrap wrote when it
    refused the job (fleet/bootstrap.py: the hostname alone, no check) reads as well."""
    import json

    from cyclebench.experiments.fleet.agent import AgentReport, read_report
    from cyclebench.model import CheckFinding, Machine

    sent = AgentReport(host="alpha", machine=Machine(hostname="box", host_id="h1", boot_id="b1", cpu_model=None),
                       command=("run", "-b", "x/*"),
                       check=(CheckFinding(name="hypervisor", status="WARN", detail="kvm"),),
                       returncode=1, runs=(3, 4), bundles=("run-3.json", "run-4.json"), stderr_tail="boom")
    doc = sent.to_json()
    assert "store_error" not in doc and doc["machine"] == {"hostname": "box", "host_id": "h1", "boot_id": "b1"}
    (tmp_path / "agent.json").write_text(json.dumps(doc))
    assert read_report(tmp_path / "agent.json", "alpha") == sent
    (tmp_path / "busy.json").write_text(json.dumps({
        "host": "beta", "machine": {"hostname": "box"}, "command": ["run"], "fatal": "busy: fleet job 1-2 for alpha",
        "check": None, "returncode": None, "runs": [], "bundles": []}))
    busy = read_report(tmp_path / "busy.json", "beta")
    assert busy is not None and busy.machine == Machine(hostname="box") and busy.check is None
    assert busy.fatal and busy.fatal.startswith("busy") and busy.runs == ()
    assert read_report(tmp_path / "none.json", "gamma") is None


def test_ansible_events_fold_into_each_hosts_state() -> None:
    """ansible-runner's events (runner_on_start/ok/failed/unreachable) → one record per host,
    replaced, never changed; a failure ignore_errors covers does not count."""
    from cyclebench.experiments.fleet.ansible import HostState, RunnerEvent, fold

    hosts: dict[str, HostState] = {}
    events: list[RunnerEvent] = [
        {"event": "runner_on_start", "event_data": {"host": "a", "task": "check"}},
        {"event": "runner_on_start", "event_data": {"host": "b", "task": "check"}},
        {"event": "runner_on_failed", "event_data": {"host": "b", "task": "check", "ignore_errors": True,
                                                     "res": {"msg": "ignored"}}},
        {"event": "runner_on_unreachable", "event_data": {"host": "c", "res": {"msg": "ssh: refused\n"}}},
        {"event": "runner_on_failed", "event_data": {"host": "b", "task": "install",
                                                     "res": {"results": [{"failed": False}, {"failed": True,
                                                                                            "stderr": "no pip"}]}}},
        {"event": "runner_on_ok", "event_data": {"host": "a", "task": "clean up"}},
        {"event": "playbook_on_stats", "event_data": {}},
    ]
    first = None
    started = []
    for ev in events:
        started.append(fold(hosts, ev))
        first = first or hosts.get("a")
    assert started[:2] == ["a", "b"] and started[2:] == [None] * 5
    assert hosts["a"] == HostState(task="check", done=True) and first == HostState(task="check")
    assert hosts["b"] == HostState(status="failed", reason="install: no pip", task="check")
    assert hosts["c"] == HostState(status="unreachable", reason="ssh: refused")


def test_fleet_run_json_keeps_its_shape() -> None:
    import json

    from cyclebench.model import FleetHost, Machine
    from cyclebench.report.fleet import summary_json

    doc = json.loads(summary_json(7, [FleetHost(host="a", status="ok", check=(), run_ids=(1, 2),
                                                machine=Machine(hostname="box"), results=5),
                                      FleetHost(host="b", status="unreachable", reason="refused")]))
    assert doc == {"job": 7, "hosts": [
        {"host": "a", "status": "ok", "reason": None, "check": [], "run_ids": [1, 2], "machine": {"hostname": "box"},
         "results": 5},
        {"host": "b", "status": "unreachable", "reason": "refused", "check": None, "run_ids": [], "machine": None,
         "results": 0}]}


def test_each_job_has_an_ssh_control_directory_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In $ANSIBLE_SSH_CONTROL_PATH_DIR, named with the controller's tag (a killed one's removed by
    the next job), mode 0700; one that cannot be made is one line (experiments/fleet/job._control_dir)."""
    import os

    from cyclebench.experiments.fleet.job import _control_dir

    monkeypatch.setenv("ANSIBLE_SSH_CONTROL_PATH_DIR", str(tmp_path / "cp"))
    dead = tmp_path / "cp" / "cyclebench-4194305-1-abc"  # above any pid_max (proc(5)): its owner is gone
    dead.mkdir(parents=True)
    (tmp_path / "cp" / "0123456789").touch()  # Ansible's own socket name: not ours to remove
    a, b = _control_dir(), _control_dir()
    assert a != b and a.parent == b.parent == tmp_path / "cp" and a.name.startswith(f"cyclebench-{os.getpid()}-")
    assert a.stat().st_mode & 0o777 == 0o700
    assert not dead.exists() and (tmp_path / "cp" / "0123456789").exists()
    (tmp_path / "file").touch()
    monkeypatch.setenv("ANSIBLE_SSH_CONTROL_PATH_DIR", str(tmp_path / "file"))
    with pytest.raises(ExperimentError, match=r"cannot make the job's ssh control directory in .*file: File exists"):
        _control_dir()
