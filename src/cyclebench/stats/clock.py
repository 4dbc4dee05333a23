"""Timer calibration: which clock, its rate (and where that rate came from), its cost.

The TSC rate turns ref-cycles into ns. Sources, best first:
  1. cpuid leaf 0x15 (crystal clock × ratio; exact, Intel SDM vol. 3 §18.7.3) — often
     hidden under hypervisors;
  2. the kernel's refined calibration ("tsc: Refined TSC clocksource calibration");
  3. the kernel's boot-time figure ("tsc: Detected … MHz processor");
  4. measured by the runner against CLOCK_MONOTONIC_RAW over 20 ms (±0.001%: two adjacent reads an end).
The measured rate is always kept beside the chosen one, so a disagreement shows.
On aarch64 the generic timer's rate is architectural (cntfrq_el0); with the
clock_gettime fallback the unit is already ns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from cyclebench.model import CalibrationLine, RunnerResult
from cyclebench.stats import batches
from cyclebench.stats.resample import row_nanmedians

# A chosen rate that differs from the measured one by more than this is not trusted.
MAX_DISAGREEMENT = 0.01


def timer_rate(calibration: CalibrationLine, kernel: tuple[float, str] | None) -> tuple[float, str]:
    """Ticks per second of the runner's timer and the source of that figure.

    Args: calibration: the runner's ``--calibrate`` line; kernel: (Hz, source) from the
    kernel log or None. Returns (Hz, source), source one of cpuid-0x15, kernel-refined,
    kernel-detected, measured, cntfrq_el0, ns.
    """
    unit = calibration.get("unit")
    measured = float(calibration.get("measured_hz") or 0)
    if unit == "ns":
        return 1e9, "ns"
    if unit == "ticks" and calibration.get("arch_timer_hz"):
        return float(calibration["arch_timer_hz"]), "cntfrq_el0"
    candidates: list[tuple[float, str]] = []
    if calibration.get("cpuid_tsc_hz"):
        candidates.append((float(calibration["cpuid_tsc_hz"]), "cpuid-0x15"))
    if kernel:
        candidates.append(kernel)
    for hz, source in candidates:
        if measured <= 0 or abs(hz - measured) / measured <= MAX_DISAGREEMENT:
            return hz, source
    return measured, "measured"


CHAIN_TRIM = 0.02  # chain readings further than this from their round's median are interrupted


FIXED_WINDOW = 100  # ticks: a short chain's readings (~250 ticks) step by 24 on AMD's TSC; an interrupt adds ≥ 1000


def _trimmed_mean(x: np.ndarray) -> tuple[float, float, int]:
    """Mean of the readings near their median (within CHAIN_TRIM or FIXED_WINDOW ticks,
    whichever is wider: interrupted readings left out, TSC steps kept for the dithering),
    its standard error and how many were kept."""
    x = x[np.isfinite(x) & (x > 0)]
    if not len(x):
        return np.nan, np.nan, 0
    m = np.median(x)
    near = x[np.abs(x - m) <= max(CHAIN_TRIM * m, FIXED_WINDOW)]
    if len(near) < 2:
        return float(m), np.nan, len(near)
    return float(near.mean()), float(near.std(ddof=1) / np.sqrt(len(near))), len(near)


def chain_fixed(chain: Mapping[str, Any] | None) -> tuple[float, float] | None:
    """The fixed part of a timed add chain, in timer ticks, and its standard error.

    The runner times chains of ``short_adds`` and ``adds`` adds alternately (engine/chain.h);
    ticks = fixed + adds × ticks-per-add, so fixed = (adds·S − short·L) / (adds − short)
    from the trimmed means S and L (means, not medians: AMD's stepped TSC needs the
    dithering, see _round_value). It replaces the empty timer pair's cost, which missed the
    call and the chain's wait on the fences: cycles~ of chains of known length read −0.3%
    (AMD EPYC) and +0.4% (Intel Xeon) with it. None for a result from before these readings.
    """
    chain = chain or {}
    short, adds = chain.get("short_adds"), chain.get("adds")
    if not short or not adds or not chain.get("short_ticks") or not chain.get("long_ticks"):
        return None
    return _fixed(short, adds, tuple(chain["short_ticks"]), tuple(chain["long_ticks"]))


# A sequential comparison's every look reads all its processes' chains and rounds again (the
# merged results grow by a process a look): a look's per-round costs at 24 processes took 36 ms,
# 6 with these two remembered (AMD EPYC Zen 3 guest). Both are pure; each reading is computed once.
@lru_cache(maxsize=1024)
def _fixed(short: int, adds: int, short_ticks: tuple[float, ...], long_ticks: tuple[float, ...],
           ) -> tuple[float, float] | None:
    s, se_s, ns = _trimmed_mean(np.asarray(short_ticks, dtype=float))
    lo, se_l, nl = _trimmed_mean(np.asarray(long_ticks, dtype=float))
    if ns < 2 or nl < 2 or not lo > s:
        return None
    k = adds / (adds - short)  # fixed = L − k (L − S) = k S − (k − 1) L
    return k * s - (k - 1) * lo, float(np.hypot(k * se_s, (k - 1) * se_l))


def _fixed_per_sample(result: RunnerResult, n_samples: int) -> np.ndarray | float:
    """The fixed part of a chain reading for each sample: the process's own (merged results
    keep each process's chain readings in ``chains``), else the empty timer pair's cost."""
    oh = float((result.get("timer_overhead") or {}).get("median") or 0)
    chains = result.get("chains") or [result.get("chain")]
    fixed = [chain_fixed(c) for c in chains]
    if any(f is None for f in fixed):
        return oh
    if len(fixed) == 1:
        return fixed[0][0]  # type: ignore[index]
    procs = result.get("process_rounds") or []
    per = [int(r) * int(result.get("ladder") or 8) for r in procs]
    if len(per) != len(fixed) or sum(per) != n_samples:
        return float(np.median([f[0] for f in fixed]))  # type: ignore[index]
    return np.repeat([f[0] for f in fixed], per)  # type: ignore[index]


def calibration_rse(result: RunnerResult) -> float:
    """Relative standard error that the fixed-part estimate puts on the core/timer ratio
    (a bias common to all of a process's samples, so averaging rounds cannot remove it):
    se(fixed) / (chain ticks − fixed). 0 when unknown. With several processes it also shows
    as their spread, which the two-level CI already carries."""
    chains = result.get("chains") or [result.get("chain")]
    out = []
    for c in chains:
        f = chain_fixed(c)
        if f is None:
            return 0.0
        ln = float(np.median((c or {}).get("long_ticks")))
        out.append(f[1] / (ln - f[0]) if ln > f[0] and np.isfinite(f[1]) else 0.0)
    return float(np.sqrt(np.mean(np.square(out))) / np.sqrt(len(out)))


def core_ratio(result: RunnerResult) -> np.ndarray | None:
    """Core cycles per timer tick next to each sample, from the runner's add chain.

    ratio_i = adds / (chain_ticks_i − fixed), the chain being ``adds`` dependent 1-cycle
    register adds (engine/chain.h) and ``fixed`` the timed chain's fixed part (chain_fixed;
    the empty timer pair's cost for results without its readings). Returns one ratio per
    sample, NaN where a chain reading is unusable (≤ the fixed part), or None when the
    runner timed no chain (no chain on this architecture, or an ns clock).
    """
    cal, chain = result.get("cal"), result.get("chain") or {}
    if not cal or chain.get("kind") != "add" or result.get("unit") == "ns":
        return None
    c = np.asarray(cal, dtype=float) - _fixed_per_sample(result, len(cal))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(c > 0, float(chain["adds"]) / c, np.nan)


def chain_agreement(result: RunnerResult) -> float | None:
    """Clock from the imul chain ÷ clock from the add chain (1.0 when both latencies hold).

    Where the runner timed an imul chain after every batch as well as the add chain
    (``cal_imul``, and each chain's fixed part: ``imul_short_ticks``/``imul_long_ticks``), the
    ratio is ``1 + clock_split``: hundreds of readings of each, a process's within 0.1%. Else
    from the chains timed alternately five times at the start and at the end of the
    measurement; each one's trimmed mean is used (_trimmed_mean: interrupted readings left out),
    less the fixed part (same call and fences). The mean, not the fastest: on a TSC that
    advances in steps (26 ticks on an AMD EPYC guest, 2.4% of the imul chain) the fastest of
    five sits on a step, and the ratio moved in steps of 2.4% (the lab's results read 0.979,
    1.003 and 1.027; a quiet Zen 4 selftest 1.035 and 1.048 against its ±3%); readings at
    random phases of the step average to the chain's length, as _round_value's do. A value far
    from 1 means the add chain does not run at one add per cycle here (e.g. an emulator, or a
    core that folds adds), and cycles~ is not to be trusted. Results stored before every
    reading was kept hold the fastest of each five (two values a chain): read as they were
    read, the fastest of them, so a stored ratio is derived again as it was.
    """
    split = clock_split(result)
    if split is not None:
        return 1 + split
    chain = result.get("chain") or {}
    if chain.get("kind") != "add":
        return None
    f = chain_fixed(chain)
    oh = f[0] if f else float((result.get("timer_overhead") or {}).get("median") or 0)
    adds, imuls = chain.get("add_ticks") or [0], chain.get("imul_ticks") or [0]
    if len(adds) <= 2 and len(imuls) <= 2:  # the fastest of each five, as runners before every reading stored
        add_t, imul_t = min(adds) - oh, min(imuls) - oh
    else:
        add_t = _trimmed_mean(np.asarray(adds, dtype=float))[0] - oh
        imul_t = _trimmed_mean(np.asarray(imuls, dtype=float))[0] - oh
    if not (np.isfinite(add_t) and np.isfinite(imul_t)):
        return None
    if add_t <= 0 or imul_t <= 0:
        return None
    return (chain["imuls"] * chain["imul_latency"] / imul_t) / (chain["adds"] / add_t)


def imul_fixed(chain: Mapping[str, Any] | None) -> tuple[float, float] | None:
    """The fixed part of a timed imul chain, in ticks, and its standard error: chain_fixed's
    rule over chains of ``imul_block`` and ``imuls`` imuls. None where they were not timed."""
    chain = chain or {}
    short, imuls = chain.get("imul_block"), chain.get("imuls")
    if not short or not imuls or not chain.get("imul_short_ticks") or not chain.get("imul_long_ticks"):
        return None
    return _fixed(short, imuls, tuple(chain["imul_short_ticks"]), tuple(chain["imul_long_ticks"]))


def clock_split(result: RunnerResult) -> float | None:
    """How far the imul chain's clock lies from the add chain's: (imul clock ÷ add clock) − 1,
    the mean over the result's processes, each from the chains timed after its undisturbed
    batches (trimmed means, less each chain's own fixed part). None where the runner timed no
    imul chain per batch.

    Both chains can only run at or below their latency's rate, so the clock lies at or above
    both; a 1-cycle chain slowed by something the guest cannot see (an SMT sibling on the host;
    docs/method.md §3) shows as a positive split. On an AMD EPYC Zen 3 guest with nothing else
    running, 16 processes read +0.3…+2.4%, and 100 imuls read −(split − 0.4%) cycles~ with it
    (correlation −0.84): the add chain's clock under-reads them by the split."""
    cal, cim = result.get("cal"), result.get("cal_imul")
    chain = result.get("chain") or {}
    if not cal or not cim or len(cal) != len(cim) or chain.get("kind") != "add":
        return None
    chains = result.get("chains") or [chain]
    procs = result.get("process_rounds") or [None]
    per = [int(r) * int(result.get("ladder") or 8) for r in procs] if all(isinstance(r, int) for r in procs) else []
    if len(chains) != len(per) or sum(per) != len(cal):
        chains, per = [chain], [len(cal)]
    ok = ~batches.disturbed(result)
    a, m = np.asarray(cal, dtype=float), np.asarray(cim, dtype=float)
    splits, at = [], 0
    for c, k in zip(chains, per, strict=True):
        fa, fm = chain_fixed(c), imul_fixed(c)
        sel = slice(at, at + k)
        at += k
        if fa is None or fm is None:
            continue
        ta = _trimmed_mean(a[sel][ok[sel]])[0] - fa[0]
        tm = _trimmed_mean(m[sel][ok[sel]])[0] - fm[0]
        if np.isfinite(ta) and np.isfinite(tm) and ta > 0 and tm > 0:
            splits.append((c["imuls"] * c["imul_latency"] / tm) / (c["adds"] / ta) - 1)
    return float(np.mean(splits)) if splits else None


def _round_value(ratios: np.ndarray) -> float:
    """One round's ratio from its chain readings: adds / trimmed mean of the ticks.

    The mean, not the median: AMD's TSC advances in steps of ~24 ticks (10 ns of its 100 MHz
    reference), so one reading of a ~1700-tick chain is off by up to ±0.7% and the median
    of a round sticks to one step; chains start at random phases of the step, so the mean
    of the readings converges on the true length (dithering). Readings more than 2% from
    the median (interrupted, or a clock step) are left out first."""
    return _round_value_of(np.asarray(ratios, dtype=float).tobytes())


@lru_cache(maxsize=8192)
def _round_value_of(readings: bytes) -> float:
    ratios = np.frombuffer(readings, dtype=float)
    r = ratios[np.isfinite(ratios) & (ratios > 0)]
    if not len(r):
        return np.nan
    ticks = 1 / r  # ticks per add: the quantity that averages linearly
    m = np.median(ticks)
    near = ticks[np.abs(ticks - m) <= CHAIN_TRIM * m]
    return float(1 / (np.mean(near) if len(near) else m))  # none near: two readings far apart


def round_ratio(ratio: np.ndarray, group: int | None) -> np.ndarray:
    """Each sample's core/timer ratio replaced by its round's value (``_round_value``).

    One chain reading carries timer jitter and granularity (±0.2% on Intel, ±0.7% on AMD's
    stepped TSC, i.e. ±0.6–2 cycles on a 300-cycle operation); the core clock moves far
    slower than a round (8 batches, about a millisecond), so the round's value keeps the
    drift and drops the jitter. NaN readings are ignored; a round with none stays NaN.
    """
    if not group or group < 2:
        return ratio
    out = np.array(ratio, dtype=float)
    whole = len(out) // group * group if group <= 8 else 0
    if whole:
        out[:whole] = np.repeat(_round_values(out[:whole].reshape(-1, group)), group)
    for i in range(whole, len(out), group):
        out[i : i + group] = _round_value(np.asarray(ratio[i : i + group], dtype=float))
    return out


def _round_values(rows: np.ndarray) -> np.ndarray:
    """``_round_value`` of each row of ``rows`` (rounds × at most 8 readings), to the bit, at once:
    a run's 144 benchmarks spent 0.56 s in it round by round (Zen 3 guest). The mean of a row's
    readings near its median is summed as numpy sums fewer than 8 values (left to right) or 8
    (pairs of pairs), so the figures stored are the same."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ticks = np.where(np.isfinite(rows) & (rows > 0), 1 / rows, np.nan)
        m = row_nanmedians(ticks)
        near = np.abs(ticks - m[:, None]) <= CHAIN_TRIM * m[:, None]
        k = near.sum(axis=1)
        v = np.take_along_axis(np.where(near, ticks, 0.0), np.argsort(~near, axis=1, kind="stable"), axis=1)
        total = v[:, 0].copy()
        for j in range(1, v.shape[1]):  # the zeros after a row's k values add nothing
            total += v[:, j]
        if v.shape[1] == 8:
            pairs = ((v[:, 0] + v[:, 1]) + (v[:, 2] + v[:, 3])) + ((v[:, 4] + v[:, 5]) + (v[:, 6] + v[:, 7]))
            total = np.where(k == 8, pairs, total)
        return np.where(k > 0, 1 / (total / k), 1 / m)


def shared_round_ratio(results: Sequence[RunnerResult]) -> list[np.ndarray | None]:
    """Round ratios pooled across benchmarks measured together (``run_many``: batches
    alternate, so round k of each ran in the same millisecond): each round's value comes
    from the chain readings of all of them, and all get the same value.

    A paired difference then carries no ratio noise at all (both sides are scaled by the
    same number) and each ratio has twice the readings. Disturbed samples' readings are
    left out. Returns one per-sample array per result (None where it has no chain).
    """
    ratios = [core_ratio(r) for r in results]
    for i, (r, q) in enumerate(zip(results, ratios, strict=True)):
        if q is not None:
            ratios[i] = np.where(batches.disturbed(r), np.nan, q)  # an interrupted batch's chain is not: it is trimmed
    groups = {int(r.get("ladder") or 8) for r in results}
    have = [q for q in ratios if q is not None]
    if len(groups) != 1:  # not measured in step: each on its own
        return [None if q is None else round_ratio(q, int(r.get("ladder") or 8))
                for r, q in zip(results, ratios, strict=True)]
    if not have:
        return ratios
    g = groups.pop()
    rounds = max(len(q) for q in have) // g + 1
    value = np.array([_round_value(np.concatenate([q[k * g : (k + 1) * g] for q in have])) for k in range(rounds)])
    return [None if q is None else np.repeat(value, g)[: len(q)] for q in ratios]


def round_costs(result: RunnerResult, ratio: np.ndarray | None = None) -> tuple[np.ndarray, str]:
    """Per-round per-op slopes of a runner result, one entry per round (NaN for a round
    without one), in cycles~ when the add chain was timed, else in the timer's unit.

    Disturbed and interrupted samples (stats.batches) and the slow side of each round
    (stats.slow_side) are left out. The rounds of
    benchmarks measured together in one process pair up by index (they alternate batch by
    batch), which is what compare.paired needs; pass ``ratio`` from shared_round_ratio
    for them. Returns (slopes, unit).
    """
    from cyclebench.stats import round_slopes, slow_side  # here to keep calibrate importable alone

    n = np.asarray(result["n"], dtype=float)
    t = np.asarray(result["ticks"], dtype=float)
    keep = ~batches.disturbed(result)
    readings = keep.copy()  # the chain after an interrupted batch is read as any: its own interrupts are trimmed
    keep &= ~batches.interrupted(result, keep)
    group = int(result.get("ladder") or 8)
    slow = slow_side(n, t, group, keep, float((result.get("timer_overhead") or {}).get("median") or 0))
    keep &= ~slow
    if ratio is None:
        raw = core_ratio(result)
        if raw is None:
            return round_slopes(n, t, group, keep, aligned=True), str(result.get("unit", "ticks"))
        ratio = round_ratio(np.where(readings & ~slow, raw, np.nan), group)
    keep &= np.isfinite(ratio)
    return round_slopes(n, t * np.nan_to_num(ratio), group, keep, aligned=True), "cycles~"
