"""`cyclebench fleet` end to end on this machine (docs/fleet.md): two inventory hosts reached over a
throwaway sshd on 127.0.0.1 (tests/sshlab.py), each with its own cyclebench directory and venv,
plus a third host on a closed port. One host of the first test installs the session's wheelhouse
from scratch (docs/fleet.md, "Install"); every other fleet directory is seeded with the venv that
install makes (sshlab.seed: hard links to one install per test run), so its host skips the install,
as a host whose venv holds the wheelhouse's key does. Results come back
as JSON bundles into SQLite, or go straight into a real PostgreSQL (tests/pgcluster.py);
`compare --by host`, `history --host`, `runs`, `show` and `fleet status` read them. The
measurements are tiny: these tests check function, not figures."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cyclebench.store import Store
from cyclebench.store import fleet as jobs

from conftest import DATA, cli
from pgcluster import pg_cluster, pg_url  # noqa: F401  (fixtures)
from sshlab import HOST_PYTHON, Lab, free_port, installed_venv, seed, ssh_lab, wheels  # noqa: F401  (fixtures)

pytestmark = pytest.mark.slow
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
                                                     host_dirs: Path, installed_venv: Path) -> None:  # noqa: F811
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

    status = fleet("status", "-i", str(inv), "--db", db)
    assert status.returncode == 0 and "unreachable" in status.stdout and "alpha" in status.stdout, status.stderr
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


def test_direct_into_postgresql_keeps_the_password_out_of_argv_and_logs(
        tmp_path: Path, ssh_lab: Lab, wheels: Path, host_dirs: Path, pg_url: str) -> None:  # noqa: F811
    inv = inventory(tmp_path / "hosts.ini", ssh_lab, host_dirs)
    secret = "S3cretFleetPw"
    url = pg_url.replace("postgresql://postgres@", f"postgresql://postgres:{secret}@")  # trust auth ignores it
    art = tmp_path / "artifacts"
    r = fleet("run", "-i", str(inv), "--db", url, "--direct", "--artifacts", str(art), "--", *TINY)
    assert r.returncode == 0, r.stdout + r.stderr
    store = Store(pg_url, create=False)
    runs = {run["host"]: run for run in store.list_runs(None)}
    assert set(runs) == {"alpha", "beta"}
    assert all(run["status"] == "complete" and store.results(run["id"]) for run in runs.values())
    assert {x.host: x.run_ids for x in jobs.last_per_host(store)} == {h: (runs[h]["id"],) for h in runs}
    leaked = [p for p in art.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    assert not leaked, leaked
    assert secret not in r.stdout + r.stderr
    assert all(secret not in json.dumps(run["command"]) for run in runs.values())
    by_host = cli("compare", "--by", "host", "--db", pg_url)
    assert by_host.exit_code == 0 and "alpha" in by_host.output and "beta" in by_host.output, by_host.output


def test_a_check_that_makes_measuring_impossible_stops_that_host(tmp_path: Path, ssh_lab: Lab,  # noqa: F811
                                                                 wheels: Path, host_dirs: Path) -> None:  # noqa: F811
    inv = inventory(tmp_path / "hosts.ini", ssh_lab, host_dirs)
    db = f"sqlite:///{tmp_path / 'ctl.db'}"
    r = fleet("run", "-i", str(inv), "--limit", "alpha", "--db", db, "--", "run", "-b", "syscall/getpid", "--cpu",
              "999")
    assert r.returncode == 1 and "check failed" in r.stdout and "CPU 999 to pin is missing" in r.stdout, r.stdout
    store = Store(db, create=False)
    assert store.list_runs(None) == []  # nothing measured there
    (row,) = jobs.last_per_host(store)
    assert row.status == "check failed" and row.check and row.check[0]["status"] == "FATAL"


def test_the_packaged_playbook_runs_with_plain_ansible_playbook(tmp_path: Path, ssh_lab: Lab,  # noqa: F811
                                                                host_dirs: Path) -> None:
    """A user who prefers ansible-playbook runs the same playbook; a host whose Python or CPU the
    wheels do not fit is told so before anything is copied."""
    from cyclebench.fleet import PLAYBOOK

    inv = inventory(tmp_path / "hosts.ini", ssh_lab, host_dirs)
    (tmp_path / "vars.json").write_text(json.dumps({
        "cyclebench_wheelhouse": "/nonexistent.tar", "cyclebench_wheel": "cyclebench-0-py3-none-any.whl",
        "cyclebench_key": "k", "cyclebench_version": "0", "cyclebench_target": "cp39-riscv64",
        "cyclebench_args": ["check"], "cyclebench_job": "t", "cyclebench_fetch": str(tmp_path / "fetched")}))
    playbook = Path(sys.executable).parent / "ansible-playbook"
    r = subprocess.run([str(playbook), "-i", str(inv), "--limit", "alpha", str(PLAYBOOK), "-e",
                        f"@{tmp_path / 'vars.json'}"], capture_output=True, text=True, timeout=300)
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


def test_ctrl_c_stops_the_fleet_and_its_remote_agents(tmp_path: Path, ssh_lab: Lab, wheels: Path,  # noqa: F811
                                                      host_dirs: Path) -> None:
    inv = tmp_path / "hosts.ini"
    inv.write_text("[lab]\n" + ssh_lab.host_line("alpha", host_dirs / "alpha") + "\n")
    db = f"sqlite:///{tmp_path / 'ctl.db'}"
    long_run = ["run", "-b", "syscall/getpid", "--min-time", "30", "--max-time", "60", "--repeat", "40"]
    proc = subprocess.Popen([sys.executable, "-m", "cyclebench", "fleet", "run", "-i", str(inv), "--db", db, "--",
                             *long_run], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not _agents("alpha") and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert _agents("alpha"), "the agent never started"
    time.sleep(2)  # into the measurement
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "interrupted" in out and "Traceback" not in err
    deadline = time.monotonic() + 15  # the tether polls every 0.5 s
    while _agents("alpha") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _agents("alpha"), "the remote agent outlived its ssh session"
    assert not list((host_dirs / "alpha").glob("hosts/*/jobs/*")), "the interrupted job's directory was left"
    store = Store(db, create=False)
    assert [x.status for x in jobs.last_per_host(store)] == ["interrupted"]


def _intervals(store: Store) -> list[tuple[str, str, str]]:
    return sorted((run["started_at"], run["finished_at"], run["host"]) for run in store.list_runs(None))


def test_two_inventory_names_on_one_machine_queue_and_both_run(tmp_path: Path, wheels: Path,  # noqa: F811
                                                               installed_venv: Path) -> None:  # noqa: F811
    """Two names for this machine sharing one cyclebench directory (as hosts sharing a home over
    NFS do): the jobs one after the other under the machine's lock, both stored; a job that
    waits longer than --wait becomes a 'busy' row naming what held the machine."""
    pytest.importorskip("ansible_runner", reason="ansible-runner not installed (pip install 'cyclebench[fleet]')")
    shared = tmp_path / "shared-dir"
    seed(shared, installed_venv)
    inv = _local(tmp_path / "hosts.ini", shared, "one", "two")
    db = f"sqlite:///{tmp_path / 'ctl.db'}"
    r = fleet("run", "-i", str(inv), "--db", db, "--", *TINY)
    print(r.stdout, r.stderr[-3000:])
    assert r.returncode == 0, r.stdout + r.stderr
    store = Store(db, create=False)
    (_, a_end, a), (b_start, _, b) = _intervals(store)
    assert {a, b} == {"one", "two"}
    assert a_end <= b_start, "the two jobs measured at the same time"
    store.close()

    slow = ["run", "-b", "syscall/getpid", "--min-time", "2", "--repeat", "6", "--processes", "1", "--target-ci", "0"]
    r = fleet("run", "-i", str(inv), "--db", db, "--wait", "1", "--", *slow)
    print(r.stdout, r.stderr[-3000:])
    assert r.returncode == 1, r.stdout + r.stderr
    store = Store(db, create=False)
    last = {x.host: x for x in jobs.last_per_host(store)}
    (busy,) = [x for x in last.values() if x.status == "busy"]
    (done,) = [x for x in last.values() if x.status == "ok"]
    assert busy.reason and f"for {done.host}" in busy.reason and "syscall/getpid" in busy.reason, busy.reason
    assert not list((shared / "hosts").glob("*/jobs/*")), "job directories left behind"


def _local(path: Path, fleet_dir: Path, *names: str) -> Path:
    """An inventory of ``names``, each this machine through Ansible's local connection."""
    path.write_text("".join(f"{n} ansible_connection=local ansible_python_interpreter={HOST_PYTHON} "
                            f"cyclebench_dir={fleet_dir}\n" for n in names))
    return path


