"""Estimators: per-operation cost from batch timings, with its uncertainty.

Input: ``n`` (operations per batch) and ``t`` (timer ticks per batch), one entry per
sample, over a ladder of batch sizes. The model is t = a + b·n: b is the per-op cost, a
the fixed cost of a batch (timer reads, the call, loop set-up).

* per_op, when the samples come in rounds (one pass over the whole ladder each, the
  runner's order): the median over rounds of each round's Theil–Sen slope (median of
  pairwise slopes; Theil 1950, Sen 1968, robust to ~29% of a round's samples hit by
  interrupts), with the distribution-free CI of that median over rounds (order statistics,
  Conover 1999 §3.2: ``median_ci``). Rounds are the unit because the noise that matters is
  drift in time (core clock, host load): samples next to each other share it, rounds far
  apart do not.
  Without rounds (or fewer than 3): one Theil–Sen fit over all samples and Sen's
  distribution-free CI (``scipy.stats.theilslopes``).
* intercept: median of t − b·n.
* per-sample net costs c_i = (t_i − a)/n_i; of these: median with the same distribution-free
  CI, min ("lowest of several samples", Evans's habit,
  docs/references.md#getpid-copy-freebsd-2018; net of the fixed cost) over the largest batch of
  every round (``largest_of_rounds``: each runner process sizes its own ladder, so its rounds'
  largest batch is its own largest), MAD (scaled ×1.4826 to estimate σ under normality), mean,
  CV = std/mean (sample std, ddof=1).
  A min below zero is no cost: a batch ran faster than the fitted fixed cost alone, so the
  samples do not fit t = a + b·n (two modes, or a per-op cost that changes with the batch
  size: copy/nt_store at 48 B printed a min of −138.6). It is None then, never a number
  (docs/method.md, "A min below zero").
* rcv: robust CV = scaled MAD / median, unmoved by a few interrupt-hit samples.
* slow side trimmed (``slow_side``): within each round, samples whose per-op cost
  c_i = (t_i − timer pair)/n_i is both above the round's median and more than 1% above
  its fastest are left out (at most half a round). Interrupts, VM exits, host preemption
  and a busy SMT sibling on the host add time and never remove it, so the fast side of a
  round is the clean one (the argument of Chen & Revels, "Robust benchmarking in noisy
  environments", 2016, for the minimum); the slope is fitted on the samples near it. On
  the project's AMD EPYC VM a third to half of all samples were 1–40% slow with no
  context switch to show for it, and a median of Theil–Sen slopes over such rounds missed
  a +1-cycle step by up to ±3.7 cycles; with the trim, by ±0.17 (10 runs: 0.83–1.14).
  Honest naming: on a quiet machine it still trims the slower half of each round beyond
  1% of natural spread, so it is a one-sided trimmed estimator, not a detector of
  interrupts. The cost: an operation whose batches truly vary by more than 1% is
  reported nearer its fast half.
* outliers: samples whose c_i lies more than 5 scaled MADs *and* more than 5% from the
  median (the floor keeps a near-zero MAD from flagging clock jitter); counted, not
  removed (hyperfine's and pyperf's practice of reporting rather than hiding).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TypedDict, cast

import numpy as np

from cyclebench.stats.resample import row_nanmedians

# Theil–Sen needs all n² pairwise slopes; beyond this many samples a fixed random subset
# is used (the estimator's breakdown point is unchanged).
MAX_THEIL_SEN_SAMPLES = 2000
MAD_SCALE = 1.4826  # MAD → σ for a normal distribution
OUTLIER_FLOOR = 0.05  # relative distance from the median below which nothing is an outlier
OUTLIER_MADS = 5  # scaled MADs from the median beyond which (and beyond the floor) a value is an outlier
TRIM_GATE = 0.01  # beyond 1% over its round's fastest, a sample above the round's median is trimmed


class EstimateFields(TypedDict):
    """An Estimate's fields by name (Estimate.to_dict), as the results table's columns of the
    same names take them (model.Result)."""

    per_op: float
    ci_low: float
    ci_high: float
    intercept: float
    median: float
    median_ci_low: float
    median_ci_high: float
    min: float | None
    mad: float
    mean: float
    cv: float
    rcv: float
    n_samples: int
    outliers: int
    confidence: float
    method: str
    rounds: int


@dataclass(frozen=True)
class Estimate:
    """Per-op cost in the sample's unit (e.g. ref-cycles/op) and its spread."""

    per_op: float
    ci_low: float
    ci_high: float
    intercept: float
    median: float
    median_ci_low: float
    median_ci_high: float
    min: float | None  # None when the lowest net per-sample cost is below zero (module docstring)
    mad: float
    mean: float
    cv: float
    rcv: float
    n_samples: int
    outliers: int
    confidence: float
    method: str  # "round-median" or "theil-sen"
    rounds: int

    @property
    def ci_half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    def scaled(self, factor: float) -> Estimate:
        """The same estimate in another unit (e.g. ref-cycles → ns); CV and counts unchanged."""
        d = asdict(self)
        for k in ("per_op", "ci_low", "ci_high", "intercept", "median", "median_ci_low", "median_ci_high",
                  "min", "mad", "mean"):
            d[k] = None if d[k] is None else d[k] * factor
        return Estimate(**d)

    def to_dict(self) -> EstimateFields:
        """Every field by name (dataclasses.asdict): the keys of EstimateFields."""
        return cast(EstimateFields, asdict(self))


