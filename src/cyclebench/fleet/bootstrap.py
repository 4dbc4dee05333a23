"""What the fleet's playbook runs on a host before cyclebench is installed there, with the
host's own Python (>= 3.10, standard library only: the playbook passes this file's text to
``python -c``, so nothing of it is read from a directory another user might write).

``prepare``  refuses a fleet directory another user can write (cyclebench_dir, every directory
             above it, and everything below it this machine uses), makes this machine's
             directory ``<dir>/hosts/<nodename>-<12 hex>`` (one per machine: two inventory names
             for one machine share it, machines sharing a home over NFS do not) and the job's
             directory in it, and prints their paths and the installed wheelhouse key (JSON).
``run``      takes the machine's lock (flock(2) on ``fleet.lock``), waiting up to ``--wait``
             seconds behind another job (then ``agent.json`` says which job held it: status
             busy), removes job directories whose owner is dead, installs the job's wheelhouse
             into the machine's venv when its key differs, then becomes ``cyclebench fleet agent``
             (execv: the same process, the lock's descriptor inherited, so the lock is held
             until the agent ends — installing and measuring never overlap another job's).
``stop``     stops an interrupted job's process (SIGTERM, SIGKILL after 10 s) and removes its
             directory.

docs/fleet.md; flock(2), execve(2) (open file descriptions and their locks survive exec), proc(5).
"""

from __future__ import annotations

import argparse
import fcntl
import grp
import hashlib
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import time
from pathlib import Path

LOCK, HOLDER, PID_FILE, AGENT_JSON = "fleet.lock", "holder.json", "agent.pid", "agent.json"
MARKER = "cyclebench-wheelhouse"  # in the venv: the key of the wheelhouse installed there
POLL_S = 0.5
STOP_GRACE_S = 10.0
# A job directory without a live owner is kept this long when its files may still be fetched
# (agent.json written) or copied in (no agent.pid yet): a fetch takes seconds after the agent ends,
# a wheelhouse copy over a slow link minutes.
FETCH_GRACE_S = 3600.0


class Refused(Exception):
    """One line for the user: the fleet directory is unsafe or the job cannot go on."""


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:64] or "_"


def machine_key() -> str:
    """``<nodename>-<12 hex of sha256(machine-id, nodename)>``: the same for two inventory names
    of one machine, different for machines sharing a home (and for clones sharing a machine-id)."""
    node = os.uname().nodename
    mid = ""
    for f in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            mid = Path(f).read_text().strip()
            break
        except OSError:
            continue
    return f"{_safe(node)}-{hashlib.sha256(f'{mid}/{node}'.encode()).hexdigest()[:12]}"


def paths(fleet_dir: Path, job: str, host: str) -> tuple[Path, Path]:
    """(this machine's directory, the job's directory for inventory name ``host``)."""
    host_dir = fleet_dir / "hosts" / machine_key()
    return host_dir, host_dir / "jobs" / f"{_safe(job)}-{_safe(host)}"


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _private_group(gid: int, uid: int) -> bool:
    """A user private group (named as the user, no other member): its write bit admits no one else."""
    try:
        g = grp.getgrgid(gid)
    except KeyError:
        return False
    me = _user(uid)
    return g.gr_name == me and set(g.gr_mem) <= {me}


def why_unsafe(st: os.stat_result, uid: int, above: bool = False) -> str | None:
    """Why another user could change what this entry holds, or None. ``above``: a directory
    above the fleet's, where a sticky bit (as on /tmp) keeps others from renaming ours."""
    if st.st_uid not in (uid, 0):
        return f"is owned by {_user(st.st_uid)}"
    if stat.S_ISLNK(st.st_mode):  # a link's own mode is never checked (symlink(7)); its owner is
        return None
    if above and stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX:
        return None
    if st.st_mode & stat.S_IWOTH:
        return "is writable by every user"
    if st.st_mode & stat.S_IWGRP and not _private_group(st.st_gid, uid):
        try:
            group = grp.getgrgid(st.st_gid).gr_name
        except KeyError:
            group = f"gid {st.st_gid}"
        return f"is writable by group {group}"
    return None


def check_tree(fleet_dir: Path, host_dir: Path, uid: int | None = None) -> None:
    """Refused naming the first entry another user can write: a directory above ``fleet_dir``,
    ``fleet_dir``, its hosts/ and everything under ``host_dir`` (the venv, wheels, jobs)."""
    uid = os.geteuid() if uid is None else uid
    fleet_dir, host_dir = Path(os.path.realpath(fleet_dir)), Path(os.path.realpath(host_dir))

    def check(p: Path, above: bool = False) -> None:
        try:
            st = os.lstat(p)
        except FileNotFoundError:  # not made yet, or removed by another job of ours meanwhile
            return
        why = why_unsafe(st, uid, above)
        if why:
            raise Refused(f"refusing the fleet directory: {p} {why}; another user could plant what the fleet "
                          "runs there (chmod go-w, chown, or set cyclebench_dir to a private directory)")

    for parent in reversed(fleet_dir.parents):
        check(parent, above=True)
    check(fleet_dir)
    check(fleet_dir / "hosts")
    check(host_dir)
    for root, dirs, files in os.walk(host_dir):
        for name in dirs + files:
            check(Path(root) / name)


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (proc(5) /proc/PID/stat field 22)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def write_owner(job_dir: Path) -> None:
    """agent.pid: this process (pid, start ticks, boot id), for stop and for the dead-owner sweep."""
    pid = os.getpid()
    tmp = job_dir / f".{PID_FILE}.{pid}"
    tmp.write_text(f"{pid} {_start_ticks(pid)} {_boot_id()}\n")
    os.replace(tmp, job_dir / PID_FILE)  # whole or absent: a sweep reading it half-written took a live job for dead


