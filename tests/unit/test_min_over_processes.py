"""min is the lowest per-sample cost (net of the fixed cost) of every runner process's largest
batches (docs/method.md §2), not of the one process that sized its batches largest: each process
sizes its own ladder, and ``n == n.max()`` over all samples kept one process, whose min could lie
above the run's per op (Intel Xeon guest: loop/empty per op 0.707, min 1.52; getpid 312 vs 446)."""

from __future__ import annotations

import numpy as np
import pytest

from cyclebench.model import Outcome
from cyclebench.stats.estimators import estimate, largest_of_rounds
from cyclebench.stats.result import result_fields

LADDER = 8
FIXED = 50.0


def processes(specs: list[tuple[int, float]], rounds: int = 10, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Samples of several runner processes one after another, as runner.interleave.merge joins them:
    each (n_base, ticks per op) sizes its own ladder k·n_base, k = 1..8 shuffled every round."""
    rng = np.random.default_rng(seed)
    n, t = [], []
    for n_base, cost in specs:
        for _ in range(rounds):
            k = rng.permutation(np.arange(1, LADDER + 1))
            n.append(k * n_base)
            t.append(FIXED + cost * k * n_base + rng.normal(0, 2, LADDER))
    return np.concatenate(n).astype(float), np.concatenate(t)


# three processes at 1.0 ticks/op; a fourth sized its batches 4× larger and ran at 1.5
SPECS = [(100, 1.0), (100, 1.0), (100, 1.0), (400, 1.5)]


def test_min_is_over_every_processs_largest_batches() -> None:
    n, t = processes(SPECS)
    est = estimate(n, t, group=LADDER)
    assert est.per_op == pytest.approx(1.0, abs=0.01)  # the median of the 40 rounds' slopes: 30 at 1.0
    c = (t - est.intercept) / n
    every = largest_of_rounds(n, LADDER)
    assert est.min == pytest.approx(float(c[every].min()))
    assert est.min is not None and est.min <= est.per_op <= est.ci_high
    # what the one largest process alone says, as min did before: above the whole CI
    assert float(c[n == n.max()].min()) > est.ci_high + 0.4


def test_no_process_order_or_size_puts_min_above_the_estimate() -> None:
    for seed in range(5):
        for specs in (SPECS, SPECS[::-1], [(300, 1.2), (50, 1.0), (120, 1.0), (80, 1.0)]):
            n, t = processes(specs, seed=seed)
            est = estimate(n, t, group=LADDER)
            assert est.min is not None and est.min <= est.ci_high, (seed, specs, est.min, est.ci_high)


def test_the_row_a_run_stores_has_that_min_beside_its_two_level_estimate() -> None:
    n, t = processes(SPECS)
    res = {"type": "result", "bench": "loop/empty", "unit": "ref-cycles", "ladder": LADDER, "seed": 1,
           "n": [int(x) for x in n], "ticks": [round(float(x)) for x in t], "disturbed": [0] * len(n),
           "timer_overhead": {"min": 40, "median": 40}, "process_rounds": [10, 10, 10, 10], "processes": 4}
    row = result_fields(Outcome("loop/empty", None, "ok", result=res), 2.6e9)
    assert row.method == "rounds-2level"
    assert row.min is not None and row.per_op is not None and row.ci_high is not None
    assert row.min <= row.per_op <= row.ci_high


def test_largest_of_rounds() -> None:
    n = np.array([3, 1, 2, 20, 10, 30, 5, 4], dtype=float)  # rounds of 3, shuffled; a last partial one
    assert largest_of_rounds(n, 3).tolist() == [True, False, False, False, False, True, True, False]
    assert largest_of_rounds(n, None).tolist() == [False] * 5 + [True, False, False]  # one unordered set


def test_a_dropped_largest_batch_leaves_its_round_out_not_its_next_largest() -> None:
    """A round whose largest batch is dropped (disturbed, slow side) gives no smaller batch in its
    place: a small batch's few ticks of jitter around the fixed cost move (t − a)/n by ticks/n."""
    n, t = processes([(100, 1.0)], rounds=12)
    first = np.flatnonzero(n[:LADDER] == n[:LADDER].max())[0]
    second = np.flatnonzero(n[:LADDER] == 7 * 100)[0]
    t[second] -= 40  # the round's next largest reads low: 40 ticks / 700 ops
    keep = np.ones(len(n), dtype=bool)
    keep[first] = False
    est = estimate(n, t, group=LADDER, keep=keep)
    assert est.min is not None and est.min > 1.0 - 0.04
    every_dropped = ~largest_of_rounds(n, LADDER)  # every round's largest: the largest kept, as before
    alone = estimate(n, t, group=LADDER, keep=every_dropped)
    assert alone.min is not None and alone.min == pytest.approx(
        float(((t - alone.intercept) / n)[every_dropped & (n == n[every_dropped].max())].min()))


def test_a_min_above_the_ci_is_said_in_the_row() -> None:
    """Where the largest batches cost more per op than the slope (a cost that grows with the batch
    size), the min may lie above the CI: the row says so, never silently."""
    from cyclebench.model import Result
    from cyclebench.report.console import notes

    row = Result(bench="x/y", status="ok", per_op=1.0, ci_low=0.99, ci_high=1.01, min=1.2, n_samples=80)
    assert "min above the CI" in notes(row)
    assert "min above the CI" not in notes(Result(bench="x/y", status="ok", per_op=1.0, ci_low=0.99, ci_high=1.01,
                                                  min=0.98, cycles_per_op=1.4, cycles_ci_high=1.42,
                                                  cycles_min=1.3, n_samples=80))
