"""What a process leaves on disk while it works is named with its tag, pid and start time
(cyclebench.lifetime.owner_tag; proc(5), /proc/PID/stat field 22), and the next process of the
same kind removes those whose owner is gone — a SIGKILLed profile's traces among them — never a
live one's, nor a name that is no tag."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cyclebench.experiments import profile
from cyclebench.lifetime import owner_gone, owner_tag, sweep


def _start(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rsplit(b")", 1)[1].split()[19])


def _ended() -> str:
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    tag = f"{p.pid}-{_start(p.pid)}"
    p.kill()
    p.wait()
    return tag


def test_tags_name_one_process() -> None:
    me = owner_tag()
    assert me == f"{os.getpid()}-{_start(os.getpid())}" and not owner_gone(me)
    assert owner_gone(_ended())
    assert owner_gone(f"1-{_start(1) + 1}")  # pid 1 alive, but not the process that made it: a reused pid
    assert not owner_gone("not-a-tag") and not owner_gone("12")


def test_sweep_removes_what_gone_owners_left(tmp_path: Path) -> None:
    dead, reused, live, other = (tmp_path / f"x-{t}-abc" for t in (_ended(), f"1-{_start(1) + 1}", owner_tag(), "q"))
    for d in (dead, reused, live, other):
        (d / "sub").mkdir(parents=True)
    (tmp_path / f"x-{_ended()}.tmp").write_text("a file")
    gone = sweep(tmp_path, "x-")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name])
    assert len(gone) == 3


def test_a_profile_sweeps_the_traces_of_profiles_gone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # gettempdir() reads $TMPDIR again
    reused = tmp_path / f"{profile.SCRATCH_PREFIX}1-{_start(1) + 1}-abc"  # pid 1 is alive: a pid reused
    dead = tmp_path / f"{profile.SCRATCH_PREFIX}{_ended()}-def"
    for d in (reused, dead):
        d.mkdir()
        (d / "trace.dat").write_bytes(b"\0" * 1024)
    work = profile.scratch_dir()
    try:
        assert work.parent == tmp_path and work.name.startswith(f"{profile.SCRATCH_PREFIX}{owner_tag()}-")
        assert not reused.exists() and not dead.exists()
    finally:
        work.rmdir()


def test_reaping_ends_a_descendant_that_detached_itself(tmp_path: Path) -> None:
    """A child forks a grandchild that leaves its session (setsid, as Ansible's workers do) and
    exits: the orphan comes back to this process (PR_SET_CHILD_SUBREAPER) and is ended with the
    block, not left to PID 1."""
    from cyclebench.lifetime import reaping

    pidfile = tmp_path / "grandchild"
    code = ("import os, sys, time\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            f"    open({str(pidfile) + '.tmp'!r}, 'w').write(str(os.getpid()))\n"
            f"    os.rename({str(pidfile) + '.tmp'!r}, {str(pidfile)!r})\n"
            "    time.sleep(300)\n"
            "    os._exit(0)\n"
            "while not os.path.exists(" + repr(str(pidfile)) + "): time.sleep(0.01)\n")
    with reaping():
        subprocess.run([sys.executable, "-c", code], check=True)
        grandchild = int(pidfile.read_text())
        with open(f"/proc/{grandchild}/stat", "rb") as f:
            assert int(f.read().rsplit(b")", 1)[1].split()[1]) == os.getpid()  # reparented here, not to PID 1
    assert not os.path.exists(f"/proc/{grandchild}")
