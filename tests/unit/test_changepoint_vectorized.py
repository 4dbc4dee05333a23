"""stats.changepoint works on whole arrays (every split, every run's window at once) so a lab's
histories of thousands of runs are analysed in seconds (docs/site.md, "Scale"). The loops it
replaced are kept here as the reference: on series with steps, drifts, outliers, ties and
runs without a CI, the array version finds the same outliers and change points, with the same
statistics."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cyclebench.stats import changepoint
from cyclebench.stats.changepoint import HAMPEL_HALF, MAD_SCALE, MIN_SEGMENT, detect


def _outlier_scores(x: np.ndarray, se: np.ndarray) -> np.ndarray:
    """The loop version (one window a run)."""
    windows = [x[max(0, i - HAMPEL_HALF):i + HAMPEL_HALF + 1] for i in range(len(x))]
    local = [MAD_SCALE * float(np.median(np.abs(w - np.median(w)))) for w in windows]
    floor = max(float(np.median(local)) if local else 0.0, float(np.median(se)) if len(se) else 0.0)
    scores = np.zeros(len(x))
    for i in range(len(x)):
        scale = max(local[i], floor)
        sides = [x[max(0, i - HAMPEL_HALF):i], x[i + 1:i + HAMPEL_HALF + 1]]
        dev = [(x[i] - float(np.median(side))) / scale for side in sides if len(side)]
        if len(windows[i]) >= 3 and scale > 0 and dev and (all(d > 0 for d in dev) or all(d < 0 for d in dev)):
            scores[i] = min(abs(d) for d in dev)
    return scores


def _split_test(x: np.ndarray, se: np.ndarray, k: int, sigma: float | None, df: float) -> tuple[float, float]:
    left, right = x[:k], x[k:]
    if sigma is None:
        resid = np.concatenate([left - left.mean(), right - right.mean()])
        sigma, df = float(np.sqrt(np.sum(resid**2) / (len(x) - 2))), len(x) - 2
    v = np.maximum(sigma**2, se**2)
    sem = math.sqrt(v[:k].sum() / k**2 + v[k:].sum() / (len(x) - k) ** 2)
    d = float(right.mean() - left.mean())
    if sem == 0:
        return (math.copysign(math.inf, d), 0.0) if d else (0.0, 1.0)
    t = d / sem
    from scipy import special

    return t, float(2 * special.stdtr(df, -abs(t)))


def _best_split(x: np.ndarray, se: np.ndarray, sigma: float | None, df: float) -> tuple[int, float, float] | None:
    """The loop version (one split at a time)."""
    n = len(x)
    if n < 2 * MIN_SEGMENT:
        return None
    tried = n - 2 * MIN_SEGMENT + 1
    best = min(((k, *_split_test(x, se, k, sigma, df)) for k in range(MIN_SEGMENT, n - MIN_SEGMENT + 1)),
               key=lambda r: r[2])
    return best[0], best[1], min(1.0, best[2] * tried)


def _series(seed: int) -> tuple[np.ndarray, np.ndarray, float | None]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 90))
    x = 300 + rng.normal(0, 3, n)
    for _ in range(int(rng.integers(0, 3))):  # steps
        x[int(rng.integers(0, n)):] *= 1 + rng.choice([-1, 1]) * rng.uniform(0.02, 0.2)
    for _ in range(int(rng.integers(0, 3))):  # slow runs
        x[int(rng.integers(0, n))] *= rng.uniform(1.2, 1.5)
    if seed % 7 == 0:
        x = np.round(x)  # ties
    if seed % 11 == 0:
        x[: n // 2] = 300.0  # a flat stretch: zero spread
    se = np.full(n, 0.7) if seed % 3 else rng.uniform(0, 2, n)
    if seed % 5 == 0:
        se[::4] = 0.0  # runs without a CI
    sigma = 2.5 if seed % 4 == 0 else None
    return x, se, sigma


@pytest.mark.parametrize("seed", range(300))
def test_the_array_version_finds_what_the_loops_found(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    x, se, sigma = _series(seed)
    fast = detect(x, se, sigma, 8 if sigma else None)
    monkeypatch.setattr(changepoint, "_outlier_scores", _outlier_scores)
    monkeypatch.setattr(changepoint, "_best_split", _best_split)
    slow = detect(x, se, sigma, 8 if sigma else None)
    assert fast.outliers == slow.outliers
    assert [c.index for c in fast.changes] == [c.index for c in slow.changes]
    for a, b in zip(fast.changes, slow.changes, strict=True):
        assert a.regression == b.regression
        for f in ("before", "after", "diff", "ci_low", "ci_high", "z", "p"):
            assert getattr(a, f) == pytest.approx(getattr(b, f), rel=1e-9, abs=1e-12), f
    assert fast.sigma == pytest.approx(slow.sigma, rel=1e-9, abs=1e-12)


def test_scores_match_on_a_long_series() -> None:
    """Thousands of runs (the lab of docs/site.md) score as the loop scored them."""
    rng = np.random.default_rng(5)
    x = 100 + rng.normal(0, 1, 3000)
    x[rng.integers(0, 3000, 30)] *= 1.4
    se = rng.uniform(0.1, 0.5, 3000)
    assert np.allclose(changepoint._outlier_scores(x, se), _outlier_scores(x, se), rtol=1e-12, atol=0)
    k, t, p = changepoint._best_split(x[:400], se[:400], None, 0)  # type: ignore[misc]
    assert (k, t, p) == pytest.approx(_best_split(x[:400], se[:400], None, 0), rel=1e-9)
