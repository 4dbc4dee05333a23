from __future__ import annotations

import math

import numpy as np
import pytest

from cyclebench.stats import NotEnoughSamples, estimate


def ladder(per_op: float, fixed: float, noise: float, rounds: int = 40, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = np.tile(np.arange(1, 9) * 100, rounds).astype(float)
    t = fixed + per_op * n + rng.normal(0, noise, len(n))
    return n, t


def test_slope_and_intercept_recovered() -> None:
    n, t = ladder(per_op=3.0, fixed=120.0, noise=5.0)
    est = estimate(n, t)
    assert est.per_op == pytest.approx(3.0, abs=0.02)
    assert est.ci_low <= 3.0 <= est.ci_high
    assert est.intercept == pytest.approx(120.0, abs=15)
    assert est.median == pytest.approx(3.0, abs=0.05)
    assert est.median_ci_low <= est.median <= est.median_ci_high
    assert est.min < est.median
    assert est.n_samples == 320


def test_interrupt_outliers_do_not_move_the_slope() -> None:
    n, t = ladder(per_op=3.0, fixed=120.0, noise=2.0)
    t[::10] += 50_000  # 10% of samples hit by an interrupt
    est = estimate(n, t)
    assert est.per_op == pytest.approx(3.0, abs=0.05)
    assert est.outliers >= 25


def test_ci_narrows_with_less_noise() -> None:
    wide = estimate(*ladder(3.0, 100.0, 50.0))
    narrow = estimate(*ladder(3.0, 100.0, 5.0))
    assert narrow.ci_half_width < wide.ci_half_width / 3


def test_not_enough_samples() -> None:
    with pytest.raises(NotEnoughSamples):
        estimate([100, 100, 100, 100], [300, 301, 302, 303])
    with pytest.raises(NotEnoughSamples):
        estimate([1, 2], [3, 4])


def test_scaled_changes_units_not_cv() -> None:
    est = estimate(*ladder(3.0, 100.0, 5.0))
    ns = est.scaled(0.5)
    assert ns.per_op == pytest.approx(est.per_op * 0.5)
    assert ns.cv == est.cv


def test_round_median_uses_rounds_and_catches_drift() -> None:
    # 40 rounds; the cost drifts from 3.0 to 3.3 across them (a clock change mid-run).
    rng = np.random.default_rng(3)
    n = np.concatenate([rng.permutation(np.arange(1, 9) * 100) for _ in range(40)]).astype(float)
    per_op = np.repeat(np.linspace(3.0, 3.3, 40), 8)
    t = 100 + per_op * n + rng.normal(0, 2, len(n))
    est = estimate(n, t, group=8)
    assert est.method == "round-median" and est.rounds == 40
    assert 3.1 < est.per_op < 3.2
    assert est.ci_high - est.ci_low > 0.03  # the drift shows in the CI
    flat = estimate(*ladder(3.0, 100.0, 2.0), group=8)
    assert flat.ci_high - flat.ci_low < 0.01
    assert estimate(n[:16], t[:16], group=8).method == "theil-sen"  # 2 rounds: too few


def test_paired_comparison_verdicts() -> None:
    from cyclebench.stats.ab import paired

    rng = np.random.default_rng(5)
    drift = np.linspace(300, 330, 40)  # both sides drift alike, round by round
    a = drift + rng.normal(0, 0.2, 40)
    same = paired(a, drift + rng.normal(0, 0.2, 40))
    assert same.verdict == "~"
    plus_one = paired(a, drift + 1 + rng.normal(0, 0.2, 40))
    assert plus_one.verdict == "slower" and plus_one.ci_low < 1.0 < plus_one.ci_high
    tiny = paired(a, a + 0.1 + rng.normal(0, 0.02, 40))  # real but inside the 0.25 margin
    assert tiny.p < 0.002 and tiny.verdict == "~"
    with pytest.raises(ValueError):
        paired(a[:5], a[:5])


def test_holm_and_unpaired() -> None:
    from cyclebench.stats.ab import holm, unpaired, with_adjusted_p

    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5]) == [0.5]
    rng = np.random.default_rng(2)
    a = 300 + rng.normal(0, 0.3, 40)
    c = unpaired(a, 302 + rng.normal(0, 0.3, 40))
    assert c.verdict == "slower" and c.ci_low < 2 < c.ci_high
    assert unpaired(a, 300 + rng.normal(0, 0.3, 40)).verdict == "~"
    assert with_adjusted_p(c, 0.5).verdict == "~"


