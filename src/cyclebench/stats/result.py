"""Outcome → result fields: the row of the results table for one measured item, made from
the runner's raw samples (estimators, cycles~, counters per op, net of the loop's cost).

Pure: numpy/scipy and the model only (the runner has already decoded counter reads).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import special

from cyclebench.model import DISTURBED, OK, TIMING, Outcome
from cyclebench.stats import clock
from cyclebench.stats.estimators import NotEnoughSamples, combine_difference, estimate, round_slopes, slow_side


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




# The runner's per-batch flag (engine/disturb.h): or-ed bits, 0 undisturbed.
PREEMPTED, MIGRATED = 1, 2
DISTURBED_SHARE = 0.5  # more batches disturbed than this: rejection cannot apply, the result is disturbed
MIN_CLEAN = 3  # nor when fewer undisturbed batches than this would be left


def disturbance(res: Mapping[str, Any] | None) -> dict[str, int]:
    """How many of a runner result's batches were disturbed: ``batches``, ``disturbed``,
    ``preempted`` (another task held the CPU: an involuntary switch, or a wake-up kept
    waiting) and ``migrated`` (moved to another CPU); a batch may be both. Flags from
    before the bits (any switch or migration: 1) count as preempted."""
    flags = [int(x or 0) for x in ((res or {}).get("disturbed") or [])]
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


def counter_fields(res: dict[str, Any], events: list[list[Any]], n: np.ndarray, group: int | None,
                   keep: np.ndarray, seed: int) -> dict[str, Any]:
    """Per-op slope of every requested event (the runner decoded its raw group reads into
    ``res["counters"]["series"/"status"]``), its status, and derived metrics (IPC, MPKI,
    branch-miss rate)."""
    c = res.get("counters") or {}
    names = [e.name for g in events for e in g]
    series, status = c.get("series") or [None] * len(names), c.get("status") or ["not counted"] * len(names)
    out: dict[str, Any] = {}
    per_op: dict[str, float] = {}
    for name, vals, st in zip(names, series, status, strict=True):
        entry: dict[str, Any] = {"status": st}
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
                  events: list[list[Any]] | None = None) -> dict[str, Any]:
    """The results-table row for one outcome: estimators in the timer's unit and in
    cycles~ (when the runner timed its calibration chain), disturbed samples dropped.

    When most batches were disturbed (disturbed_note) none are dropped and the figures
    come from all of them, but the status is ``disturbed`` and the reason says what
    happened and what to do: the row is stored and shown, and kept out of verdicts."""
    fields: dict[str, Any] = {
        "kind": TIMING, "bench": outcome.bench, "param": outcome.param, "variant": variant, "status": outcome.status,
        "reason": outcome.reason, "wall_s": outcome.wall_s,
    }
    res = outcome.result
    if res is None:
        return fields
    unit = res.get("unit", "ticks")
    fields["unit"] = unit
    fields["timer_overhead"] = (res.get("timer_overhead") or {}).get("median")
    fields["extra"] = {k: v for k, v in res.items()
                       if k not in ("n", "ticks", "cal", "disturbed", "pmu_cycles", "counters")}
    n = np.asarray(res["n"], dtype=float)
    t = np.asarray(res["ticks"], dtype=float)
    ratio = clock.core_ratio(res)
    keep = np.ones(len(n), dtype=bool) if ratio is None else np.isfinite(ratio)
    note = disturbed_note(res)
    storm = note is not None
    if storm:  # rejection cannot apply: keep them all, and say so in the status
        fields["extra"]["disturbance"] = disturbance(res)
        if fields["status"] == OK:
            fields["status"], fields["reason"] = DISTURBED, note
    else:
        keep &= np.asarray([not x for x in (res.get("disturbed") or [0] * len(n))], dtype=bool)
    fields["n_disturbed"] = int(len(n) - keep.sum())  # dropped: disturbed (unless storm) or without a clock
    seed = int(res.get("seed", 0)) & 0xFFFFFFFF
    group = res.get("ladder")
    if not storm:  # a disturbed result's batches vary by how much of each the other program took
        hit = slow_side(n, t, group, keep, float(fields["timer_overhead"] or 0))
        fields["n_trimmed"] = int(hit.sum())
        keep &= ~hit
    try:
        est = estimate(n, t, seed=seed, group=group, keep=keep)
    except NotEnoughSamples as e:
        if fields["status"] in (OK, DISTURBED):
            fields["status"], fields["reason"] = "error", str(e)
        return fields
    fields.update(est.to_dict())
    fields["ns_per_op"] = est.per_op * 1e9 / rate_hz if unit != "ns" else est.per_op
    if ratio is not None:
        smooth = clock.round_ratio(np.where(keep, ratio, np.nan), group)
        cyc = estimate(n, np.where(keep, t * np.nan_to_num(smooth), 0.0), seed=seed, group=group, keep=keep)
        r = ratio[keep]
        fields.update(
            cycles_per_op=cyc.per_op, cycles_ci_low=cyc.ci_low, cycles_ci_high=cyc.ci_high, cycles_min=cyc.min,
            cycles_rcv=cyc.rcv, core_ghz=float(np.median(r)) * rate_hz / 1e9,
            ratio_rcv=float(np.median(np.abs(r - np.median(r))) / special.ndtri(0.75) / np.median(r)),
            chain_agreement=clock.chain_agreement(res),
        )
    procs = res.get("process_rounds") or []
    if len(procs) > 1 and all(isinstance(r, int) for r in procs):
        two_level(fields, n, t, keep, group, procs, seed, smooth if ratio is not None else None)
        fields["ns_per_op"] = fields["per_op"] * 1e9 / rate_hz if unit != "ns" else fields["per_op"]
    if ratio is not None and fields.get("cycles_per_op") is not None:
        with_calibration(fields, clock.calibration_rse(res))
    if events:
        fields["extra"]["counters"] = counter_fields(res, events, n, group, keep, seed)
    if res.get("pmu_cycles"):  # a real PMU: the cycles event per op, and how well cycles~ agrees
        pmu = estimate(n, np.asarray(res["pmu_cycles"], dtype=float), seed=seed, group=group, keep=keep)
        fields.update(pmu_cycles_per_op=pmu.per_op, pmu_ci_low=pmu.ci_low, pmu_ci_high=pmu.ci_high)
        if fields.get("cycles_per_op") and pmu.per_op > 0:
            fields["pmu_agreement"] = fields["cycles_per_op"] / pmu.per_op
    return fields


# Type B uncertainty of the add-chain clock: the residual error on chains of known length
# once the fixed part is measured (chain_fixed). Intel Xeon KVM guest, 12 runs × 3 processes:
# add chains of 200/300/400 +0.08…+0.14%, xor 300 +0.04%, imul 100 +0.02% (bench/chains.py);
# the cause is not known (docs/method.md §3), so it is stated as an uncertainty, not corrected.
CALIBRATION_FLOOR = 0.001


def with_calibration(fields: dict[str, Any], rse_fixed: float) -> None:
    """Widen the cycles~ CI by the calibration's own relative uncertainty, in quadrature:
    the fixed part's standard error (clock.calibration_rse) and CALIBRATION_FLOOR, both
    common to every round of a run, so no spread between rounds or processes shows them.
    The total relative standard error goes to ``extra["calibration_rse"]``."""
    est, lo, hi = fields["cycles_per_op"], fields["cycles_ci_low"], fields["cycles_ci_high"]
    rse = float(np.hypot(rse_fixed, CALIBRATION_FLOOR))
    cal = float(special.ndtri(0.975)) * abs(est) * rse
    fields["cycles_ci_low"] = est - float(np.hypot(est - lo, cal))
    fields["cycles_ci_high"] = est + float(np.hypot(hi - est, cal))
    fields.setdefault("extra", {})["calibration_rse"] = rse


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


def sample_rows(res: dict[str, Any] | None) -> list[tuple[int, int, int | None, int | None, int | None]]:
    if not res:
        return []
    n = len(res["n"])
    cal = res.get("cal") or [None] * n
    dist = res.get("disturbed") or [None] * n
    pmu = res.get("pmu_cycles") or [None] * n
    return list(zip(res["n"], res["ticks"], cal, dist, pmu, strict=True))


def add_net(fields: dict[str, Any], loop: Mapping[str, Any] | None) -> None:
    """Fill the net-of-loop columns of ``fields`` from the loop/empty row of the same run."""
    if not loop or fields.get("per_op") is None or loop.get("per_op") is None:
        return
    if fields.get("unit") == loop.get("unit"):
        d = combine_difference(
            (fields["per_op"], fields["ci_low"], fields["ci_high"]), (loop["per_op"], loop["ci_low"], loop["ci_high"]))
        fields["net_per_op"], fields["net_ci_low"], fields["net_ci_high"] = d
    if fields.get("cycles_per_op") is not None and loop.get("cycles_per_op") is not None:
        d = combine_difference((fields["cycles_per_op"], fields["cycles_ci_low"], fields["cycles_ci_high"]),
                               (loop["cycles_per_op"], loop["cycles_ci_low"], loop["cycles_ci_high"]))
        fields["cycles_net"], fields["cycles_net_ci_low"], fields["cycles_net_ci_high"] = d


def two_level(fields: dict[str, Any], n: np.ndarray, t: np.ndarray, keep: np.ndarray, group: int | None,
              procs: list[int], seed: int, ratio: np.ndarray | None) -> None:
    """Per op and its 95% CI from rounds spread over several processes: the median of the
    per-round slopes, its CI by the two-level bootstrap over processes, then rounds (as
    compare does; Davison & Hinkley 1997 §3.8) — a bias that holds for a whole process (seen:
    ±3 cycles~ on a 300-cycle chain) widens the CI instead of passing for precision. Replaces
    per_op/ci (timer unit) and cycles_per_op/ci (with ``ratio``, per-sample core/TSC ratios);
    each process's own median goes to ``extra["per_process"]``."""
    from cyclebench.stats.ab import cluster_ci

    g = int(group or 8)
    groups = np.repeat(np.arange(len(procs)), procs)
    for key, lo_key, hi_key, tt in (("per_op", "ci_low", "ci_high", t),
                                    ("cycles_per_op", "cycles_ci_low", "cycles_ci_high",
                                     None if ratio is None else t * np.nan_to_num(ratio))):
        if tt is None:
            continue
        slopes = round_slopes(n, tt, g, keep, aligned=True)
        if len(slopes) != len(groups):
            return  # the rounds do not map onto the processes: keep the one-level figures
        ok = np.isfinite(slopes)
        if len(np.unique(groups[ok])) < 2:
            return
        x, gx = slopes[ok], groups[ok]
        lo, hi = cluster_ci(x, gx, seed=seed)
        fields[key], fields[lo_key], fields[hi_key] = float(np.median(x)), lo, hi  # type: ignore[literal-required]
        per = [float(np.median(x[gx == p])) for p in np.unique(gx)]
        fields.setdefault("extra", {}).setdefault("per_process", {})[key] = per
    fields["method"] = "rounds-2level"  # fits the column (20)
