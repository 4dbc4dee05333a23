"""Change points in a benchmark's history: the runs where its cost stepped, not where it wobbled.

Input: the per-run estimates x_i in time order, each with its own standard error s_i (from its
CI), and the host's run-to-run standard deviation σ with its degrees of freedom when replicate
runs have taught it (experiments.history); without it, σ comes from the series (below). Each
run's variance is v_i = max(σ², s_i²): a run cannot be known better than the host repeats it.


1. **Outlier runs**: a run further than OUTLIER_Z robust sd, in the same direction, from the
   median of the two runs before it and from that of the two after (Hampel's robust sd: 1.4826
   × the median absolute deviation of the five runs around it, at least the series' typical
   one and the runs' typical own se), taken one at a time, the worst first (as Rosner's
   generalized ESD test), is shown, never a change point, and left out of step detection. A
   host in a slow phase makes single runs 20–40% slow (seen on the Intel VM); a run at a real
   step agrees with one side, so it is not flagged.
2. **Steps, by binary segmentation** (Scott & Knott 1974; Vostrikova 1981, "Detecting
   'disorder' in multidimensional random processes"): in a segment, every split leaving at least
   MIN_SEGMENT runs on each side is scored with t = (mean_R − mean_L) / √(Σv_L/n_L² + Σv_R/n_R²),
   σ in v_i being the host's or, without it, the pooled sd around that split's two levels
   (Student's two-sample test, df = n − 2); the split with the smallest p is a change point when
   that p times the number of splits tried
   (Bonferroni, conservative: the splits' z are positively correlated) is below α (ALPHA);
   then both halves are searched again. With each run's own uncertainty in v_i, a step of a few
   percent over 5 + 5 runs with a 1.5% run-to-run spread is found, while a flat series of 30
   runs gives nothing (tests/unit/test_changepoint.py). A permutation test (as E-Divisive's,
   Matteson & James 2014) cannot reach a small α on a few runs; this normal-theory test can,
   at the price of assuming roughly normal run-to-run noise once outliers are out.

Returns, per change point, the first run of the new level, the levels, Δ with its CI, and
whether it is a slowdown beyond the practical margin (compare's rule: the CI outside ±margin).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cyclebench.stats.resample import row_nanmedians

ALPHA = 0.005  # history's own: per segment searched, Bonferroni over its splits
MIN_SEGMENT = 3  # runs on each side of a change point, at least
OUTLIER_Z = 5.0  # a run this many robust sd from its neighbourhood's median is an outlier
HAMPEL_HALF = 2  # the neighbourhood: two runs either side
MAD_SCALE = 1.4826  # MAD → sd for normal noise


@dataclass(frozen=True)
class ChangePoint:
    """A step: ``index`` is the first run of the new level (position in the series given)."""

    index: int
    before: float
    after: float
    diff: float
    ci_low: float
    ci_high: float
    z: float
    p: float  # Bonferroni-adjusted over the splits tried in its segment
    regression: bool  # slower beyond the margin: the CI of Δ lies above +margin

    @property
    def rel(self) -> float:
        return self.diff / self.before if self.before else float("nan")


@dataclass(frozen=True)
class History:
    sigma: float  # the run-to-run sd used
    sigma_source: str  # "host" (replicate runs), "series" (pooled around its levels) or "none" (one run)
    outliers: list[int]
    changes: list[ChangePoint]
    alpha: float = ALPHA
    min_segment: int = MIN_SEGMENT


def series_sigma(x: Sequence[float]) -> float:
    """Robust run-to-run sd of a series from its successive differences (module docstring);
    0 for fewer than 3 runs."""
    a = np.asarray(x, dtype=float)
    if len(a) < 3:
        return 0.0
    return float(MAD_SCALE * np.median(np.abs(np.diff(a))) / math.sqrt(2))


def _windows(x: np.ndarray, before: int, after: int) -> np.ndarray:
    """Row i: x[i − before], …, x[i + after], NaN where that is outside x (shape n × (before + after + 1))."""
    padded = np.concatenate([np.full(before, np.nan), x, np.full(after, np.nan)])
    return np.lib.stride_tricks.sliding_window_view(padded, before + after + 1)


def _outlier_scores(x: np.ndarray, se: np.ndarray) -> np.ndarray:
    """Per run: how many robust sd it lies beyond both sides, in the same direction (0 if the
    sides disagree), a side being the median of the HAMPEL_HALF runs before or after it (one
    side at the ends). The robust sd is Hampel's (Hampel 1974; Pearson 2002): 1.4826 × the
    median absolute deviation of the runs within HAMPEL_HALF, never below the typical one over
    the series (a window of five can be tight by chance) nor the runs' typical own se. All runs
    at once (a lab's histories run to thousands of runs: docs/site.md)."""
    n = len(x)
    if n == 0:
        return np.zeros(0)
    win = _windows(x, HAMPEL_HALF, HAMPEL_HALF)
    centre = row_nanmedians(win)
    local = MAD_SCALE * row_nanmedians(np.abs(win - centre[:, None]))
    floor = max(float(np.median(local)), float(np.median(se)) if len(se) else 0.0)
    scale = np.maximum(local, floor)
    sides = [row_nanmedians(_windows(x, HAMPEL_HALF, 0)[:, :HAMPEL_HALF]),  # the runs before
             row_nanmedians(_windows(x, 0, HAMPEL_HALF)[:, 1:])]  # the runs after
    with np.errstate(divide="ignore", invalid="ignore"):
        dev = np.stack([(x - m) / scale for m in sides])  # NaN where a side is empty
    have = ~np.isnan(dev)
    same = ((dev > 0) | ~have).all(axis=0) | ((dev < 0) | ~have).all(axis=0)
    ok = (np.sum(~np.isnan(win), axis=1) >= 3) & (scale > 0) & have.any(axis=0) & same
    scores = np.zeros(n)
    scores[ok] = np.nanmin(np.abs(dev[:, ok]), axis=0)
    return scores


def _outliers(x: np.ndarray, se: np.ndarray) -> list[int]:
    """Outlier runs, one at a time (as Rosner's generalized ESD test, 1983): the run with the
    highest score (_outlier_scores) is an outlier when it exceeds OUTLIER_Z; it is set aside and
    the rest scored again, so a slow run does not make its neighbours look odd. A run at a real
    step agrees with one side, so it is not flagged."""
    left = list(range(len(x)))
    out: list[int] = []
    while len(left) >= 3:
        scores = _outlier_scores(x[left], se[left])
        j = int(np.argmax(scores))
        if scores[j] <= OUTLIER_Z:
            break
        out.append(left.pop(j))
    return sorted(out)


def _segment(x: np.ndarray, se: np.ndarray, sigma: float | None, df: float, alpha: float,
             ) -> list[tuple[int, float, float]]:
    """Binary segmentation: (first index of the new level, t, adjusted p) of every step found."""
    found: list[tuple[int, float, float]] = []
    stack = [(0, len(x))]
    while stack:
        a, b = stack.pop()
        got = _best_split(x[a:b], se[a:b], sigma, df)
        if got is not None and got[2] < alpha:
            found.append((a + got[0], got[1], got[2]))
            stack += [(a, a + got[0]), (a + got[0], b)]
    return sorted(found)


CHUNK = 1 << 20  # elements of the splits × runs arrays _best_split works on at once


def _best_split(x: np.ndarray, se: np.ndarray, sigma: float | None, df: float) -> tuple[int, float, float] | None:
    """(split, t, Bonferroni-adjusted p) of the split with the smallest p (the first of equals),
    or None when too short. Each split k is Student's two-sample t test between x[:k] and x[k:]:
    run variances max(σ², se²), σ the host's (on its df) or the pooled sd around the two levels
    (df = n − 2), each run's own uncertainty as a floor. Every split at once, as rows of an
    array (a lab's histories run to thousands of runs: docs/site.md)."""
    n = len(x)
    if n < 2 * MIN_SEGMENT:
        return None
    from scipy import special  # here: ~0.3 s to import, paid only where a distribution is evaluated

    tried = n - 2 * MIN_SEGMENT + 1
    se2 = se**2
    best: tuple[int, float, float] | None = None
    step = max(1, CHUNK // n)
    for k0 in range(MIN_SEGMENT, n - MIN_SEGMENT + 1, step):
        ks = np.arange(k0, min(k0 + step, n - MIN_SEGMENT + 1))
        left = np.arange(n)[None, :] < ks[:, None]  # row j: the runs before split ks[j]
        nl, nr = ks.astype(float), (n - ks).astype(float)
        ml = np.where(left, x, 0.0).sum(axis=1) / nl
        mr = np.where(left, 0.0, x).sum(axis=1) / nr
        if sigma is None:
            resid = np.where(left, x - ml[:, None], x - mr[:, None])
            var = np.sum(resid**2, axis=1) / (n - 2)
            dof = float(n - 2)
        else:
            var = np.full(len(ks), float(sigma) ** 2)
            dof = df
        v = np.maximum(var[:, None], se2[None, :])
        sem = np.sqrt(np.where(left, v, 0.0).sum(axis=1) / nl**2 + np.where(left, 0.0, v).sum(axis=1) / nr**2)
        d = mr - ml
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(sem > 0, d / sem, np.where(d != 0, np.copysign(np.inf, d), 0.0))
        p = np.where(sem > 0, 2 * special.stdtr(dof, -np.abs(t)), np.where(d != 0, 0.0, 1.0))
        j = int(np.argmin(p))
        if best is None or p[j] < best[2]:
            best = (int(ks[j]), float(t[j]), float(p[j]))
    assert best is not None
    return best[0], best[1], min(1.0, best[2] * tried)


def detect(x: Sequence[float], se: Sequence[float] | None = None, sigma: float | None = None,
           sigma_df: int | None = None, alpha: float = ALPHA, margin: float = 0.0, outliers: bool = True) -> History:
    """Change points of the series ``x`` (module docstring). ``se``: each run's standard error
    (None: 0); ``sigma``, ``sigma_df``: the host's run-to-run sd and its df (None: the pooled sd
    around the two levels of each split tried); ``margin``: the practical margin of a
    regression, in x's unit; ``outliers`` False: no run is left out as one (a revision series in
    commit order, where a run unlike its neighbours is its commit's level). Raises ValueError for
    sequences of different lengths."""
    xs = np.asarray(x, dtype=float)
    s = np.zeros(len(xs)) if se is None else np.nan_to_num(np.asarray(se, dtype=float))
    if len(s) != len(xs):
        raise ValueError("x and se must have the same length")
    source = "host" if sigma is not None else "series"
    df = float(sigma_df or 1e6)
    rough = float(sigma) if sigma is not None else series_sigma(xs)
    outl = _outliers(xs, s) if outliers else []
    keep = np.array([i for i in range(len(xs)) if i not in set(outl)], dtype=int)
    cx, cs = xs[keep], s[keep]
    found = _segment(cx, cs, sigma, df, alpha)
    bounds = [0, *[k for k, _t, _p in found], len(cx)]
    if sigma is None:  # the run-to-run sd: pooled around the levels found
        resid = np.concatenate([cx[a:b] - cx[a:b].mean() for a, b in itertools.pairwise(bounds)])
        dof = len(cx) - len(bounds) + 1
        sig, df = (float(np.sqrt(np.sum(resid**2) / dof)), float(dof)) if dof > 0 else (rough, 1.0)
        if dof <= 0:  # one run left: no spread to pool (sig is 0, and no change point is possible)
            source = "none"
    else:
        sig = float(sigma)
    from scipy import special  # here: ~0.3 s to import, paid only where a distribution is evaluated

    v = np.maximum(sig**2, cs**2)
    changes = []
    for i, (k, t, p) in enumerate(found):
        a0, a1, b1 = bounds[i], bounds[i + 1], bounds[i + 2]
        before, after = float(cx[a0:a1].mean()), float(cx[a1:b1].mean())
        var = v[a0:a1].sum() / (a1 - a0) ** 2 + v[a1:b1].sum() / (b1 - a1) ** 2
        half = float(special.stdtrit(df, 0.975)) * math.sqrt(var)
        d = after - before
        changes.append(ChangePoint(int(keep[k]), before, after, d, d - half, d + half, t, p, d - half > margin))
    return History(sig, source, outl, changes, alpha)
