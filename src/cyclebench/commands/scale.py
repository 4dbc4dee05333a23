"""Scaling mode (DESIGN.md §6): how throughput grows with the number of tasks.

For each benchmark, mode (threads, processes) and task count, the runner (engine/c)
starts N pinned tasks that run the body in small batches and bump their own counter; a
sampler prints every interval how many operations each task did, and (from schedstat) how
long each task ran and waited for its CPU. This module runs the sweep, turns the interval
lines into statistics and stores one result row per task count.

Statistics of one task count, over the intervals after the warm-up:
  - total ops/s: per interval Σ deltas / dt; median, min and max over intervals;
  - per task: each task's median ops/s over intervals; min / median / max across tasks, and
    fairness = slowest / fastest task (1 = fair) with the CV across tasks;
  - speed-up = total(N) / total(1) and efficiency = speed-up / N (1 = perfect scaling).
    The task counts are measured in ``passes`` short alternating passes (1, 2, …, N, then
    N, …, 1, …) and the speed-up is the median over passes of each pass's own ratio: a VM's
    core clock and its host's load drift by 10–25% over seconds (seen on the project's AMD
    EPYC VM: one task of getppid at 3.86M ops/s, then 4.81M ten seconds later), which a
    1-task run and an N-task run seconds apart would read as scaling. The same idea as
    `compare`'s interleaving, at the granularity a process start allows. The other
    statistics pool the intervals of all passes;
  - ns/op per task: CPU time per operation (schedstat run time / ops; wall time without
    schedstat), the cost of one operation as the task sees it;
  - disturbed intervals: when no more tasks than CPUs, an interval in which a task waited
    for its CPU (schedstat wait time) longer than WAIT_LIMIT of it means another program
    ran there; such intervals are dropped (kept in the database), as `run` drops disturbed
    batches; a task count with too few undisturbed intervals is measured again (``retries``)
    and the least disturbed attempt kept. Oversubscribed runs wait by design: nothing is
    dropped, the note says so;
  - the sampler's own CPU use, as a share of one CPU.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import numpy as np

from cyclebench import __version__
from cyclebench.build import DEFAULT_CFLAGS, Binary, BuildError, BuildSpec, build, suite_sources
from cyclebench.commands._common import (
    FAILED_STATUSES,
    UserError,
    err,
    open_store,
    out,
)
from cyclebench.env import sysinfo
from cyclebench.env.identity import code_revision
from cyclebench.model import CRASHED, ERROR, FAILED, INVALID, OK, SKIPPED, TIMEOUT, Item, Series
from cyclebench.runner import Runner, RunnerError, run_child
from cyclebench.runner.plan import SelectionError, plan
from cyclebench.runner.protocol import parse_lines as _parse_lines
from cyclebench.runner.protocol import signal_name as _signal_name
from cyclebench.store import Store, StoreError
from cyclebench.store import runfile as json_report

MODES = ("threads", "processes")
WAIT_LIMIT = 0.02  # a task waiting for its CPU more than 2% of an interval: the interval is disturbed
MIN_KEPT = 3  # fewer undisturbed intervals than this: keep them all, and say the run was disturbed
UNIT = "ops/s"


class ScaleError(ValueError):
    """Bad scaling options (task list, CPU list, mode): one line for the user."""


# ----------------------------------------------------------------------------- options


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


def _can_pin(cpu: int) -> bool:
    try:
        old = os.sched_getaffinity(0)
    except OSError:
        return True
    try:
        os.sched_setaffinity(0, {cpu})
    except (OSError, ValueError):
        return False
    finally:
        os.sched_setaffinity(0, old)
    return True


def parse_cpus(text: str) -> list[int]:
    """A user's CPU list (kernel syntax ``0-3,8``; order kept for plain lists), each checked."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    cpus: list[int] = []
    for p in parts:
        got = sysinfo.parse_cpu_list(p)
        if not got:
            raise ScaleError(f"--cpus: '{p}' is not a CPU number or range")
        cpus += [c for c in got if c not in cpus]
    for c in cpus:
        if not _can_pin(c):
            allowed = ",".join(map(str, sorted(os.sched_getaffinity(0))))
            raise ScaleError(f"--cpus: CPU {c} is not available here (allowed: {allowed})")
    return cpus