def test_a_fleet_directory_another_user_can_write_is_refused(tmp_path: Path, wheels: Path) -> None:  # noqa: F811
    """A planted interpreter with a marker of the right key, in the old and the new place of the
    venv, in a fleet directory every user can write: refused naming it, nothing run."""
    pytest.importorskip("ansible_runner", reason="ansible-runner not installed (pip install 'cyclebench[fleet]')")
    from cyclebench.build.wheelhouse import content_key, source_root
    from cyclebench.fleet import bootstrap

    shared = tmp_path / "lab-cb"
    mark = tmp_path / "planted-ran"
    for venv in (shared / "venv", shared / "hosts" / bootstrap.machine_key() / "venv"):
        (venv / "bin").mkdir(parents=True)
        (venv / "bin" / "python").write_text(f"#!/bin/sh\ntouch {mark}\n")
        (venv / "bin" / "python").chmod(0o755)
        (venv / bootstrap.MARKER).write_text(content_key(source_root()))
    shared.chmod(0o777)
    db = f"sqlite:///{tmp_path / 'ctl.db'}"
    r = fleet("run", "-i", str(_local(tmp_path / "hosts.ini", shared, "lab1")), "--db", db, "--", *TINY)
    print(r.stdout, r.stderr[-2000:])
    assert r.returncode == 1 and not mark.exists(), r.stdout + r.stderr
    store = Store(db, create=False)
    (row,) = jobs.last_per_host(store)
    assert row.status == "failed" and f"refusing the fleet directory: {shared} is writable by every user" in (
        row.reason or ""), row.reason
    assert store.list_runs(None) == []


