"""Sequential verdicts: a paired comparison looked at after every stage, stopped as soon as
the answer is known, with the false-verdict rate still at most α.

Design: a group-sequential test with an α-spending function (Lan & DeMets 1983,
"Discrete sequential boundaries for clinical trials", Biometrika 70:659) of the
O'Brien–Fleming type (O'Brien & Fleming 1979), α/2 a side: α*(t) = 2·(2 − 2Φ(z_{1−α/4} / √t)),
where t ∈ (0, 1] is the information fraction (rounds so far ÷ the rounds the time budget allows). Early looks
spend almost nothing (a verdict there needs an overwhelming difference), the last look nearly
the whole α. The looks need not be planned in advance: each look's boundary c_k is computed
when it happens from the fractions so far, by the recursive numerical integration of
Armitage, McPherson & Rowe (1969) over the Brownian motion the standardised statistic
follows (Jennison & Turnbull 2000, "Group Sequential Methods", §7.2 and §19.2).

Statistic at look k: Z_k = Δ_k / SE_k, Δ_k the median of the per-round paired differences so
far and SE_k its standard error by the two-level bootstrap over processes (stats.ab.cluster_ci's
resampling), widened by √(G/(G−1)) for G processes (the bootstrap's small-G shrinkage).
Decisions use the repeated confidence interval RCI_k = Δ_k ± c_k·SE_k (Jennison & Turnbull
ch. 9), which covers the true difference at *every* look with probability ≥ 1 − α:
  * RCI wholly above +margin → ``slower``; wholly below −margin → ``faster``;
  * RCI wholly inside ±equivalence margin, and Δ_k itself inside the verdict margin →
    ``equivalent`` (no difference that large). The second condition keeps a difference the
    user asked about (+1 cycle on 300: Δ ≈ 1, an RCI of ±1.5 already inside ±1% = ±3) from
    being called equivalent before it can be found; it only narrows when to stop;
  * otherwise go on; when the budget ends, ``inconclusive`` with the last RCI.
Because the RCIs hold simultaneously, stopping on either kind of conclusion, at any look,
keeps both error rates at α.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np

Decision = Literal["slower", "faster", "equivalent", "continue", "inconclusive"]

_H = 0.005  # grid step of the integration, in units of W(1)'s sd
_L = 9.0  # grid half-width: far beyond any boundary


def spent(t: float, alpha: float) -> float:
    """Cumulative two-sided α spent by information fraction ``t``: the O'Brien–Fleming-type
    function of Lan & DeMets 1983 at α/2 on each side, 2·(2 − 2Φ(z_{1−α/4}/√t)), as gsDesign's
    sfLDOF and ldbounds compute symmetric two-sided bounds; 0 at t ≤ 0, α at t ≥ 1."""
    if t <= 0:
        return 0.0
    t = min(t, 1.0)
    # 2 − 2Φ(x) = erfc(x/√2): no cancellation in the far tail, and no scipy (0.3 s to import)
    return float(2 * math.erfc(NormalDist().inv_cdf(1 - alpha / 4) / math.sqrt(t) / math.sqrt(2)))


def _pdf(x: np.ndarray, sd: float) -> np.ndarray:
    """Normal density with mean 0."""
    return np.exp(-0.5 * (x / sd) ** 2) / (sd * math.sqrt(2 * math.pi))


def boundaries(fractions: list[float], alpha: float) -> list[float]:
    """Two-sided boundaries c_1..c_K on |Z| for looks at the given increasing information
    fractions (the last may be 1: it spends what is left). c_k = inf where a look spends
    nothing. Raises ValueError for fractions that do not increase or lie outside (0, 1].
    """
    looks = Boundaries(alpha)
    return [looks.add(t) for t in fractions]


class Boundaries:
    """The boundaries of looks taken one at a time, as a sequential comparison takes them:
    ``add(t)`` gives the next look's c_k, the same number ``boundaries`` gives for all the
    fractions so far, without integrating the earlier looks again (each look is a convolution of
    the 3,601-point density: recomputed at every look, the 17th cost 17 of them, and the
    boundaries were over a quarter of a +1-cycle compare's time between processes on an AMD EPYC
    Zen 3 guest)."""

    def __init__(self, alpha: float) -> None:
        self.alpha = alpha
        self._x = np.arange(-_L, _L + _H / 2, _H)
        self._dens: np.ndarray | None = None  # density of W(t) on paths that have not crossed, on the grid
        self._prev_t = 0.0
        self._used = 0.0

    def add(self, t: float) -> float:
        """c for a look at information fraction ``t`` (after the earlier looks'). Raises
        ValueError when ``t`` does not lie in (0, 1] above the last look's fraction."""
        t = float(t)
        if not self._prev_t < t <= 1:
            raise ValueError(f"information fractions must increase within (0, 1]: {t} after {self._prev_t}")
        x = self._x
        if self._dens is None:
            d = _pdf(x, math.sqrt(t))
        else:
            k = _pdf(x, math.sqrt(t - self._prev_t)) * _H
            d = np.convolve(self._dens, k, mode="same")
        target = spent(t, self.alpha) - self._used
        tail = _tails(x, d)  # P(|W(t)| ≥ x, not crossed before) for x ≥ 0
        c = math.inf if target <= 0 or tail(_L) >= target else _crossing(tail, target) / math.sqrt(t)
        self._used += tail(c * math.sqrt(t)) if math.isfinite(c) else 0.0
        self._dens = np.where(np.abs(x) < c * math.sqrt(t), d, 0.0) if math.isfinite(c) else d
        self._prev_t = t
        return c


def _crossing(tail: Callable[[float], float], target: float, tol: float = 1e-7) -> float:
    """The s in [0, _L] where the decreasing ``tail(s)`` falls to ``target`` (tail(0) ≥ target >
    tail(_L)), by bisection to ``tol``: 27 halvings of the grid's width. Not scipy's brentq:
    importing scipy.optimize cost a first look 0.23 s, more than its rounds took to measure."""
    lo, hi = 0.0, _L
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if tail(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _tails(x: np.ndarray, d: np.ndarray) -> Callable[[float], float]:
    """s ↦ ∫_{|w| ≥ s} d(w) dw for s ≥ 0, by the trapezoid rule on the grid, interpolated."""
    mass = (d[1:] + d[:-1]) / 2 * np.diff(x)  # per interval
    upper = np.concatenate([np.cumsum(mass[::-1])[::-1], [0.0]])  # ∫_{x_i}^{L}
    lower = np.concatenate([[0.0], np.cumsum(mass)])  # ∫_{-L}^{x_i}

    def tail(s: float) -> float:
        return float(np.interp(s, x, upper) + np.interp(-s, x, lower))

    return tail


@dataclass(frozen=True)
class Look:
    """One look: the estimate, its SE, the boundary, the RCI and what it decides."""

    fraction: float
    diff: float
    se: float
    boundary: float
    low: float
    high: float
    decision: Decision

    @property
    def z(self) -> float:
        return self.diff / self.se if self.se > 0 else math.copysign(math.inf, self.diff) if self.diff else 0.0


def decide(diff: float, se: float, boundary: float, margin: float, equivalence: float, fraction: float,
           last: bool) -> Look:
    """The decision of one look (module docstring): verdict when the RCI Δ ± c·SE clears
    ±``margin``, equivalent when it lies inside ±``equivalence`` with Δ inside ±``margin``,
    else continue (or
    inconclusive when ``last``). ``se`` = 0 (identical rounds): the RCI is the point."""
    half = boundary * se if math.isfinite(boundary) else math.inf
    low, high = diff - half, diff + half
    decision: Decision = "inconclusive" if last else "continue"
    if low > margin:
        decision = "slower"
    elif high < -margin:
        decision = "faster"
    elif -equivalence < low and high < equivalence and abs(diff) <= margin:
        decision = "equivalent"
    return Look(fraction, diff, se, boundary, low, high, decision)


def median_se(d: np.ndarray, groups: np.ndarray | None, n_resamples: int = 2000, seed: int = 0) -> float:
    """Standard error of the median of ``d`` by the two-level bootstrap over processes then
    rounds (Davison & Hinkley 1997, §3.8), widened by √(G/(G−1)) for G processes; by the
    one-level bootstrap of rounds when there is one process."""
    from cyclebench.stats.ab import cluster_boot

    d = np.asarray(d, dtype=float)
    if np.ptp(d) == 0:
        return 0.0
    g = np.zeros(len(d), dtype=int) if groups is None else np.asarray(groups)
    k = len(np.unique(g))
    stats = cluster_boot(d, g, n_resamples=n_resamples, seed=seed)
    return float(np.std(stats, ddof=1) * (math.sqrt(k / (k - 1)) if k > 1 else 1.0))
