"""Outcome → result fields: the row of the results table for one measured item, made from
the runner's raw samples (estimators, cycles~, counters per op, net of the loop's cost).

Pure: numpy and the model only (the runner has already decoded counter reads).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from statistics import NormalDist
from typing import Any, cast

import numpy as np

from cyclebench.model import (
    DISTURBED,
    OK,
    TIMING,
    CounterEntry,
    Counters,
    Disturbance,
    Outcome,
    PerProcess,
    Result,
    RunnerResult,
)
from cyclebench.stats import batches, clock
from cyclebench.stats.batches import DISTURBED_SHARE, INTERRUPTED, MIGRATED, MIN_CLEAN, PREEMPTED
from cyclebench.stats.estimators import NotEnoughSamples, combine_difference, estimate, round_slopes, slow_side

# Standard normal quantiles from the standard library's inverse cdf (Wichura's AS241, as
# scipy.special.ndtri: equal to 1e-15, tests/unit/test_imports.py): every result is made without
# importing scipy (~0.3 s of `run`'s and `compare`'s start).
Z_QUARTILE = NormalDist().inv_cdf(0.75)  # MAD / Z_QUARTILE estimates σ under normality
Z_95 = NormalDist().inv_cdf(0.975)  # the half-width of a two-sided 95% interval, in σ


def derived(per_op: dict[str, float]) -> dict[str, float]:
    """Metrics from per-op counts when their inputs exist: IPC, misses per 1000
    instructions (MPKI) for every *-misses event, branch-miss rate."""
    out: dict[str, float] = {}
    ins, cyc = per_op.get("instructions"), per_op.get("cycles") or per_op.get("cpu-cycles")
    if ins and cyc:
        out["IPC"] = ins / cyc
    if ins:
        for k, v in per_op.items():
            if k.endswith(("-misses", "-miss")) or k == "cache-misses":
                out[f"{k} MPKI"] = 1000 * v / ins
    br, bm = per_op.get("branches") or per_op.get("branch-instructions"), per_op.get("branch-misses")
    if br and bm is not None:
        out["branch-miss rate"] = bm / br
    return out




# What a runner's result line holds per sample (n, ticks, cal, disturbed, pmu_cycles: the samples
# table's; cal_imul: read into chain_agreement) and the raw counter reads (decoded into
# counter_fields'): not part of the result's line.
_SAMPLES = frozenset(("n", "ticks", "cal", "cal_imul", "disturbed", "pmu_cycles", "counters"))

# The runner's per-batch flag (engine/disturb.h): or-ed bits, 0 undisturbed (stats.batches).


def disturbance(res: Mapping[str, Any] | None) -> Disturbance:
    """How many of a runner result's batches were disturbed: ``batches``, ``disturbed``,
    ``preempted`` (another task held the CPU: an involuntary switch, or a wake-up kept
    waiting) and ``migrated`` (moved to another CPU); a batch may be both. Flags from
    before the bits (any switch or migration: 1) count as preempted; an interrupted batch
    (stats.batches) is not disturbed."""
    flags = [int(x or 0) & ~INTERRUPTED for x in ((res or {}).get("disturbed") or [])]
    n = len((res or {}).get("n") or flags)
    return {"batches": n, "disturbed": sum(1 for f in flags if f),
            "preempted": sum(1 for f in flags if f & PREEMPTED or f & ~(PREEMPTED | MIGRATED)),
            "migrated": sum(1 for f in flags if f & MIGRATED)}


def disturbed_note(res: Mapping[str, Any] | None) -> str | None:
    """None when the disturbed batches of a runner result can simply be dropped (at most
    half of them, and enough clean ones left); else why the result is disturbed and what
    to do — the reason of a result whose status is ``disturbed``."""
    d = disturbance(res)
    if not d["disturbed"] or (d["disturbed"] <= DISTURBED_SHARE * d["batches"]
                              and d["batches"] - d["disturbed"] >= MIN_CLEAN):
        return None
    cpu = (res or {}).get("cpu")
    where = f"CPU {cpu}" if isinstance(cpu, int) and not isinstance(cpu, bool) and cpu >= 0 else "its CPU"
    p, m = d["preempted"], d["migrated"]
    what = "preempted" if not m else "migrated" if not p else f"preempted or migrated ({p} preempted, {m} migrated)"
    why = " and ".join(([f"another program shared {where}"] if p else [])
                       + (["the runner moved between CPUs"] if m else []))
    return (f"{d['disturbed']} of {d['batches']} batches {what}: {why}; "
            "run `cyclebench check`, isolate the CPU or pin elsewhere (--cpu), and run again")


def usable_for_verdict(row: Mapping[str, Any] | Outcome, include_disturbed: bool = False) -> bool:
    """Whether a result may enter a comparison's verdict: a stored or computed row (its
    ``status``) or a runner Outcome (its status and its batches' flags). ok: yes; disturbed
    (most batches preempted or migrated, see disturbed_note): only with
    ``include_disturbed``; anything else (failed, crashed, invalid, skipped...): never."""
    if isinstance(row, Outcome):
        if row.status != OK or row.result is None:
            return False
        return include_disturbed or disturbed_note(row.result) is None
    status = row.get("status")
    return status == OK or (include_disturbed and status == DISTURBED)


def counter_fields(res: RunnerResult, events: list[list[Any]], n: np.ndarray, group: int | None,
                   keep: np.ndarray, seed: int) -> Counters:
    """Per-op slope of every requested event (the runner decoded its raw group reads into
    ``res["counters"]["series"/"status"]``), its status, and derived metrics (IPC, MPKI,
    branch-miss rate)."""
    c = res.get("counters") or {}
    names = [e.name for g in events for e in g]
    series, status = c.get("series") or [None] * len(names), c.get("status") or ["not counted"] * len(names)
    out: dict[str, CounterEntry] = {}
    per_op: dict[str, float] = {}
    for name, vals, st in zip(names, series, status, strict=True):
        entry: CounterEntry = {"status": st}
        if vals is not None and len(vals) == len(n):
            try:
                est = estimate(n, np.asarray(vals), seed=seed, group=group, keep=keep)
                entry.update(per_op=est.per_op, ci_low=est.ci_low, ci_high=est.ci_high)
                per_op[name] = est.per_op
            except NotEnoughSamples as e:
                entry["status"] = f"not counted: {e}"
        out[name] = entry
    return {"events": out, "derived": derived(per_op)}


def result_fields(outcome: Outcome, rate_hz: float, variant: str = "",
                  events: list[list[Any]] | None = None) -> Result:
    """The results-table row for one outcome (a new ``model.Result`` of kind timing, not yet
    stored: no id): estimators in the timer's unit and in cycles~ (when the runner timed its
    calibration chain), disturbed samples dropped. ``rate_hz``: the timer's ticks per second
    (for ns_per_op); ``events``: the counter groups read around every batch (their per-op
    figures go to its ``counters``, model.Counters). Its ``line`` is the runner's result line
    minus the samples.

    When most batches were disturbed (disturbed_note) none are dropped and the figures
    come from all of them, but the status is ``disturbed`` and the reason says what
    happened and what to do: the row is stored and shown, and kept out of verdicts."""
    row = Result(kind=TIMING, bench=outcome.bench, param=outcome.param, variant=variant, status=outcome.status,
                 reason=outcome.reason, wall_s=outcome.wall_s)
    res = outcome.result
    if res is None:
        return row
    unit = res.get("unit", "ticks")
    timer_overhead = (res.get("timer_overhead") or {}).get("median")
    line = cast(RunnerResult, {k: v for k, v in res.items() if k not in _SAMPLES})
    n = np.asarray(res["n"], dtype=float)
    t = np.asarray(res["ticks"], dtype=float)
    ratio = clock.core_ratio(res)
    keep = np.ones(len(n), dtype=bool) if ratio is None else np.isfinite(ratio)
    note = disturbed_note(res)
    storm = note is not None
    status, reason = row.status, row.reason
    if storm:  # rejection cannot apply: keep them all, and say so in the status
        row = replace(row, disturbance=disturbance(res))
        if status == OK:
            status, reason = DISTURBED, note
    else:
        keep &= ~batches.disturbed(res)
    n_disturbed = int(len(n) - keep.sum())  # dropped: disturbed (unless storm) or without a clock
    seed = int(res.get("seed", 0)) & 0xFFFFFFFF
    group = res.get("ladder")
    n_trimmed = None
    hit = np.zeros(len(n), dtype=bool)
    if not storm:  # a disturbed result's batches vary by how much of each the other program took
        hit = batches.interrupted(res, keep)  # counted with the slow side: both are time a batch was not the body's
        keep &= ~hit
        slow = slow_side(n, t, group, keep, float(timer_overhead or 0))
        n_trimmed = int(hit.sum() + slow.sum())
        keep &= ~slow
    row = replace(row, status=status, reason=reason, unit=unit, timer_overhead=timer_overhead, line=line,
                  n_disturbed=n_disturbed, n_trimmed=n_trimmed)
    try:
        est = estimate(n, t, seed=seed, group=group, keep=keep)
    except NotEnoughSamples as e:
        if row.status in (OK, DISTURBED):
            row = replace(row, status="error", reason=str(e))
        return row
    row = replace(row, **est.to_dict(), ns_per_op=est.per_op * 1e9 / rate_hz if unit != "ns" else est.per_op)
    if ratio is not None:
        # the chains after interrupted batches count (clock.round_costs reads them alike)
        smooth = clock.round_ratio(np.where(keep | hit, ratio, np.nan), group)
        cyc = estimate(n, np.where(keep, t * np.nan_to_num(smooth), 0.0), seed=seed, group=group, keep=keep)
        r = ratio[keep]
        row = replace(
            row, cycles_per_op=cyc.per_op, cycles_ci_low=cyc.ci_low, cycles_ci_high=cyc.ci_high, cycles_min=cyc.min,
            cycles_rcv=cyc.rcv, core_ghz=float(np.median(r)) * rate_hz / 1e9,
            ratio_rcv=float(np.median(np.abs(r - np.median(r))) / Z_QUARTILE / np.median(r)),
            chain_agreement=clock.chain_agreement(res),
        )
    procs = res.get("process_rounds") or []
    if len(procs) > 1 and all(isinstance(r, int) for r in procs):
        row = two_level(row, n, t, keep, group, procs, seed, smooth if ratio is not None else None)
        if row.per_op is not None:  # always: the estimate set it
            row = replace(row, ns_per_op=row.per_op * 1e9 / rate_hz if unit != "ns" else row.per_op)
    if ratio is not None and row.cycles_per_op is not None:
        row = with_calibration(row, clock.calibration_rse(res), clock.clock_split(res) or 0.0)
    if events:
        row = replace(row, counters=counter_fields(res, events, n, group, keep, seed))
    if res.get("pmu_cycles"):  # a real PMU: the cycles event per op, and how well cycles~ agrees
        pmu = estimate(n, np.asarray(res["pmu_cycles"], dtype=float), seed=seed, group=group, keep=keep)
        row = replace(row, pmu_cycles_per_op=pmu.per_op, pmu_ci_low=pmu.ci_low, pmu_ci_high=pmu.ci_high)
        if row.cycles_per_op and pmu.per_op > 0:
            row = replace(row, pmu_agreement=row.cycles_per_op / pmu.per_op)
    return row


# Type B uncertainty of the add-chain clock: the residual error on chains of known length
# once the fixed part is measured (chain_fixed). Intel Xeon KVM guest, 12 runs × 3 processes:
# add chains of 200/300/400 +0.08…+0.14%, xor 300 +0.04%, imul 100 +0.02% (bench/chains.py);
# the cause is not known (docs/method.md §3), so it is stated as an uncertainty, not corrected.
CALIBRATION_FLOOR = 0.001


def with_calibration(row: Result, rse_fixed: float, split: float = 0.0) -> Result:
    """A new record: ``row``'s cycles~ CI widened by the calibration's own relative uncertainty,
    in quadrature: the fixed part's standard error (clock.calibration_rse; ``rse_fixed``, a
    fraction of the clock), CALIBRATION_FLOOR, and the chains' disagreement (clock.clock_split;
    ``split``, a fraction): all common to every round of a run, so no spread between rounds or
    processes shows them. The disagreement counts as a uniform distribution of the clock between
    the add chain's and the imul chain's (GUM §4.3.7: u = half-width / √3 of a span wholly
    covered, here |split| / √3), so the 95% CI reaches 1.13 × |split| from the estimate: code of
    3-cycle ops read |split| low with the add chain's clock (clock.clock_split). The total
    relative standard error goes to its ``calibration_rse``. Raises TypeError when ``row`` has
    no cycles~ figure."""
    est, lo, hi = row.cycles_per_op, row.cycles_ci_low, row.cycles_ci_high
    if est is None or lo is None or hi is None:
        raise TypeError(f"{row!r} has no cycles~ figure to widen")
    rse = float(np.hypot(np.hypot(rse_fixed, CALIBRATION_FLOOR), abs(split) / np.sqrt(3)))
    cal = Z_95 * abs(est) * rse
    return replace(row, cycles_ci_low=est - float(np.hypot(est - lo, cal)),
                   cycles_ci_high=est + float(np.hypot(hi - est, cal)), calibration_rse=rse)


def relative_halfwidth(res: Mapping[str, Any] | None, n_resamples: int = 400) -> float:
    """Relative half-width of the per-op cost's 95% CI (cycles~ where the add chain was timed,
    else the timer's unit) by the two-level bootstrap over the result's processes, with few
    resamples: whether to measure more (``run --target-ci``), not a figure to report. inf when
    fewer than 6 rounds have a cost or the cost is 0."""
    from cyclebench.stats.ab import cluster_boot

    if not res:
        return float("inf")
    slopes, _unit = clock.round_costs(dict(res))
    procs = res.get("process_rounds") or []
    groups = (np.repeat(np.arange(len(procs)), procs) if procs and all(isinstance(p, int) for p in procs)
              and sum(procs) == len(slopes) else np.zeros(len(slopes), dtype=int))
    ok = np.isfinite(slopes)
    x = slopes[ok]
    if len(x) < 6 or not np.median(x):
        return float("inf")
    lo, hi = np.percentile(cluster_boot(x, groups[ok], n_resamples=n_resamples), [2.5, 97.5])
    return float((hi - lo) / 2 / abs(np.median(x)))


def worth_more(halfwidth: float, target: float, passes: int, most: int) -> bool:
    """Whether another pass is worth its time (``run --target-ci``): the CI is wider than the
    target and the target is within reach — a CI narrows as 1/√passes, so one that needs more
    than ``most`` passes to get there is held wide by the host's spread between processes
    (seen: some processes +20–45% on the Intel VM), and more passes would only spend time."""
    return target < halfwidth and passes * (halfwidth / target) ** 2 <= most


def sample_rows(res: RunnerResult | None) -> list[tuple[int, int, int | None, int | None, int | None]]:
    if not res:
        return []
    n = len(res["n"])
    cal = res.get("cal") or [None] * n
    dist = res.get("disturbed") or [None] * n
    pmu = res.get("pmu_cycles") or [None] * n
    return list(zip(res["n"], res["ticks"], cal, dist, pmu, strict=True))


def add_net(row: Result, loop: Mapping[str, Any] | None) -> Result:
    """A new record: ``row`` with its net-of-loop columns (net_per_op and its CI in the timer's
    unit when the units agree; cycles_net and its CI in cycles~) from the loop/empty row of the
    same run (stats.estimators.combine_difference); ``row`` itself when there is no loop row
    or either has no per-op figure."""
    if not loop or row.per_op is None or loop.get("per_op") is None:
        return row
    if row.unit == loop.get("unit"):
        d = combine_difference((row.per_op, row.ci_low, row.ci_high), (loop["per_op"], loop["ci_low"], loop["ci_high"]))
        row = replace(row, net_per_op=d[0], net_ci_low=d[1], net_ci_high=d[2])
    if row.cycles_per_op is not None and loop.get("cycles_per_op") is not None:
        d = combine_difference((row.cycles_per_op, row.cycles_ci_low, row.cycles_ci_high),
                               (loop["cycles_per_op"], loop["cycles_ci_low"], loop["cycles_ci_high"]))
        row = replace(row, cycles_net=d[0], cycles_net_ci_low=d[1], cycles_net_ci_high=d[2])
    return row


# The columns two_level replaces: the timer unit's figure and CI, then cycles~'s.
_TWO_LEVEL = (("per_op", "ci_low", "ci_high"), ("cycles_per_op", "cycles_ci_low", "cycles_ci_high"))


def two_level(row: Result, n: np.ndarray, t: np.ndarray, keep: np.ndarray, group: int | None,
              procs: list[int], seed: int, ratio: np.ndarray | None) -> Result:
    """A new record: per op and its 95% CI from rounds spread over several processes: the median
    of the per-round slopes, its CI by the two-level bootstrap over processes, then rounds (as
    compare does; Davison & Hinkley 1997 §3.8) — a bias that holds for a whole process (seen:
    ±3 cycles~ on a 300-cycle chain) widens the CI instead of passing for precision. Replaces
    per_op/ci (timer unit) and cycles_per_op/ci (with ``ratio``, per-sample core/TSC ratios);
    each process's own median goes to its ``per_process``; ``method`` becomes
    rounds-2level. ``n``, ``t``, ``keep``: operations, ticks and which samples count, per
    sample; ``procs``: rounds per process, in order. When the rounds do not map onto the
    processes, or fewer than two processes have a slope, the figures replaced so far are kept
    and the rest stays one-level."""
    from cyclebench.stats.ab import cluster_ci

    g = int(group or 8)
    groups = np.repeat(np.arange(len(procs)), procs)
    per_process: dict[str, list[float]] = {}
    for (key, lo_key, hi_key), tt in zip(_TWO_LEVEL, (t, None if ratio is None else t * np.nan_to_num(ratio)),
                                         strict=True):
        if tt is None:
            continue
        slopes = round_slopes(n, tt, g, keep, aligned=True)
        if len(slopes) != len(groups):
            return row  # the rounds do not map onto the processes: keep the one-level figures
        ok = np.isfinite(slopes)
        if len(np.unique(groups[ok])) < 2:
            return row
        x, gx = slopes[ok], groups[ok]
        lo, hi = cluster_ci(x, gx, seed=seed)
        per_process[key] = [float(np.median(x[gx == p])) for p in np.unique(gx)]
        row = replace(row, **{key: float(np.median(x)), lo_key: lo, hi_key: hi},
                      per_process=cast(PerProcess, {**(row.per_process or {}), **per_process}))
    return replace(row, method="rounds-2level")  # fits the column (20)