def _job_dirs(fleet_dir: Path) -> list[Path]:
    """Job directories in a fleet directory (per machine; directly in it before that)."""
    return [*fleet_dir.glob("jobs/*"), *fleet_dir.glob("hosts/*/jobs/*")]


def test_a_killed_controller_leaves_no_job_directory_after_the_next_run(tmp_path: Path, wheels: Path,  # noqa: F811
                                                                       installed_venv: Path) -> None:  # noqa: F811
    pytest.importorskip("ansible_runner", reason="ansible-runner not installed (pip install 'cyclebench[fleet]')")
    fleet_dir = tmp_path / "cb"
    seed(fleet_dir, installed_venv)
    inv = _local(tmp_path / "hosts.ini", fleet_dir, "solo")
    db = f"sqlite:///{tmp_path / 'ctl.db'}"
    long_run = ["run", "-b", "syscall/getpid", "--min-time", "30", "--max-time", "60", "--repeat", "40"]
    tmp = tmp_path / "tmp"  # the controller's $TMPDIR: its Ansible artifacts and fetched files
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "cyclebench", "fleet", "run", "-i", str(inv), "--db", db, "--",
                             *long_run], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 600
    while not _agents("solo") and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert _agents("solo"), "the agent never started"
    time.sleep(2)  # into the measurement
    assert _job_dirs(fleet_dir)
    proc.kill()  # SIGKILL: no stop play
    proc.wait(timeout=30)
    assert list(tmp.glob("cyclebench-fleet-*"))  # the killed controller's: nothing ran to remove them
    r = subprocess.run([sys.executable, "-m", "cyclebench", "fleet", "run", "-i", str(inv), "--db", db, "--", *TINY],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not _job_dirs(fleet_dir), "a job directory outlived its controller"
    assert not _agents("solo")
    assert not list(tmp.glob("cyclebench-fleet-*")), "a killed controller's temporary directories were left"


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


def test_ctrl_c_leaves_no_ansible_process_behind(tmp_path: Path, wheels: Path,  # noqa: F811
                                                 installed_venv: Path) -> None:  # noqa: F811
    """Ansible's workers detach (setsid) from ansible-playbook, whose process group a cancel kills:
    Ctrl-C while two names of this machine measure and queue left an `ansible-playbook` worker
    reparented to PID 1 for a minute. Everything the command started ends with it."""
    pytest.importorskip("ansible_runner", reason="ansible-runner not installed (pip install 'cyclebench[fleet]')")
    seed(tmp_path / "cb", installed_venv)
    inv = _local(tmp_path / "hosts.ini", tmp_path / "cb", "one", "two")
    db = f"sqlite:///{tmp_path / 'ctl.db'}"
    mark = f"{os.getpid()}-{tmp_path.name}"
    long_run = ["run", "-b", "syscall/getpid", "--min-time", "30", "--max-time", "60", "--repeat", "40"]
    proc = subprocess.Popen([sys.executable, "-m", "cyclebench", "fleet", "run", "-i", str(inv), "--db", db,
                             "--forks", "2", "--", *long_run], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "CYCLEBENCH_TEST_MARK": mark})
    try:
        deadline = time.monotonic() + 600
        while not (_agents("one") or _agents("two")) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert _agents("one") or _agents("two"), "no agent started"
        time.sleep(3)  # into the measurement, the other name queued behind it
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, out + err
        left = _marked(mark)
        assert not left, f"left behind: {left}"
    finally:
        proc.kill()
        for line in _marked(mark):
            os.kill(int(line.split()[0]), signal.SIGKILL)