def cpu_order(root: Path = sysinfo.ROOT) -> list[int]:
    """The CPUs tasks are placed on, in order: one CPU of every core first (the core of CPU 0
    last: it takes most interrupts and housekeeping), then the second SMT thread of every
    core, and so on. Task i runs on order[i % len(order)]."""
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    cores: dict[tuple[int, int, int], list[int]] = {}
    for c in allowed:
        top = sysinfo.cpu_topology(c, root)
        key = (top.get("package_id") or 0, top.get("die_id") or 0,
               top.get("core_id") if top.get("core_id") is not None else c)
        cores.setdefault(key, []).append(c)
    groups = sorted(cores.values(), key=lambda g: (0 in g, min(g)))
    order: list[int] = []
    for rank in range(max((len(g) for g in groups), default=0)):
        order += [g[rank] for g in groups if rank < len(g)]
    return order


@dataclass
class ScaleConfig:
    """Everything `cyclebench scale` was asked to do."""

    spec: BuildSpec
    globs: Sequence[str] = ()
    tasks: Sequence[int] = (1, 2)
    modes: Sequence[str] = ("threads",)
    duration: float = 2.0
    interval: float = 0.1
    warmup: float = 0.5
    cpus: Sequence[int] | None = None  # None: cpu_order()
    batch_ns: float = 20000.0
    retries: int = 2  # a disturbed task count is measured again up to this many times
    passes: int = 3  # alternating passes over the task counts, each lasting duration / passes
    command: Sequence[str] = ()

    def timeout(self) -> float:
        """Per runner: set-up and start-up (generous: oversubscribed set-ups queue) + sampling."""
        return 20.0 + 2 * (self.warmup + self.duration)


# ----------------------------------------------------------------------------- one run


@dataclass
class ScaleRun:
    """What one runner invocation (one benchmark, mode and task count) produced."""

    bench: str
    param: int | None
    mode: str
    tasks: int
    status: str = OK
    reason: str | None = None
    start: dict[str, Any] | None = None
    intervals: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    crash: dict[str, Any] | None = None
    steal: float | None = None  # hypervisor steal on the tasks' CPUs, share of their time
    wall_s: float = 0.0
    stderr: str = ""


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


def _steal_share(before: dict[int, list[int]], after: dict[int, list[int]], cpus: set[int]) -> float | None:
    """Share of the tasks' CPUs' time stolen by the hypervisor (column 8 of /proc/stat)."""
    total = steal = 0
    for c in cpus:
        if c in before and c in after and len(after[c]) > 7:
            d = [a - b for a, b in zip(after[c], before[c], strict=False)]
            total += sum(d[:8])
            steal += d[7]
    return steal / total if total > 0 else None