def _rounds(rng: np.random.Generator, rounds: int, per_op: float, fixed: float, slow: int, excess: float,
            jitter: float = 0.002) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rounds of 8 samples (ladder 1..8 × 500) with ``slow`` of each round slowed by ``excess``."""
    n, t, hit = [], [], []
    for _ in range(rounds):
        ladder = rng.permutation(np.arange(1, 9)) * 500
        slowed = set(rng.choice(8, slow, replace=False).tolist())
        for i, k in enumerate(ladder):
            cost = per_op * k * (1 + rng.normal(0, jitter)) * (1 + excess * (i in slowed))
            n.append(k), t.append(fixed + cost), hit.append(i in slowed)
    return np.array(n, dtype=float), np.array(t), np.array(hit)


def test_interrupted_flags_the_slowed_samples_only() -> None:
    from cyclebench.stats import slow_side

    rng = np.random.default_rng(3)
    n, t, hit = _rounds(rng, 30, 300.0, 70.0, slow=2, excess=0.05)
    flagged = slow_side(n, t, 8, fixed=70.0)
    assert np.array_equal(flagged, hit)
    # six of eight slowed: still at most half a round goes (the faster half stays)
    n, t, hit = _rounds(rng, 30, 300.0, 70.0, slow=6, excess=0.05)
    flagged = slow_side(n, t, 8, fixed=70.0)
    assert all(flagged[i : i + 8].sum() <= 4 for i in range(0, len(n), 8))
    assert not flagged[~hit].any()
    # nothing slowed, nothing flagged: 0.2% jitter stays under the 1% gate
    n, t, _ = _rounds(rng, 30, 300.0, 70.0, slow=0, excess=0.0)
    assert not slow_side(n, t, 8, fixed=70.0).any()


def _slow_side_round_by_round(n: np.ndarray, t: np.ndarray, group: int | None, keep: np.ndarray | None,
                              fixed: float, gate: float = 0.01) -> np.ndarray:
    """slow_side as its docstring says it, one round at a time: the reference for the vectorized one."""
    keep = np.ones(len(n), dtype=bool) if keep is None else keep
    with np.errstate(divide="ignore", invalid="ignore"):
        c = (t - fixed) / n
    out = np.zeros(len(n), dtype=bool)
    g = group if group and group >= 2 else max(len(n), 1)
    for i in range(0, len(n), g):
        rc, k = c[i : i + g], keep[i : i + g] & np.isfinite(c[i : i + g])
        if k.any() and (low := rc[k].min()) > 0:
            out[i : i + g] = k & (rc > max(low * (1 + gate), float(np.median(rc[k]))))
    return out


def test_slow_side_flags_what_the_round_by_round_rule_flags() -> None:
    """Whole rounds at once, a last partial round, rounds with nothing kept, NaN and zero batch
    sizes, costs at or below zero, one round for all (group None), and the rule's ties."""
    from cyclebench.stats import slow_side

    rng = np.random.default_rng(11)
    for trial in range(300):
        group = [None, 1, 2, 3, 8, 8, 8, 16][trial % 8]
        size = int(rng.integers(0, 90))
        n = rng.choice([0.0, 1.0, 2.0, 5.0, 100.0, np.nan], size=size, p=[.03, .2, .2, .2, .34, .03])
        t = np.round(rng.normal(300.0, 40.0, size) * np.nan_to_num(n, nan=1.0), int(rng.integers(-2, 3)))
        t[rng.random(size) < 0.03] = -50.0  # below the fixed part: a cost ≤ 0
        keep = None if trial % 5 == 0 else rng.random(size) > rng.choice([0.0, 0.1, 0.9])
        fixed = float(rng.choice([0.0, 70.0]))
        got, want = slow_side(n, t, group, keep, fixed), _slow_side_round_by_round(n, t, group, keep, fixed)
        assert np.array_equal(got, want), (trial, group, size)


