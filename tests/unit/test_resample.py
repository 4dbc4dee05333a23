"""draw_medians gives numpy's medians of the drawn values to the bit (a stored run's CIs
re-analyse the same), with and without values that do not count, ties and one-value rows."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cyclebench.stats.resample import draw_medians


@pytest.mark.parametrize("seed", range(40))
def test_the_medians_of_the_draws_are_numpys_to_the_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    x = rng.normal(size=n) * 10.0 ** int(rng.integers(-3, 6))
    if seed % 3 == 0:
        x = np.round(x, 1)  # ties
    idx = rng.integers(0, n, size=(60, int(rng.integers(1, 60))))
    assert np.array_equal(draw_medians(x, idx), np.median(x[idx], axis=1))
    valid = rng.random(idx.shape) < 0.6
    valid[0] = False  # a row with nothing that counts: NaN, as nanmedian
    drawn = x[idx]
    drawn[~valid] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanmedian's all-NaN row
        expected = np.nanmedian(drawn, axis=1)
    assert np.array_equal(draw_medians(x, idx, valid), expected, equal_nan=True)


def test_values_that_are_not_finite_give_numpys_answer() -> None:
    x = np.array([1.0, np.nan, 3.0, np.inf])
    idx = np.array([[0, 2, 2], [1, 0, 2], [3, 3, 0]])
    assert np.array_equal(draw_medians(x, idx), np.median(x[idx], axis=1), equal_nan=True)


def test_more_values_than_a_16_bit_rank_holds() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=40_000)
    idx = rng.integers(0, len(x), size=(3, 5_001))
    assert np.array_equal(draw_medians(x, idx), np.median(x[idx], axis=1))


@pytest.mark.parametrize("seed", range(20))
def test_row_medians_without_nan_are_numpys_nanmedian_to_the_bit(seed: int) -> None:
    from cyclebench.stats.resample import row_nanmedians

    rng = np.random.default_rng(seed)
    a = rng.normal(size=(int(rng.integers(1, 40)), int(rng.integers(1, 70)))) * 10.0 ** int(rng.integers(-3, 5))
    a[rng.random(a.shape) < 0.4] = np.nan
    a[0] = np.nan  # nothing in a row: NaN
    if seed % 2:
        a = np.round(a, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.array_equal(row_nanmedians(a), np.nanmedian(a, axis=1), equal_nan=True)
    assert np.isnan(row_nanmedians(np.empty((2, 0)))).all()


@pytest.mark.parametrize("sizes", [(10,) * 24, (10, 10, 7, 10), (1,), (3, 3)])
def test_the_two_level_bootstrap_draws_processes_then_their_rounds(sizes: tuple[int, ...]) -> None:
    """cluster_boot's medians are numpy's of the resamples its random stream describes: per
    resample, len(sizes) processes drawn with replacement, then as many rounds as each drawn
    process has, drawn with replacement from its own (the fast path for processes of one size
    draws the same)."""
    from cyclebench.stats.ab import cluster_boot

    rng = np.random.default_rng(len(sizes))
    d = np.round(rng.normal(size=sum(sizes)), 2)  # ties, as rounds of a stepped clock give
    groups = np.repeat(np.arange(len(sizes)), sizes)
    got = cluster_boot(d, groups, n_resamples=300, seed=7)
    draw = np.random.default_rng(7)
    pick = draw.integers(0, len(sizes), size=(300, len(sizes)))
    u = draw.random((300, len(sizes), max(sizes)))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    want = [np.median([d[starts[g] + min(int(u[r, j, i] * sizes[g]), sizes[g] - 1)]
                       for j, g in enumerate(pick[r]) for i in range(sizes[g])]) for r in range(300)]
    assert np.array_equal(got, np.array(want))