def run_one(binary: Path, bench: str, param: int | None, mode: str, tasks: int, cfg: ScaleConfig,
            cpus: Sequence[int]) -> ScaleRun:
    """Run the runner in scaling mode once. Never raises for the benchmark's own faults (crash,
    hang, skip): they come back in the ScaleRun, with every interval printed before them.
    KeyboardInterrupt kills the runner (all its tasks) and propagates."""
    argv = [str(binary), "--scale", bench, *(["--param", str(param)] if param is not None else []),
            "--tasks", str(tasks), "--mode", mode, "--duration", f"{cfg.duration:g}",
            "--interval", f"{cfg.interval:g}", "--warmup", f"{cfg.warmup:g}", "--batch-ns", f"{cfg.batch_ns:g}"]
    if cpus:
        argv += ["--cpus", ",".join(map(str, cpus))]
    run = ScaleRun(bench, param, mode, tasks)
    stat0 = _cpu_stat()
    timeout = cfg.timeout()
    child = run_child(argv, timeout)
    stdout, stderr, timed_out = child.stdout, child.stderr, child.timed_out
    run.wall_s = child.wall_s
    run.steal = _steal_share(stat0, _cpu_stat(), {cpus[i % len(cpus)] for i in range(tasks)} if cpus else set())
    run.stderr = stderr[-4000:]
    lines = _parse_lines(stdout)
    for ln in lines:
        kind = ln.get("type")
        if kind == "scale_start":
            run.start = ln
        elif kind == "interval":
            run.intervals.append(ln)
        elif kind == "scale_end":
            run.end = ln
        elif kind == "task_crash" and run.crash is None:
            run.crash = ln
    finals = [ln for ln in lines if ln.get("type") in ("skip", "fail", "error")]
    done = f" after {len(run.intervals)} interval(s)"
    if timed_out:
        run.status, run.reason = TIMEOUT, f"timed out after {timeout:g} s (killed){done}"
    elif child.returncode < 0:
        sig = _signal_name(-child.returncode)
        run.status = CRASHED
        run.reason = (f"crashed: {sig}{done}" + (" (threads mode: a crashing task kills the whole runner)"
                                                 if mode == "threads" else ""))
    elif run.crash is not None:
        run.status, run.reason = CRASHED, f"{run.crash.get('reason')}{done}"
    elif finals:
        f = finals[0]
        run.status = {"skip": SKIPPED, "fail": FAILED}.get(f["type"], ERROR)
        run.reason = f.get("reason")
    elif run.end is None:
        tail = [ln for ln in stderr.strip().splitlines() if ln.strip()]
        run.status = ERROR
        run.reason = f"runner exited {child.returncode} without an end line" + (f": {tail[-1][:200]}" if tail else "")
    else:
        verified, reasons = run.end.get("verified") or [], run.end.get("reasons") or []
        bad = [(i, r) for i, (v, r) in enumerate(zip(verified, reasons, strict=False)) if v is False]
        if bad:
            run.status, run.reason = INVALID, f"verification failed in task {bad[0][0]}: {bad[0][1]}"
    return run


# ----------------------------------------------------------------------------- statistics


def _median(x: Sequence[float] | np.ndarray) -> float | None:
    return float(np.median(x)) if len(x) else None


def summarize(run: ScaleRun, ncpus: int) -> dict[str, Any]:
    """Statistics of one run (see the module docstring); None where there are no intervals.
    ``ncpus``: distinct CPUs the tasks were placed on (0: not pinned)."""
    n = run.tasks
    oversub = bool(ncpus) and n > ncpus
    measured = [iv for iv in run.intervals if not iv.get("warmup")]
    s: dict[str, Any] = {
        "tasks": n, "mode": run.mode, "cpus_used": ncpus, "oversubscribed": oversub,
        "intervals_total": len(run.intervals), "intervals_measured": len(measured), "intervals_kept": 0,
        "intervals_disturbed": 0, "disturbed_kept": False, "steal": run.steal,
    }
    if run.end and run.end.get("sampled_s"):
        s["sampler_cpu_s"] = run.end.get("sampler_cpu_s")
        s["sampler_cpu_pct"] = 100.0 * run.end["sampler_cpu_s"] / run.end["sampled_s"]
    if run.start:
        s["batch"] = run.start.get("batch")
        s["task_cpus"] = run.start.get("cpus")
        s["sampler_cpus"] = run.start.get("sampler_cpus")
    if not measured:
        return s
    dt = np.array([iv["dt"] for iv in measured], dtype=float)
    ops = np.array([iv["deltas"] for iv in measured], dtype=float)  # intervals × tasks
    has_sched = all("wait_ns" in iv and "run_ns" in iv for iv in measured)
    wait = np.array([iv["wait_ns"] for iv in measured], dtype=float) / 1e9 if has_sched else None
    runs = np.array([iv["run_ns"] for iv in measured], dtype=float) / 1e9 if has_sched else None
    keep = np.ones(len(measured), dtype=bool)
    if wait is not None:
        wait_share = wait / dt[:, None]
        s["wait_pct"] = float(100 * wait_share.mean())
        if not oversub:
            disturbed = wait_share.max(axis=1) > WAIT_LIMIT
            s["intervals_disturbed"] = int(disturbed.sum())
            if (~disturbed).sum() >= min(MIN_KEPT, len(measured)):
                keep = ~disturbed
            else:
                s["disturbed_kept"] = True
    s["intervals_kept"] = int(keep.sum())
    dt, ops = dt[keep], ops[keep]
    total = ops.sum(axis=1) / dt
    s["total_median"] = float(np.median(total))
    s["total_min"], s["total_max"] = float(total.min()), float(total.max())
    s["total_cv"] = float(total.std(ddof=1) / total.mean()) if len(total) > 1 and total.mean() > 0 else None
    per_task = np.median(ops / dt[:, None], axis=0)  # each task's median ops/s
    s["per_task"] = [float(x) for x in per_task]
    s["task_min"], s["task_median"], s["task_max"] = (float(per_task.min()), float(np.median(per_task)),
                                                      float(per_task.max()))
    s["fairness"] = float(per_task.min() / per_task.max()) if per_task.max() > 0 else None
    s["task_cv"] = float(per_task.std() / per_task.mean()) if per_task.mean() > 0 and n > 1 else 0.0
    task_ops = ops.sum(axis=0)
    if runs is not None:
        cpu_s = runs[keep].sum(axis=0)
        pairs = list(zip(cpu_s, task_ops, strict=True))
        s["ns_per_op_cpu"] = _median([1e9 * c / o for c, o in pairs if o > 0])
        s["cpu_rate_median"] = _median([o / c for c, o in pairs if c > 0])  # ops per CPU-second
    s["ns_per_op_wall"] = _median([1e9 * dt.sum() / o for o in task_ops if o > 0])
    s["ns_per_op"] = s.get("ns_per_op_cpu") or s["ns_per_op_wall"]
    return s


