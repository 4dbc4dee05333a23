"""run's per-op estimate over several processes (docs/method.md §6): a bias that holds for a whole
process must widen the CI, not pass for precision."""

from __future__ import annotations

import numpy as np

from cyclebench.model import Result
from cyclebench.stats import estimate
from cyclebench.stats.result import two_level


def _samples(biases: list[float], rounds: int = 10, ladder: int = 8, slope: float = 300.0,
             seed: int = 1) -> tuple[np.ndarray, np.ndarray, list[int]]:
    rng = np.random.default_rng(seed)
    n, t = [], []
    for b in biases:
        for _ in range(rounds):
            ks = rng.permutation(np.arange(1, ladder + 1)) * 100
            n += list(ks)
            t += list(ks * (slope + b) + 40 + rng.normal(0, 20, size=ladder))
    return np.asarray(n, float), np.asarray(t, float), [rounds] * len(biases)


def test_a_process_bias_widens_the_ci() -> None:
    # 20 rounds a process: at 10, the one-level CI's ranks (10th and 21st of 30) already fall in the
    # outer processes, so it is as wide as the two-level one; at 20 it is ±0.05 and the bias hides
    n, t, procs = _samples([-3.0, 0.0, 3.0], rounds=20)
    keep = np.ones(len(n), dtype=bool)
    one = estimate(n, t, seed=1, group=8, keep=keep)
    given = Result(unit="ref-cycles")
    fields = two_level(given, n, t, keep, 8, procs, seed=1, ratio=None)
    half_one = (one.ci_high - one.ci_low) / 2
    half_two = (fields["ci_high"] - fields["ci_low"]) / 2
    assert half_two > 1.5 * half_one and half_two > 2.0  # the ±3 between processes shows
    assert fields["ci_low"] <= 300.0 <= fields["ci_high"]
    assert fields.per_process is not None and len(fields.per_process["per_op"]) == 3
    assert fields["method"] == "rounds-2level"
    assert given.per_op is None and given.per_process is None and given.method is None  # a new record


def test_without_a_process_bias_the_ci_stays_narrow() -> None:
    n, t, procs = _samples([0.0, 0.0, 0.0], seed=2)
    fields = two_level(Result(unit="ref-cycles"), n, t, np.ones(len(n), dtype=bool), 8, procs, seed=1, ratio=None)
    assert (fields["ci_high"] - fields["ci_low"]) / 2 < 1.0
    assert abs(fields["per_op"] - 300.0) < 1.0
