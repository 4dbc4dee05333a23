"""Children die with cyclebench: the one preexec_fn every child process gets (the runner, perf,
valgrind, statexec, the compiler), so SIGKILL or the OOM killer of the CLI leaves nothing spinning
(a hung benchmark once ran on at 100% of its pinned CPU; cc1 after a kill mid-build: the
compiler's whole group is supervised, ``supervised``). Imports nothing of the project: every
room may use it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1
_libc: Any = None


def die_with_parent() -> Callable[[], None]:
    """A ``preexec_fn`` that makes the child get SIGKILL when this process dies, whatever kills
    it (SIGKILL and the OOM killer included: no handler runs then). prctl(2) PR_SET_PDEATHSIG
    fires when the forking *thread* exits; run_child waits in that thread, so it outlives the
    child. The getppid check closes the race of a parent that died before prctl ran."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    prctl, parent = _libc.prctl, os.getpid()

    def pre() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(137)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())  # spawn() blocked them around the fork

    return pre


_STOPPING = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def spawn(argv: Sequence[str], preexec: Callable[[], None] | None = None, **kw: Any) -> subprocess.Popen[Any]:
    """subprocess.Popen with ``preexec`` (default die_with_parent()), SIGINT/SIGTERM/SIGHUP held
    back around the fork: with a preexec_fn Python runs its at-fork hooks (logging's, imported by
    SQLAlchemy and Alembic), and a Ctrl-C landing in one was printed as "Exception ignored …
    KeyboardInterrupt" and lost. A signal that came meanwhile is raised once the child exists,
    and the child is killed then; the child starts with no signal blocked."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    proc = None
    try:
        try:
            proc = subprocess.Popen(list(argv), preexec_fn=preexec or die_with_parent(), **kw)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
    except BaseException:
        if proc is not None:
            proc.kill()
            proc.wait()
        raise
    return proc


# The compiler driver forks cc1, as and collect2; PR_SET_PDEATHSIG on the driver does not reach
# them, and a SIGKILLed cyclebench left cc1 compiling on for seconds. A small Python process
# stands between: it leads the compiler's process group, gets SIGTERM when cyclebench dies
# (PR_SET_PDEATHSIG, which it can handle) and then kills the whole group, itself included.
# ~15 ms a compiler run (python -S; the build cache keeps most builds from running one).
_SUPERVISOR = r"""
import ctypes, os, signal, sys
parent = int(sys.argv[1])
ctypes.CDLL(None).prctl(1, signal.SIGTERM, 0, 0, 0)
def stop(*_):
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.killpg(0, signal.SIGKILL)
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, stop)
if os.getppid() != parent:
    stop()
pid = os.fork()
if pid == 0:
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    except OSError as e:
        sys.stderr.write(f"{sys.argv[2]}: {e.strerror}\n")
        os._exit(127)
while True:
    try:
        _, status = os.waitpid(pid, 0)
        break
    except InterruptedError:
        continue
code = os.waitstatus_to_exitcode(status)
os._exit(code if code >= 0 else 128 - code)
"""


def supervised(argv: Sequence[str]) -> list[str]:
    """``argv`` run under the group supervisor above: start it with ``start_new_session=True``
    (so it leads a group that holds the whole tree of ``argv``), and the tree dies with this
    process however this process ends. Its exit status is the command's (128 + N for a signal)."""
    import sys

    return [sys.executable, "-S", "-c", _SUPERVISOR, str(os.getpid()), *argv]


# ---- what a process leaves on disk while it works (a site being built, a profile's files, a
# checkout): its name carries the owner's tag, so that a later run can tell debris of a process
# that is gone (SIGKILL, a power cut) from the work of one still running.

_TAG = re.compile(r"(\d+)-(\d+)")


def _start_time(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (proc(5)): the process's start, in clock ticks after boot;
    with the pid it names one process for the machine's uptime (pids are reused, start times
    with them are not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def owner_tag() -> str:
    """This process as "PID-START", for the names of what it leaves on disk while it works."""
    pid = os.getpid()
    return f"{pid}-{_start_time(pid) or 0}"


def owner_gone(tag: str) -> bool:
    """True when ``tag`` (:func:`owner_tag`) names a process that has ended; False for one
    alive and for a name that is no tag (not ours to judge)."""
    m = _TAG.fullmatch(tag)
    if m is None:
        return False
    return _start_time(int(m[1])) != int(m[2])


def sweep(parent: Path, prefix: str) -> list[Path]:
    """Remove the entries of ``parent`` named ``prefix`` + a tag (+ anything not a digit after
    it) whose owner is gone; the ones removed. What cannot be removed is left (another user's)."""
    gone: list[Path] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return gone
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        m = re.match(r"\d+-\d+(?!\d)", entry.name[len(prefix):])
        if m is None or not owner_gone(m[0]):
            continue
        path = Path(entry.path)
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            continue
        gone.append(path)
    return gone


# ---- descendants that detach themselves

_PR_SET_CHILD_SUBREAPER = 36


def proc_stats() -> Iterator[tuple[int, list[bytes]]]:
    """Every live process's pid and /proc/PID/stat fields after its command name (field 3, the
    state, first; proc(5)); processes gone meanwhile are passed over."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                yield int(entry.name), f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue


def _children() -> list[int]:
    """This process's live children, from /proc/PID/stat (field 4: the parent; proc(5))."""
    me = os.getpid()
    return [pid for pid, fields in proc_stats() if len(fields) > 1 and int(fields[1]) == me]


def _subreaper(on: bool) -> None:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    _libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)


@contextlib.contextmanager
def reaping() -> Iterator[None]:
    """While the block runs, this process is the subreaper of its descendants (prctl(2)
    PR_SET_CHILD_SUBREAPER): one orphaned by its parent's death comes back to it, not to PID 1.
    At the end, every child still alive — a descendant that detached itself (setsid) and
    outlived its parent: Ansible's forked workers, once ansible-playbook's process group was
    killed — is killed and reaped, and so are theirs, until none is left. Start no child in the
    block that must outlive it."""
    _subreaper(True)
    try:
        yield
    finally:
        try:
            for _ in range(100):  # each round: the children, then the orphans they leave
                left = _children()
                if not left:
                    break
                for pid in left:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                for pid in left:
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(pid, 0)
        finally:
            _subreaper(False)