def owner_alive(job_dir: Path) -> bool | None:
    """Whether the process agent.pid names still runs (the same start, the same boot); None
    when there is no agent.pid or it cannot be read (then only its age tells)."""
    try:
        pid, ticks, boot = (job_dir / PID_FILE).read_text().split()
        return boot == _boot_id() and str(_start_ticks(int(pid))) == ticks
    except (OSError, ValueError):
        return None


def sweep(jobs_dir: Path, keep: Path, now: float | None = None) -> list[Path]:
    """Remove the job directories of ``jobs_dir`` whose owner is dead (killed with the
    controller, the machine rebooted): a dead owner without agent.json at once; one with
    agent.json, or a directory no process owns yet, once FETCH_GRACE_S have passed."""
    now = time.time() if now is None else now
    gone = []
    for d in sorted(jobs_dir.iterdir()) if jobs_dir.is_dir() else []:
        if d == keep or d.is_symlink() or not d.is_dir():
            continue
        alive = owner_alive(d)
        if alive:
            continue
        if alive is None or (d / AGENT_JSON).exists():
            try:
                newest = max(p.lstat().st_mtime for p in (d, *d.iterdir()))
            except OSError:
                continue
            if now - newest < FETCH_GRACE_S:
                continue
        shutil.rmtree(d, ignore_errors=True)
        gone.append(d)
    return gone


def _chain() -> list[tuple[int, int]]:
    """(pid, start ticks) of every ancestor below init (as cyclebench.runner.tether.ancestors,
    which this process cannot import yet)."""
    out: list[tuple[int, int]] = []
    pid = os.getppid()
    while pid > 1:
        ticks = _start_ticks(pid)
        try:
            ppid = int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            break
        if ticks is None:
            break
        out.append((pid, ticks))
        pid = ppid
    return out


def _lost(chain: list[tuple[int, int]]) -> bool:
    return any(_start_ticks(pid) != ticks for pid, ticks in chain)


def _write_json(path: Path, data: object) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)


def _holder(host_dir: Path) -> str:
    try:
        h = json.loads((host_dir / HOLDER).read_text())
        return (f"fleet job {h['job']} for {h['host']} holds this machine since {h['since']} "
                f"(cyclebench {' '.join(h['command'])})")
    except (OSError, ValueError, KeyError, TypeError):
        return "another fleet job holds this machine"


