"""Statistics of scaling runs (README "Scaling", docs/method.md §8): how throughput grows with
the number of tasks.

Pure (numpy, no I/O): the runner's interval lines (a ScaleRun, runner.scaling) in, summaries,
notes and result rows out.

Statistics of one task count, over the intervals after the warm-up:
  - total ops/s: per interval Σ deltas / dt; median, min and max over intervals;
  - per task: each task's median ops/s over intervals; min / median / max across tasks, and
    fairness = slowest / fastest task (1 = fair) with the CV across tasks;
  - speed-up = total(N) / total(1) and efficiency = speed-up / N (1 = perfect scaling), with
    the speed-up's range (speedup_range): N tasks' slowest interval over 1 task's fastest to
    N's fastest over 1's slowest — the ratio of the two min–max ranges, conservative; a
    speed-up above the ideal (N tasks, or the CPUs they had) is flagged (superlinear);
    The task counts are measured in ``passes`` short alternating passes (1, 2, …, N, then
    N, …, 1, …) and the speed-up is the median over passes of each pass's own ratio: a VM's
    core clock and its host's load drift by 10–25% over seconds (seen on the project's AMD
    EPYC VM: one task of getppid at 3.86M ops/s, then 4.81M ten seconds later), which a
    1-task run and an N-task run seconds apart would read as scaling. The same idea as
    `compare`'s interleaving, at the granularity a process start allows. The other
    statistics pool the intervals of all passes (merge);
  - a pass's total is the median over the intervals the pooled summary kept — the same
    intervals as the printed total ops/s. (Each pass used to be judged on its own, so a
    pass with fewer than MIN_KEPT undisturbed intervals kept its disturbed ones while the
    pooled total dropped them: getppid in processes mode printed 17.1M vs 8.61M ops/s and
    a speed-up of 1.29×; docs/method.md §8.) A pass with no kept interval at a task
    count drops out of the pairing. When the median of the pass ratios still differs from
    the ratio of the printed totals by more than PASS_AGREEMENT (throughput drifted between
    passes), the totals' ratio is shown and the note gives both: the row never contradicts
    its own totals;
  - ns/op per task: CPU time per operation (schedstat run time / ops; wall time without
    schedstat), the cost of one operation as the task sees it;
  - disturbed intervals: when no more tasks than CPUs, an interval in which a task waited
    for its CPU (schedstat wait time) longer than WAIT_LIMIT of it means another program
    ran there; such intervals are dropped (kept in the database), as `run` drops disturbed
    batches; a task count with too few undisturbed intervals is measured again (``retries``)
    and the least disturbed attempt kept. Oversubscribed runs wait by design: nothing is
    dropped, the note says so;
  - the sampler's own CPU use, as a share of one CPU.

For will-it-scale test cases, also: the cost of one operation at one task from the
intervals' timer ticks (op_cost, for `run`), and will-it-scale's own CSV (wis_csv_rows).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, cast

import numpy as np

from cyclebench.model import (
    DISTURBED,
    ERROR,
    FAILED,
    OK,
    SCALING,
    TIMING,
    Chain,
    Interval,
    Result,
    ScaleRecord,
    ScaleRun,
    Series,
    WisCost,
    kept_off,
)
from cyclebench.stats import clock
from cyclebench.stats.ab import cluster_ci
from cyclebench.stats.result import Z_QUARTILE, with_calibration

WAIT_LIMIT = 0.02  # a task waiting for its CPU more than 2% of an interval: the interval is disturbed
MIN_KEPT = 3  # fewer undisturbed intervals than this: keep them all, and say the run was disturbed
PASS_AGREEMENT = 0.10  # how far (relative) the median of pass ratios may be from the totals' ratio
# The speed-up is given to 2 decimals (report.plots.scale_table prints it so); one above its ideal
# at that precision is superlinear. Strictly above would flag 2.004 printed as "2.00×".
SPEEDUP_DIGITS = 2
UNIT = "ops/s"



@dataclass(frozen=True)
class Summary(Mapping[str, Any]):
    """The statistics of one task count (module docstring): a frozen record, read by attribute
    or, as the JSON it is stored as (a scaling result's ``scale``, a ``Series`` point), as a
    read-only mapping of the keys it has — in field order, a key only where the summary says
    it: the runner's placement (``batch``, ``task_cpus``, ``sampler_cpus``) when its start line
    was read (``started``), the interval statistics (``total_median`` … ``ns_per_op``) when an
    interval was measured, ``ns_per_op_cpu``/``cpu_rate_median`` with schedstat (``sched``),
    ``passes_disagree`` when true, every other optional key when set. A transformation
    (add_speedup, pass_speedup) makes a new one. Units: ops/s for total_* and task_*, ns for
    ns_per_op*, ops per CPU-second for cpu_rate_median, percent for *_pct, seconds for
    sampler_cpu_s, a share of the tasks' CPU time for steal; speed-up and efficiency are ratios."""

    tasks: int
    mode: str
    cpus_used: int
    oversubscribed: bool
    intervals_total: int
    intervals_measured: int
    intervals_kept: int = 0
    intervals_disturbed: int = 0
    disturbed_kept: bool = False
    steal: float | None = None
    idle_pct: float | None = None
    sampler_cpu_s: float | None = None
    sampler_cpu_pct: float | None = None
    batch: int | None = None
    task_cpus: tuple[int, ...] | None = None
    sampler_cpus: tuple[int, ...] | None = None
    wait_pct: float | None = None
    total_median: float | None = None
    total_min: float | None = None
    total_max: float | None = None
    total_cv: float | None = None
    per_task: tuple[float, ...] | None = None
    task_min: float | None = None
    task_median: float | None = None
    task_max: float | None = None
    fairness: float | None = None
    task_cv: float | None = None
    ns_per_op_cpu: float | None = None
    cpu_rate_median: float | None = None
    ns_per_op_wall: float | None = None
    ns_per_op: float | None = None
    attempts: int | None = None
    passes: int | None = None
    pass_totals: tuple[float | None, ...] | None = None
    speedup: float | None = None
    speedup_min: float | None = None
    speedup_max: float | None = None
    efficiency: float | None = None
    efficiency_min: float | None = None
    efficiency_max: float | None = None
    cpu_efficiency: float | None = None
    pass_speedups: tuple[float, ...] | None = None
    totals_speedup: float | None = None
    pass_speedup: float | None = None
    passes_disagree: bool = False
    started: bool = False  # the runner's start line was read: batch, task_cpus, sampler_cpus are keys
    sched: bool = False  # the intervals carried schedstat run time: ns_per_op_cpu, cpu_rate_median are keys

    _ALWAYS: ClassVar[frozenset[str]] = frozenset((
        "tasks", "mode", "cpus_used", "oversubscribed", "intervals_total", "intervals_measured", "intervals_kept",
        "intervals_disturbed", "disturbed_kept", "steal", "idle_pct"))
    _STARTED: ClassVar[frozenset[str]] = frozenset(("batch", "task_cpus", "sampler_cpus"))
    _MEASURED: ClassVar[frozenset[str]] = frozenset((
        "total_median", "total_min", "total_max", "total_cv", "per_task", "task_min", "task_median", "task_max",
        "fairness", "task_cv", "ns_per_op_wall", "ns_per_op"))
    _SCHED: ClassVar[frozenset[str]] = frozenset(("ns_per_op_cpu", "cpu_rate_median"))
    _FLAGS: ClassVar[frozenset[str]] = frozenset(("started", "sched"))

    def _has(self, key: str) -> bool:
        if key in self._ALWAYS:
            return True
        if key in self._STARTED:
            return self.started
        if key in self._MEASURED:
            return self.intervals_measured > 0
        if key in self._SCHED:
            return self.sched and self.intervals_measured > 0
        if key == "passes_disagree":
            return self.passes_disagree
        return key not in self._FLAGS and getattr(self, key) is not None

    def __getitem__(self, key: str) -> Any:
        if key not in self.__dataclass_fields__ or not self._has(key):
            raise KeyError(key)
        value = getattr(self, key)
        return list(value) if isinstance(value, tuple) else value  # the JSON's arrays

    def __iter__(self) -> Iterator[str]:
        return (f.name for f in fields(self) if self._has(f.name))

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass(frozen=True)
class Kept:
    """Which measured intervals count (_keep): ``keep`` per interval, how many that is
    (``intervals_kept``), how many were disturbed (``intervals_disturbed``; 0 when not
    judged), whether they were kept anyway (``disturbed_kept``) and the tasks' mean wait for
    their CPU in % of the intervals (``wait_pct``; None without schedstat)."""

    keep: np.ndarray
    intervals_kept: int
    intervals_disturbed: int = 0
    disturbed_kept: bool = False
    wait_pct: float | None = None


def _median(x: Sequence[float] | np.ndarray) -> float | None:
    return float(np.median(x)) if len(x) else None


def cpus_used(cpus: Sequence[int], tasks: int) -> int:
    """Distinct CPUs ``tasks`` tasks land on (task i on cpus[i % len]); 0 when not pinned."""
    return len({cpus[i % len(cpus)] for i in range(tasks)}) if cpus else 0


def _head(run: ScaleRun, ncpus: int, measured: int) -> Summary:
    """What a summary says before any interval is looked at: counts, placement, sampler."""
    sampled = bool(run.end and run.end.get("sampled_s"))
    start = run.start or {}
    return Summary(
        tasks=run.tasks, mode=run.mode, cpus_used=ncpus, oversubscribed=bool(ncpus) and run.tasks > ncpus,
        intervals_total=len(run.intervals), intervals_measured=measured, steal=run.steal,
        idle_pct=None if run.idle is None else 100 * run.idle,
        sampler_cpu_s=run.end.get("sampler_cpu_s") if run.end and sampled else None,
        sampler_cpu_pct=100.0 * run.end["sampler_cpu_s"] / run.end["sampled_s"] if run.end and sampled else None,
        started=bool(run.start), batch=start.get("batch"), task_cpus=_ints(start.get("cpus")),
        sampler_cpus=_ints(start.get("sampler_cpus")))


def _ints(xs: Sequence[int] | None) -> tuple[int, ...] | None:
    return None if xs is None else tuple(xs)


def _measured(run: ScaleRun) -> list[Interval]:
    return [iv for iv in run.intervals if not iv.get("warmup")]


def _sched(measured: Sequence[Interval], key: str) -> np.ndarray | None:
    """Seconds of schedstat ``key`` (run_ns, wait_ns), intervals × tasks; None when an interval lacks them."""
    if not all("wait_ns" in iv and "run_ns" in iv for iv in measured):
        return None
    return np.array([iv[key] for iv in measured], dtype=float) / 1e9  # type: ignore[literal-required]


def _keep(measured: Sequence[Interval], oversubscribed: bool) -> Kept:
    """Which measured intervals count: the undisturbed ones (no task waited more than WAIT_LIMIT
    of the interval for its CPU or was kept off it throughout, and some task ran or counted),
    unless fewer than MIN_KEPT are (then all, and ``disturbed_kept`` says so) or the tasks are
    oversubscribed (they wait by design)."""
    keep = np.ones(len(measured), dtype=bool)
    wait = _sched(measured, "wait_ns")
    wait_pct, n_disturbed, disturbed_kept = None, 0, False
    if wait is not None and len(measured):
        dt = np.array([iv["dt"] for iv in measured], dtype=float)
        wait_share = wait / dt[:, None]
        wait_pct = float(100 * wait_share.mean())
        if not oversubscribed:
            # An interval in which no task ran and none counted an operation measured nothing: the
            # tasks' wait is charged to schedstat only when they run again (wis/getppid1, 1 task, on
            # this loaded VM: 0 ran, 0 waited, 0 ops for 0.27 s, then 459 ms of wait in the next
            # 0.1 s), so kept, such intervals read 0 ops/s as if undisturbed.
            run = _sched(measured, "run_ns")
            ops = np.array([iv.get("deltas") or [0] for iv in measured], dtype=float)
            stalled = (run.max(axis=1) == 0) & (ops.sum(axis=1) == 0) if run is not None else False
            # A task runnable at the interval's end that ran 0 ns and counted nothing was kept off
            # its CPU all along, its wait not yet charged (engine/scale.c reads its state): the
            # interval is disturbed even while the others ran (slow_setup beside other tests read
            # one task at 0 ops in a kept interval of an `ok` run).
            off = np.array([any(kept_off(iv, t) for t in range(len(iv.get("deltas") or ()))) for iv in measured],
                           dtype=bool)
            disturbed = (wait_share.max(axis=1) > WAIT_LIMIT) | stalled | off
            n_disturbed = int(disturbed.sum())
            if (~disturbed).sum() >= min(MIN_KEPT, len(measured)):
                keep = ~disturbed
            else:
                disturbed_kept = True
    return Kept(keep, int(keep.sum()), n_disturbed, disturbed_kept, wait_pct)


def pass_totals(passes: Sequence[ScaleRun], oversubscribed: bool) -> list[float | None]:
    """Each pass's median total ops/s over the intervals that the pooled summary of the same
    passes (merge, then summarize) keeps: a pass is judged on the very intervals of the
    printed total. None for a pass with no kept interval."""
    measured = [_measured(r) for r in passes]
    keep = _keep([iv for m in measured for iv in m], oversubscribed).keep
    out: list[float | None] = []
    at = 0
    for m in measured:
        k, at = keep[at : at + len(m)], at + len(m)
        totals = [sum(iv["deltas"]) / iv["dt"] for iv, kept in zip(m, k, strict=True) if kept and iv["dt"] > 0]
        out.append(float(np.median(totals)) if totals else None)
    return out


def summarize(run: ScaleRun, ncpus: int) -> Summary:
    """Statistics of one run (see the module docstring); None where there are no intervals.
    ``ncpus``: distinct CPUs the tasks were placed on (0: not pinned)."""
    n = run.tasks
    measured = _measured(run)
    s = _head(run, ncpus, len(measured))
    if not measured:
        return s
    dt = np.array([iv["dt"] for iv in measured], dtype=float)
    ops = np.array([iv["deltas"] for iv in measured], dtype=float)  # intervals × tasks
    runs = _sched(measured, "run_ns")
    k = _keep(measured, s.oversubscribed)
    keep = k.keep
    dt, ops = dt[keep], ops[keep]
    total = ops.sum(axis=1) / dt
    per_task = np.median(ops / dt[:, None], axis=0)  # each task's median ops/s
    task_ops = ops.sum(axis=0)
    ns_per_op_cpu = cpu_rate_median = None
    if runs is not None:
        cpu_s = runs[keep].sum(axis=0)
        pairs = list(zip(cpu_s, task_ops, strict=True))
        ns_per_op_cpu = _median([1e9 * c / o for c, o in pairs if o > 0])
        cpu_rate_median = _median([o / c for c, o in pairs if c > 0])  # ops per CPU-second
    ns_per_op_wall = _median([1e9 * dt.sum() / o for o in task_ops if o > 0])
    return replace(
        s, intervals_kept=k.intervals_kept, intervals_disturbed=k.intervals_disturbed,
        disturbed_kept=k.disturbed_kept, wait_pct=k.wait_pct,
        total_median=float(np.median(total)), total_min=float(total.min()), total_max=float(total.max()),
        total_cv=float(total.std(ddof=1) / total.mean()) if len(total) > 1 and total.mean() > 0 else None,
        per_task=tuple(float(x) for x in per_task), task_min=float(per_task.min()),
        task_median=float(np.median(per_task)), task_max=float(per_task.max()),
        fairness=float(per_task.min() / per_task.max()) if per_task.max() > 0 else None,
        task_cv=float(per_task.std() / per_task.mean()) if per_task.mean() > 0 and n > 1 else 0.0,
        sched=runs is not None, ns_per_op_cpu=ns_per_op_cpu, cpu_rate_median=cpu_rate_median,
        ns_per_op_wall=ns_per_op_wall, ns_per_op=ns_per_op_cpu or ns_per_op_wall)


def add_speedup(s: Summary, base: Summary | None) -> Summary:
    """A new summary: ``s`` with its speed-up and efficiency against the 1-task summary
    ``base`` of the same benchmark and mode, and their range (speedup_range; none for the base
    itself, or from a single interval). cpu_efficiency: ops per CPU-second per task relative to
    1 task — what each task gets from the CPU time it had, insensitive to time taken by other
    programs. ``s`` itself without a base throughput or a throughput of its own."""
    if not base or not base.total_median or s.total_median is None:
        return s
    b, n = base.total_median, s.tasks
    speedup = s.total_median / b
    lo, hi = speedup_range(s, base) or (None, None)
    return replace(s, speedup=speedup, speedup_min=lo, speedup_max=hi, efficiency=speedup / n,
                   efficiency_min=None if lo is None else lo / n, efficiency_max=None if hi is None else hi / n,
                   cpu_efficiency=s.cpu_rate_median / base.cpu_rate_median
                   if s.cpu_rate_median and base.cpu_rate_median else None)


def speedup_range(s: Mapping[str, Any], base: Mapping[str, Any]) -> tuple[float, float] | None:
    """The range of the speed-up of ``s`` over the 1-task ``base`` (a Summary or a stored point):
    N tasks' slowest kept interval over 1 task's fastest, to N's fastest over 1's slowest — the
    ratio of the two min–max ranges, conservative: every ratio of an N-task interval to a 1-task
    one lies in it, and so do the speed-up of the totals and every pass's (each a ratio of two
    medians of those intervals). wis/getppid's threads at 2 tasks: 10.1M–11.2M over
    4.67M–5.21M, 1.94–2.39× around 2.17× — the 1-task intervals alone span 11%, which a
    speed-up without a range hid. None for the base itself, when either count kept fewer than
    2 intervals (one interval has no spread: a 0.05 s scale of chain/add200 kept one) or a
    figure is missing."""
    if s.get("tasks") == base.get("tasks") or min(s.get("intervals_kept") or 0, base.get("intervals_kept") or 0) < 2:
        return None
    n_lo, n_hi, b_lo, b_hi = (s.get("total_min"), s.get("total_max"), base.get("total_min"), base.get("total_max"))
    if n_lo is None or n_hi is None or not b_lo or not b_hi:
        return None
    return n_lo / b_hi, n_hi / b_lo


def ideal(s: Mapping[str, Any]) -> int:
    """The most speed-up ``s``'s tasks can reach: one per task, or per CPU when oversubscribed."""
    tasks, cpus = int(s["tasks"]), int(s.get("cpus_used") or 0)
    return min(tasks, cpus) if s.get("oversubscribed") and cpus else tasks


@dataclass(frozen=True)
class Superlinear:
    """A speed-up above its ideal (at SPEEDUP_DIGITS): the ``speedup``, the ``ideal`` (tasks, or
    CPUs when oversubscribed), its range (``low``, ``high``; None from a single interval) and how
    many tasks. ``beyond``: the whole range above the ideal (None without a range) — within it,
    the intervals' spread explains it."""

    speedup: float
    ideal: int
    tasks: int
    low: float | None = None
    high: float | None = None

    @property
    def beyond(self) -> bool | None:
        return None if self.low is None else round(self.low, SPEEDUP_DIGITS) > self.ideal


def superlinear(s: Mapping[str, Any]) -> Superlinear | None:
    """``s``'s speed-up when above its ideal (a Summary or a stored point, after speedup_range):
    2 tasks of wis/getppid's threads at 2.17× on 2 vCPUs; None otherwise."""
    x, n = s.get("speedup"), int(s.get("tasks") or 0)
    if x is None or n < 2 or round(x, SPEEDUP_DIGITS) <= ideal(s):
        return None
    return Superlinear(float(x), ideal(s), n, s.get("speedup_min"), s.get("speedup_max"))


def disturbed(s: Mapping[str, Any]) -> bool:
    """Too few undisturbed intervals were left to drop the others, or the hypervisor stole
    more than 5% of the tasks' CPUs. ``s``: a Summary or a stored point (its JSON)."""
    return bool(s.get("disturbed_kept")) or (s.get("steal") or 0) > 0.05


def notes(s: Mapping[str, Any], status: str = OK, reason: str | None = None) -> list[str]:
    """What the table says beside one task count's figures (best of N attempts, passes that
    disagree, oversubscription, disturbance, steal, unfairness). ``s``: a Summary or a stored
    point (its JSON)."""
    out = []
    if status != OK:
        out.append(f"{status}: {reason}" if reason else status)
    if (s.get("attempts") or 1) > 1:
        out.append(f"best of {s['attempts']} attempts")
    if s.get("passes_disagree"):
        out.append(f"passes disagree: speed-up per pass {' '.join(f'{x:.2f}' for x in s['pass_speedups'])} "
                   f"(median {s['pass_speedup']:.2f}×) vs {s['totals_speedup']:.2f}× from the totals, shown")
    elif len(s.get("pass_speedups") or []) > 1:
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


def merge(runs: Sequence[ScaleRun]) -> ScaleRun:
    """The passes of one task count as one run: intervals pooled, the first fault kept,
    the sampler's CPU time and the sampled time summed."""
    first = runs[0]
    bad = next((r for r in runs if r.status != OK), None)
    ends = [r.end for r in runs if r.end]
    end = {**ends[-1], "sampler_cpu_s": sum(e.get("sampler_cpu_s") or 0 for e in ends),
           "sampled_s": sum(e.get("sampled_s") or 0 for e in ends)} if ends else None
    steals = [r.steal for r in runs if r.steal is not None]
    idles = [r.idle for r in runs if r.idle is not None]
    return ScaleRun(first.bench, first.param, first.mode, first.tasks, status=bad.status if bad else OK,
                    reason=bad.reason if bad else None, start=first.start,
                    intervals=tuple(iv for r in runs for iv in r.intervals), end=end,
                    crash=next((r.crash for r in runs if r.crash), None),
                    steal=float(np.mean(steals)) if steals else None, wall_s=sum(r.wall_s for r in runs),
                    stderr=runs[-1].stderr, idle=float(np.mean(idles)) if idles else None)


def combine(got: Mapping[int, Sequence[tuple[ScaleRun, Summary]]], counts: Sequence[int],
            cpus: Sequence[int]) -> list[tuple[ScaleRun, Summary]]:
    """Each task count's passes (``got``: (run, summary) per pass) merged and summarised, with
    speed-ups against 1 task: the median of the passes' own ratios. In task order; task
    counts without a pass are left out."""
    out: list[tuple[ScaleRun, Summary]] = []
    base: Summary | None = None
    for n in counts:
        if not got[n]:
            continue
        run = merge([r for r, _ in got[n]])
        s = summarize(run, cpus_used(cpus, n))
        s = replace(s, attempts=max(x[1].attempts or 1 for x in got[n]), passes=len(got[n]),
                    pass_totals=tuple(pass_totals([r for r, _ in got[n]], s.oversubscribed)))
        if n == counts[0] == 1:
            base = s
        s = add_speedup(s, base)
        if base is not None and n != 1:
            s = pass_speedup(s, base)
        out.append((run, s))
    return out


def pass_speedup(s: Summary, base: Summary) -> Summary:
    """A new summary: the speed-up as the median of the passes' own ratios (pass p at N tasks
    over pass p at 1 task; a pass with no kept interval at either count left out) when it
    agrees with the ratio of the totals within PASS_AGREEMENT; else the totals' ratio stays
    and ``passes_disagree`` says so. After add_speedup (``speedup`` = the totals' ratio);
    ``s`` itself without a pair of pass totals or a speed-up."""
    ratios = [a / b for a, b in zip(s.pass_totals or (), base.pass_totals or (), strict=False) if a and b]
    if not ratios or not s.speedup:
        return s
    median = float(np.median(ratios))
    agree = abs(median / s.speedup - 1) <= PASS_AGREEMENT
    speedup = median if agree else s.speedup
    return replace(s, pass_speedups=tuple(ratios), totals_speedup=s.speedup, pass_speedup=median,
                   speedup=speedup, passes_disagree=not agree, efficiency=speedup / s.tasks)


def judged(run: ScaleRun, s: Summary) -> tuple[str, str | None]:
    """The row's status and reason: the run's, except that a run that ended well is ``ok`` only
    with a throughput to show. No operation counted in most kept intervals (a median of 0 ops/s)
    is ``disturbed`` when the tasks waited for their CPU or stalled (other programs kept them
    from running: fallocate2 at 1 task read 0 ops/s on a host at load 5), else ``failed``."""
    if run.status != OK or (s.total_median or 0) > 0:
        return run.status, run.reason
    if not s.intervals_measured:
        return FAILED, "no interval was measured"
    what = f"no operation counted in most of the {s.intervals_kept} interval(s) kept (median 0 ops/s)"
    waited = s.wait_pct is not None and s.wait_pct > 100 * WAIT_LIMIT
    if waited or s.intervals_disturbed or s.disturbed_kept:
        return DISTURBED, (f"{what}: the tasks waited {s.wait_pct or 0:.0f}% of the time for their CPU or did not run "
                           "(other programs on the host); measure again when it is quieter")
    return FAILED, f"{what}: testcase() blocked, or loops without (*iterations)++"


def row_fields(run: ScaleRun, s: Summary) -> Result:
    """The results-table row of one task count (a new Result of kind scaling, not stored):
    bench, param = task count, variant = mode (and the benchmark's own parameter), unit ops/s,
    median = total ops/s; the summary's JSON and the run's lines its ``scale``
    (model.ScaleRecord)."""
    variant = run.mode + (f":param={run.param}" if run.param is not None else "")
    status, reason = judged(run, s)
    scale = cast(ScaleRecord, {**s, "bench_param": run.param, "notes": notes(s, status, reason),
                               "start": run.start, "end": run.end, "crash": run.crash, "intervals": run.intervals})
    return Result(
        kind=SCALING, bench=run.bench, param=run.tasks, variant=variant, status=status, reason=reason,
        unit=UNIT, median=s.total_median, cv=s.total_cv, rounds=s.intervals_kept,
        n_samples=s.intervals_measured, n_disturbed=s.intervals_disturbed,
        ns_per_op=s.ns_per_op, wall_s=run.wall_s, scale=scale,
    )


def sampler_cpu_pct(series: Sequence[Series]) -> float | None:
    """The highest share of one CPU the sampler used in any run of the sweep."""
    vals = [p["sampler_cpu_pct"] for s in series for p in s.points if p.get("sampler_cpu_pct") is not None]
    return max(vals) if vals else None


# One cell of csv_rows: "" where a figure is missing (None or NaN).
CsvCell = str | int | float | bool | None


def csv_rows(series: Sequence[Series]) -> list[dict[str, CsvCell]]:
    """Flat rows (one per benchmark × mode × task count) for a CSV export: column name → cell,
    the same columns in the same order in every row (bench, param, mode, the summary's
    figures, notes)."""
    cols = ("tasks", "status", "total_median", "total_min", "total_max", "speedup", "efficiency", "task_min",
            "task_median", "task_max", "fairness", "ns_per_op", "ns_per_op_wall", "cpu_efficiency", "wait_pct",
            "intervals_kept", "intervals_measured", "sampler_cpu_pct", "oversubscribed")
    out = []
    for s in series:
        for p in s.points:
            row: dict[str, CsvCell] = {"bench": s.bench, "param": s.param, "mode": s.mode}
            for c in cols:
                v = p.get(c)
                row[c] = "" if v is None or (isinstance(v, float) and math.isnan(v)) else v
            row["notes"] = "; ".join(p.get("notes") or [])
            out.append(row)
    return out


def is_scale_row(row: Result) -> bool:
    """A stored result made by the scaling mode (unit ops/s, statistics in its ``scale``)."""
    return row.unit == UNIT and row.scale is not None and "intervals_measured" in row.scale


def series_from_rows(rows: Sequence[Result]) -> list[Series]:
    """Stored scaling rows (store.results) back into Series, e.g. for `show` and plots of an
    old run: grouped by benchmark, its parameter and mode, in stored order."""
    out: dict[tuple[str, int | None, str, str], Series] = {}
    for r in rows:
        if not is_scale_row(r):
            continue
        e = r.scale or {}
        alloc = (r.allocator or {}).get("name") or ""
        key = (r.bench, e.get("bench_param"), e.get("mode") or (r.variant or "").split(":")[0], alloc)
        ser = out.get(key) or Series(*key[:3], variant=alloc)
        out[key] = replace(ser, points=(*ser.points, {**e, "status": r.status, "reason": r.reason}))
    return [with_ranges(s) for s in out.values()]


def with_ranges(ser: Series) -> Series:
    """``ser`` with each point's speed-up range (and efficiency's) as add_speedup gives it, from
    the stored totals of the point and of the series' 1-task point: a run stored before the
    range was (its speedup_min/max then the N-task range over 1 task's median, which left 1
    task's own spread out) reads as one measured now."""
    base = next((p for p in ser.points if p.get("tasks") == 1 and p.get("total_median")), None)
    points = []
    for p in ser.points:
        q = {k: v for k, v in p.items() if k not in ("speedup_min", "speedup_max", "efficiency_min", "efficiency_max")}
        got = speedup_range(p, base) if base is not None and p.get("speedup") is not None else None
        if got is not None:
            n = int(p["tasks"])
            q.update(speedup_min=got[0], speedup_max=got[1], efficiency_min=got[0] / n, efficiency_max=got[1] / n)
        points.append(q)
    return replace(ser, points=tuple(points))


# ----------------------------------------------------------------------------- will-it-scale test cases

CHAIN_DISAGREEMENT = 0.03  # core clock before and after a run differing by more: cycles~ doubtful (report.console's)
MIN_INTERVALS = 3  # fewer kept intervals than this: no cost per operation


def chain_clock(chain: Chain | None) -> float | None:
    """Core cycles per timer tick from the runner's add-chain readings (``chain_before`` or
    ``chain_after`` of a test case's run, engine/scale.c): chains of ``short_adds`` and
    ``adds`` dependent adds timed alternately, so (adds − short) / (L − S) from their trimmed
    means, free of the timed chain's fixed part (engine/chain.h). None when not timed."""
    c = chain or {}
    if c.get("kind") != "add" or not c.get("short_ticks") or not c.get("long_ticks"):
        return None
    s, _, ns = clock._trimmed_mean(np.asarray(c["short_ticks"], dtype=float))
    lo, _, nl = clock._trimmed_mean(np.asarray(c["long_ticks"], dtype=float))
    if ns < 2 or nl < 2 or not lo > s:
        return None
    return float((c["adds"] - c["short_adds"]) / (lo - s))


def op_cost(runs: Sequence[ScaleRun], rate_hz: float, seed: int = 0) -> Result:
    """The cost of one operation of a will-it-scale test case at one task (``run -f FILE.c``),
    from ``runs``: one runner process each, 1 task, pinned. A test case cannot be driven in
    batches, so the cost is taken from the sampler's intervals: per interval, timer ticks /
    the counter's delta; intervals in which the task waited for its CPU are dropped (as
    `scale` does), the rest pooled. per_op (timer unit: ref-cycles on x86-64) = their median,
    its 95% CI by the two-level bootstrap over processes, then intervals (stats.ab.cluster_ci);
    min, rcv over intervals. cycles~ = per_op × the core clock per tick from the add chain
    timed on the task's CPU before and after each run (chain_clock; not during it: the CPU is
    the task's then), the median of those readings; the CI widened in quadrature by half
    their relative range; its ``wis["cycles_doubtful"]`` says when a run's before and after
    differ by more than CHAIN_DISAGREEMENT. ``chain_agreement``: the imul chain's clock over
    the add chain's (report.console flags it as for any result). ns_per_op via ``rate_hz``.
    The first run that did not end OK gives the row its status and reason."""
    first = runs[0]
    bad = next((r for r in runs if r.status != OK), None)
    unit = str((first.start or {}).get("unit") or "ticks")
    xs, groups, measured, disturbed_kept, waits = [], [], 0, 0, []
    ops_per_s: list[float] = []
    ratios: list[tuple[float | None, float | None]] = []
    for g, run in enumerate(runs):
        ratios.append((chain_clock((run.start or {}).get("chain_before")),
                       chain_clock((run.end or {}).get("chain_after"))))
        m = [iv for iv in _measured(run) if iv.get("ticks") and iv["deltas"] and iv["deltas"][0] > 0]
        if not m:
            continue
        kept = _keep(m, False)
        measured += len(m)
        disturbed_kept += kept.disturbed_kept
        waits.append(kept.wait_pct or 0.0)
        for iv, k in zip(m, kept.keep, strict=True):
            if k:
                xs.append(iv["ticks"] / iv["deltas"][0])
                groups.append(g)
                ops_per_s.append(iv["deltas"][0] / iv["dt"])
    cpu = ((first.start or {}).get("cpus") or [None])[0]
    row = Result(kind=TIMING, bench=first.bench, param=None, variant="", unit=unit,
                 status=bad.status if bad else OK, reason=bad.reason if bad else None,
                 wall_s=sum(r.wall_s for r in runs), n_samples=measured, rounds=len(xs),
                 n_disturbed=measured - len(xs),
                 wis={"tasks": 1, "mode": first.mode, "processes": len(runs),
                      "interval": (first.start or {}).get("interval"), "ops_per_s": _median(ops_per_s),
                      "wait_pct": _median(waits),
                      "description": ((first.start or {}).get("wis") or {}).get("description"),
                      "cpu": cpu, "intervals": [r.intervals for r in runs]})
    if len(xs) < MIN_INTERVALS:
        if row.status == OK:
            row = replace(row, status=ERROR, reason=f"{len(xs)} usable interval(s): at least {MIN_INTERVALS} needed")
        return row
    x, gr = np.asarray(xs), np.asarray(groups)
    per_op = float(np.median(x))
    lo, hi = cluster_ci(x, gr, seed=seed)
    mad = float(np.median(np.abs(x - per_op)))
    rcv = mad / Z_QUARTILE / per_op if per_op else None
    row = replace(row, per_op=per_op, ci_low=lo, ci_high=hi, median=per_op, min=float(x.min()), mad=mad,
                  mean=float(x.mean()), rcv=rcv,
                  cv=float(x.std(ddof=1) / x.mean()) if len(x) > 1 and x.mean() else None,
                  method="intervals-2level" if len(np.unique(gr)) > 1 else "intervals",
                  ns_per_op=per_op if unit == "ns" else per_op * 1e9 / rate_hz if rate_hz else None)
    if row.status == OK and disturbed_kept == len(waits) and waits:
        row = replace(row, status=DISTURBED, reason=(
            f"the task waited {np.median(waits):.0f}% of the time for its CPU in most intervals: "
            "another program ran there; run `cyclebench check`, pin elsewhere (--cpu), and run again"))
    clocks = [r for pair in ratios for r in pair if r]
    if clocks and unit != "ns":
        ratio = float(np.median(clocks))
        row = replace(row, cycles_per_op=per_op * ratio, cycles_ci_low=lo * ratio, cycles_ci_high=hi * ratio,
                      cycles_min=float(x.min()) * ratio, cycles_rcv=rcv,
                      core_ghz=ratio * rate_hz / 1e9 if rate_hz else None)
        row = with_calibration(row, (max(clocks) - min(clocks)) / 2 / ratio)
        agree = [clock.chain_agreement({"chain": c}) for r in runs
                 for c in ((r.start or {}).get("chain_before"), (r.end or {}).get("chain_after")) if c]
        agree = [a for a in agree if a]
        source = f"add chain timed on CPU {cpu} before and after each run, not during it"
        cost: WisCost = {
            **(row.wis or {}),
            "cycles_source": f"{source} (core clock {ratio * rate_hz / 1e9:.3g} GHz)" if rate_hz else source,
            "chain_clock": [list(p) for p in ratios]}
        apart = [abs(a / b - 1) for a, b in ratios if a and b]
        if apart and max(apart) > CHAIN_DISAGREEMENT:  # the clock moved
            i = int(np.argmax(apart))
            a, b = ratios[i]
            cost["cycles_doubtful"] = (f"core clock {a:.3f} cycles/tick before and {b:.3f} after process {i + 1} "
                                       f"({100 * (b / a - 1):+.1f}%): the clock moved, cycles~ is doubtful")
        row = replace(row, chain_agreement=float(np.median(agree)) if agree else None, wis=cost)
    return row


def wis_csv_rows(series: Sequence[Series]) -> list[list[Any]]:
    """will-it-scale's own CSV for the series of one benchmark (threads and/or processes):
    the header ``tasks,processes,processes_idle,threads,threads_idle,linear``, its first row
    ``0,0,100,0,100,0``, then one row per task count: total ops/s of each mode (integers),
    the share of the machine's CPU time idle during that run in % (2 decimals; /proc/stat,
    all CPUs, as will-it-scale measures it), and linear = tasks × the larger of the two
    1-task throughputs. A value not measured (the other mode, a failed run) is -1, as
    will-it-scale prints for a run that gave no average."""
    by_mode = {s.mode: {p["tasks"]: p for p in s.points} for s in series}
    counts = sorted({n for pts in by_mode.values() for n in pts})

    def ops(mode: str, n: int) -> int:
        v = (by_mode.get(mode) or {}).get(n, {}).get("total_median")
        return -1 if v is None or (isinstance(v, float) and math.isnan(v)) else round(v)

    def idle(mode: str, n: int) -> str:
        v = (by_mode.get(mode) or {}).get(n, {}).get("idle_pct")
        return "-1" if v is None else f"{v:.2f}"

    base = max(ops("processes", 1), ops("threads", 1))
    rows: list[list[Any]] = [["tasks", "processes", "processes_idle", "threads", "threads_idle", "linear"],
                             [0, 0, "100", 0, "100", 0]]
    for n in counts:
        rows.append([n, ops("processes", n), idle("processes", n), ops("threads", n), idle("threads", n),
                     base * n if base >= 0 else -1])
    return rows
