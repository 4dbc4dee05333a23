"""Paired A/B comparison of two benchmarks measured interleaved in one process.

Design (docs/method.md §5): the runner alternates the benchmarks batch by batch (ABBA), so
round r of A and round r of B saw the same state of the machine. Each round gives one
per-op slope per benchmark (stats.round_slopes); the pairs are compared with

* the Wilcoxon signed-rank test on the per-round differences (Wilcoxon 1945;
  ``scipy.stats.wilcoxon``), two-sided;
* a percentile-bootstrap CI of the median difference (``scipy.stats.bootstrap``); when the
  rounds came from several runner processes (interleave.py), a two-level bootstrap instead:
  processes resampled with replacement, then rounds within each (the cluster bootstrap of
  Davison & Hinkley 1997, §3.8), so a bias that holds for a whole process widens the CI
  instead of passing for a difference — the Wilcoxon test still takes the rounds as
  independent, so the CI, which must clear the margin, is what guards against it;
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

import math
from dataclasses import replace

import numpy as np

from cyclebench.model import Comparison
from cyclebench.stats.resample import draw_medians

ALPHA = 0.002
MARGIN_ABS = 0.25
MARGIN_REL = 0.005


def min_pairs(comparisons: int, alpha: float = ALPHA) -> int:
    """Fewest pairs with which ``paired`` can give a verdict in ``comparisons`` Holm-adjusted
    comparisons: the exact two-sided signed-rank p of n pairs is at least 2/2**n (every
    difference of one sign), and Holm's first step needs p < alpha/comparisons; one pair more
    lets the smallest difference go the other way. 11 for one comparison at α = 0.002, 13 for
    three (variants' default 8 could never give one: 2/256 = 0.0078)."""
    return max(6, math.ceil(math.log2(2 * max(1, comparisons) / alpha)) + 1)


def paired(
    a: np.ndarray, b: np.ndarray, alpha: float = ALPHA, margin_abs: float = MARGIN_ABS,
    margin_rel: float = MARGIN_REL, confidence: float = 0.95, seed: int = 0, groups: np.ndarray | None = None,
) -> Comparison:
    """Compare paired per-round costs ``a`` and ``b`` (equal length ≥ 6, same unit).

    ``groups``: the runner process of each round (same length), for the two-level
    bootstrap; None or a single process: rounds resampled directly.
    Raises ValueError for unequal lengths or fewer than 6 pairs (the signed-rank test
    cannot reach p < 0.05 below 6 pairs).
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("a and b must be 1-D and of equal length (one value per round)")
    if len(a) < 6:
        raise ValueError(f"{len(a)} pairs: at least 6 are needed")
    if groups is not None and np.shape(groups) != a.shape:
        raise ValueError("groups must give one process index per round")
    from scipy import stats as sps  # here, not at import: it costs ~0.9 s of every command's start

    d = b - a
    med_a, med_b, diff = float(np.median(a)), float(np.median(b)), float(np.median(d))
    if np.ptp(d) == 0:
        low = high = diff
    elif groups is not None and len(np.unique(groups)) > 1:
        low, high = cluster_ci(d, np.asarray(groups), confidence, seed=seed)
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


def cluster_ci(d: np.ndarray, groups: np.ndarray, confidence: float = 0.95, n_resamples: int = 4000,
               seed: int = 0) -> tuple[float, float]:
    """Percentile CI of the median of ``d`` by a two-level bootstrap: G groups drawn with
    replacement from the G there are, then within each drawn group its rounds drawn with
    replacement (Davison & Hinkley 1997, §3.8). Returns (low, high) in d's unit."""
    stats = cluster_boot(d, groups, n_resamples, seed)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return float(low), float(high)


def cluster_boot(d: np.ndarray, groups: np.ndarray, n_resamples: int = 4000, seed: int = 0) -> np.ndarray:
    """The two-level bootstrap distribution of the median of ``d`` (cluster_ci): one median
    per resample, shape (n_resamples,). One group: the rounds resampled directly."""
    rng = np.random.default_rng(seed)
    parts = [d[groups == g] for g in np.unique(groups)]
    sizes = np.array([len(x) for x in parts])
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    flat = np.concatenate(parts)
    pick = rng.integers(0, len(parts), size=(n_resamples, len(parts)))  # groups drawn, per resample
    m = int(sizes.max())
    u = rng.random((n_resamples, len(parts), m))
    if (sizes == m).all():
        # groups of one size (every process kept all its rounds), the common case: the same draws
        # with scalars in place of gathered sizes and offsets, and no mask, so draw_medians
        # partitions instead of sorting (the bootstrap SE of a look at 24 processes: 21 -> 12 ms
        # on an AMD EPYC Zen 3 guest, most of it in fewer temporaries of 480,000 elements)
        u *= m
        within = u.astype(np.int32)
        np.minimum(within, m - 1, out=within)
        within += (pick * m).astype(np.int32)[..., None]
        return draw_medians(flat, within.reshape(n_resamples, -1))
    within = (u * sizes[pick][..., None]).astype(int)
    idx = offsets[pick][..., None] + np.minimum(within, sizes[pick][..., None] - 1)
    drawn = np.arange(m) < sizes[pick][..., None]  # a smaller group draws only its own size
    return draw_medians(flat, idx.reshape(n_resamples, -1), drawn.reshape(n_resamples, -1))


def unpaired(
    a: np.ndarray, b: np.ndarray, alpha: float = ALPHA, margin_abs: float = MARGIN_ABS,
    margin_rel: float = MARGIN_REL, confidence: float = 0.95, seed: int = 0,
) -> Comparison:
    """Compare independent per-round costs ``a`` and ``b`` (e.g. from two stored runs).

    Mann–Whitney U, two-sided; CI of median(b) − median(a) by a two-sample percentile
    bootstrap. Raises ValueError when either side has fewer than 3 values.
    """
    from scipy import stats as sps

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


def anchored(c: Comparison, a: float | None, b: float | None, relative: bool = False) -> Comparison:
    """``c`` with its sides as the stored results' per-op figures ``a`` and ``b`` (Result.figure,
    same unit): one stored result has one per-op figure in every view (show, history, the
    exports), where ``c``'s medians over the pairs are a second estimate of it (299.6 beside the
    stored 299.3 for one bisect side). Δ stays the paired estimate its CI and verdict are of: a
    ``relative`` one (revisions: B/A − 1 per pair) is kept relative and expressed at the new A
    (Δ, its CI and the margin scaled by a / median_a); an absolute one (rounds of one process) is
    kept in the unit, and rel = Δ / a. A side without a figure (None, NaN, 0) leaves ``c``
    as it is."""
    if a is None or not math.isfinite(a) or a == 0 or not c.median_a:
        return c
    b = c.median_b if b is None or not math.isfinite(b) else b
    if relative:
        k = a / c.median_a
        return replace(c, median_a=a, median_b=b, diff=c.diff * k, ci_low=c.ci_low * k, ci_high=c.ci_high * k,
                       margin=c.margin * k)
    return replace(c, median_a=a, median_b=b, rel=c.diff / a)


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