def test_gating_removes_the_bias_interrupts_put_on_slopes() -> None:
    """An interrupt adds fixed time and lands on a batch with a chance in proportion to its
    length, so long batches are hit more often and the slope reads high until the hit
    samples are dropped."""
    from cyclebench.stats import slow_side

    rng = np.random.default_rng(4)
    n, t = [], []
    for _ in range(60):
        for k in rng.permutation(np.arange(1, 9)):
            hit = rng.random() < 0.08 * k  # 8%..64% of batches, by length
            n.append(500 * k), t.append(70 + 300 * 500 * k * (1 + rng.normal(0, 0.002)) + hit * 60000)
    n_a, t_a = np.array(n, dtype=float), np.array(t)
    raw = estimate(n_a, t_a, group=8).per_op
    gated = estimate(n_a, t_a, group=8, keep=~slow_side(n_a, t_a, 8, fixed=70.0)).per_op
    assert raw - 300 > 0.6  # the bias is real: interrupted rounds tilt the slope up
    assert abs(gated - 300) < 0.25 * (raw - 300)


def test_round_ratio_dithers_a_stepped_tsc() -> None:
    """AMD's TSC moves in ~24.5-tick steps: the mean of a round's chain readings finds the
    true length; the median sticks to a step."""
    from cyclebench.stats.clock import round_ratio

    rng = np.random.default_rng(5)
    true_ticks, step, adds = 1700.4, 24.5, 2048
    start = rng.uniform(0, step, 8 * 50)
    readings = np.floor((start + true_ticks) / step) * step - np.floor(start / step) * step
    smooth = round_ratio(adds / readings, 8)
    assert np.median(np.abs(adds / smooth - true_ticks)) / true_ticks < 0.004
    medians = np.array([np.median(readings[i : i + 8]) for i in range(0, len(readings), 8)])
    assert np.median(np.abs(adds / smooth[::8] - true_ticks)) < np.median(np.abs(medians - true_ticks))


def test_shared_round_ratio_gives_both_sides_one_clock() -> None:
    from cyclebench.stats.clock import shared_round_ratio

    rng = np.random.default_rng(6)

    def result(cal: np.ndarray) -> dict[str, object]:
        return {"cal": cal.tolist(), "chain": {"kind": "add", "adds": 2048}, "unit": "ref-cycles", "ladder": 8,
                "timer_overhead": {"median": 70}, "disturbed": [0] * len(cal)}

    a = rng.normal(1700, 10, 80).round() + 70
    b = rng.normal(1700, 10, 80).round() + 70
    ra, rb = shared_round_ratio([result(a), result(b)])
    assert ra is not None and rb is not None and np.array_equal(ra, rb)
    assert all(len(set(ra[i : i + 8])) == 1 for i in range(0, 80, 8))  # one value per round
    assert np.allclose(ra, 2048 / 1700, rtol=0.01)
    assert shared_round_ratio([{"n": [1], "ticks": [1]}, result(a)])[0] is None  # no chain: None


def test_environment_line_counts_trimmed_of_all_samples() -> None:
    """n_samples counts the samples the estimate used; the trimmed and disturbed ones come on top."""
    from cyclebench.model import Result
    from cyclebench.report.console import environment_lines
    rows = [Result(line={"disturb_source": "perf"}, n_samples=150, n_trimmed=140, n_disturbed=10),
            Result(line={"disturb_source": "perf"}, n_samples=200, n_trimmed=100, n_disturbed=0)]
    line = next(x for x in environment_lines(rows) if x.startswith("trimmed"))
    assert line.startswith("trimmed: 240 of 600 samples")


