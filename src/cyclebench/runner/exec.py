"""Whole commands run the way `cyclebench stat` measures them.

``launch`` runs a command under the launcher (engine/statexec.c, built by build.statexec):
it forks, opens the counter groups on the child's pid with ``enable_on_exec`` (nothing of
the harness is counted) and ``inherit`` (the command's children are), releases the child
into ``execvp``, times it with CLOCK_MONOTONIC, takes user/sys time from ``wait4`` and prints
the raw group reads as one JSON line on a pipe of its own, so the command's output never
mixes with it. The reads are decoded by counters, summarised by stats.repetitions.

``launch_callgrind`` runs the command under ``valgrind --tool=callgrind`` instrumented from
the start (no client requests: the whole program, its children too) with the fixed cache
geometry of runner.callgrind, and adds the simulated event totals of every process.
Limitation (valgrind 3.19, seen here): a process that calls execve loses the instructions
it ran before the exec (callgrind dumps at exit only, and the new image writes the same
per-pid file): ``sh -c 'a; exec b'`` reports a and b, not the shell.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from cyclebench import counters
from cyclebench.counters import Event
from cyclebench.lifetime import die_with_parent, spawn
from cyclebench.model import Repetition
from cyclebench.runner import callgrind


class LaunchError(Exception):
    """The launcher itself failed (not the command): one line."""


# A command under SCHED_FIFO that never blocks would own its CPU: RLIMIT_RTTIME sends it
# SIGXCPU after this much CPU time without a blocking call (the runner's own --fifo does the same).
FIFO_RTTIME_US = 60_000_000


def pinned(cpu: int | None, fifo: int | None) -> Callable[[], None]:
    """A preexec_fn: die with cyclebench, then pin to ``cpu`` and take SCHED_FIFO at ``fifo``
    (sched_setaffinity(2), sched_setscheduler(2)); statexec and the command inherit both."""
    die = die_with_parent()

    def pre() -> None:
        die()
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
        if fifo is not None:
            resource.setrlimit(resource.RLIMIT_RTTIME, (FIFO_RTTIME_US, FIFO_RTTIME_US + 1_000_000))
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(fifo))

    return pre


def launch(exe: Path, argv: Sequence[str], groups: Sequence[Sequence[Event]] = (),
           inherit: bool = True, cpu: int | None = None, fifo: int | None = None) -> Repetition:
    """One run of ``argv`` under the launcher: its JSON line as a dict (type "stat" or
    "exec_error"), pinned to ``cpu`` and at SCHED_FIFO ``fifo`` when given. The command's
    stdin/stdout/stderr are ours. Raises LaunchError (also when --fifo is not permitted)."""
    cmd = [str(exe)]
    if groups:
        cmd += counters.groups_argv(groups)
    if not inherit:
        cmd.append("--no-inherit")
    r, w = os.pipe()
    try:
        proc = spawn([*cmd, "--json-fd", str(w), "--", *argv], pinned(cpu, fifo), pass_fds=(w,))
    except subprocess.SubprocessError as e:  # the preexec_fn failed: no permission for SCHED_FIFO
        os.close(r)
        raise LaunchError(f"cannot start the command pinned/at --fifo {fifo}: {e} (SCHED_FIFO needs root or "
                          "CAP_SYS_NICE)") from None
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)
    try:
        with os.fdopen(r, "rb") as f:
            data = f.read()
        rc = proc.wait()
    except BaseException:  # Ctrl-C or SIGTERM reaching only us: statexec and the command go too
        proc.kill()
        proc.wait()
        raise
    if rc != 0 or not data.strip():
        raise LaunchError(f"the stat launcher failed (exit {rc}) running {shlex.join(argv)}")
    rec: Repetition = json.loads(data.decode())
    return rec


def valgrind_tmpdir_problem() -> str | None:
    """Why valgrind could not start here, or None: it writes its client's command-line file into
    $TMPDIR (else /tmp; valgrind's coregrind/m_libcfile.c, VG_(tmpdir)) and, when it cannot, prints
    a dozen VG_(mkstemp) lines and exits 1 before the command runs. Checked by creating and removing
    a file there, the way valgrind does (os.access says yes to root on a read-only mount)."""
    where = os.environ.get("TMPDIR") or "/tmp"
    try:
        fd, name = tempfile.mkstemp(prefix="cb-vgcheck-", dir=where)
    except OSError as e:
        src = "TMPDIR" if os.environ.get("TMPDIR") else "/tmp (TMPDIR unset)"
        return (f"valgrind needs a writable temporary directory: {src} = {where}: {e.strerror or e}; "
                "set TMPDIR to one")
    os.close(fd)
    os.unlink(name)
    return None


def launch_callgrind(exe: Path, argv: Sequence[str], cache: dict[str, tuple[int, int, int]]) -> Repetition:
    """One run of ``argv`` under callgrind, itself under the launcher: the launcher's record
    plus ``events`` (simulated totals over every process) and ``processes``; a valgrind that
    could not start the command gives an "exec_error" record. Raises LaunchError."""
    with tempfile.TemporaryDirectory(prefix="cb-stat-cg-") as tmp:
        out = Path(tmp) / "cg.out"
        vg = callgrind.valgrind_argv(out, cache)
        vg = [a.replace("--instr-atstart=no", "--instr-atstart=yes").replace("--collect-atstart=no",
                                                                              "--collect-atstart=yes")
              for a in vg]
        vg += ["--trace-children=yes", f"--log-file={Path(tmp) / 'vg.log'}.%p"]
        rec = launch(exe, [*vg, *argv])
        events: dict[str, int] = {}
        files = sorted(Path(tmp).glob("cg.out.*"))
        for f in files:
            for ev, v in callgrind.parse_dump(f)[1].items():
                events[ev] = events.get(ev, 0) + v
        rec["events"] = events
        rec["processes"] = len(files)
        if rec.get("type") == "stat" and not files:
            logs = [ln for f in sorted(Path(tmp).glob("vg.log.*")) for ln in f.read_text(errors="replace")
                    .splitlines() if ln.strip()]
            if any("cannot find" in ln or "No such file" in ln or "Permission denied" in ln for ln in logs):
                rec = {"type": "exec_error", "error": logs[-1].split("valgrind: ")[-1]}
            else:
                rec["valgrind_log"] = logs[-5:]
        return rec


def run_pre(argv: Sequence[str]) -> int:
    """Run a preparation command (not measured), its output ours; its exit status. Raises OSError."""
    return subprocess.run(list(argv), check=False).returncode
