"""`cyclebench fleet` end to end on this machine (docs/fleet.md): two inventory hosts reached over a
throwaway sshd on 127.0.0.1 (tests/sshlab.py), each with its own cyclebench directory and venv,
plus a third host on a closed port. One host of the first test installs the session's wheelhouse
from scratch (docs/fleet.md, "Install"); every other fleet directory is seeded with the venv that
install makes (sshlab.seed: hard links to one install per test run), so its host skips the install,
as a host whose venv holds the wheelhouse's key does. Results come back
as JSON bundles into SQLite, or go straight into a real PostgreSQL (tests/pgcluster.py);
`compare --by host`, `history --host`, `runs`, `show` and `fleet status` read them. The
measurements are tiny: these tests check function, not figures.

Time (the module was 178-189 s on the 2-vCPU VM, ~1 CPU busy throughout): jobs whose tests only
read their outcome (direct, check+refusal, plain ansible-playbook) run beside the bundles job
(``started_early``); scenarios that need the same kind of job share one (one Ctrl-C for the ssh
agent and the local Ansible workers; the run after a killed controller is the two names' queue;
one job for both ways a host is stopped before it measures); waits poll for the agent's
check.json instead of sleeping; seeded venvs hold their bytecode (sshlab._warm); Ansible polls its
workers every 0.02 s, not every 1 ms (sshlab.ANSIBLE_CFG: Ansible's CPU 36 -> 20 s, the module's 165 -> 134-159 s)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cyclebench.lifetime import proc_stats
from cyclebench.store import Store
from cyclebench.store import fleet as jobs

from conftest import DATA, cli
from pgcluster import Cluster, pg_cluster  # noqa: F401  (fixtures)
from sshlab import (  # noqa: F401  (the fixtures: ansible_config, installed_venv, ssh_lab, wheels)
    HOST_PYTHON,
    Lab,
    ansible_config,
    free_port,
    installed_venv,
    seed,
    ssh_lab,
    wheels,
)

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("ansible_config")]
TINY = ["run", "-f", str(DATA / "chain.c"), "-b", "chain/add200", "--min-time", "0.01", "--repeat", "6",
        "--processes", "1", "--target-ci", "0"]


@pytest.fixture(scope="session")
def host_dirs(tmp_path_factory: pytest.TempPathFactory, installed_venv: Path) -> Path:  # noqa: F811
    """The hosts' cyclebench directories, kept for the session, each seeded with the installed venv."""
    dirs = tmp_path_factory.mktemp("fleet-hosts")
    for name in ("alpha", "beta"):
        seed(dirs / name, installed_venv)
    return dirs


def inventory(path: Path, lab: Lab, dirs: Path, unreachable: bool = False, alpha: Path | None = None) -> Path:
    """alpha and beta in ``dirs`` (alpha in its own ``alpha`` directory when given), gamma unreachable."""
    lines = ["[lab]", lab.host_line("alpha", alpha or dirs / "alpha"), lab.host_line("beta", dirs / "beta")]
    if unreachable:
        lines.append(lab.host_line("gamma", dirs / "gamma", port=free_port()))  # nothing listens there
    path.write_text("\n".join(lines) + "\n")
    return path


