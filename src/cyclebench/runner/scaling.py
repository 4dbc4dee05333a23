"""The runner in scaling mode (README "Scaling"): one benchmark run by N tasks at once.

The runner (engine/scale.c) starts N pinned tasks (threads or processes) that run the body
in small batches and bump their own counter; a sampler prints every interval how many
operations each task did and, from schedstat, how long each task ran and waited for its
CPU. run_one starts it once and reads its lines into a ScaleRun (model); how the child
ended is decided by the one classifier, runner.protocol.classify. parse_tasks, parse_modes
and ScaleOptions say what the runner is asked to do. The statistics of its lines are
stats.scaling's; the sweep over task counts is the `scale` command's.

A will-it-scale test case (engine/wis.c; its start line carries "wis") runs the same way;
a task that never bumped its counter fails its run, since nothing else would show that the
test case did no work (it hung, or loops without ``(*iterations)++``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from cyclebench.model import CRASHED, DISTURBED, ERROR, FAILED, INVALID, SKIPPED, Interval, ScaleRun, kept_off
from cyclebench.runner.child import run_child
from cyclebench.runner.protocol import classify, last_stderr_line, parse_lines

MODES = ("threads", "processes")
# A task that waited for its CPU more than this share of the measured time was starved by other
# programs, whatever its testcase() does (stats.scaling.WAIT_LIMIT judges intervals alike)
STARVED_WAIT = 0.02


class ScaleError(ValueError):
    """Bad scaling options (task list, mode): one line for the user."""


def parse_tasks(text: str) -> list[int]:
    """``"1..4"`` → [1, 2, 3, 4]; ``"1,2,4"`` → [1, 2, 4]; ``"4"`` → 1..4 (a sweep up to 4).
    Parts combine: ``"1..4,8"``. 1 is always included: speed-up and efficiency are relative to it."""
    text = text.strip()
    if re.fullmatch(r"\d+", text):
        text = f"1..{text}"
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)\s*(?:\.\.|-)\s*(\d+)", part)
        try:
            if m:
                lo, hi = int(m.group(1)), int(m.group(2))
                if lo > hi:
                    raise ScaleError(f"--tasks: empty range '{part}'")
                out.update(range(lo, hi + 1))
            elif part:
                out.add(int(part))
        except ValueError:
            raise ScaleError(f"--tasks: '{part}' is not a task count or a range a..b") from None
    if not out or min(out) < 1 or max(out) > 1024:
        raise ScaleError("--tasks: task counts are 1..1024")
    return sorted(out | {1})


def default_tasks(ncpus: int) -> list[int]:
    """Powers of two up to the CPU count, the CPU count, and one more (oversubscription shown)."""
    counts = {1, ncpus, ncpus + 1}
    p = 2
    while p < ncpus:
        counts.add(p)
        p *= 2
    return sorted(counts)


def parse_modes(text: str) -> list[str]:
    if text == "both":
        return list(MODES)
    if text not in MODES:
        raise ScaleError("--mode: threads, processes or both")
    return [text]


@dataclass(frozen=True, kw_only=True)
class ScaleOptions:
    """How long and how finely one runner invocation samples."""

    duration: float = 2.0  # seconds sampled after the warm-up
    interval: float = 0.1  # seconds between two reads of the counters
    warmup: float = 0.5  # seconds of intervals marked warm-up
    batch_ns: float = 20000.0  # a task's batch between two counter bumps

    def timeout(self) -> float:
        """Per runner: set-up and start-up (generous: oversubscribed set-ups queue) + sampling."""
        return 20.0 + 2 * (self.warmup + self.duration)


def _cpu_stat() -> dict[int, list[int]]:
    """Per-CPU counters of /proc/stat (USER_HZ ticks); {} when unreadable."""
    out: dict[int, list[int]] = {}
    try:
        text = Path("/proc/stat").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        m = re.match(r"cpu(\d+)\s+(.*)", line)
        if m:
            out[int(m.group(1))] = [int(x) for x in m.group(2).split()]
    return out


def _idle_share(before: dict[int, list[int]], after: dict[int, list[int]]) -> float | None:
    """Share of all CPUs' time spent idle or waiting for I/O (columns 4 and 5 of /proc/stat),
    what will-it-scale reports as its ``*_idle`` columns (over user..steal, guest being in user)."""
    total = idle = 0
    for c, a in after.items():
        if c in before and len(a) > 7:
            d = [x - y for x, y in zip(a, before[c], strict=False)]
            total += sum(d[:8])
            idle += d[3] + d[4]
    return idle / total if total > 0 else None


def _steal_share(before: dict[int, list[int]], after: dict[int, list[int]], cpus: set[int]) -> float | None:
    """Share of the tasks' CPUs' time stolen by the hypervisor (column 8 of /proc/stat)."""
    total = steal = 0
    for c in cpus:
        if c in before and c in after and len(after[c]) > 7:
            d = [a - b for a, b in zip(after[c], before[c], strict=False)]
            total += sum(d[:8])
            steal += d[7]
    return steal / total if total > 0 else None


def _argv(binary: Path, bench: str, param: int | None, mode: str, tasks: int, opts: ScaleOptions,
          cpus: Sequence[int]) -> list[str]:
    argv = [str(binary), "--scale", bench, *(["--param", str(param)] if param is not None else []),
            "--tasks", str(tasks), "--mode", mode, "--duration", f"{opts.duration:g}",
            "--interval", f"{opts.interval:g}", "--warmup", f"{opts.warmup:g}", "--batch-ns", f"{opts.batch_ns:g}"]
    if cpus:
        argv += ["--cpus", ",".join(map(str, cpus))]
    return argv


def run_one(binary: Path, bench: str, param: int | None, mode: str, tasks: int, opts: ScaleOptions,
            cpus: Sequence[int]) -> ScaleRun:
    """Run the runner in scaling mode once. Never raises for the benchmark's own faults (crash,
    hang, skip): they come back in the ScaleRun, with every interval printed before them.
    KeyboardInterrupt kills the runner (all its tasks) and propagates."""
    stat0 = _cpu_stat()
    timeout = opts.timeout()
    # own_pdeathsig: supervised like run's runners (engine/runner.c), so a task that daemonized goes too
    child = run_child(_argv(binary, bench, param, mode, tasks, opts, cpus), timeout, own_pdeathsig=True)
    stat1 = _cpu_stat()
    lines = parse_lines(child.stdout)
    start = end = crash = None
    intervals = []
    for ln in lines:
        kind = ln.get("type")
        if kind == "scale_start":
            start = ln
        elif kind == "interval":
            intervals.append(ln)
        elif kind == "scale_end":
            end = ln
        elif kind == "task_crash" and crash is None:
            crash = ln
    run = ScaleRun(bench, param, mode, tasks, start=start, intervals=tuple(intervals), end=end, crash=crash,
                   steal=_steal_share(stat0, stat1, {cpus[i % len(cpus)] for i in range(tasks)} if cpus else set()),
                   wall_s=child.wall_s, stderr=child.stderr[-4000:], idle=_idle_share(stat0, stat1))
    finals = [ln for ln in lines if ln.get("type") in ("skip", "fail", "error")]
    ended = classify(child, timeout)
    if ended is not None:  # a limit, the timeout or a signal: the intervals printed before it are kept
        status, reason = ended
        reason = f"{reason} after {len(run.intervals)} interval(s)"
        if status == CRASHED and mode == "threads":
            reason += " (threads mode: a crashing task kills the whole runner)"
        return replace(run, status=status, reason=reason)
    if run.crash is not None:
        tail = last_stderr_line(child.stderr)  # an assert's message, a helper's complaint
        return replace(run, status=CRASHED, reason=f"{run.crash.get('reason')} after {len(run.intervals)} "
                       "interval(s)" + (f" ({tail})" if tail else ""))
    if finals:
        f = finals[0]
        return replace(run, status={"skip": SKIPPED, "fail": FAILED}.get(f["type"], ERROR), reason=f.get("reason"))
    if run.end is None:
        tail = [ln for ln in child.stderr.strip().splitlines() if ln.strip()]
        return replace(run, status=ERROR, reason=f"runner exited {child.returncode} without an end line"
                       + (f": {tail[-1][:200]}" if tail else ""))
    verified, reasons = run.end.get("verified") or [], run.end.get("reasons") or []
    bad = [(i, r) for i, (v, r) in enumerate(zip(verified, reasons, strict=False)) if v is False]
    if bad:
        return replace(run, status=INVALID, reason=f"verification failed in task {bad[0][0]}: {bad[0][1]}")
    if (run.start or {}).get("wis") is not None:
        return _never_bumped(run)
    return run


def _never_bumped(run: ScaleRun) -> ScaleRun:
    """A will-it-scale task whose counter stayed at 0 to the end fails the run (FAILED); so does
    one that bumped it only outside the measured intervals (in the warm-up, or after the last
    one): its testcase() spent them setting up or blocked — pread1, whose every task makes and
    writes its own file in /tmp first, stayed in it through a 0.1 s warm-up and 0.3 s of
    intervals while other jobs' compiles loaded this VM, and its row read 0 ops/s as if measured.
    ``run`` itself when every task counted in the measured intervals, else a new, failed one."""
    total = (run.end or {}).get("total_ops") or []
    idle = [i for i, n in enumerate(total) if not n]
    if idle:
        which = (f"task {idle[0]} never bumped its counter" if len(idle) == 1 else
                 f"tasks {', '.join(map(str, idle))} never bumped their counters")
        return replace(run, status=FAILED, reason=f"{which} in {(run.end or {}).get('sampled_s') or 0:.1f} s: "
                       "testcase() hung, or loops without (*iterations)++")
    measured = [iv for iv in run.intervals if not iv.get("warmup")]
    quiet = [i for i in range(len(total)) if measured and not any((iv.get("deltas") or [0] * len(total))[i]
                                                                  for iv in measured)]
    if quiet:
        which = f"task {quiet[0]}" if len(quiet) == 1 else f"tasks {', '.join(map(str, quiet))}"
        starved = _starved(measured, quiet)
        if starved is not None:
            return replace(run, status=DISTURBED, reason=(
                f"{which} counted no operation in the {len(measured)} measured interval(s): it waited "
                f"{100 * starved:.0f}% of them for its CPU (other programs on the host); measure again when it "
                "is quieter"))
        return replace(run, status=FAILED, reason=(
            f"{which} counted no operation in the {len(measured)} measured interval(s), only outside "
            f"them ({total[quiet[0]]} in all): testcase() was setting up or blocked all along; a longer "
            "--warmup or --duration may help"))
    return run


def _starved(measured: Sequence[Interval], tasks: Sequence[int]) -> float | None:
    """The largest share of the measured time one of ``tasks`` waited for its CPU when above
    STARVED_WAIT: the host kept it from running, its testcase() did not block. None when none
    waited that long, or the intervals carry no schedstat. What it waited is the larger of two
    lower bounds: schedstat's wait_ns (runnable, not running; Documentation/scheduler/
    sched-stats.rst), and the intervals it spent runnable without running at all (kept_off): a
    wait is charged only when the task runs again, so one kept off its CPU to the end of the
    measured intervals reads 0 wait there (slow_setup beside other tests: 0 ops, 0 run, 0 wait
    for 0.3 s, failed as blocked)."""
    if not measured or not all("wait_ns" in iv for iv in measured):
        return None
    total = sum(iv["dt"] for iv in measured)
    if total <= 0:
        return None
    share = max(max(sum(iv["wait_ns"][t] for iv in measured) / 1e9,
                    sum(iv["dt"] for iv in measured if kept_off(iv, t))) / total for t in tasks)
    return share if share > STARVED_WAIT else None