def add_speedup(s: dict[str, Any], base: dict[str, Any] | None) -> None:
    """Speed-up and efficiency against the 1-task summary of the same benchmark and mode; the
    min–max band from the intervals' min and max. cpu_efficiency: ops per CPU-second per task
    relative to 1 task — what each task gets from the CPU time it had, insensitive to time
    taken by other programs."""
    if not base or not base.get("total_median") or s.get("total_median") is None:
        return
    b, n = base["total_median"], s["tasks"]
    s["speedup"] = s["total_median"] / b
    s["speedup_min"], s["speedup_max"] = s["total_min"] / b, s["total_max"] / b
    s["efficiency"] = s["speedup"] / n
    s["efficiency_min"], s["efficiency_max"] = s["speedup_min"] / n, s["speedup_max"] / n
    if s.get("cpu_rate_median") and base.get("cpu_rate_median"):
        s["cpu_efficiency"] = s["cpu_rate_median"] / base["cpu_rate_median"]


def disturbed(s: dict[str, Any]) -> bool:
    """Too few undisturbed intervals were left to drop the others, or the hypervisor stole
    more than 5% of the tasks' CPUs."""
    return bool(s.get("disturbed_kept")) or (s.get("steal") or 0) > 0.05


def measure(binary: Path, bench: str, param: int | None, mode: str, n: int, cfg: ScaleConfig,
            cpus: Sequence[int]) -> tuple[ScaleRun, dict[str, Any]]:
    """One task count, measured again (up to cfg.retries times) while disturbed; the attempt
    with the least waiting for CPUs is kept, and ``attempts`` says how many were made."""
    ncpus = len({cpus[i % len(cpus)] for i in range(n)}) if cpus else 0
    best: tuple[ScaleRun, dict[str, Any]] | None = None
    for attempt in range(1, cfg.retries + 2):
        run = run_one(binary, bench, param, mode, n, cfg, cpus)
        s = summarize(run, ncpus)
        s["attempts"] = attempt
        if best is None or (run.status == OK and (s.get("wait_pct") or 0) < (best[1].get("wait_pct") or 0)):
            best = (run, s)
        if run.status != OK or not disturbed(s):
            break
    assert best is not None
    best[1]["attempts"] = attempt
    return best


