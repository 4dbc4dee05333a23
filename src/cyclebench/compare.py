"""Paired A/B comparison of two benchmarks measured interleaved in one process.

Design (DESIGN.md §4): the runner alternates the benchmarks batch by batch (ABBA), so
round r of A and round r of B saw the same state of the machine. Each round gives one
per-op slope per benchmark (stats.round_slopes); the pairs are compared with

* the Wilcoxon signed-rank test on the per-round differences (Wilcoxon 1945;
  ``scipy.stats.wilcoxon``), two-sided;
* a percentile-bootstrap CI of the median difference (``scipy.stats.bootstrap``);
* a verdict only when p < α (default 0.002) **and** the CI lies wholly outside the
  practical margin: a difference counts when it exceeds ±0.25 unit *or* ±0.5% of A (so
  the margin is the smaller of the two: one cycle on a 300-cycle syscall counts); otherwise
  ``~``, as benchstat reports "no significant difference".

Many comparisons at once (several variants against a baseline, several sizes): p-values
are adjusted by Holm's step-down method (Holm 1979), which controls the family-wise error
rate without assuming independence. Two stored runs (no pairing possible): per-round costs
of each run compared by the Mann–Whitney U test (``scipy.stats.mannwhitneyu``) with a
bootstrap CI of the difference of medians — benchstat's approach for two sets of runs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

ALPHA = 0.002
MARGIN_ABS = 0.25
MARGIN_REL = 0.005


@dataclass(frozen=True)
class Comparison:
    """B − A per op, in the unit of the slopes given (e.g. cycles~)."""

    median_a: float
    median_b: float
    diff: float
    ci_low: float
    ci_high: float
    rel: float  # diff / median_a
    p: float
    pairs: int
    margin: float
    verdict: str  # "slower" (B costs more), "faster", or "~"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def paired(
    a: np.ndarray, b: np.ndarray, alpha: float = ALPHA, margin_abs: float = MARGIN_ABS,
    margin_rel: float = MARGIN_REL, confidence: float = 0.95, seed: int = 0,
) -> Comparison:
    """Compare paired per-round costs ``a`` and ``b`` (equal length ≥ 6, same unit).

    Raises ValueError for unequal lengths or fewer than 6 pairs (the signed-rank test
    cannot reach p < 0.05 below 6 pairs).
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("a and b must be 1-D and of equal length (one value per round)")
    if len(a) < 6:
        raise ValueError(f"{len(a)} pairs: at least 6 are needed")
    d = b - a
    med_a, med_b, diff = float(np.median(a)), float(np.median(b)), float(np.median(d))
    if np.ptp(d) == 0:
        low = high = diff
    else:
        boot = sps.bootstrap((d,), np.median, confidence_level=confidence, n_resamples=4000, method="percentile",
                             vectorized=True, rng=np.random.default_rng(seed))
        low, high = float(boot.confidence_interval.low), float(boot.confidence_interval.high)
    p = 1.0 if np.all(d == 0) else float(sps.wilcoxon(d, zero_method="wilcox").pvalue)
    margin = min(margin_abs, margin_rel * abs(med_a))
    verdict = "~"
    if p < alpha and (low > margin or high < -margin):
        verdict = "slower" if diff > 0 else "faster"
    return Comparison(med_a, med_b, diff, low, high, diff / med_a if med_a else float("nan"), p, len(a), margin,
                      verdict)


def unpaired(
    a: np.ndarray, b: np.ndarray, alpha: float = ALPHA, margin_abs: float = MARGIN_ABS,
    margin_rel: float = MARGIN_REL, confidence: float = 0.95, seed: int = 0,
) -> Comparison:
    """Compare independent per-round costs ``a`` and ``b`` (e.g. from two stored runs).

    Mann–Whitney U, two-sided; CI of median(b) − median(a) by a two-sample percentile
    bootstrap. Raises ValueError when either side has fewer than 3 values.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if len(a) < 3 or len(b) < 3:
        raise ValueError(f"{len(a)} and {len(b)} values: at least 3 on each side are needed")
    med_a, med_b = float(np.median(a)), float(np.median(b))
    diff = med_b - med_a

    def stat(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.median(y, axis=axis) - np.median(x, axis=axis)

    if np.ptp(a) == 0 and np.ptp(b) == 0:
        low = high = diff
    else:
        boot = sps.bootstrap((a, b), stat, confidence_level=confidence, n_resamples=4000, method="percentile",
                             vectorized=True, rng=np.random.default_rng(seed))
        low, high = float(boot.confidence_interval.low), float(boot.confidence_interval.high)
    p = float(sps.mannwhitneyu(a, b, alternative="two-sided").pvalue)
    margin = min(margin_abs, margin_rel * abs(med_a))
    verdict = "~"
    if p < alpha and (low > margin or high < -margin):
        verdict = "slower" if diff > 0 else "faster"
    return Comparison(med_a, med_b, diff, low, high, diff / med_a if med_a else float("nan"), p,
                      min(len(a), len(b)), margin, verdict)


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979), in the input order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def with_adjusted_p(c: Comparison, p_adj: float, alpha: float = ALPHA) -> Comparison:
    """The same comparison judged with a multiplicity-adjusted p-value."""
    outside = c.ci_low > c.margin or c.ci_high < -c.margin
    verdict = ("slower" if c.diff > 0 else "faster") if p_adj < alpha and outside else "~"
    return Comparison(c.median_a, c.median_b, c.diff, c.ci_low, c.ci_high, c.rel, p_adj, c.pairs, c.margin, verdict)
