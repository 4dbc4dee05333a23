"""Statistics of a whole command's repetitions (`cyclebench stat`): pure, numpy and scipy.

Each metric (wall, user, sys, max RSS, every counter event, or callgrind's simulated
events) has one value per repetition; its summary is the mean, the sample standard
deviation, the standard error of the mean (stddev/√n) and the 95% t interval of the mean
(its low end clipped at FLOOR: :class:`MeanInterval`), min, max, CV, median, MAD and the robust
CV (scaled MAD / median, stats.estimators' MAD_SCALE). perf stat's "± x.xx%" is the standard
error relative to the mean; `stat`'s table shows the CV (the spread of one run), the JSON and
the database hold both.

The counter values come decoded (counters.per_run_counts: scaled when multiplexed, None
when a repetition did not count them); derived metrics (IPC, MPKI, …) are computed on the
means by the ``derive`` function the caller passes.

Stored as one result row per metric (result_rows: bench ``stat:<command>/<metric>``, the
mean as per_op, min/median/CV/95% CI columns filled); each row's ``stat`` (model.StatMetric)
holds its per-repetition values and the first row's every repetition's raw launcher record.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from cyclebench.model import STAT, Repetition, Result, StatMetric
from cyclebench.stats.estimators import MAD_SCALE, OUTLIER_FLOOR, OUTLIER_MADS

SUMMARY_KEYS = ("mean", "stddev", "sem", "min", "max", "cv", "median", "mad", "rcv", "ci95", "ci_low", "ci_high")

# Every metric `stat` measures is a time, a size or a count: never below 0, and so neither is its
# mean. A 95% interval [L, U] of the mean covers it as often as [max(L, 0), U] does, so the low end
# is clipped there: `stat -r 2 -- true` read wall 189.1 and 1.33 ms (the first repetition waited
# 187 ms beyond its 1.79 ms of CPU), a t interval of 95.22 ± 1,193 ms (t = 12.71 at one degree of
# freedom) whose low end, −1,098 ms, no repetition of any command can have.
FLOOR = 0.0


@dataclass(frozen=True)
class MetricSummary(Mapping[str, Any]):
    """A metric's summary over the repetitions that counted it, in the metric's unit: ``mean``,
    ``stddev`` (sample), ``sem`` (stddev/√n), ``min``, ``max``, ``cv`` (stddev / mean),
    ``median``, ``mad`` (unscaled), ``rcv`` (scaled MAD / median), ``ci95`` (half-width of the
    t interval of the mean), ``ci_low``/``ci_high`` (that interval's ends, the low one clipped at
    FLOOR: MeanInterval), ``n`` (repetitions counted); None where undefined (no value; one
    value for the spreads; a zero mean or median for the ratios). Also read as the mapping of
    its fields in that order (SUMMARY_KEYS, then n), the JSON `stat` stores in its run's summary."""

    mean: float | None = None
    stddev: float | None = None
    sem: float | None = None
    min: float | None = None
    max: float | None = None
    cv: float | None = None
    median: float | None = None
    mad: float | None = None
    rcv: float | None = None
    ci95: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0

    def __getitem__(self, key: str) -> Any:
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return (f.name for f in fields(self))

    def __len__(self) -> int:
        return len(self.__dataclass_fields__)