def notes(s: dict[str, Any], status: str = OK, reason: str | None = None) -> list[str]:
    out = []
    if status != OK:
        out.append(f"{status}: {reason}" if reason else status)
    if (s.get("attempts") or 1) > 1:
        out.append(f"best of {s['attempts']} attempts")
    if len(s.get("pass_speedups") or []) > 1:
        out.append("speed-up per pass " + " ".join(f"{x:.2f}" for x in s["pass_speedups"]))
    if s.get("oversubscribed"):
        out.append(f"oversubscribed: {s['tasks']} tasks on {s['cpus_used']} CPUs")
    if s.get("disturbed_kept"):
        out.append(f"disturbed: tasks waited {s.get('wait_pct', 0):.0f}% of the time for their CPU (other programs)")
    elif s.get("intervals_disturbed"):
        out.append(f"{s['intervals_disturbed']}/{s['intervals_measured']} intervals disturbed, dropped")
    if s.get("steal") and s["steal"] > 0.01:
        out.append(f"steal {100 * s['steal']:.0f}%")
    if s.get("fairness") is not None and s["tasks"] > 1 and s["fairness"] < 0.8 and not s.get("oversubscribed"):
        out.append(f"unfair: slowest task {s['fairness']:.2f}× the fastest")
    return out


def _merge(runs: Sequence[ScaleRun]) -> ScaleRun:
    """The passes of one task count as one run: intervals pooled, the first fault kept,
    the sampler's CPU time and the sampled time summed."""
    first = runs[0]
    bad = next((r for r in runs if r.status != OK), None)
    merged = ScaleRun(first.bench, first.param, first.mode, first.tasks, status=bad.status if bad else OK,
                      reason=bad.reason if bad else None, start=first.start,
                      crash=next((r.crash for r in runs if r.crash), None), wall_s=sum(r.wall_s for r in runs),
                      stderr=runs[-1].stderr)
    for r in runs:
        merged.intervals += r.intervals
    ends = [r.end for r in runs if r.end]
    if ends:
        merged.end = {**ends[-1], "sampler_cpu_s": sum(e.get("sampler_cpu_s") or 0 for e in ends),
                      "sampled_s": sum(e.get("sampled_s") or 0 for e in ends)}
    steals = [r.steal for r in runs if r.steal is not None]
    merged.steal = float(np.mean(steals)) if steals else None
    return merged


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep; ``done`` holds what sweep() would have returned for the passes
    finished so far (task counts with no finished pass are absent)."""

    def __init__(self, done: list[tuple[ScaleRun, dict[str, Any]]]) -> None:
        super().__init__()
        self.done = done


def sweep(binary: Path, bench: str, param: int | None, mode: str, cfg: ScaleConfig, cpus: Sequence[int],
          on_start: Callable[[str], None] = lambda _l: None) -> list[tuple[ScaleRun, dict[str, Any]]]:
    """Every task count of one benchmark and mode, in cfg.passes alternating passes (see the
    module docstring). Returns (merged run, summary) per task count measured, in task order;
    a run that does not end OK ends the sweep (its intervals are kept). Ctrl-C raises
    SweepInterrupted carrying the summaries of the runs finished before it."""
    counts = sorted(cfg.tasks)
    passes = max(1, cfg.passes)
    sub = ScaleConfig(**{**cfg.__dict__, "duration": cfg.duration / passes})
    got: dict[int, list[tuple[ScaleRun, dict[str, Any]]]] = {n: [] for n in counts}
    stop = interrupted = False
    try:
        for p in range(passes):
            for n in counts if p % 2 == 0 else counts[::-1]:
                on_start(f"{bench} {mode} ×{n}" + (f" (pass {p + 1}/{passes})" if passes > 1 else ""))
                run, s = measure(binary, bench, param, mode, n, sub, cpus)
                got[n].append((run, s))
                if run.status != OK:
                    stop = True
                    break
            if stop:
                break
    except KeyboardInterrupt:
        interrupted = True
    out = _combine(got, counts, cpus)
    if interrupted:
        raise SweepInterrupted(out)
    return out


def _combine(got: dict[int, list[tuple[ScaleRun, dict[str, Any]]]], counts: list[int],
             cpus: Sequence[int]) -> list[tuple[ScaleRun, dict[str, Any]]]:
    """Each task count's passes merged and summarised, with speed-ups against 1 task."""
    out: list[tuple[ScaleRun, dict[str, Any]]] = []
    base: dict[str, Any] | None = None
    for n in counts:
        if not got[n]:
            continue
        run = _merge([r for r, _ in got[n]])
        s = summarize(run, len({cpus[i % len(cpus)] for i in range(n)}) if cpus else 0)
        s["attempts"] = max(x[1].get("attempts") or 1 for x in got[n])
        s["passes"] = len(got[n])
        s["pass_totals"] = [x[1].get("total_median") for x in got[n]]
        if n == counts[0] == 1:
            base = s
        add_speedup(s, base)
        if base is not None and n != 1:
            ratios = [a / b for a, b in zip(s["pass_totals"], base["pass_totals"], strict=False) if a and b]
            if ratios:
                s["pass_speedups"] = ratios
                s["speedup"] = float(np.median(ratios))
                s["efficiency"] = s["speedup"] / n
        out.append((run, s))
    return out


