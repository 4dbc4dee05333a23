"""Exact-count profiles (gprof flat profiles with exact call counts, as in
docs/references.md#malloc-profiling-freebsd-2008): a program under
uftrace (functions built with ``-pg`` or ``-finstrument-functions``: every call's entry and
exit, timestamped) or under callgrind (any build: exact calls and simulated Ir per function).

The output of both is read back into calls per function — ``Calls``: every call's duration,
self time, and how many child and descendant calls it made, which is what the compensation
for the probe's own cost needs (stats/profile.py). Time a thread spent off the CPU (uftrace's
``linux:schedule`` events) is left out of the function it interrupted: it is no function's cost.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path

from cyclebench.lifetime import supervised
from cyclebench.runner.child import run_child
from cyclebench.runner.protocol import signal_name

UFTRACE_RECORD = ("uftrace", "record", "--no-libcall")  # library calls are not the user's functions


class ProfileError(Exception):
    """The profiler is missing, the program cannot run, or it left no trace: one line."""


@dataclass(frozen=True)
class Calls:
    """Every call of one function: durations (total, self: without its children) in the trace's
    unit, per call the number of child calls, of those that made calls of their own (``branches``:
    a caller pays less probe for them) and of all descendant calls, and its place in the
    call tree — ``id`` (calls numbered in the order they began, across functions), ``parent``
    (the calling call's id, -1 at the root) and ``depth`` (0 at the root) — so a caller's
    compensated total can be built from its own calls' children (stats/profile.py)."""

    total: list[float] = field(default_factory=list)
    self: list[float] = field(default_factory=list)
    children: list[int] = field(default_factory=list)
    descendants: list[int] = field(default_factory=list)
    branches: list[int] = field(default_factory=list)
    id: list[int] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)