def test_a_min_below_zero_is_no_cost() -> None:
    """A batch faster than the fitted fixed cost alone (two modes: here a
    fifth of the 100-op batches at 100 ticks/op and no fixed cost, the rest 30000 + 400/op)
    gives a net per-sample cost below zero; min is None then, in every unit, never a number
    (copy/nt_store at 48 B printed a min of −138.6)."""
    n, t = ladder(per_op=400.0, fixed=30_000.0, noise=50.0)
    fast = np.flatnonzero(n == 100)[::5]
    t[fast] = 100.0 * n[fast]
    est = estimate(n, t, group=8)
    assert est.per_op == pytest.approx(400.0, rel=0.01) and est.intercept > 20_000
    assert float(np.min((t - est.intercept) / n)) < 0  # what used to be stored as min
    assert est.min is None and est.scaled(0.5).min is None and est.to_dict()["min"] is None
    sane = estimate(*ladder(per_op=400.0, fixed=30_000.0, noise=50.0), group=8)
    assert sane.min is not None and 0 <= sane.min < sane.median


def test_min_pairs_lets_the_signed_rank_test_reach_alpha_after_holm() -> None:
    from scipy import stats as sps

    from cyclebench.stats.ab import ALPHA, min_pairs

    assert min_pairs(1) == 11 and min_pairs(3) == 13
    for k in (1, 3, 20):
        n = min_pairs(k)
        d = np.arange(1.0, n + 1)
        d[0] = -d[0]  # the smallest difference the other way: still a verdict
        assert sps.wilcoxon(d).pvalue * k < ALPHA
        assert sps.wilcoxon(np.arange(1.0, n - 1)).pvalue * k >= ALPHA  # two fewer, all one sign: none possible


def test_estimate_to_dict_has_the_typed_keys() -> None:
    """Estimate.to_dict's keys are EstimateFields' (the result columns they fill), all of them."""
    from dataclasses import fields

    from cyclebench.stats.estimators import EstimateFields

    rng = np.random.default_rng(3)
    n = np.repeat([100, 200, 400], 10)
    est = estimate(n, 50.0 * n + 30 + rng.normal(0, 5, n.size), group=3)
    assert set(est.to_dict()) == EstimateFields.__required_keys__ == {f.name for f in fields(est)}


