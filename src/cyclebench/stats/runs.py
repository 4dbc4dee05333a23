"""Verdicts between stored runs: what varies between runs, not within one.

A run's CI covers the noise inside its processes; between two runs the host moves more
(getpid: sd ≈ 2.4% over 15 runs two seconds apart, while each run's CI was ±0.3–1%). So a
stored-run comparison treats each *run* as one observation of the benchmark — the multi-level
design of Kalibera & Jones 2013 ("Rigorous benchmarking in reasonable time"), where the level
that varies most must be replicated; benchstat likewise compares sets of whole runs.

Model: run estimates x (cycles~ per op when every run has it, else the timer's unit) of side A
(n_a runs) and side B (n_b runs) have a common run-to-run standard deviation σ. It is estimated
by pooling (i) the spread within each side (df = n_a + n_b − 2) and (ii) the spread this
benchmark showed between replicate runs of the same build on the same host before (``prior``:
sd and its degrees of freedom, from stored `run --runs N` groups). Δ = mean(B) − mean(A),
se = σ̂·√(1/n_a + 1/n_b), Student's t on the pooled df; the verdict rule is compare's (p < α
and the CI wholly outside the margin). With no df at all (one run a side, nothing learned on
this host) there is no verdict, only `~` and a note saying what would allow one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from cyclebench.model import Comparison
from cyclebench.stats.ab import ALPHA, MARGIN_ABS, MARGIN_REL

NO_SPREAD = ("one run a side and no run-to-run spread known for it on this host: replicate runs "
             "(run --runs 3) on each side, or earlier replicate groups of the same build, allow a verdict")


def pooled_spread(groups: Sequence[Sequence[float]]) -> tuple[float, int] | None:
    """(sd, df) pooled over replicate groups (each a list of run estimates of one build on one
    host): Σ(n_g − 1)·s_g² / Σ(n_g − 1). None when no group has two runs."""
    ss, df = 0.0, 0
    for g in groups:
        x = np.asarray([v for v in g if v is not None and math.isfinite(v)], dtype=float)
        if len(x) >= 2:
            ss += float(np.sum((x - x.mean()) ** 2))
            df += len(x) - 1
    return (math.sqrt(ss / df), df) if df else None


def cross_run(a: Sequence[float], b: Sequence[float], prior: tuple[float, int] | None = None,
              alpha: float = ALPHA, margin_abs: float = MARGIN_ABS, margin_rel: float = MARGIN_REL,
              confidence: float = 0.95) -> tuple[Comparison, str]:
    """Compare the run estimates of two sides (see the module docstring). Returns the
    Comparison (``pairs`` = runs in all; ci and p are NaN when nothing estimates the spread)
    and a note (empty when there is nothing to say). Raises ValueError for an empty side."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not len(xa) or not len(xb):
        raise ValueError("each side needs at least one run with this benchmark")
    ma, mb = float(xa.mean()), float(xb.mean())
    diff = mb - ma
    ss = float(np.sum((xa - ma) ** 2) + np.sum((xb - mb) ** 2))
    df = len(xa) + len(xb) - 2
    notes: list[str] = []
    pooled = ""
    if prior is not None:
        ss += prior[0] ** 2 * prior[1]
        df += prior[1]
        pooled = f"this host's earlier replicate runs (replicate sd {prior[0]:.3g}, df {prior[1]})"
    margin = min(margin_abs, margin_rel * abs(ma))
    rel = diff / ma if ma else float("nan")
    if df == 0:
        return Comparison(ma, mb, diff, float("nan"), float("nan"), rel, float("nan"), len(xa) + len(xb), margin,
                          "~"), NO_SPREAD
    sd = math.sqrt(ss / df)
    se = sd * math.sqrt(1 / len(xa) + 1 / len(xb))
    if se == 0:
        p, low, high = (1.0, diff, diff) if diff == 0 else (0.0, diff, diff)
    else:
        from scipy import special  # here: only a verdict with a spread needs it (~0.3 s to import)

        t = diff / se
        p = float(2 * special.stdtr(df, -abs(t)))  # Student's t: sf(|t|) = cdf(−|t|)
        half = float(special.stdtrit(df, 0.5 + confidence / 2)) * se
        low, high = diff - half, diff + half
    verdict = "~"
    if p < alpha and (low > margin or high < -margin):
        verdict = "slower" if diff > 0 else "faster"
    notes.insert(0, f"runs {len(xa)} vs {len(xb)}, " + (f"sd {sd:.3g} (df {df}) pooled from the runs compared and "
                                                         f"{pooled}" if prior is not None else
                                                         f"sd of the runs compared {sd:.3g} (df {df})"))
    return Comparison(ma, mb, diff, low, high, rel, p, len(xa) + len(xb), margin, verdict), "; ".join(notes)