@dataclass(frozen=True)
class Metric:
    """One line of the table: a metric's value in every repetition (None: not counted there)."""

    name: str
    unit: str
    values: list[float | None]
    status: str = "ok"  # ok | not counted | not supported | derived
    notes: tuple[str, ...] = ()
    reason: str | None = None  # why there is no number (not counted / not supported: ...)
    different: tuple[int, ...] = ()  # repetitions (1-based) that did other work (same_work)

    @property
    def counted(self) -> list[float]:
        return [v for v in self.values if v is not None]

    def summary(self) -> MetricSummary:
        """The summary of the repetitions that counted this metric (MetricSummary)."""
        x = np.asarray(self.counted, dtype=float)
        n = len(x)
        if not n:
            return MetricSummary(n=0)
        mean, med = float(np.mean(x)), float(np.median(x))
        from scipy import stats as sps  # here: only `stat` needs it

        mad = float(sps.median_abs_deviation(x))
        one = MetricSummary(mean=mean, min=float(x.min()), max=float(x.max()), median=med, mad=mad,
                            rcv=MAD_SCALE * mad / med if med else None, n=n)
        if n < 2:
            return one
        sd, sem = float(np.std(x, ddof=1)), float(sps.sem(x))
        half = float(sps.t.ppf(0.975, n - 1)) * sem
        return replace(one, stddev=sd, sem=sem, cv=sd / mean if mean else None, ci95=half,
                       ci_low=max(mean - half, FLOOR), ci_high=mean + half)

    @property
    def constant(self) -> bool:
        """Every repetition that counted it gave the same value (two or more): no spread to show."""
        x = self.counted
        return len(x) >= 2 and min(x) == max(x)

    def interval(self) -> MeanInterval | None:
        """The 95% interval of the mean as the summary gives it, with what a reader needs when its
        low end was clipped at FLOOR (MeanInterval); None with fewer than 2 repetitions."""
        s = self.summary()
        if s.ci_low is None or s.ci_high is None or s.mean is None or s.ci95 is None:
            return None
        x = self.counted
        t_low = s.mean - s.ci95
        off = farthest(x) if t_low < s.ci_low else None
        if off is None:
            return MeanInterval(s.ci_low, s.ci_high, t_low, len(x))
        rep = [i for i, v in enumerate(self.values) if v is not None][off] + 1  # as the repetitions are numbered
        return MeanInterval(s.ci_low, s.ci_high, t_low, len(x), off=rep, off_value=x[off],
                            others=float(np.median(np.delete(np.asarray(x), off))))


@dataclass(frozen=True)
class MeanInterval:
    """The 95% t interval of a metric's mean over ``n`` repetitions: ``low`` (clipped at FLOOR)
    and ``high``; ``t_low`` the t interval's own low end (below ``low`` when clipped). When
    clipped, the repetition that spreads it most: ``off`` (1-based, as the table numbers them),
    its value and the median of the ``others`` (:func:`farthest`)."""

    low: float
    high: float
    t_low: float
    n: int
    off: int | None = None
    off_value: float | None = None
    others: float | None = None

    @property
    def clipped(self) -> bool:
        return self.t_low < self.low