# ----------------------------------------------------------------------------- the sweep


@dataclass
class Prepared:
    binary: Binary
    runner: Runner
    items: list[Item]
    cpus: list[int]


def prepare(cfg: ScaleConfig) -> Prepared:
    """Build the runner and expand the selection. Raises BuildError, ToolMissing,
    FileNotFoundError, RunnerError, SelectionError."""
    binary = build(cfg.spec)
    runner = Runner(binary.path)
    items = plan(runner.list(), cfg.globs or ["contend"])
    cpus = list(cfg.cpus) if cfg.cpus else cpu_order()
    if not cpus:
        raise SelectionError("no CPU to run tasks on")
    return Prepared(binary, runner, items, cpus)


def row_fields(run: ScaleRun, s: dict[str, Any]) -> dict[str, Any]:
    """The results-table row of one task count: bench, param = task count, variant = mode
    (and the benchmark's own parameter), unit ops/s, median = total ops/s; the rest in extra."""
    variant = run.mode + (f":param={run.param}" if run.param is not None else "")
    extra = {**s, "bench_param": run.param, "notes": notes(s, run.status, run.reason), "start": run.start,
             "end": run.end, "crash": run.crash, "intervals": run.intervals}
    return {
        "bench": run.bench, "param": run.tasks, "variant": variant, "status": run.status, "reason": run.reason,
        "unit": UNIT, "median": s.get("total_median"), "cv": s.get("total_cv"), "rounds": s.get("intervals_kept"),
        "n_samples": s.get("intervals_measured"), "n_disturbed": s.get("intervals_disturbed"),
        "ns_per_op": s.get("ns_per_op"), "wall_s": run.wall_s, "extra": extra,
    }


def execute(cfg: ScaleConfig, prepared: Prepared, store: Store,
            on_start: Callable[[str], None] = lambda _l: None) -> tuple[int, list[Series]]:
    """Run the sweep; each task count is stored as it comes. Returns (run id, series).
    KeyboardInterrupt marks the run interrupted and propagates (stored rows stay)."""

    cpus = prepared.cpus
    env = sysinfo.capture(cpus[0], cc=cfg.spec.cc)
    env["scale"] = {"tasks": list(cfg.tasks), "modes": list(cfg.modes), "duration": cfg.duration,
                    "interval": cfg.interval, "warmup": cfg.warmup, "cpus": cpus, "batch_ns": cfg.batch_ns,
                    "wait_limit": WAIT_LIMIT, "retries": cfg.retries, "passes": cfg.passes}
    b = prepared.binary
    run_id = store.begin_run(
        command=list(cfg.command), host=env.get("hostname"), cpu_model=(env.get("cpu_info") or {}).get("model_name"),
        cpu=None, tool_version=__version__, code_rev=code_revision(cfg.spec.sources), env=env,
        build={"cc": b.cc, "cc_version": b.cc_version, "cflags": list(b.cflags), "sources": list(b.sources),
               "key": b.key},
    )
    series: list[Series] = []
    with store.finishing(run_id):
        for item in prepared.items:
            for mode in cfg.modes:
                ser = Series(item.bench, item.param, mode)
                series.append(ser)
                try:
                    done = sweep(b.path, item.bench, item.param, mode, cfg, cpus, on_start)
                except SweepInterrupted as e:  # keep the passes finished before Ctrl-C
                    _store_points(store, run_id, ser, e.done, interrupted=True)
                    raise
                _store_points(store, run_id, ser, done)
    store.update_run(run_id, summary={"scale": [
        {"bench": s.bench, "param": s.param, "mode": s.mode,
         "speedup": {str(p["tasks"]): p.get("speedup") for p in s.points}} for s in series]})
    store.finish_run(run_id, "complete")
    return run_id, series


