"""Rounds over several runner processes (interleave.py) and the CI bootstrapped over them.

Here the parts that need no compiler (parsers, statistics, fixture trees); the rest, which
builds and runs the engine, is in tests/engine or tests/commands under the same name."""

from __future__ import annotations

import numpy as np
import pytest

from cyclebench.runner import interleave
from cyclebench.stats.ab import cluster_ci, paired


def _res(rounds: int, base: int, to: int) -> dict:
    k = 2 * rounds
    return {"bench": "x", "rounds": rounds, "ladder": 2, "n": list(range(base, base + k)), "ticks": [5] * k,
            "cal": [7] * k, "disturbed": [0] * k, "pmu_cycles": None, "timer_overhead": {"min": to, "median": to},
            "total_iters": 10, "counters": {"nevents": [1], "reads": [[1, 2, 3]] * k}}


def test_split() -> None:
    assert interleave.split(60, 4) == [15, 15, 15, 15]
    assert interleave.split(61, 4) == [16, 16, 16, 16]  # never fewer rounds than asked
    assert interleave.split(12, 4) == [6, 6]  # at least MIN_ROUNDS a process
    assert interleave.split(8, 4) == [8]
    assert interleave.split(40, 1) == [40]


def test_merge_concatenates_samples_in_process_order() -> None:
    m = interleave.merge([_res(3, 0, 40), _res(2, 100, 60), _res(3, 200, 50)])
    assert m["n"] == [0, 1, 2, 3, 4, 5, 100, 101, 102, 103, 200, 201, 202, 203, 204, 205]
    assert len(m["ticks"]) == len(m["cal"]) == len(m["disturbed"]) == len(m["counters"]["reads"]) == 16
    assert m["rounds"] == 8 and m["total_iters"] == 30 and m["pmu_cycles"] is None
    assert m["timer_overhead"] == {"min": 50, "median": 50}
    assert m["processes"] == 3 and m["process_rounds"] == [3, 2, 3]
    one = interleave.merge([_res(3, 0, 40)])
    assert one["processes"] == 1 and one["n"] == list(range(6))


def test_cluster_ci_widens_for_a_per_process_bias() -> None:
    """Rounds that agree within each process but not across processes: the bootstrap over
    rounds claims a difference the processes do not support; the one over processes does not."""
    rng = np.random.default_rng(3)
    bias = [2.5, 1.5, -1.0, 2.0]
    d = np.concatenate([b + rng.normal(0, 0.5, 15) for b in bias])
    g = np.repeat(np.arange(4), 15)
    flat = paired(np.full(60, 300.0), 300 + d)
    clustered = paired(np.full(60, 300.0), 300 + d, groups=g)
    assert flat.ci_low > 0.25 and flat.verdict == "slower"
    assert clustered.ci_low < 0 < clustered.ci_high and clustered.verdict == "~"
    # with no process effect the two CIs agree roughly and both find a real step
    d2 = 1 + rng.normal(0, 0.3, 200)
    lo, hi = cluster_ci(d2, np.repeat(np.arange(4), 50))
    f = paired(np.zeros(200), d2)
    assert lo > 0.8 and hi < 1.2 and abs((hi - lo) - (f.ci_high - f.ci_low)) < 0.1
    with pytest.raises(ValueError):
        paired(np.zeros(10), np.ones(10), groups=np.zeros(9))


def test_process_note_only_when_processes_disagree() -> None:
    from cyclebench.experiments.compare import process_note
    g = np.repeat(np.arange(4), 10)
    a = np.concatenate([np.full(10, v) for v in (157.0, 160.0, 250.0, 300.0)])
    note = process_note(a, a + 6, g)
    assert "157.0–300.0" in note and "+6 to +6" in note and "4 processes" in note
    assert process_note(np.full(40, 300.0), np.full(40, 301.0), g) == ""
    assert process_note(a, a + 6, None) == ""
