"""fleet/bootstrap.py, what a host runs with its own Python before cyclebench is there: the
fleet directory another user can write is refused naming it, a job queues behind another on
the same machine and says what held it, dead owners' job directories are swept, an
interrupted job is stopped and its directory removed. Run as the playbook runs it
(``python3 -c TEXT``), with real files, modes, owners, locks and processes."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cyclebench.fleet import bootstrap

TEXT = Path(bootstrap.__file__).read_text()
NOBODY = 65534


def boot(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    python = shutil.which("python3") or sys.executable  # the host's Python, not cyclebench's venv
    return subprocess.run([python, "-c", TEXT, *args], capture_output=True, text=True, timeout=timeout)


def prepared(fleet_dir: Path, job: str = "7-100", host: str = "alpha") -> dict[str, str]:
    r = boot("prepare", "--dir", str(fleet_dir), "--job", job, "--host", host)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_playbook_can_pass_the_text_through_its_templating() -> None:
    for marker in ("{{", "{%", "{#"):  # Jinja would read these in the -c argument
        assert marker not in TEXT


def test_a_fleet_directory_another_user_can_write_is_refused_naming_it(tmp_path: Path) -> None:
    top = tmp_path / "shared"
    paths = prepared(top)
    host_dir = Path(paths["host_dir"])
    assert Path(paths["job_dir"]).parent == host_dir / "jobs" and host_dir.parent == top / "hosts"

    def refused(path: Path, why: str) -> None:
        r = boot("prepare", "--dir", str(top), "--job", "7-101", "--host", "alpha")
        assert r.returncode == 2 and r.stdout == "", r.stdout
        (line,) = r.stderr.strip().splitlines()
        assert f"refusing the fleet directory: {path} {why}" in line, line

    top.chmod(0o777)  # cyclebench_dir on a shared path
    refused(top, "is writable by every user")
    top.chmod(0o755)
    (host_dir / "venv" / "bin").mkdir(parents=True)  # a planted interpreter and a marker with the right key
    planted = host_dir / "venv" / "bin" / "python"
    planted.write_text("#!/bin/sh\necho planted\n")
    planted.chmod(0o755)
    (host_dir / "venv" / bootstrap.MARKER).write_text("the-key")
    os.chown(planted, NOBODY, NOBODY)
    refused(planted, "is owned by nobody")
    os.chown(planted, os.geteuid(), os.getegid())
    (host_dir / "venv").chmod(0o757)
    refused(host_dir / "venv", "is writable by every user")
    (host_dir / "venv").chmod(0o755)
    assert prepared(top)["installed"] == "the-key"  # a private directory is taken as it is


def test_a_directory_above_it_counts_unless_sticky(tmp_path: Path) -> None:
    above = tmp_path / "lab"
    above.mkdir()
    above.chmod(0o777)
    r = boot("prepare", "--dir", str(above / "cb"), "--job", "1-1", "--host", "h")
    assert r.returncode == 2 and f"{above} is writable by every user" in r.stderr, r.stderr
    above.chmod(0o1777)  # as /tmp: others cannot rename what is ours
    assert prepared(above / "cb")["installed"] == ""


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_job_directories_of_dead_owners_are_swept(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    names = ("mine", "killed", "finished", "stale", "copying", "running", "starting")
    mine, killed, finished, stale, copying, running, starting = (jobs / n for n in names)
    for d in (mine, killed, finished, stale, copying, running, starting):
        d.mkdir(parents=True)
    (starting / bootstrap.PID_FILE).write_text("")  # as read while written, before the atomic write
    boot_id = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    dead = f"{_dead_pid()} 1 {boot_id}\n"
    for d in (killed, finished, stale):
        (d / bootstrap.PID_FILE).write_text(dead)
    (finished / bootstrap.AGENT_JSON).write_text("{}")  # its controller may still fetch it
    (stale / bootstrap.AGENT_JSON).write_text("{}")
    old = time.time() - bootstrap.FETCH_GRACE_S - 60
    for p in (stale / bootstrap.AGENT_JSON, stale / bootstrap.PID_FILE, stale):
        os.utime(p, (old, old))
    (running / bootstrap.PID_FILE).write_text(  # this very process: alive
        f"{os.getpid()} {bootstrap._start_ticks(os.getpid())} {boot_id}\n")
    gone = bootstrap.sweep(jobs, mine)
    assert sorted(gone) == [killed, stale]
    assert sorted(p.name for p in jobs.iterdir()) == ["copying", "finished", "mine", "running", "starting"]
    (running / bootstrap.PID_FILE).write_text(  # the same pid in an earlier boot: dead
        f"{os.getpid()} {bootstrap._start_ticks(os.getpid())} 00000000-0000-0000-0000-000000000000\n")
    assert bootstrap.sweep(jobs, mine) == [running]


def _hold(host_dir: Path, job: str, host: str, command: list[str]) -> int:
    fd = os.open(host_dir / bootstrap.LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    (host_dir / bootstrap.HOLDER).write_text(json.dumps({"job": job, "host": host, "command": command,
                                                          "since": "2026-11-25 04:00:00 UTC", "pid": os.getpid()}))
    return fd


def test_a_job_waits_for_another_on_the_machine_then_says_what_held_it(tmp_path: Path) -> None:
    paths = prepared(tmp_path / "cb", job="8-200", host="beta")
    fd = _hold(Path(paths["host_dir"]), "7-100", "alpha", ["run", "-b", "syscall/getpid"])
    try:
        t0 = time.monotonic()
        r = boot("run", "--dir", str(tmp_path / "cb"), "--job", "8-200", "--host", "beta", "--key", "k",
                 "--version", "0", "--wheel", "w.whl", "--wait", "1.5", "--", "run", "-b", "x/y")
        waited = time.monotonic() - t0
    finally:
        os.close(fd)
    assert r.returncode == 0, r.stderr
    assert waited >= 1.5
    agent = json.loads((Path(paths["job_dir"]) / bootstrap.AGENT_JSON).read_text())
    assert agent["fatal"] == ("busy: waited 1.5 s; fleet job 7-100 for alpha holds this machine since "
                              "2026-11-25 04:00:00 UTC (cyclebench run -b syscall/getpid)")
    assert agent["command"] == ["run", "-b", "x/y"] and agent["runs"] == []


def test_stop_ends_a_waiting_job_and_removes_its_directory(tmp_path: Path) -> None:
    paths = prepared(tmp_path / "cb", job="9-300", host="gamma")
    fd = _hold(Path(paths["host_dir"]), "7-100", "alpha", ["run"])
    python = shutil.which("python3") or sys.executable
    waiting = subprocess.Popen([python, "-c", TEXT, "run", "--dir", str(tmp_path / "cb"), "--job", "9-300", "--host",
                                "gamma", "--key", "k", "--version", "0", "--wheel", "w.whl", "--wait", "60", "--",
                                "run"], stderr=subprocess.PIPE, text=True)
    try:
        job = Path(paths["job_dir"])
        deadline = time.monotonic() + 20
        while bootstrap.owner_alive(job) is not True and time.monotonic() < deadline:
            time.sleep(0.05)
        assert bootstrap.owner_alive(job), "the job never started waiting"
        t0 = time.monotonic()
        r = boot("stop", "--dir", str(tmp_path / "cb"), "--job", "9-300", "--host", "gamma")
        assert r.returncode == 0, r.stderr
        assert waiting.wait(timeout=20) == 130 and time.monotonic() - t0 < bootstrap.STOP_GRACE_S
        assert not job.exists()
    finally:
        waiting.kill()
        os.close(fd)


def test_install_reinstalls_the_wheel_only_in_a_venv_that_held_one(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A new venv gets exactly the job's cyclebench from the wheels with one pip; a venv that held
    another build of the same version needs the wheel forced over it, or it keeps the old one."""
    import tarfile

    calls: list[list[str]] = []

    def pip(argv: list[str]) -> None:
        calls.append(argv)
        if argv[1:3] == ["-m", "venv"]:
            (Path(argv[3]) / "bin").mkdir(parents=True)
            (Path(argv[3]) / "bin" / "python").touch()

    monkeypatch.setattr(bootstrap, "_pip", pip)
    host_dir, job_dir = tmp_path / "host", tmp_path / "host" / "jobs" / "j"
    for key in ("k1", "k2"):
        job_dir.mkdir(parents=True, exist_ok=True)
        (tmp_path / "cyclebench-1-py3-none-any.whl").write_text("wheel")
        with tarfile.open(job_dir / "wheels.tar", "w") as tar:
            tar.add(tmp_path / "cyclebench-1-py3-none-any.whl", arcname="cyclebench-1-py3-none-any.whl")
        calls.clear()
        bootstrap.install(host_dir, job_dir, key, "1", "cyclebench-1-py3-none-any.whl")
        assert bootstrap.installed_key(host_dir) == key
        pips = [c for c in calls if "pip" in c]
        forced = [c for c in pips if "--force-reinstall" in c]
        if key == "k1":  # a new venv: made, one install from the wheels
            assert [c[1:3] for c in calls if "venv" in c[1:3]] == [["-m", "venv"]] and len(pips) == 1 and not forced
        else:  # the venv held k1's cyclebench 1: the job's wheel forced over it
            assert not any("venv" in c[1:3] for c in calls) and len(pips) == 2
            assert forced and forced[0][-1] == str(host_dir / "wheels" / "cyclebench-1-py3-none-any.whl")