def fleet(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cyclebench", "fleet", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "COLUMNS": "200"})


def test_bundles_into_sqlite_and_an_unreachable_host(tmp_path: Path, ssh_lab: Lab, wheels: Path,  # noqa: F811
                                                     host_dirs: Path, installed_venv: Path,  # noqa: F811
                                                     started_early: dict[str, Started | str]) -> None:  # beside it
    """alpha, in an empty fleet directory, gets the wheelhouse over ssh and installs it (the
    fleet's one install from scratch); beta's venv holds the key already: nothing copied or installed."""
    from cyclebench.fleet import bootstrap

    fresh = tmp_path / "alpha-fleet"
    inv = inventory(tmp_path / "hosts.ini", ssh_lab, host_dirs, unreachable=True, alpha=fresh)
    beta_marker = host_dirs / "beta" / "hosts" / bootstrap.machine_key() / "venv" / bootstrap.MARKER
    beta_before = beta_marker.stat()
    db = f"sqlite:///{tmp_path / 'ctl.db'}"
    t0 = time.monotonic()
    r = fleet("run", "-i", str(inv), "--db", db, "--", *TINY)
    print(f"fleet run: {time.monotonic() - t0:.1f} s\n{r.stdout}\n{r.stderr[-2000:]}")
    assert r.returncode == 1, r.stderr  # one host did not land
    rows = {line.split()[0]: line for line in r.stdout.splitlines() if line.split()[:1] in (["alpha"], ["beta"],
                                                                                           ["gamma"])}
    assert "ok" in rows["alpha"] and "ok" in rows["beta"] and "unreachable" in rows["gamma"], r.stdout
    assert "Traceback" not in r.stderr
    key = (installed_venv / bootstrap.MARKER).read_text()
    alpha_host = fresh / "hosts" / bootstrap.machine_key()
    assert (alpha_host / "venv" / bootstrap.MARKER).read_text() == key  # installed, exactly this wheelhouse
    assert any((alpha_host / "wheels").glob("cyclebench-*.whl"))  # from the tar the job copied over
    beta_after = beta_marker.stat()  # install() rewrites the marker: the same file, untouched
    assert (beta_after.st_ino, beta_after.st_mtime_ns) == (beta_before.st_ino, beta_before.st_mtime_ns)
    assert not (beta_marker.parent.parent / "wheels").exists(), "beta installed again"

    store = Store(db, create=False)
    runs = {run["host"]: run for run in store.list_runs(None)}
    assert set(runs) == {"alpha", "beta"}
    for host, run in runs.items():
        assert run["status"] == "complete"
        assert run["env"]["hostname"] == socket.gethostname() and run["boot_id"] and run["host_id"]
        assert run["labels"]["fleet"].isdigit()
        assert {x["bench"] for x in store.results(run["id"]) if x["status"] == "ok"} >= {"chain/add200"}, host
    last = {x.host: x for x in jobs.last_per_host(store)}
    assert last["gamma"].status == "unreachable" and "Connection refused" in (last["gamma"].reason or "")
    assert last["alpha"].status == "ok" and last["alpha"].run_ids == (runs["alpha"]["id"],)
    assert any(f.get("name") == "hypervisor" for f in last["alpha"].check or ())  # the check's findings are kept
    assert last["alpha"].machine and last["alpha"].machine.hostname == socket.gethostname()

    status = cli("fleet", "status", "-i", str(inv), "--db", db)  # in-process: a python less, ~1.5 s of CPU
    assert status.exit_code == 0 and "unreachable" in status.output and "alpha" in status.output, status.output
    by_host = cli("compare", "--by", "host", "--db", db)
    assert by_host.exit_code == 0, by_host.output
    header = next(line for line in by_host.output.splitlines() if "benchmark" in line)
    assert "alpha" in header and "beta" in header
    assert any("chain/add200" in line and "cycles~" in line for line in by_host.output.splitlines())
    hist = cli("history", "chain/add200", "--host", "alpha", "--db", db)
    assert hist.exit_code == 0 and "alpha, fleet · 1 run ·" in hist.output, hist.output  # alpha's run, not beta's
    assert "alpha" in cli("runs", "--host", "alpha", "--db", db).output
    show = cli("show", str(runs["beta"]["id"]), "--db", db)
    assert f"host beta (machine {socket.gethostname()}" in show.output


@dataclass(frozen=True)
class Started:
    """A command started in the background (its output in files: no pipe fills while nobody reads)
    and what its test reads besides: a directory (the fleet directory a planted interpreter sits in,
    or Ansible's artifacts), the file the planted interpreter would touch, the controller's database."""

    proc: subprocess.Popen[bytes]
    out: Path
    shared: Path = Path()
    mark: Path = Path()
    db: str = ""
    name: str = ""  # the PostgreSQL database made for it

    def result(self, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        self.proc.wait(timeout=timeout)
        return subprocess.CompletedProcess(self.proc.args, self.proc.returncode, self.out.read_text(),
                                           self.out.with_suffix(".err").read_text())


def _start(argv: list[str], out: Path) -> subprocess.Popen[bytes]:
    with open(out, "wb") as o, open(out.with_suffix(".err"), "wb") as e:
        return subprocess.Popen(argv, stdout=o, stderr=e, env={**os.environ, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def started_early(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, ssh_lab: Lab,  # noqa: F811
                  host_dirs: Path, installed_venv: Path) -> Iterator[dict[str, Started | str]]:  # noqa: F811
    """Three jobs whose tests only read what they did, started when the module's first test asks
    (the bundles test: its fresh install spends ~10 s in one host's pip) and run beside it: the
    direct job into PostgreSQL (16-20 s alone), the check+refusal job (5-7 s) and plain
    ansible-playbook (3-6 s); one after the other they were ~30 s of the module's wall time. Each
    in fleet directories of its own, so no job waits for another's machine lock."""
    from cyclebench.build.wheelhouse import content_key, source_root
    from cyclebench.fleet import PLAYBOOK, bootstrap

    tmp = tmp_path_factory.mktemp("early")
    started: dict[str, Started | str] = {}
    try:  # without a PostgreSQL server the direct test is skipped, not the tests beside it
        pg_cluster: Cluster = request.getfixturevalue("pg_cluster")
        import psycopg
    except pytest.skip.Exception as e:
        started["direct"] = str(e)
    else:
        started["direct"] = _direct(tmp, ssh_lab, installed_venv, pg_cluster)
    # alpha, in a fleet directory of its own, whose check finds the CPU to pin missing; lab1, whose
    # fleet directory (a planted interpreter with a marker of the right key, in the old and the new
    # place of the venv) is writable by every user; beta, outside --limit, not touched
    own = tmp / "hosts"
    seed(own / "alpha", installed_venv)
    shared, mark = tmp / "lab-cb", tmp / "planted-ran"
    for venv in (shared / "venv", shared / "hosts" / bootstrap.machine_key() / "venv"):
        (venv / "bin").mkdir(parents=True)
        (venv / "bin" / "python").write_text(f"#!/bin/sh\ntouch {mark}\n")
        (venv / "bin" / "python").chmod(0o755)
        (venv / bootstrap.MARKER).write_text(content_key(source_root()))
    shared.chmod(0o777)
    inv = inventory(tmp / "check.ini", ssh_lab, own)
    inv.write_text(inv.read_text() + _local(tmp / "local.ini", shared, "lab1").read_text())
    db = f"sqlite:///{tmp / 'ctl.db'}"
    check = Started(_start([sys.executable, "-m", "cyclebench", "fleet", "run", "-i", str(inv), "--limit",
                            "alpha:lab1", "--db", db, "--", "run", "-b", "syscall/getpid", "--cpu", "999"],
                           tmp / "check.out"), tmp / "check.out", shared, mark, db)

    (tmp / "vars.json").write_text(json.dumps({
        "cyclebench_wheelhouse": "/nonexistent.tar", "cyclebench_wheel": "cyclebench-0-py3-none-any.whl",
        "cyclebench_key": "k", "cyclebench_version": "0", "cyclebench_target": "cp39-riscv64",
        "cyclebench_args": ["check"], "cyclebench_job": "t", "cyclebench_fetch": str(tmp / "fetched")}))
    playbook = Path(sys.executable).parent / "ansible-playbook"
    plain_inv = inventory(tmp / "plain.ini", ssh_lab, host_dirs)
    plain = Started(_start([str(playbook), "-i", str(plain_inv), "--limit", "alpha", str(PLAYBOOK), "-e",
                            f"@{tmp / 'vars.json'}"], tmp / "plain.out"), tmp / "plain.out")
    started |= {"check": check, "plain": plain}
    yield started
    for job in started.values():
        if isinstance(job, Started):
            job.proc.kill()
            job.proc.wait()
    if isinstance(direct := started["direct"], Started):
        with psycopg.connect(**_admin(pg_cluster)) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{direct.name}" WITH (FORCE)')


def _admin(pg: Cluster) -> dict[str, object]:
    return {"host": str(pg.root), "port": pg.port, "user": pg.user, "dbname": "postgres", "autocommit": True}


def _direct(tmp: Path, lab: Lab, venv: Path, pg: Cluster) -> Started:
    """alpha and beta writing straight into a new PostgreSQL database, its password in the URL."""
    import psycopg

    name = f"cb_fleet_direct_{os.getpid()}"
    with psycopg.connect(**_admin(pg)) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    pg_url = pg.url(name)
    for host in ("alpha", "beta"):
        seed(tmp / "direct" / host, venv)
    url = pg_url.replace("postgresql://postgres@", f"postgresql://postgres:{SECRET}@")  # trust auth ignores it
    return Started(_start([sys.executable, "-m", "cyclebench", "fleet", "run", "-i",
                           str(inventory(tmp / "direct.ini", lab, tmp / "direct")), "--db", url, "--direct",
                           "--artifacts", str(tmp / "artifacts"), "--", *TINY], tmp / "direct.out"),
                   tmp / "direct.out", tmp / "artifacts", db=pg_url, name=name)


SECRET = "S3cretFleetPw"


def test_direct_into_postgresql_keeps_the_password_out_of_argv_and_logs(
        started_early: dict[str, Started | str]) -> None:
    job = started_early["direct"]
    if isinstance(job, str):
        pytest.skip(job)
    r, art, pg_url = job.result(), job.shared, job.db
    assert r.returncode == 0, r.stdout + r.stderr
    store = Store(pg_url, create=False)
    runs = {run["host"]: run for run in store.list_runs(None)}
    assert set(runs) == {"alpha", "beta"}
    assert all(run["status"] == "complete" and store.results(run["id"]) for run in runs.values())
    assert {x.host: x.run_ids for x in jobs.last_per_host(store)} == {h: (runs[h]["id"],) for h in runs}
    leaked = [p for p in art.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert not leaked, leaked
    assert SECRET not in r.stdout + r.stderr
    assert all(SECRET not in json.dumps(run["command"]) for run in runs.values())
    by_host = cli("compare", "--by", "host", "--db", pg_url)
    assert by_host.exit_code == 0 and "alpha" in by_host.output and "beta" in by_host.output, by_host.output
    store.close()


def test_a_check_that_makes_measuring_impossible_or_a_fleet_directory_others_can_write_stops_that_host(
        started_early: dict[str, Started | str]) -> None:
    """alpha's check finds the CPU to pin missing; lab1's fleet directory is writable by every user:
    refused naming it, nothing run. One job for what were two tests, each a fleet job of its own
    (5-8 s apiece): a host stopped before it measures costs that host's row either way, whatever
    the other host's reason."""
    job = started_early["check"]
    assert isinstance(job, Started)
    r = job.result()
    print(r.stdout, r.stderr[-2000:])
    assert r.returncode == 1 and "check failed" in r.stdout and "CPU 999 to pin is missing" in r.stdout, r.stdout
    assert not job.mark.exists(), r.stdout + r.stderr
    store = Store(job.db, create=False)
    assert store.list_runs(None) == []  # nothing measured there
    rows = {x.host: x for x in jobs.last_per_host(store)}
    assert set(rows) == {"alpha", "lab1"}  # beta: not in --limit
    row = rows["alpha"]
    assert row.status == "check failed" and row.check and row.check[0]["status"] == "FATAL"
    row = rows["lab1"]
    assert row.status == "failed" and f"refusing the fleet directory: {job.shared} is writable by every user" in (
        row.reason or ""), row.reason


def test_the_packaged_playbook_runs_with_plain_ansible_playbook(started_early: dict[str, Started | str]) -> None:
    """A user who prefers ansible-playbook runs the same playbook; a host whose Python or CPU the
    wheels do not fit is told so before anything is copied."""
    plain = started_early["plain"]
    assert isinstance(plain, Started)
    r = plain.result(timeout=300)
    assert r.returncode != 0
    assert "the controller's wheels are for cp39-riscv64, this host's Python is cp3" in r.stdout, r.stdout[-2000:]
    assert "failed=1" in r.stdout and "TASK [the wheelhouse fits]" in r.stdout and "TASK [wheelhouse]" not in r.stdout


def _agents(host: str) -> list[int]:
    """Pids of the fleet agents (and what they run) working for ``host`` on this machine."""
    pids = []
    for d in Path("/proc").iterdir():
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"agent" in argv and host.encode() in argv and b"--job-dir" in argv:
            pids.append(int(d.name))
    return pids


def _masters(reaper: int) -> list[int]:
    """The ssh ControlMasters ("ssh: PATH [mux]": ssh's title, written over its argv and
    environment) that came back to ``reaper``, the fleet command that is their subreaper."""
    found = []
    for pid, fields in proc_stats():
        if len(fields) > 1 and int(fields[1]) == reaper:
            with contextlib.suppress(OSError):
                if b"[mux]" in (Path("/proc") / str(pid) / "cmdline").read_bytes():
                    found.append(pid)
    return found


def _lead(pids: list[int]) -> set[int]:
    """Those of ``pids`` whose parent is not among them: a fork caught before its exec still shows
    its parent's argv, and is no agent (beside a busy loop, a snapshot of beta's agent once held one)."""
    parents = {pid: int(fields[1]) for pid, fields in proc_stats() if len(fields) > 1}
    return {pid for pid in pids if parents.get(pid) not in pids}


def _measuring(fleet_dir: Path, host: str, proc: subprocess.Popen[str] | subprocess.Popen[bytes],
               timeout: float = 300) -> bool:
    """Wait until ``host``'s agent is measuring: its check.json written (the agent's check is done,
    its command started next) while the agent runs. A poll, not a fixed sleep: the agent reached
    its command 1-6 s after it started here, depending on the load (a 2 s sleep was sometimes early)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if _agents(host) and list(fleet_dir.glob(f"hosts/*/jobs/*-{host}/check.json")):
            return True
        time.sleep(0.1)
    return False




def _intervals(store: Store) -> list[tuple[str, str, str]]:
    return sorted((run["started_at"], run["finished_at"], run["host"]) for run in store.list_runs(None))


def _local(path: Path, fleet_dir: Path, *names: str) -> Path:
    """An inventory of ``names``, each this machine through Ansible's local connection."""
    path.write_text("".join(f"{n} ansible_connection=local ansible_python_interpreter={HOST_PYTHON} "
                            f"cyclebench_dir={fleet_dir}\n" for n in names))
    return path


def _job_dirs(fleet_dir: Path) -> list[Path]:
    """Job directories in a fleet directory (per machine; directly in it before that)."""
    return [*fleet_dir.glob("jobs/*"), *fleet_dir.glob("hosts/*/jobs/*")]


def _marked(mark: str) -> list[str]:
    """The live processes (zombies aside) whose environment carries ``mark``: what one command started."""
    found = []
    for d in Path("/proc").iterdir():
        try:
            if f"CYCLEBENCH_TEST_MARK={mark}".encode() not in (d / "environ").read_bytes().split(b"\0"):
                continue
            if (d / "stat").read_bytes().rsplit(b")", 1)[1].split()[0] == b"Z":
                continue
            argv = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{d.name} {argv[:100]}")
        except OSError:
            continue
    return found


LONG_RUN = ["run", "-b", "syscall/getpid", "--min-time", "30", "--max-time", "60", "--repeat", "40"]


def test_ctrl_c_stops_the_fleet_its_remote_agents_and_every_ansible_process(
        tmp_path: Path, ssh_lab: Lab, wheels: Path, host_dirs: Path, installed_venv: Path) -> None:  # noqa: F811
    """Ctrl-C while alpha (over ssh) measures and two local names of this machine measure and queue.
    One interrupted job for what were two tests (each a fleet started and stopped: 11-12 s apiece):
    alpha's agent, tethered to its ssh session, must end and remove its job directory; and Ansible's
    workers, which detach (setsid) from ansible-playbook, whose process group a cancel kills (a
    queued name left an `ansible-playbook` worker reparented to PID 1 for a minute), must end
    with the command: nothing the command started outlives it.

    Beside it, a second controller's job measures on beta, the same sshd as the same user (one
    ssh ControlPath when the jobs share Ansible's control_path_dir), started once the first job's
    ssh master is up (so it would multiplex over it): the first job's end must not end the
    second's ssh sessions, so beta's agent lives on. When the jobs shared ~/.ansible/cp, the first
    one's reaping killed the master both multiplexed over: beta's agent ended with its session,
    and a copy cut mid-task was retried by Ansible ("Source … not found")."""
    seed(tmp_path / "cb", installed_venv)
    inv = tmp_path / "hosts.ini"
    inv.write_text("[lab]\n" + ssh_lab.host_line("alpha", host_dirs / "alpha") + "\n"
                   + _local(tmp_path / "local.ini", tmp_path / "cb", "one", "two").read_text())
    db = f"sqlite:///{tmp_path / 'ctl.db'}"
    mark = f"{os.getpid()}-{tmp_path.name}"
    proc = subprocess.Popen([sys.executable, "-m", "cyclebench", "fleet", "run", "-i", str(inv), "--db", db,
                             "--forks", "3", "--", *LONG_RUN], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "CYCLEBENCH_TEST_MARK": mark})
    other_mark = mark + "-beside"
    other_db = f"sqlite:///{tmp_path / 'other.db'}"
    other = None
    try:
        deadline = time.monotonic() + 300  # the first job's ssh master up: its first task on
        while not _masters(proc.pid):
            assert time.monotonic() < deadline and proc.poll() is None, "the job's ssh master never started"
            time.sleep(0.1)
        other = subprocess.Popen([sys.executable, "-m", "cyclebench", "fleet", "run", "-i",
                                  str(inventory(tmp_path / "beta.ini", ssh_lab, host_dirs)), "--limit", "beta",
                                  "--db", other_db, "--", *LONG_RUN], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, env={**os.environ, "CYCLEBENCH_TEST_MARK": other_mark})
        assert _measuring(host_dirs / "alpha", "alpha", proc), "alpha's agent never measured"
        # one of one/two into its measurement, the other queued behind it for the machine's lock
        deadline = time.monotonic() + 300
        while not any(_measuring(tmp_path / "cb", h, proc, timeout=0.1) for h in ("one", "two")):
            assert time.monotonic() < deadline and proc.poll() is None, "no local agent measured"
        assert _measuring(host_dirs / "beta", "beta", other), "the other job's agent never measured"
        beta_agents = _lead(_agents("beta"))
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        ended = time.monotonic()
        assert proc.returncode == 130, out + err
        assert "interrupted" in out and "Traceback" not in err
        left = _marked(mark)
        assert not left, f"left behind: {left}"
        deadline = time.monotonic() + 15  # the tether polls every 0.5 s
        while _agents("alpha") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _agents("alpha"), "the remote agent outlived its ssh session"
        assert not list((host_dirs / "alpha").glob("hosts/*/jobs/*")), "the interrupted job's directory was left"
        store = Store(db, create=False)
        assert {x.host: x.status for x in jobs.last_per_host(store)} == dict.fromkeys(("alpha", "one", "two"),
                                                                                     "interrupted")
        # beta's agent, of the other job, lives on: 1 s after this job ended is 2 polls of its tether
        # (and a session cut would have failed beta's task: not 'interrupted' below)
        time.sleep(max(0.0, ended + 1 - time.monotonic()))
        assert other.poll() is None and beta_agents <= set(_agents("beta")), (
            "the other controller's agent ended with this one's job")
        other.send_signal(signal.SIGINT)
        out, err = other.communicate(timeout=120)
        assert other.returncode == 130 and "Traceback" not in err, out + err
        assert {x.host: x.status for x in jobs.last_per_host(Store(other_db, create=False))} == {"beta": "interrupted"}
        assert not _marked(other_mark)
    finally:
        proc.kill()
        if other is not None:
            other.kill()
        for line in _marked(mark) + _marked(other_mark):
            os.kill(int(line.split()[0]), signal.SIGKILL)


def test_a_killed_controllers_job_directory_is_swept_then_two_names_of_one_machine_queue(
        tmp_path: Path, wheels: Path, installed_venv: Path) -> None:  # noqa: F811
    """A controller killed (SIGKILL: no stop play) while its agent measures; the next job on that
    machine — two names for it sharing one cyclebench directory (as hosts sharing a home over NFS
    do) — removes what the killed one left (its job directory, its temporary directories), and
    runs the two names one after the other under the machine's lock, both stored; a job that
    waits longer than --wait becomes a 'busy' row naming what held the machine. One directory and
    one "next run" for what were two tests: the run after the kill was a full fleet job of its own
    (~12 s), and the first job of two names is just as much a next run."""
    pytest.importorskip("ansible_runner", reason="ansible-runner not installed (pip install 'cyclebench[fleet]')")
    shared = tmp_path / "shared-dir"
    seed(shared, installed_venv)
    db = f"sqlite:///{tmp_path / 'ctl.db'}"
    tmp = tmp_path / "tmp"  # the controller's $TMPDIR: its Ansible artifacts and fetched files
    tmp.mkdir()
    cp = tmp_path / "cp"  # Ansible's control_path_dir: a directory of each job's own in it
    env = {**os.environ, "TMPDIR": str(tmp), "ANSIBLE_SSH_CONTROL_PATH_DIR": str(cp)}
    proc = subprocess.Popen([sys.executable, "-m", "cyclebench", "fleet", "run", "-i",
                             str(_local(tmp_path / "solo.ini", shared, "solo")), "--db", db, "--", *LONG_RUN],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    assert _measuring(shared, "solo", proc, timeout=600), "the agent never started"
    assert _job_dirs(shared)
    proc.kill()  # SIGKILL: no stop play
    proc.wait(timeout=30)
    assert list(tmp.glob("cyclebench-fleet-*"))  # the killed controller's: nothing ran to remove them
    assert list(cp.glob("cyclebench-*"))

    inv = _local(tmp_path / "hosts.ini", shared, "one", "two")
    r = subprocess.run([sys.executable, "-m", "cyclebench", "fleet", "run", "-i", str(inv), "--db", db, "--", *TINY],
                       capture_output=True, text=True, timeout=600, env={**env, "COLUMNS": "200"})
    print(r.stdout, r.stderr[-3000:])
    assert r.returncode == 0, r.stdout + r.stderr
    assert not _job_dirs(shared), "a job directory outlived its controller"
    assert not _agents("solo")
    assert not list(tmp.glob("cyclebench-fleet-*")), "a killed controller's temporary directories were left"
    assert not list(cp.glob("cyclebench-*")), "a killed controller's ssh control directory was left"
    store = Store(db, create=False)
    (_, a_end, a), (b_start, _, b) = _intervals(store)  # the killed job stored no run here
    assert {a, b} == {"one", "two"}
    assert a_end <= b_start, "the two jobs measured at the same time"
    store.close()

    # The holder keeps the lock for its agent's start and check (~2 s) and this measurement while
    # the other name waits 1 s: --min-time 1 (was 2) still holds it ~4 s past the other's arrival.
    slow = ["run", "-b", "syscall/getpid", "--min-time", "1", "--repeat", "6", "--processes", "1", "--target-ci", "0"]
    r = fleet("run", "-i", str(inv), "--db", db, "--wait", "1", "--", *slow)
    print(r.stdout, r.stderr[-3000:])
    assert r.returncode == 1, r.stdout + r.stderr
    store = Store(db, create=False)
    last = {x.host: x for x in jobs.last_per_host(store)}
    (busy,) = [x for x in last.values() if x.status == "busy"]
    (done,) = [x for x in last.values() if x.status == "ok"]
    assert busy.reason and f"for {done.host}" in busy.reason and "syscall/getpid" in busy.reason, busy.reason
    assert not list((shared / "hosts").glob("*/jobs/*")), "job directories left behind"