def _need(tool: str, package: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise ProfileError(f"'{tool}' not found: install it (apt-get install {package})")
    return path


def uftrace_argv(out_dir: Path, argv: Sequence[str]) -> list[str]:
    """The argv that records ``argv`` into ``out_dir`` (a launcher prefix for the runner too).
    Not pinned: uftrace checks that the program it starts is instrumented (a taskset in between
    is not), and pinning uftrace's writer beside the program preempts it."""
    _need("uftrace", "uftrace")
    return [*UFTRACE_RECORD, "-d", str(out_dir), "--", *argv]


def record(argv: Sequence[str], out_dir: Path, timeout: float, cpu: int | None = None) -> float:
    """Run ``argv`` under uftrace into ``out_dir``, uftrace and all on CPU ``cpu`` (taskset; the
    clock was calibrated there); returns its wall seconds. Raises ProfileError when it does not
    start, crashes, times out, or records no function (a build without -pg / -finstrument-functions)."""
    pin = ["taskset", "-c", str(cpu)] if cpu is not None and shutil.which("taskset") else []
    # under the group supervisor: uftrace dies with cyclebench (PR_SET_PDEATHSIG), the program it
    # forked would not (a SIGKILLed `profile` left it running under PID 1); the supervisor kills the group
    child = run_child(supervised([*pin, *uftrace_argv(out_dir, argv)]), timeout)
    if child.timed_out:
        raise ProfileError(f"{argv[0]} did not end within {timeout:g} s (killed)")
    code = child.returncode if child.returncode < 0 else -(child.returncode - 128) if child.returncode > 128 else 0
    if code < 0:  # the supervisor says a signal as 128 + N
        raise ProfileError(f"{argv[0]} was killed by {signal_name(-code)} under uftrace")
    tail = child.stderr.strip().splitlines()[-1:] or [""]
    if not any(out_dir.glob("*.dat")):
        raise ProfileError(f"uftrace recorded nothing for {argv[0]}: {tail[0] or 'no trace'} (build it with -pg "
                           "or -finstrument-functions, or use --backend callgrind)")
    return child.wall_s


@dataclass(frozen=True)
class Trace:
    """A uftrace recording read back: every function's calls (durations in ns), and ``steps``, the
    differences between consecutive timestamps of one thread (ns, rounded; the first STEPS_KEPT),
    from which the clock's resolution is read (stats.profile.resolution)."""

    calls: dict[str, Calls]
    steps: list[int]


STEPS_KEPT = 20_000  # enough to tell a 10 ns clock from a 1 ns one (88% vs ~10% of steps on its grid)


def read_uftrace(out_dir: Path) -> dict[str, Calls]:
    """Every function's calls in a uftrace recording, durations in ns (read_trace's calls)."""
    return read_trace(out_dir).calls


def read_trace(out_dir: Path) -> Trace:
    """A uftrace recording (``uftrace dump --chrome``: B/E events per thread, timestamps in µs
    with ns digits): its calls per function and its timestamps' steps."""
    proc = subprocess.run([_need("uftrace", "uftrace"), "dump", "--chrome", "-d", str(out_dir)], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, check=False)
    if proc.returncode != 0:
        raise ProfileError(f"uftrace dump failed: {proc.stderr.strip()[:300]}")
    try:
        events = json.loads(proc.stdout)["traceEvents"]
    except (ValueError, KeyError) as e:
        raise ProfileError(f"uftrace dump printed no trace ({e})") from None
    return Trace(calls_of(events), steps_of(events))


def steps_of(events: Sequence[dict]) -> list[int]:
    """Differences between consecutive B/E timestamps of the same thread, in ns, rounded (the
    first STEPS_KEPT)."""
    last: dict[tuple[int, int], int] = {}
    steps: list[int] = []
    for ev in events:
        if ev.get("ph") not in ("B", "E"):
            continue
        key = (ev.get("pid", 0), ev.get("tid", ev.get("pid", 0)))
        ts = round(float(ev["ts"]) * 1000.0)
        if key in last:
            steps.append(ts - last[key])
            if len(steps) >= STEPS_KEPT:
                break
        last[key] = ts
    return steps


def calls_of(events: Sequence[dict]) -> dict[str, Calls]:
    """Chrome-format B/E events (uftrace dump --chrome: timestamps in µs) → calls per function (calls_in)."""
    return calls_in((ev["ph"], ev["name"], float(ev["ts"]) * 1000.0,
                     (ev.get("pid", 0), ev.get("tid", ev.get("pid", 0))))
                    for ev in events
                    if ev.get("ph") in ("B", "E"))


OFF_CPU = ("linux:", "probe:")  # uftrace's schedule events; the probe's own pauses and calibration (runner/probe.py)


def calls_in(stream: Iterable[tuple[str, str, float, object]]) -> dict[str, Calls]:
    """(ph "B" or "E", function, timestamp, thread) events, in order per thread → calls per
    function, durations in the timestamps' unit. A frame named with an OFF_CPU prefix is time off
    the function it interrupts (the thread off the CPU, or the probe's own work), never a call. A frame is
    [name, start, on-CPU time of its children, child calls, descendant calls, off-CPU time inside
    it, id, parent's id, child calls that made calls]; an E that does not match the innermost
    frame (longjmp, a lost record) closes frames up to its match."""
    out: dict[str, tuple[list, ...]] = {}  # per function, the columns of its Calls as they fill
    stacks: dict[object, list[list]] = {}
    next_id = 0
    for ph, fname, ts, key in stream:
        stack = stacks.setdefault(key, [])
        if ph == "B":
            stack.append([fname, ts, 0.0, 0, 0, 0.0, next_id, stack[-1][6] if stack else -1, 0])
            next_id += 1
            continue
        if not any(f[0] == fname for f in stack):
            continue
        while stack:
            name, start, child_on, nchild, ndesc, off, ident, up, nbranch = stack.pop()
            dur = ts - start
            parent = stack[-1] if stack else None
            if name.startswith(OFF_CPU):  # off the CPU: no function's cost, nor a call
                if parent is not None:
                    parent[5] += dur
            else:
                on = dur - off
                cols = out.setdefault(name, tuple([] for _ in fields(Calls)))
                for col, v in zip(cols, (on, on - child_on, nchild, ndesc, nbranch, ident, up, len(stack)),
                                  strict=True):
                    col.append(v)
                if parent is not None:
                    parent[2] += on
                    parent[3] += 1
                    parent[4] += 1 + ndesc
                    parent[5] += off
                    parent[8] += nchild > 0
            if name == fname:
                break
    return {name: Calls(*cols) for name, cols in out.items()}


# ---------------------------------------------------------------------------------- callgrind


@dataclass(frozen=True)
class Simulated:
    """One function under callgrind: exact calls into it, its own Ir and Ir with its callees."""

    calls: int = 0
    self_ir: int = 0
    total_ir: int = 0


def callgrind(argv: Sequence[str], out_file: Path, timeout: float, env: Sequence[str] = ()) -> dict[str, Simulated]:
    """Run ``argv`` under valgrind's callgrind (uncompressed output) and read it back; ``env``:
    NAME=VALUE settings for it (through env(1): valgrind does not follow an exec of env)."""
    vg = _need("valgrind", "valgrind")
    child = run_child([*(["env", *env] if env else []), vg, "--tool=callgrind", "--vgdb=no",
                       f"--callgrind-out-file={out_file}", "--compress-strings=no", "--compress-pos=no",
                       "--", *argv], timeout)
    if child.timed_out:
        raise ProfileError(f"{argv[0]} did not end within {timeout:g} s under callgrind (killed)")
    if not out_file.is_file():
        tail = (child.stderr.strip().splitlines() or ["no output"])[-1]
        raise ProfileError(f"callgrind wrote no profile for {argv[0]}: {tail}")
    return read_callgrind(out_file.read_text(errors="replace"))


def read_callgrind(text: str) -> dict[str, Simulated]:
    """The callgrind format (valgrind manual, "Callgrind Format Specification"): ``fn=`` opens
    a function's cost lines (position, then events; Ir first); ``cfn=`` + ``calls=N …`` say
    the next cost line is the inclusive cost of N calls into cfn."""
    out: dict[str, list[int]] = {}  # per function, [calls, self Ir, total Ir] as they add up
    names: dict[str, str] = {}
    positions, ir_col = 1, 0
    fn: list[int] | None = None
    callee: str | None = None
    pending: int | None = None  # calls of the cost line to come

    def name_of(ref: str) -> str:  # "(12) main" defines, "(12)" refers (when compressed)
        m = re.match(r"\((\d+)\)\s*(.*)", ref.strip())
        if not m:
            return ref.strip()
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), ref.strip())

    for line in text.splitlines():
        if line.startswith("positions:"):
            positions = len(line.split()[1:])
        elif line.startswith("events:"):
            evs = line.split()[1:]
            ir_col = evs.index("Ir") if "Ir" in evs else 0
        elif line.startswith("fn="):
            fn = out.setdefault(name_of(line[3:]), [0, 0, 0])
        elif line.startswith("cfn="):
            callee = name_of(line[4:])
        elif line.startswith("calls="):
            pending = int(line[6:].split()[0])
        elif line[:1].isdigit() or line[:1] in "+-*":
            cost = line.split()[positions:]
            ir = int(cost[ir_col]) if len(cost) > ir_col else 0
            if fn is None:
                continue
            if pending is not None and callee is not None:
                out.setdefault(callee, [0, 0, 0])[0] += pending
                fn[2] += ir
                pending = None
            else:
                fn[1] += ir
                fn[2] += ir
    return {name: Simulated(*sums) for name, sums in out.items()}


def exit_note(returncode: int) -> str:
    """'' for exit 0, else what ended it (for the profile's title)."""
    if returncode == 0:
        return ""
    return f"killed by {signal_name(-returncode)}" if returncode < 0 else f"exit {returncode}"
