"""Start a child process the way every measurement does: its own session, stdin from
/dev/null, dying with cyclebench, output read with bounded memory, killed as a whole (its
tree: kill_tree) at a time or memory limit or when cyclebench is interrupted (a benchmark that
daemonizes, forks or blocks signals still dies with its run).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from cyclebench.lifetime import proc_stats, spawn


class _PopenArgs(TypedDict):
    """The subprocess.Popen keywords every child gets: no stdin, stdout and stderr piped, its own
    session (setsid(2): Ctrl-C reaches only cyclebench), and its environment."""

    stdin: int
    stdout: int
    stderr: int
    start_new_session: bool
    env: dict[str, str]


@dataclass(frozen=True)
class Child:
    """What run_child saw: the child's output, exit status (negative: killed by that
    signal), whether it hit the time limit, its wall time in seconds, and ``limit``: why
    cyclebench killed it other than the timeout (memory cap, protocol flood), else None.
    ``stderr`` is only its last STDERR_TAIL bytes."""

    stdout: str
    stderr: str
    returncode: int
    timed_out: bool
    wall_s: float
    limit: str | None = None
    peak_rss: int | None = None  # bytes, when --max-rss watched it


# A benchmark looping on write(2, ...) produced 1.9 GB of stderr in 1 s, all held in
# memory; only a tail is ever shown (the last line names a crash), so that is all that is kept.
STDERR_TAIL = 64 * 1024
# The protocol is a few JSON lines per benchmark (raw samples: ~100 kB for 40 rounds × 8 sizes);
# more than this is a body writing into it, not a measurement.
PROTOCOL_CAP = 64 * 1024 * 1024
# After the child exits, a process it forked may still hold the pipes (such a result was once
# reported as a timeout): it is already complete, so wait this long for EOF, then kill the
# session and keep what was read.
EXIT_GRACE_S = 0.5
RSS_POLL_S = 0.05

_swept = False


def _sweep_stale_tmp() -> None:
    """Once per process: remove the private $TMPDIRs of cyclebench processes that are gone
    (a SIGKILLed CLI cannot remove its own; the directory names carry the pid)."""
    global _swept
    if _swept:
        return
    _swept = True
    for d in Path(tempfile.gettempdir()).glob("cyclebench-run-*-*"):
        pid = d.name.split("-")[2]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(d, ignore_errors=True)


def session_rss(sid: int) -> int:
    """Resident set size in bytes summed over every process of session ``sid`` (the child and
    whatever it forked), from /proc/PID/stat (field 6: session, 24: rss in pages; proc(5))."""
    page = os.sysconf("SC_PAGE_SIZE")
    return sum(int(fields[21]) * page for _, fields in proc_stats() if int(fields[3]) == sid)


def run_child(argv: list[str], timeout: float, max_rss: int | None = None, own_pdeathsig: bool = False) -> Child:
    """Run argv in its own session, stdin from /dev/null, output captured, and killed (its whole
    tree and session: it may have forked, daemonized or started threads) at ``timeout`` seconds, when its session's
    RSS exceeds ``max_rss`` bytes, or when the caller is interrupted — KeyboardInterrupt and
    every other exception propagate after the kill. The child also dies with this process
    (die_with_parent). Memory stays bounded: stdout up to PROTOCOL_CAP, stderr's tail only."""
    t0 = time.monotonic()
    # A private $TMPDIR, removed once the session is dead: what a killed benchmark (vfs/mix's
    # directory) or valgrind left there does not pile up in /tmp.
    _sweep_stale_tmp()
    tmpdir = tempfile.mkdtemp(prefix=f"cyclebench-run-{os.getpid()}-")
    try:
        # own_pdeathsig: the program sets PR_SET_PDEATHSIG itself (the runner does, first thing in
        # main), so no preexec_fn: fork+exec costs 2–4 ms instead of ~7 (×3 processes a benchmark)
        env = {**os.environ, "TMPDIR": tmpdir}
        if own_pdeathsig:  # the runner exits at once if its parent is no longer this process
            env["CYCLEBENCH_PARENT_PID"] = str(os.getpid())
        kw = _PopenArgs(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        start_new_session=True, env=env)
        proc = subprocess.Popen(argv, **kw) if own_pdeathsig else spawn(argv, **kw)
    except BaseException:
        shutil.rmtree(tmpdir, ignore_errors=True)
        raise
    try:
        return _wait(proc, t0, timeout, max_rss)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def _wait(proc: subprocess.Popen[bytes], t0: float, timeout: float, max_rss: int | None) -> Child:
    assert proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    timed_out, limit, peak = False, None, 0
    exited_at: float | None = None
    next_rss = t0
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    sel.register(proc.stderr, selectors.EVENT_READ)
    try:
        while sel.get_map():
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE_S:
                break
            if now - t0 >= timeout:
                timed_out = True
                break
            if max_rss is not None and now >= next_rss:
                next_rss = now + RSS_POLL_S
                peak = max(peak, session_rss(proc.pid))
                if peak > max_rss:
                    limit = f"exceeded --max-rss {max_rss / 2**20:g} MiB (RSS {peak / 2**20:.0f} MiB; killed)"
                    break
            wait = min(timeout - (now - t0), RSS_POLL_S if max_rss is not None or exited_at is not None else 0.2)
            for key, _ in sel.select(max(wait, 0.001)):
                data = os.read(key.fd, 1 << 16)
                if not data:
                    sel.unregister(key.fileobj)
                elif key.fileobj is proc.stdout:
                    out += data
                    if len(out) > PROTOCOL_CAP:
                        limit = f"wrote over {PROTOCOL_CAP >> 20} MiB into the protocol stream (killed)"
                else:
                    err += data
                    if len(err) > 2 * STDERR_TAIL:
                        del err[:-STDERR_TAIL]
            if limit:
                break
    except BaseException:
        _kill(proc)
        proc.wait()
        raise
    finally:
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
    if not (timed_out or limit):
        with contextlib.suppress(subprocess.TimeoutExpired):  # pipes at EOF: the child is exiting
            proc.wait(timeout=EXIT_GRACE_S)
    _kill(proc)  # what it forked dies with it; a no-op when the session is already gone
    proc.wait()
    return Child(out.decode(errors="replace"), err[-STDERR_TAIL:].decode(errors="replace"), proc.returncode,
                 timed_out, time.monotonic() - t0, limit, peak or None)


def _children(pid: int) -> list[int]:
    """The children of ``pid``: every thread's /proc/PID/task/TID/children (proc(5))."""
    out = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return out


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and every process below it, whatever session or process group they moved
    to. The tree is stopped first (SIGSTOP), walked again until no new process shows up (a
    stopped process forks no more; an orphan goes to the nearest subreaper above it, the
    runner's supervisor, still alive and stopped), then killed."""
    stopped: set[int] = set()
    pending = [pid]
    while pending:
        for p in pending:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGSTOP)
            stopped.add(p)
        pending = []
        for p in stopped:
            pending += [c for c in _children(p) if c not in stopped]
    for p in stopped:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, signal.SIGKILL)


def _kill(proc: subprocess.Popen[Any]) -> None:
    """Kill the child's whole tree (it may have forked, daemonized or left its process group:
    kill_tree) and its session (what is left of it). The runner's supervisor (engine/runner.c)
    is a child subreaper, so what its body started is in that tree even after a double fork."""
    if proc.returncode is None:
        kill_tree(proc.pid)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