class NotEnoughSamples(ValueError):
    """Fewer than 3 samples or fewer than 2 distinct batch sizes: no slope can be fitted."""


def slow_side(n: np.ndarray, t: np.ndarray, group: int | None, keep: np.ndarray | None = None,
              fixed: float = 0.0, gate: float = TRIM_GATE) -> np.ndarray:
    """The slow side of each round, to be trimmed (see the module docstring).

    Args: n, t: batch sizes and times per sample (1-D, equal length); group: samples per
    round (None: all one round); keep: samples already usable (others are ignored and never
    flagged); fixed: the batch's fixed cost in t's unit (the timer pair), removed first;
    gate: relative excess over the round's fastest per-op cost beyond which a sample above
    the round's median is flagged (at most half a round is). Returns: boolean mask, True for a trimmed sample.
    """
    n, t = np.asarray(n, dtype=float), np.asarray(t, dtype=float)
    keep = np.ones(len(n), dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = (t - fixed) / n
    g = group if group and group >= 2 else max(len(n), 1)
    # every round at once, a last partial one padded with samples not kept (a loop of np.median per
    # round took 1.3 ms for 40 rounds here)
    pad = -len(n) % g
    rc = np.concatenate([c, np.full(pad, np.nan)]).reshape(-1, g)
    rk = np.concatenate([keep & np.isfinite(c), np.zeros(pad, dtype=bool)]).reshape(-1, g)
    low = np.where(rk, rc, np.inf).min(axis=1)
    med = row_nanmedians(np.where(rk, rc, np.nan))  # np.median of each round's kept, to the bit
    judged = rk.any(axis=1) & (low > 0)
    with np.errstate(invalid="ignore"):
        bar = np.maximum(low * (1 + gate), med)
    return (rk & (rc > bar[:, None]) & judged[:, None]).ravel()[: len(n)]


def largest_of_rounds(n: np.ndarray, group: int | None) -> np.ndarray:
    """True for each sample whose batch is the largest of its round of ``group`` consecutive
    samples (None or < 2: of all samples; a last partial round: of its own).

    The samples min is taken over (``estimate``). Each runner process sizes its own ladder, so
    ``n == n.max()`` over several processes' samples kept one process's largest batches only,
    and that min could lie above the run's per op (Intel Xeon guest: loop/empty 1.52 vs 0.707,
    getpid 446 vs 312); a round is one pass over its process's whole ladder, so its largest batch
    is its process's largest."""
    n = np.asarray(n, dtype=float)
    g = group if group and group >= 2 else max(len(n), 1)
    pad = -len(n) % g
    rn = np.concatenate([n, np.full(pad, -np.inf)]).reshape(-1, g)
    return (rn == rn.max(axis=1, keepdims=True)).ravel()[: len(n)]


def round_slopes(
    n: np.ndarray, t: np.ndarray, group: int, keep: np.ndarray | None = None, aligned: bool = False
) -> np.ndarray:
    """Theil–Sen slope of each round of ``group`` consecutive samples, over its kept samples.

    A round left with fewer than 2 batch sizes gives no slope: it is skipped, or NaN when
    ``aligned`` (one entry per round, so two interleaved benchmarks pair up by index)."""
    n, t = np.asarray(n, dtype=float), np.asarray(t, dtype=float)
    keep = np.ones(len(n), dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    rounds = len(n) // group
    if rounds == 0:
        return np.empty(0)
    # every round at once: the median of its pairwise slopes over kept samples with distinct n
    # (what scipy.stats.theilslopes computes, without its CI: 20× faster on 8-point rounds)
    rn, rt = n[: rounds * group].reshape(rounds, group), t[: rounds * group].reshape(rounds, group)
    rk = keep[: rounds * group].reshape(rounds, group)
    dn = rn[:, None, :] - rn[:, :, None]
    ok = (dn > 0) & rk[:, None, :] & rk[:, :, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.where(ok, (rt[:, None, :] - rt[:, :, None]) / np.where(ok, dn, 1.0), np.nan)
    has = ok.any(axis=(1, 2))
    med = np.full(rounds, np.nan)
    if has.any():
        med[has] = row_nanmedians(slopes[has].reshape(int(has.sum()), -1))
    return med if aligned else med[has]


def median_ci(x: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """Distribution-free CI of the median of ``x`` (1-D, finite): ``(x_(j), x_(n−j+1))``, the
    order statistics at ranks j and n − j + 1 (1-based), j the largest rank with
    P(Bin(n, ½) ≤ j − 1) ≤ (1 − confidence)/2 (Conover 1999 §3.2; David & Nagaraja 2003 §7.1).

    Coverage is at least ``confidence`` for any continuous distribution of i.i.d. values, ties
    only widen it. It replaces a 2,000-resample percentile bootstrap of the median (Efron &
    Tibshirani 1993 §13.3), the interval it is the limit of: bench/median_ci.py measured 95.7–98.8%
    coverage at 10 and 30 values where the bootstrap's was 93.5–96.3%, and 0.15 ms at 2,000
    values where the bootstrap took 70 ms, twice for every benchmark a run stores (Zen 3 guest).
    Below 6 values at 95% no rank qualifies: (min, max) then, whose coverage is 1 − 2^(1−n)
    (94% at 5, 75% at 3). Returns (low, high) in x's unit; one value or none spread: (m, m)."""
    x = np.asarray(x, dtype=float)
    n = len(x)
    if n < 2 or np.ptp(x) == 0:
        m = float(np.median(x))
        return m, m
    # P(Bin(n, ½) ≤ k) for k ≤ n/2 from log C(n, k) = Σ_{i ≤ k} log((n − i + 1)/i): numpy has no
    # log-gamma, and scipy.stats costs ~0.3 s of a command's start-up (checked against
    # scipy.stats.binom in tests/unit/test_stats.py)
    i = np.arange(1, n // 2 + 1, dtype=float)
    log_pmf = np.concatenate(([0.0], np.cumsum(np.log(n - i + 1) - np.log(i)))) + n * math.log(0.5)
    cdf = np.cumsum(np.exp(log_pmf))
    # a tail the cdf equals exactly (6/32 = P(Bin(5, ½) ≤ 1) at 62.5%) counts as met despite rounding
    j = max(1, int(np.searchsorted(cdf, (1 - confidence) / 2 * (1 + 1e-9), side="right")))
    low, high = np.partition(x, (j - 1, n - j))[[j - 1, n - j]]
    return float(low), float(high)


def estimate(
    n: np.ndarray | list[int], t: np.ndarray | list[int], confidence: float = 0.95, seed: int = 0,
    group: int | None = None, keep: np.ndarray | None = None,
) -> Estimate:
    """Fit t = a + b·n robustly and summarise the per-sample costs.

    Args: n, t: equal-length 1-D arrays (batch sizes, ticks), in the order measured.
    confidence: for both CIs. seed: of the Theil–Sen subset (beyond 2,000 samples), so a
    stored run re-analyses the same. group: samples per round (the runner's ladder size);
    None treats the samples as one unordered set. keep: boolean mask of the samples to use
    (disturbed samples are dropped by passing False); None keeps all.
    Returns: Estimate in the unit of ``t`` per operation.
    Raises: NotEnoughSamples.
    """
    n = np.asarray(n, dtype=float)
    t = np.asarray(t, dtype=float)
    if n.shape != t.shape or n.ndim != 1:
        raise ValueError("n and t must be 1-D arrays of equal length")
    keep = np.ones(len(n), dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    slopes = round_slopes(n, t, group, keep) if group and group >= 2 else np.empty(0)
    largest = largest_of_rounds(n, group)  # of every sample: a dropped largest batch leaves its round out
    n, t, largest = n[keep], t[keep], largest[keep]
    if len(n) < 3 or len(np.unique(n)) < 2:
        raise NotEnoughSamples(f"{len(n)} samples over {len(np.unique(n))} batch sizes: no slope")
    rng = np.random.default_rng(seed)
    if len(slopes) >= 3:
        method, rounds = "round-median", len(slopes)
        slope = float(np.median(slopes))
        low, high = median_ci(slopes, confidence)
    else:
        method, rounds = "theil-sen", 0
        fn, ft = n, t
        if len(n) > MAX_THEIL_SEN_SAMPLES:
            idx = rng.choice(len(n), MAX_THEIL_SEN_SAMPLES, replace=False)
            fn, ft = n[idx], t[idx]
        from scipy import stats as sps  # here: only the one-round fit needs it

        fit = sps.theilslopes(ft, fn, alpha=confidence)
        slope, low, high = float(fit.slope), float(fit.low_slope), float(fit.high_slope)
    intercept = float(np.median(t - slope * n))

    c = (t - intercept) / n
    median = float(np.median(c))
    mad = float(np.median(np.abs(c - median)) * MAD_SCALE) if len(c) > 1 else 0.0
    m_low, m_high = median_ci(c, confidence)
    mean = float(np.mean(c))
    std = float(np.std(c, ddof=1))
    cv = std / abs(mean) if mean != 0 else math.inf
    outliers = int(np.sum(np.abs(c - median) > max(OUTLIER_MADS * mad, OUTLIER_FLOOR * abs(median))))
    # min: over the largest batch of every round, so of every process (docs/method.md §2). In a
    # small batch a few ticks of timer jitter around the subtracted fixed cost move (t − a)/n by
    # ticks/n: a 300-add chain read a min of 196 ref-cycles (≈279 cycles~) beside a per op of 210.8
    # from its smallest batches. Every round's largest dropped (disturbed, slow side): the largest
    # kept batches. A batch below zero anywhere: the samples do not fit fixed + per_op·n, no min (§8)
    largest = largest if largest.any() else n == n.max()
    lowest = float(np.min(c[largest])) if float(np.min(c)) >= 0 else -1.0
    return Estimate(
        per_op=slope, ci_low=low, ci_high=high, intercept=intercept, median=median,
        median_ci_low=m_low, median_ci_high=m_high, min=lowest if lowest >= 0 else None, mad=mad, mean=mean, cv=cv,
        rcv=mad / abs(median) if median else math.inf, n_samples=len(n), outliers=outliers, confidence=confidence,
        method=method, rounds=rounds,
    )


def combine_difference(a: tuple[float, float, float], b: tuple[float, float, float]) -> tuple[float, float, float]:
    """a − b for two independent estimates given as (value, ci_low, ci_high).

    Each side of the CI widens in quadrature (the usual propagation for independent
    errors, GUM §5.1; applied per side because bootstrap CIs are not symmetric).
    Returns (difference, ci_low, ci_high).
    """
    d = a[0] - b[0]
    low = d - math.hypot(a[0] - a[1], b[2] - b[0])
    high = d + math.hypot(a[2] - a[0], b[0] - b[1])
    return d, low, high