def farthest(values: Sequence[float]) -> int | None:
    """The index of the value farthest from the median of the others, relative to that median
    (leave-one-out, so it never widens its own yardstick; a ratio, as for any positive
    quantity): of wall 189.1 and 1.33 ms, 189.1 (141 times 1.33 above it; 1.33 is 0.99 of 189.1
    below). With two values that is the larger, which for a time is the one noise adds to (a
    program does not run faster than its work). None for fewer than 2 values or all equal."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2 or x.min() == x.max():
        return None
    far = []
    for k in range(len(x)):
        med = float(np.median(np.delete(x, k)))
        far.append(abs(x[k] - med) / abs(med) if med else math.inf)
    return int(np.argmax(far))


def time_metrics(reps: Sequence[Repetition], notes: Sequence[str] = ()) -> list[Metric]:
    """wall, user and sys time in ms of every repetition (the launcher's wait4 and clock)."""
    return [
        Metric("wall", "ms", [r["wall_ns"] / 1e6 for r in reps], notes=tuple(notes)),
        Metric("user", "ms", [r["user_us"] / 1e3 for r in reps], notes=tuple(notes)),
        Metric("sys", "ms", [r["sys_us"] / 1e3 for r in reps], notes=tuple(notes)),
    ]


def _event_metric(c: Mapping[str, Any], n: int, paranoid: str | None) -> Metric:
    m = Metric(c["name"], c["unit"], list(c["values"]))
    k, errors = len(m.counted), c["errors"]
    if k == 0:
        if errors and len(errors) == n:
            why = errors[0]
            if "ermission" in why and paranoid is not None:
                why = f"{why}, perf_event_paranoid={paranoid}"
            return replace(m, status="not supported", reason=f"not supported: {why}")
        return replace(m, status="not counted", reason="not counted")
    notes = []
    if k < n:
        notes.append(f"not counted in {n - k}/{n} runs")
    if c["enabled"] and c["running"] < c["enabled"]:
        notes.append(f"multiplexed {100 * c['running'] / c['enabled']:.0f}%")
    if c["user_only"]:
        notes.append("user space only (perf_event_paranoid)")
    return replace(m, notes=tuple(notes))


def aggregate(reps: Sequence[Repetition], counts: Sequence[Mapping[str, Any]],
              derive: Callable[[dict[str, float]], dict[str, float]] | None = None,
              paranoid: str | None = None) -> list[Metric]:
    """Metrics of the launcher's records ``reps`` (type "stat"): wall/user/sys ms, max RSS,
    every event of ``counts`` (counters.per_run_counts of the same records), then
    ``derive``'s metrics (e.g. stats.result.derived) of the events' means. ``paranoid``: the
    perf_event_paranoid level, added to a permission error."""
    n = len(reps)
    metrics = [*time_metrics(reps), Metric("max-rss", "KiB", [float(r["maxrss_kb"]) for r in reps])]
    wall = metrics[0].summary().mean
    inherited = not reps or all(r.get("inherit", True) for r in reps)
    events = []
    for c in counts:
        m = _event_metric(c, n, paranoid)
        mean = m.summary().mean
        if m.unit == "ms" and mean is not None and wall:  # task-clock, cpu-clock
            m = replace(m, notes=(f"{mean / wall:.2f} CPUs utilized", *m.notes))
        if not inherited:
            m = replace(m, notes=(*m.notes, "children not counted (kernel refused inherit with group reads)"))
        events.append(m)
    metrics += events
    means = {m.name: float(np.mean(m.counted)) for m in events if m.counted}
    for name, value in (derive(means) if derive else {}).items():
        metrics.append(Metric(name, "", [value], status="derived", notes=("derived from the means",)))
    return metrics


# What proves that every repetition did the same work (Molnar's alignment study read its
# `perf stat --repeat` columns so): instructions retired agree to 0.1% between runs of the same
# work; without a PMU, page faults and context switches must stay within 5 MAD of the others'
# median. Integer counts of identical work jitter (measured on the project's 2-CPU KVM guest, 24 × 5
# repetitions of one shell command under load 2–3: page faults 248–259, context switches 3–16, the
# host's preemptions), while their MAD over 4 others collapses to 0–1 count; so the band is never
# narrower than 3 Poisson standard deviations of the count, 3·√median.
SAME_WORK_INSTRUCTIONS = 1e-3
SAME_WORK_MADS = 5.0
SAME_WORK_POISSON = 3.0
SAME_WORK_EVENTS = ("page-faults", "context-switches")


def _different(x: np.ndarray, name: str) -> list[int]:
    """Indices of the repetitions off the median of the *other* repetitions (leave-one-out, so
    an outlier never widens its own band): by more than SAME_WORK_INSTRUCTIONS of it for
    instructions, else by more than max(5 scaled MADs (stats.estimators.MAD_SCALE), 3·√median, 1)."""
    out = []
    for k in np.flatnonzero(np.isfinite(x)):
        others = np.delete(x, k)
        others = others[np.isfinite(others)]
        med = float(np.median(others))
        if name == "instructions":
            tol = SAME_WORK_INSTRUCTIONS * abs(med)
        else:
            mad = MAD_SCALE * float(np.median(np.abs(others - med)))
            tol = max(SAME_WORK_MADS * mad, SAME_WORK_POISSON * math.sqrt(abs(med)), 1.0)
        if abs(x[k] - med) > tol:
            out.append(int(k))
    return out


def same_work(metrics: Sequence[Metric]) -> tuple[list[Metric], list[str]]:
    """Flag the repetitions whose work differs from the others' (≥ 3 repetitions): those whose
    ``instructions`` are off the other repetitions' median by more than SAME_WORK_INSTRUCTIONS
    (relative) or, without instructions, whose page-faults or context-switches lie beyond the
    others' median ± max(5 scaled MADs, 3·√median, 1 count) (:func:`_different`). Returns the
    metrics, each flagged one a new one that says so (``different``, 1-based; a note), and one
    line per finding, e.g. "repetition 3 did other work: page-faults 16,636 vs median 254
    (+6449.61%)". Source: Molnar 2015
    (docs/references.md#icache-alignment-linux-2015); the band's floor: the counts' Poisson
    spread."""
    by_name = {m.name: m for m in metrics if m.status == "ok"}
    judged = ["instructions"] if len(by_name.get("instructions", Metric("", "", [])).counted) >= 3 else \
        [n for n in SAME_WORK_EVENTS if n in by_name]
    lines = []
    flagged: dict[int, Metric] = {}  # id of a metric of ``metrics`` → the new one that says what it found
    for name in judged:
        m = by_name[name]
        x = np.asarray([np.nan if v is None else v for v in m.values], dtype=float)
        if np.isfinite(x).sum() < 3:
            continue
        med = float(np.nanmedian(x))
        different = list(m.different)
        for k in _different(x, name):
            different.append(k + 1)
            lines.append(f"repetition {k + 1} did other work: {name} {x[k]:,.0f} vs median {med:,.0f} "
                         f"({100 * (x[k] - med) / med:+.2f}%)" if med else f"repetition {k + 1} did other work")
        if different:
            flagged[id(m)] = replace(m, different=tuple(different),
                                     notes=(*m.notes, "other work in run " + ", ".join(map(str, different))))
    return [flagged.get(id(m), m) for m in metrics], lines


def aggregate_callgrind(reps: Sequence[Repetition], names: Sequence[str]) -> list[Metric]:
    """Metrics of callgrind repetitions: wall/user/sys of the command *under valgrind*,
    then every simulated event of ``names`` (in that order) that some repetition has."""
    metrics = time_metrics(reps, notes=["under valgrind"])
    for e in names:
        if any(e in (r.get("events") or {}) for r in reps):
            vals = [None if (r.get("events") or {}).get(e) is None else float(r["events"][e]) for r in reps]
            metrics.append(Metric(e, "count", vals, notes=("simulated",)))
    return metrics


def exit_summary(reps: Sequence[Repetition]) -> tuple[str, bool]:
    """('exit 0 in 5/5 runs', all zero?) — or 'exit 3 in 2/5 runs, exit 0 in 3/5, killed by SIGSEGV in …'."""
    n = len(reps)
    counts: dict[str, int] = {}
    for r in reps:
        key = f"killed by {r['signal']}" if r.get("signal") else f"exit {r.get('exit')}"
        counts[key] = counts.get(key, 0) + 1
    text = ", ".join(f"{k} in {c}/{n} runs" for k, c in sorted(counts.items(), key=lambda kv: -kv[1]))
    return text, set(counts) <= {"exit 0"}


def bench_name(argv: Sequence[str]) -> str:
    return "stat:" + os.path.basename(argv[0])


def result_rows(argv: Sequence[str], backend: str, reps: Sequence[Repetition],
                metrics: Sequence[Metric]) -> list[Result]:
    """Results-table rows (new Results of kind stat, not stored), one per metric: per_op = mean
    in the metric's unit (min, median, CV, 95% CI of the mean); its per-repetition values,
    notes and the command in its ``stat`` (model.StatMetric; the first row's also every
    repetition's record and the exit summary); ns_per_op the wall time's mean in ns, wall_s the
    repetitions' total."""
    text, all_zero = exit_summary(reps)
    base = bench_name(argv)
    rows = []
    for i, m in enumerate(metrics):
        s = m.summary()
        row = Result(kind=STAT, bench=f"{base}/{m.name}", param=None, variant="", unit=m.unit or None, status="ok")
        if m.status in ("not counted", "not supported"):
            row = replace(row, status="skipped", reason=m.reason)
        else:
            if not all_zero:
                row = replace(row, status="invalid", reason=f"command: {text}")
            row = replace(row, per_op=s.mean, mean=s.mean, median=s.median, min=s.min, mad=s.mad, cv=s.cv, rcv=s.rcv,
                          n_samples=s.n, method="mean", ci_low=s.ci_low, ci_high=s.ci_high,  # clipped at FLOOR
                          ns_per_op=s.mean * 1e6 if m.name == "wall" and s.mean is not None else None)
        stat: StatMetric = {
            "stat": True, "backend": backend, "simulated": backend == "callgrind" and m.notes == ("simulated",),
            "metric": m.name, "values": m.values, "max": s.max, "stddev": s.stddev, "sem": s.sem,
            "notes": list(m.notes), "derived": m.status == "derived", "command": list(argv),
            "different_work": list(m.different)}
        if i == 0:
            row = replace(row, wall_s=sum(r.get("wall_ns", 0) for r in reps) / 1e9)
            stat.update(repetitions=list(reps), exit=text)
        rows.append(replace(row, stat=stat))
    return rows


def spread(values: Sequence[float]) -> dict[str, float | None]:
    """Replicates of one figure (e.g. a variant's per-invocation medians) as perf stat shows
    them: mean, stddev as % of the mean, the 95% t interval of the mean, and ``best``: the lowest
    replicate, one estimate as noisy as any (its spread is the stddev), not a floor on the cost
    (low_outlier says when it is an outlier among them). NaN values are left out; None where
    undefined (fewer than 2 values, a zero mean)."""
    from scipy import special

    x = np.asarray([v for v in values if v is not None and v == v], dtype=float)
    if not len(x):
        return {"mean": None, "stddev_pct": None, "ci_low": None, "ci_high": None, "best": None}
    mean = float(x.mean())
    if len(x) < 2:
        return {"mean": mean, "stddev_pct": None, "ci_low": None, "ci_high": None, "best": float(x.min())}
    sd = float(np.std(x, ddof=1))
    half = float(special.stdtrit(len(x) - 1, 0.975)) * sd / np.sqrt(len(x))
    return {"mean": mean, "stddev_pct": 100 * sd / abs(mean) if mean else None, "ci_low": mean - half,
            "ci_high": mean + half, "best": float(x.min())}


def low_outlier(values: Sequence[float | None]) -> float | None:
    """How far the lowest of ``values`` (replicates of one figure: a variant's per-invocation
    medians) lies below their median, as a fraction of it, when it is an outlier by the rule
    stats.estimators counts outliers with (more than OUTLIER_MADS scaled MADs and more than
    OUTLIER_FLOOR from the median); None when it is not, or with fewer than 3 values (NaN and
    None left out). The lowest of 11 invocations of 200 dependent adds read 182.6 cycles~ beside
    a median of 199.7: one invocation that read low, not a cost the code reaches."""
    x = np.asarray([v for v in values if v is not None and v == v], dtype=float)
    if len(x) < 3:
        return None
    med = float(np.median(x))
    mad = float(np.median(np.abs(x - med))) * MAD_SCALE
    gap = med - float(x.min())
    if not med or gap <= max(OUTLIER_MADS * mad, OUTLIER_FLOOR * abs(med)):
        return None
    return gap / abs(med)