@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.998])
def test_median_ci_takes_the_ranks_of_the_binomial(confidence: float) -> None:
    """The distribution-free CI's ranks are Bin(n, ½)'s (scipy's), from 2 values to a compare's
    ~2,000 samples: a rank off by one moves the coverage at n = 30 from 95.7% to 90.1% or 98.4%."""
    from scipy import stats as sps

    from cyclebench.stats.estimators import median_ci

    rng = np.random.default_rng(3)
    for n in [*range(2, 120), 1000, 1920, 20000]:
        x = rng.permutation(np.arange(n, dtype=float))  # value = 0-based rank
        j = max(1, int(np.sum(sps.binom.cdf(np.arange(n // 2 + 1), n, 0.5) <= (1 - confidence) / 2)))
        assert median_ci(x, confidence) == (j - 1, n - j), n


def test_median_ci_covers_with_ties_and_a_slow_side() -> None:
    """Coverage of the true median over 1,000 seeded samples of 30: whole ticks over 16 (ties)
    and a third of the values 1–40% slow; the bootstrap it replaced covered 93.7% on the second
    (bench/median_ci.py). One value or none spread: the value itself."""
    from cyclebench.stats.estimators import median_ci

    g = np.random.default_rng(5)
    shapes = {"ticks": (lambda: np.round(g.normal(4800.0, 6.0, 30)) / 16, 300.0),
              "slow": (lambda: 300.0 * np.where(g.random(30) < 1 / 3, 1 + g.uniform(0.01, 0.4, 30),
                                                 1 + g.uniform(-0.005, 0.005, 30)), None)}
    for name, (draw, truth) in shapes.items():
        if truth is None:
            truth = float(np.median(300.0 * np.where(g.random(2_000_000) < 1 / 3,
                                                       1 + g.uniform(0.01, 0.4, 2_000_000),
                                                       1 + g.uniform(-0.005, 0.005, 2_000_000))))
        covered = 0
        for _ in range(1000):
            lo, hi = median_ci(draw())
            covered += lo <= truth <= hi
        assert covered >= 950, (name, covered)  # ≥ 95.7% expected: 1 − 2·P(Bin(30, ½) ≤ 9)
    assert median_ci(np.array([7.0])) == (7.0, 7.0)
    assert median_ci(np.full(5, 2.0)) == (2.0, 2.0)


def test_round_ratio_is_each_rounds_value_to_the_bit() -> None:
    """round_ratio's rounds at once give what _round_value gives round by round: readings
    stepped as AMD's TSC steps, interrupted (±3–5%), NaN, 0, negative and infinite, a round with
    none usable and one whose two readings lie far apart; ladders of 2–9 batches (9: round by
    round) and a last round cut short."""
    from cyclebench.stats import clock

    rng = np.random.default_rng(0)
    for trial in range(600):
        g, n = int(rng.integers(2, 10)), int(rng.integers(0, 120))
        r = 1 / (rng.normal(1 / 1.2, 0.002, n) + rng.choice([0, 0, 0, 0.03, -0.05], n))
        if trial % 2:
            r = np.round(r * 1700 / 24) * 24 / 1700
        u = rng.random(n)
        r[u < 0.05], r[(u > 0.05) & (u < 0.07)], r[(u > 0.07) & (u < 0.08)] = np.nan, -1.0, 0.0
        r[(u > 0.08) & (u < 0.085)] = np.inf
        if trial % 7 == 0 and n > 9:
            r[:9] = np.nan
        if trial % 11 == 0 and n >= 2:
            r[:2] = 1.0, 2.0
        expected = np.concatenate([np.full(len(r[i : i + g]), clock._round_value(r[i : i + g]))
                                   for i in range(0, n, g)] or [np.empty(0)])
        assert np.array_equal(clock.round_ratio(r, g), expected, equal_nan=True), (trial, g, n)


def test_a_comparison_anchored_at_its_stored_sides_keeps_its_paired_delta() -> None:
    """stats.ab.anchored: the sides become the stored figures; an absolute Δ (rounds of one
    process) keeps its value and CI, Δ% becomes Δ ÷ the new A; a relative one (revisions) keeps
    its Δ% and CI in %, Δ in the unit at the new A; the verdict is the one reached."""
    from cyclebench.model import Comparison
    from cyclebench.stats.ab import anchored

    c = Comparison(299.6, 299.35, -0.516, -6.85, 5.81, -0.516 / 299.6, 0.5, 11, 5.99, "good")
    rel = anchored(c, 299.279, 298.7, relative=True)
    assert (rel.median_a, rel.median_b, rel.verdict, rel.pairs) == (299.279, 298.7, "good", 11)
    assert math.isclose(rel.rel, c.rel) and math.isclose(rel.diff / rel.median_a, c.rel)
    assert math.isclose(rel.ci_low / rel.median_a, c.ci_low / c.median_a)
    absolute = anchored(c, 299.279, 298.7)
    assert (absolute.diff, absolute.ci_low, absolute.ci_high) == (c.diff, c.ci_low, c.ci_high)
    assert math.isclose(absolute.rel, c.diff / 299.279)
    assert anchored(c, None, 1.0) is c and anchored(c, float("nan"), 1.0) is c  # no figure: as it was
