"""Verdicts between stored runs (stats.runs): runs are the replicates (docs/method.md §7)."""

from __future__ import annotations

import numpy as np

from cyclebench.stats.runs import NO_SPREAD, cross_run, pooled_spread


def test_one_run_a_side_and_nothing_learned_claims_nothing() -> None:
    cmp, note = cross_run([420.0], [448.0])
    assert cmp.verdict == "~" and note == NO_SPREAD and np.isnan(cmp.p)


def test_replicates_find_a_real_change_and_not_noise() -> None:
    rng = np.random.default_rng(3)
    a = 300 * (1 + rng.normal(0, 0.01, 3))
    slower, _ = cross_run(a, 330 * (1 + rng.normal(0, 0.01, 3)), prior=(3.0, 20))
    assert slower.verdict == "slower" and slower.ci_low > 0
    same, _ = cross_run(a, 300 * (1 + rng.normal(0, 0.01, 3)), prior=(3.0, 20))
    assert same.verdict == "~"


def test_the_hosts_spread_decides_between_single_runs() -> None:
    """getpid 422 vs 448 (6%) between identical runs: a host whose runs spread by 2.4% (sd ≈ 10)
    must not call that a change; a host that spreads by 0.2% may."""
    noisy, _ = cross_run([422.0], [448.0], prior=(10.0, 14))
    quiet, _ = cross_run([422.0], [448.0], prior=(0.8, 14))
    assert noisy.verdict == "~" and quiet.verdict == "slower"


def test_pooled_spread() -> None:
    assert pooled_spread([[1.0], [2.0]]) is None
    sd, df = pooled_spread([[10.0, 12.0], [20.0, 22.0, 24.0]])  # type: ignore[misc]
    assert df == 3 and abs(sd - np.sqrt((2 + 8) / 3)) < 1e-12