def _store_points(store: Store, run_id: int, ser: Series, done: list[tuple[ScaleRun, dict[str, Any]]],
                  interrupted: bool = False) -> None:
    for run, s in done:
        fields = row_fields(run, s)
        if interrupted:
            fields["extra"]["notes"] = [*fields["extra"]["notes"], f"interrupted after {s.get('passes')} pass(es)"]
        fields["id"] = store.add_result(run_id, fields)
        ser.points.append({**s, "status": run.status, "reason": run.reason, "notes": fields["extra"]["notes"]})


def sampler_cpu_pct(series: Sequence[Series]) -> float | None:
    """The highest share of one CPU the sampler used in any run of the sweep."""
    vals = [p["sampler_cpu_pct"] for s in series for p in s.points if p.get("sampler_cpu_pct") is not None]
    return max(vals) if vals else None


def csv_rows(series: Sequence[Series]) -> list[dict[str, Any]]:
    """Flat rows (one per benchmark × mode × task count) for a CSV export."""
    cols = ("tasks", "status", "total_median", "total_min", "total_max", "speedup", "efficiency", "task_min",
            "task_median", "task_max", "fairness", "ns_per_op", "ns_per_op_wall", "cpu_efficiency", "wait_pct",
            "intervals_kept", "intervals_measured", "sampler_cpu_pct", "oversubscribed")
    out = []
    for s in series:
        for p in s.points:
            row: dict[str, Any] = {"bench": s.bench, "param": s.param, "mode": s.mode}
            for c in cols:
                v = p.get(c)
                row[c] = "" if v is None or (isinstance(v, float) and math.isnan(v)) else v
            row["notes"] = "; ".join(p.get("notes") or [])
            out.append(row)
    return out


def is_scale_row(row: dict[str, Any]) -> bool:
    """A stored result made by the scaling mode (unit ops/s, statistics in extra)."""
    return row.get("unit") == UNIT and isinstance(row.get("extra"), dict) and "intervals_measured" in row["extra"]


def series_from_rows(rows: Sequence[dict[str, Any]]) -> list[Series]:
    """Stored scaling rows (store.results) back into Series, e.g. for `show` and plots of an
    old run: grouped by benchmark, its parameter and mode, in stored order."""
    out: dict[tuple[str, int | None, str], Series] = {}
    for r in rows:
        if not is_scale_row(r):
            continue
        e = r["extra"]
        key = (r["bench"], e.get("bench_param"), e.get("mode") or r.get("variant", "").split(":")[0])
        ser = out.setdefault(key, Series(*key))
        ser.points.append({**e, "status": r.get("status"), "reason": r.get("reason")})
    return list(out.values())


@click.command("scale")
@click.argument("benches", nargs=-1, required=True)
@click.option("-f", "--file", "files", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="C file(s) holding the benchmarks (default: the built-in suite).")
@click.option("--tasks", "tasks_text", metavar="1..N|1,2,4",
              help="Task counts to sweep (N alone: 1..N; 1 is always added). Default: powers of two up to the "
                   "CPU count, the CPU count and one more.")
@click.option("--mode", type=click.Choice(["threads", "processes", "both"]), default="threads", show_default=True)
@click.option("--duration", type=click.FloatRange(min=0.01), default=2.0, show_default=True,
              help="Seconds sampled per task count, after the warm-ups (split over the passes).")
@click.option("--passes", type=click.IntRange(1, 50), default=3, show_default=True,
              help="Alternating passes over the task counts (1..N, N..1, ...); speed-up = median of the passes' "
                   "own ratios, so clock drift between task counts cancels.")
@click.option("--interval", type=click.FloatRange(min=0.001), default=0.1, show_default=True,
              help="Seconds between two reads of the counters.")
@click.option("--warmup", type=click.FloatRange(min=0), default=0.5, show_default=True,
              help="Seconds of intervals dropped at the start.")
