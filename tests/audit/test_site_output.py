"""`cyclebench report -o DIR` (docs/site.md): a directory holding anything a site build did not
write is refused in one line naming it, and that file kept; `-o .` and a link to a directory
are written into as any directory; a killed build's directory beside the site is swept by the
next build, a live one's never."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from .conftest import Shared, database
from .harness import Lab, one_line

pytestmark = pytest.mark.audit


def tag(pid: int) -> str:
    """A process as "PID-START" (field 22 of /proc/PID/stat, proc(5)): how cyclebench names what
    a process leaves on disk while it works."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f"{pid}-{int(f.read().rsplit(b')', 1)[1].split()[19])}"


def a_gone_process() -> str:
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        return tag(p.pid)
    finally:
        p.kill()
        p.wait()


def test_a_site_holding_a_file_it_did_not_write_is_refused_and_the_file_kept(lab: Lab, shared: Shared) -> None:
    database(lab, shared, "seed")
    assert lab.run("report", "-o", "site").rc == 0
    site = lab.cwd / "site"
    shutil.copyfile(lab.db, site / "lab.db")
    before = (site / "lab.db").read_bytes()
    r = lab.run("report", "--db", f"sqlite:///{site / 'lab.db'}", "-o", "site")
    assert r.rc == 2 and one_line(r) and "lab.db" in r.err, r
    assert (site / "lab.db").read_bytes() == before and (site / "index.html").is_file()
    (site / "lab.db").unlink()
    (site / "runs" / "notes.txt").write_text("mine")
    r = lab.run("report", "-o", "site")
    assert r.rc == 2 and one_line(r) and "runs/notes.txt" in r.err, r
    (site / "runs" / "notes.txt").unlink()
    assert lab.run("report", "-o", "site").rc == 0  # a site alone is replaced, as before


def test_the_working_directory_as_the_site(lab: Lab, shared: Shared) -> None:
    """`mkdir e && cd e && cyclebench report -o .`: written there, the directory itself kept."""
    database(lab, shared, "seed")
    inode = lab.cwd.stat().st_ino
    for _ in range(2):  # made, then replaced
        r = lab.run("report", "-o", ".")
        assert r.rc == 0, r
        assert (lab.cwd / "index.html").is_file() and lab.cwd.stat().st_ino == inode
    assert sorted(os.listdir(lab.dir)) == sorted(["case.db", "cmd0.err", "cmd0.out", "cmd1.err", "cmd1.out", "cwd",
                                                  "tmp"])


def test_a_link_to_a_directory_is_followed(lab: Lab, shared: Shared) -> None:
    database(lab, shared, "seed")
    (lab.cwd / "target").mkdir()
    (lab.cwd / "link").symlink_to("target")
    for _ in range(2):
        r = lab.run("report", "-o", "link")
        assert r.rc == 0, r
        assert os.readlink(lab.cwd / "link") == "target"
        assert (lab.cwd / "target" / "index.html").is_file()
        assert sorted(os.listdir(lab.cwd)) == ["link", "target"]  # nothing left beside them


def test_a_killed_builds_directory_is_swept_a_live_ones_kept(lab: Lab, shared: Shared) -> None:
    database(lab, shared, "seed")
    dead, live = lab.cwd / f".site.{a_gone_process()}.abc123", lab.cwd / f".site.{tag(os.getpid())}.def456"
    for d in (dead, live):
        (d / "runs").mkdir(parents=True)
        (d / "runs" / "1.html").write_text("half a site")
    assert lab.run("report", "-o", "site").rc == 0
    assert not dead.exists() and live.is_dir()