def take_lock(host_dir: Path, wait: float, holder: dict[str, object], chain: list[tuple[int, int]]) -> int:
    """The machine's lock (a descriptor holding flock(LOCK_EX) on fleet.lock), waiting up to
    ``wait`` s; Refused('busy: ...') naming the job that held it; KeyboardInterrupt when an
    ancestor of ``chain`` is gone while it waits (the controller was interrupted)."""
    fd = os.open(host_dir / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    t0 = time.monotonic()
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            pass
        if _lost(chain):
            os.close(fd)
            raise KeyboardInterrupt
        if time.monotonic() - t0 >= wait:
            held = _holder(host_dir)
            os.close(fd)
            raise Refused(f"busy: waited {wait:g} s; {held}")
        time.sleep(POLL_S)
    _write_json(host_dir / HOLDER, {**holder, "pid": os.getpid(), "since": time.strftime("%Y-%m-%d %H:%M:%S %Z")})
    return fd


def _pip(argv: list[str]) -> None:
    child = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if child.returncode != 0:
        last = " / ".join(x.strip() for x in (child.stderr or child.stdout).strip().splitlines()[-3:])
        raise Refused(f"installing cyclebench failed (exit {child.returncode}): {last}")


def install(host_dir: Path, job_dir: Path, key: str, version: str, wheel: str) -> None:
    """This machine's venv gets exactly the controller's cyclebench from the job's wheels.tar
    (pip install --no-index; --no-compile: no .pyc for all of scipy and matplotlib up front, a
    first install of two hosts took 58 s instead of 95 s on a loaded 2-CPU VM)."""
    archive = job_dir / "wheels.tar"
    if not archive.is_file():
        raise Refused("the venv here holds another cyclebench than this job's, installed while it waited; run the "
                      "job again")
    wheels, venv = host_dir / "wheels", host_dir / "venv"
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir()
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.12, and 3.10/3.11 security releases
            tar.extractall(wheels, filter="data")
        else:
            tar.extractall(wheels)  # our own archive of wheels: flat names only
    archive.unlink()
    (venv / MARKER).unlink(missing_ok=True)  # a half-done install is not taken for a done one
    fresh = not (venv / "bin" / "python").exists()
    if fresh:
        _pip([sys.executable, "-m", "venv", str(venv)])
    py = str(venv / "bin" / "python")
    quiet = ["--quiet", "--disable-pip-version-check", "--no-index", "--no-compile"]
    _pip([py, "-m", "pip", "install", *quiet, "--find-links", str(wheels), f"cyclebench[postgres]=={version}"])
    # A venv that held a cyclebench of this version (another build of it) keeps it above: put this
    # job's wheel in. A new venv got it from the wheels already (the only cyclebench there); a second
    # pip there cost 0.6-1.5 s of a first install's 8-11 s on a 2-CPU VM.
    if not fresh:
        _pip([py, "-m", "pip", "install", *quiet, "--no-deps", "--force-reinstall", str(wheels / wheel)])
    (venv / MARKER).write_text(key)


def installed_key(host_dir: Path) -> str:
    try:
        return (host_dir / "venv" / MARKER).read_text().strip()
    except OSError:
        return ""


def prepare(a: argparse.Namespace) -> None:
    fleet_dir = Path(a.dir)
    host_dir, job_dir = paths(fleet_dir, a.job, a.host)
    check_tree(fleet_dir, host_dir)
    (host_dir / "jobs").mkdir(parents=True, exist_ok=True)
    job_dir.mkdir(mode=0o700, exist_ok=True)
    print(json.dumps({"host_dir": str(host_dir), "job_dir": str(job_dir), "installed": installed_key(host_dir)}))


def _interrupted(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def run(a: argparse.Namespace) -> None:
    host_dir, job_dir = paths(Path(a.dir), a.job, a.host)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupted)
    chain = _chain()  # recorded first: the agent's tether watches these too (runner/tether.py)
    job_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_owner(job_dir)
    try:
        fd = take_lock(host_dir, a.wait, {"job": a.job, "host": a.host, "command": a.args}, chain)
    except Refused as e:  # the controller fetches this row's reason
        job_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        _write_json(job_dir / AGENT_JSON, {"host": a.host, "machine": {"hostname": os.uname().nodename},
                                           "command": a.args, "fatal": str(e), "check": None, "returncode": None,
                                           "runs": [], "bundles": []})
        return
    sweep(host_dir / "jobs", job_dir)
    if installed_key(host_dir) != a.key:
        install(host_dir, job_dir, a.key, a.version, a.wheel)
    if _lost(chain):  # the controller went while this job installed
        raise KeyboardInterrupt
    os.set_inheritable(fd, True)
    os.environ["CYCLEBENCH_CACHE"] = str(host_dir / "cache")  # builds kept with the rest of the fleet's files
    os.environ["CYCLEBENCH_TETHER"] = ",".join(f"{pid}:{ticks}" for pid, ticks in chain)
    py = str(host_dir / "venv" / "bin" / "python")
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    os.execv(py, [py, "-m", "cyclebench", "fleet", "agent", "--host", a.host, "--job-dir", str(job_dir),
                  *(["--db-stdin"] if a.db_stdin else []), "--", *a.args])


def stop(a: argparse.Namespace) -> None:
    _, job_dir = paths(Path(a.dir), a.job, a.host)
    if owner_alive(job_dir):
        pid = int((job_dir / PID_FILE).read_text().split()[0])
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        while owner_alive(job_dir) and time.monotonic() < deadline:
            time.sleep(0.1)
        if owner_alive(job_dir):
            os.kill(pid, signal.SIGKILL)
    shutil.rmtree(job_dir, ignore_errors=True)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="cyclebench-fleet-bootstrap")
    sub = p.add_subparsers(dest="what", required=True)
    for name in ("prepare", "run", "stop"):
        s = sub.add_parser(name)
        s.add_argument("--dir", required=True)
        s.add_argument("--job", required=True)
        s.add_argument("--host", required=True)
        if name == "run":
            s.add_argument("--key", required=True)
            s.add_argument("--version", required=True)
            s.add_argument("--wheel", required=True)
            s.add_argument("--wait", type=float, default=300.0)
            s.add_argument("--db-stdin", action="store_true")
            s.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    if getattr(a, "args", None) and a.args[0] == "--":
        a.args = a.args[1:]
    os.umask(0o022)  # what the fleet makes, only its user may write
    job_dir = paths(Path(a.dir), a.job, a.host)[1]
    try:
        {"prepare": prepare, "run": run, "stop": stop}[a.what](a)
    except Refused as e:
        print(e, file=sys.stderr)
        if a.what == "run":
            shutil.rmtree(job_dir, ignore_errors=True)
        return 2
    except KeyboardInterrupt:  # stopped, or its controller gone, before the agent started
        shutil.rmtree(job_dir, ignore_errors=True)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