@click.option("--cpus", "cpus_text", metavar="LIST",
              help="CPUs for the tasks, in order (task i → i-th, wrapping). Default: distinct cores first, then "
                   "SMT siblings, CPU 0's core last.")
@click.option("--retries", type=click.IntRange(0, 20), default=2, show_default=True,
              help="Measure a task count again while other programs kept its tasks waiting for their CPUs.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write throughput and efficiency vs tasks to FILE.png|svg|pdf.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the run as lossless JSON.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write one CSV row per benchmark × mode × task count.")
@click.option("--db", metavar="URL", help="Database URL.")
@click.option("--cflags", default=" ".join(DEFAULT_CFLAGS), show_default=True, help="Flags for the C files.")
def scale_cmd(benches: tuple[str, ...], files: tuple[Path, ...], tasks_text: str | None, mode: str,
              duration: float, passes: int, interval: float, warmup: float, cpus_text: str | None, retries: int,
              plot_path: Path | None, json_path: Path | None, csv_path: Path | None, db: str | None,
              cflags: str) -> None:
    """Throughput of BENCH (globs; several allowed) run by 1..N tasks at once: speed-up,
    efficiency, per-task fairness (will-it-scale done right)."""
    import csv

    from cyclebench.report import plots

    if plot_path is not None and plot_path.suffix.lower() not in plots.FORMATS:
        raise UserError(f"--plot: the file must end in {', '.join(plots.FORMATS)}")
    try:
        cpus = parse_cpus(cpus_text) if cpus_text else None
        modes = parse_modes(mode)
        ncpus = len(cpus) if cpus else len(os.sched_getaffinity(0))
        tasks = parse_tasks(tasks_text) if tasks_text else default_tasks(ncpus)
        sources = tuple(f.resolve() for f in files) if files else tuple(suite_sources())
        spec = BuildSpec(sources=sources, cflags=tuple(shlex.split(cflags)), werror=not files)
    except (ScaleError, ValueError) as e:
        raise UserError(str(e)) from None
    cfg = ScaleConfig(spec=spec, globs=benches, tasks=tasks, modes=modes, duration=duration,
                            interval=interval, warmup=warmup, cpus=cpus, retries=retries, passes=passes,
                            command=["cyclebench", *sys.argv[1:]])
    store = open_store(db)
    try:
        with err.status("building", spinner="dots"):
            prepared = prepare(cfg)
        with err.status("scaling", spinner="dots") as status:
            run_id, series = execute(cfg, prepared, store, lambda label: status.update(f"scaling: {label}"))
    except BuildError as e:
        if e.output:
            err.print(e.output, markup=False, highlight=False)
        raise UserError(str(e)) from None
    except (FileNotFoundError, RunnerError, SelectionError, StoreError) as e:
        raise UserError(str(e)) from None
    except KeyboardInterrupt:
        err.print(f"cyclebench: interrupted: task counts measured so far are kept ({store.url})")
        sys.exit(130)
    used = len(set(prepared.cpus))
    for s in series:
        out.print(plots.scale_table(s))
    chart = plots.text_chart(series)
    if chart:
        out.print("\n".join(chart), highlight=False, markup=False)
    pct = sampler_cpu_pct(series)
    err.print(f"run #{run_id} · tasks on CPUs {','.join(map(str, prepared.cpus))} ({used} CPUs) · sampler used "
              f"{'-' if pct is None else f'{pct:.3f}'}% of one CPU at most · stored in {store.url}", highlight=False)
    if plot_path is not None:
        w, h = plots.plot_scaling(series, plot_path, ncpus=used, title=f"cyclebench scale · run #{run_id}")
        err.print(f"plot written to {plot_path} ({w}×{h} px)", highlight=False)
    if json_path is not None:
        json_report.dump(json_report.run_to_dict(store, run_id), json_path)
    if csv_path is not None:
        rows = csv_rows(series)
        with csv_path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["bench"])
            writer.writeheader()
            writer.writerows(rows)
    bad = [(s.label, p) for s in series for p in s.points if p.get("status") in FAILED_STATUSES]
    for label, p in bad:
        err.print(f"cyclebench: {label} with {p['tasks']} task(s): {p.get('reason')}", style="red", highlight=False)
    if bad:
        sys.exit(1)
