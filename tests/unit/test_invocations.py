"""stats.invocations: figures over whole invocations (`run --gbench`): the median invocation and its
order-statistic CI, invocations off their CPU left out or the row disturbed, cycles~ only where every
invocation has its own clock."""

from __future__ import annotations

import numpy as np
import pytest

from cyclebench.model import TIMING, Result
from cyclebench.stats.estimators import median_ci
from cyclebench.stats.invocations import MIN_INVOCATIONS, invocation_fields, off_cpu

ROW = Result(kind=TIMING, bench="BM_x")


def test_the_median_invocation_its_ci_and_min_and_cycles_from_each_own_clock() -> None:
    ns = [100.0, 103.0, 99.0, 101.0, 140.0, 100.5, 102.0, 98.5, 100.2, 101.5]
    ghz = [3.0, 3.1, 2.9, 3.0, 3.0, 3.0, 3.05, 3.0, 2.95, 3.0]
    r = invocation_fields(ROW, ns, ghz, cpu_ns=ns)
    assert r.status == "ok" and r.unit == "ns" and r.method == "invocations"
    assert r.per_op == pytest.approx(np.median(ns)) and (r.ci_low, r.ci_high) == median_ci(np.asarray(ns))
    assert r.min == 98.5 <= r.ci_low <= r.per_op <= r.ci_high and r.n_samples == r.rounds == 10
    cyc = np.asarray(ns) * np.asarray(ghz)
    assert r.cycles_per_op == pytest.approx(np.median(cyc)) and r.cycles_min == pytest.approx(cyc.min())
    # the calibration floor widens cycles~'s CI beyond the spread of the invocations alone
    lo, hi = median_ci(cyc)
    assert r.cycles_ci_low < lo and r.cycles_ci_high > hi and r.calibration_rse
    assert r.per_process == {"per_op": ns, "cycles_per_op": list(cyc)} and r.per_invocation == tuple(ns)


def test_no_cycles_when_one_invocation_has_no_clock() -> None:
    r = invocation_fields(ROW, [100.0] * 3 + [101.0] * 3, [3.0] * 5 + [None])
    assert r.per_op is not None and r.cycles_per_op is None and "cycles_per_op" not in (r.per_process or {})


def test_invocations_off_their_cpu_are_left_out_while_few_and_make_it_disturbed_when_most() -> None:
    ns = [100.0, 101.0, 150.0, 99.0, 100.5, 100.0]
    cpu = [100.0, 101.0, 100.0, 99.0, 100.5, 100.0]  # the third ran 67% of its real time
    assert list(off_cpu(ns, cpu)) == [False, False, True, False, False, False]
    r = invocation_fields(ROW, ns, [None] * 6, cpu)
    assert r.status == "ok" and r.n_disturbed == 1 and 150.0 not in r.per_invocation and r.n_samples == 6
    most = invocation_fields(ROW, ns, [None] * 6, [v * 0.5 for v in ns])
    assert most.status == "disturbed" and "6 of 6 invocations" in most.reason and most.n_disturbed == 0
    assert most.per_op == pytest.approx(np.median(ns))
    # several threads: the library's cpu time is theirs together, nothing is read from it
    assert not off_cpu(ns, [v * 0.5 for v in ns], threads=4).any()


def test_too_few_invocations_give_no_figure_and_say_so() -> None:
    r = invocation_fields(ROW, [100.0] * (MIN_INVOCATIONS - 1), [None] * (MIN_INVOCATIONS - 1))
    assert r.status == "error" and r.per_op is None and f"at least {MIN_INVOCATIONS}" in r.reason


def test_compare_gbench_judges_the_cpu_time_of_a_one_thread_benchmark_that_does_not_sleep() -> None:
    """experiments.gbench.Side: the time its thread ran (another program's time on the CPU left
    out); a benchmark that sleeps (under half its real time on the CPU), or asked for real time,
    is judged on its real time."""
    from cyclebench.experiments.gbench import Side, cost
    from cyclebench.model import OK, Outcome
    from cyclebench.runner.gbench import GbenchRun

    class Binary:
        def __init__(self, shares: list[float]) -> None:
            self.shares = iter(shares)

        def run(self, name: str, min_time: float) -> Outcome:
            share = next(self.shares)
            got = GbenchRun(name, 100.0, 100.0 * share, 1000)
            return Outcome(name, None, OK, None, lines=[{"gbench": got}])  # type: ignore[list-item]

    side = Side(Binary([1.0, 1.0, 0.5, 1.0]))  # type: ignore[arg-type]
    figures = [cost(side.run("BM_x", None, None, 1.0))[0] for _ in range(4)]  # type: ignore[arg-type]
    assert figures == [100.0, 100.0, 50.0, 100.0]  # the third: the time its thread ran
    sleeper = Side(Binary([0.3] * 4))  # type: ignore[arg-type]
    assert [cost(sleeper.run("BM_x", None, None, 1.0))[0] for _ in range(4)] == [100.0] * 4  # type: ignore[arg-type]
    asked = Side(Binary([1.0, 1.0, 0.5]))  # type: ignore[arg-type]
    assert [cost(asked.run("BM_x/real_time", None, None, 1.0))[0] for _ in range(3)] == [100.0] * 3  # type: ignore[arg-type]
