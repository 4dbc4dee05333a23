"""Sequential verdicts (docs/method.md §5a): alpha-spending boundaries, the decision of a look, and the
error rates of the whole design under repeated looks — simulated, no compiler."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cyclebench.stats.sequential import Boundaries, boundaries, decide, median_se, spent


def test_boundaries_match_the_published_ones() -> None:
    # Lan–DeMets O'Brien–Fleming spending, 5 equally spaced looks, two-sided α = 0.05 (α/2 a
    # side): gsDesign's sfLDOF and ldbounds give 4.877, 3.357, 2.680, 2.290, 2.031.
    got = boundaries([0.2, 0.4, 0.6, 0.8, 1.0], 0.05)
    assert got == pytest.approx([4.877, 3.357, 2.680, 2.290, 2.031], abs=0.005)
    assert boundaries([1.0], 0.05)[0] == pytest.approx(1.95996, abs=1e-3)  # one look: the fixed test
    assert spent(1.0, 0.002) == pytest.approx(0.002) and spent(0.0, 0.002) == 0.0
    assert spent(0.3, 0.002) < spent(0.6, 0.002) < 0.002
    with pytest.raises(ValueError):
        boundaries([0.5, 0.4], 0.05)


def test_looks_taken_one_at_a_time_get_the_published_boundaries() -> None:
    # as compare takes them: each look's boundary when it happens, the earlier ones not integrated again
    looks = Boundaries(0.05)
    got = [looks.add(t) for t in (0.2, 0.4, 0.6, 0.8, 1.0)]
    assert got == pytest.approx([4.877, 3.357, 2.680, 2.290, 2.031], abs=0.005)
    for bad in (0.9, 1.0, 1.5):  # not above the last look's fraction, or beyond the budget
        with pytest.raises(ValueError):
            looks.add(bad)


def _paths(rng: np.random.Generator, fractions: np.ndarray, n: int, drift: float = 0.0) -> np.ndarray:
    """Z_k = W(t_k)/√t_k for Brownian motion with ``drift`` per unit information."""
    inc = rng.standard_normal((n, len(fractions))) * np.sqrt(np.diff(np.r_[0, fractions]))
    w = np.cumsum(inc, axis=1) + drift * fractions
    return w / np.sqrt(fractions)


def test_repeated_looks_keep_the_false_verdict_rate() -> None:
    # Looks at irregular fractions (as a time budget gives them): the chance of ever crossing
    # under no difference is α, where a fixed z test at every look would cross far more often.
    rng = np.random.default_rng(5)
    t = np.array([0.17, 0.26, 0.33, 0.41, 0.52, 0.6, 0.71, 0.83, 0.9, 1.0])
    z = _paths(rng, t, 400_000)
    c = np.array(boundaries(list(t), 0.05))
    assert np.mean((np.abs(z) >= c).any(axis=1)) == pytest.approx(0.05, abs=0.003)
    assert np.mean((np.abs(z) >= 1.96).any(axis=1)) > 0.15  # naive repeated testing


def test_repeated_cis_cover_a_true_difference_at_every_look() -> None:
    # The RCI Δ ± c·SE holds the truth at all looks at once with probability ≥ 1 − α, so a
    # verdict or an equivalence taken at any look is wrong at most α of the time.
    rng = np.random.default_rng(6)
    t = np.array([0.25, 0.5, 0.75, 1.0])
    c = np.array(boundaries(list(t), 0.05))
    se = 1 / np.sqrt(t)  # of a mean after t units of information
    est = _paths(rng, t, 200_000, drift=2.0) * se  # Δ_k = truth (2) + noise
    miss = (np.abs(est - 2.0) > c * se).any(axis=1)
    assert np.mean(miss) <= 0.053


def test_a_look_decides() -> None:
    assert decide(1.0, 0.1, 3.0, 0.25, 3.0, 0.5, last=False).decision == "slower"  # RCI [0.7, 1.3]
    assert decide(-1.0, 0.1, 3.0, 0.25, 3.0, 0.5, last=False).decision == "faster"
    assert decide(0.05, 0.2, 3.0, 0.25, 3.0, 0.5, last=False).decision == "equivalent"  # [-0.55, 0.65] ⊂ ±3
    # +1 on 300: the RCI already lies inside ±1% but Δ is outside the verdict margin: go on, so
    # the difference the user asks about can still be found
    assert decide(1.0, 0.5, 3.0, 0.25, 3.0, 0.5, last=False).decision == "continue"
    assert decide(1.0, 0.5, 3.0, 0.25, 3.0, 1.0, last=True).decision == "inconclusive"
    look = decide(0.0, 0.0, math.inf, 0.25, 3.0, 0.1, last=False)  # a look that spends nothing
    assert look.decision == "continue" and look.low == -math.inf


def test_median_se_sees_the_processes() -> None:
    # A bias that holds for each whole process must widen the SE (the two-level bootstrap).
    rng = np.random.default_rng(7)
    groups = np.repeat(np.arange(6), 10)
    flat = rng.normal(0, 0.1, 60)
    biased = flat + np.repeat(rng.normal(0, 1.0, 6), 10)
    assert median_se(biased, groups) > 3 * median_se(flat, groups)
    assert median_se(np.zeros(12), None) == 0.0


def test_compare_sizes_the_rounds_per_design_and_keeps_an_explicit_min_time() -> None:
    """The sequential design's shorter rounds and warm-up (its first look after ~0.16 s of
    measuring, docs/method.md §5a); the fixed design's 0.2 s over --repeat; --min-time wins."""
    from cyclebench.experiments.options import FIXED_MIN_TIME, Budget
    from cyclebench.runner.plan import MeasureOptions
    from cyclebench.ui.compare import measure_options

    budget = Budget(2.0, 0.01)
    seq = measure_options(None, None, budget)
    assert (seq.min_time, seq.repeat, seq.warmup) == (Budget.min_time, 60, Budget.warmup)
    assert Budget.min_time < FIXED_MIN_TIME and Budget.warmup < MeasureOptions.warmup
    fixed = measure_options(120, None, budget)
    assert (fixed.min_time, fixed.repeat, fixed.warmup) == (FIXED_MIN_TIME, 120, MeasureOptions.warmup)
    assert measure_options(None, 0.5, budget).min_time == 0.5 and measure_options(60, 0.0, budget).min_time == 0.0
