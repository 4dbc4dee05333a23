"""stats.invocations: figures over whole invocations (`run --gbench`): the median invocation and its
order-statistic CI, invocations off their CPU left out or the row disturbed, cycles~ only where every
invocation has its own clock."""

from __future__ import annotations

import numpy as np
import pytest

from cyclebench.model import TIMING, Result
from cyclebench.stats.estimators import median_ci
from cyclebench.stats.invocations import MIN_INVOCATIONS, invocation_fields

ROW = Result(kind=TIMING, bench="BM_x")


def test_the_median_invocation_its_ci_and_min_and_cycles_from_each_own_clock() -> None:
    ns = [100.0, 103.0, 99.0, 101.0, 140.0, 100.5, 102.0, 98.5, 100.2, 101.5]
    ghz = [3.0, 3.1, 2.9, 3.0, 3.0, 3.0, 3.05, 3.0, 2.95, 3.0]
    r = invocation_fields(ROW, ns, ghz)
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


def test_too_few_invocations_give_no_figure_and_say_so() -> None:
    r = invocation_fields(ROW, [100.0] * (MIN_INVOCATIONS - 1), [None] * (MIN_INVOCATIONS - 1))
    assert r.status == "error" and r.per_op is None and f"at least {MIN_INVOCATIONS}" in r.reason


def test_the_figure_is_a_one_thread_benchmarks_cpu_time_unless_it_asked_for_real_time_or_sleeps() -> None:
    """experiments.gbench.figures, and Side.run handing it to each pair: the time its thread ran
    (another program's time on the CPU left out); real time for ->Threads, /real_time,
    /manual_time, and a benchmark under half its real time on the CPU."""
    from cyclebench.experiments.gbench import Side, cost, figures
    from cyclebench.model import OK, Outcome
    from cyclebench.runner.gbench import GbenchRun

    def runs(shares: list[float], threads: int = 1) -> list[GbenchRun]:
        return [GbenchRun("BM_x", 100.0, 100.0 * s, 1000, threads) for s in shares]

    assert figures("BM_x", runs([1.0, 0.8, 0.95])) == ([100.0, 80.0, 95.0], "cpu time (its thread's time on the CPU)")
    assert figures("BM_x/threads:2", runs([1.0, 0.8], threads=2))[0] == [100.0, 100.0]
    assert figures("BM_x/real_time", runs([1.0, 0.8]))[0] == [100.0, 100.0]
    assert figures("exe/BM_x/manual_time", runs([1.0, 0.8]))[1].startswith("real time (the benchmark asked")
    assert figures("BM_x", runs([0.3, 0.2, 0.9]))[1].startswith("real time (it sleeps")

    class Binary:
        def __init__(self, shares: list[float]) -> None:
            self.shares = iter(shares)

        def run(self, name: str, min_time: float) -> Outcome:
            got = GbenchRun(name, 100.0, 100.0 * next(self.shares), 1000)
            return Outcome(name, None, OK, None, lines=[{"gbench": got}])  # type: ignore[list-item]

    side = Side(Binary([1.0, 1.0, 0.5, 1.0]))  # type: ignore[arg-type]
    assert [cost(side.run("BM_x", None, None, 1.0))[0] for _ in range(4)] == [100.0, 100.0, 50.0, 100.0]  # type: ignore[arg-type]
    sleeper = Side(Binary([0.3] * 4))  # type: ignore[arg-type]
    assert [cost(sleeper.run("BM_x", None, None, 1.0))[0] for _ in range(4)] == [100.0] * 4  # type: ignore[arg-type]
