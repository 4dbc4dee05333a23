"""cycles~, disturbed samples, net-of-loop and --fifo, measured here.

Here the parts that need no compiler (parsers, statistics, fixture trees); the rest, which
builds and runs the engine, is in tests/engine or tests/commands under the same name."""

from __future__ import annotations

import numpy as np
import pytest


def test_pmu_cycles_path_without_a_pmu() -> None:
    # No PMU here: feed the analysis a recorded-style result whose PMU counted 1.4 core cycles
    # per TSC tick (plus a fixed 3000-cycle read overhead), with a chain saying the same.
    import numpy as np

    from cyclebench.model import Outcome
    from cyclebench.stats.result import result_fields

    rng = np.random.default_rng(1)
    n = np.concatenate([rng.permutation(np.arange(1, 9) * 1000) for _ in range(20)])
    ticks = 50 + 100.0 * n + rng.normal(0, 20, len(n))
    res = {"type": "result", "unit": "ref-cycles", "ladder": 8, "seed": 1, "n": n.tolist(),
           "ticks": ticks.round().astype(int).tolist(), "timer_overhead": {"median": 40, "min": 38},
           "cal": [int(40 + 2048 / 1.4)] * len(n), "chain": {"kind": "add", "adds": 2048, "imuls": 512,
                                                          "imul_latency": 3, "add_ticks": [1503, 1503],
                                                          "imul_ticks": [1137, 1137]},
           "pmu_cycles": (3000 + 140.0 * n).astype(int).tolist(), "disturbed": [0] * len(n)}
    f = result_fields(Outcome("x/y", None, "ok", result=res), 2.6e9)
    assert f["per_op"] == pytest.approx(100, rel=0.01)
    assert f["pmu_cycles_per_op"] == pytest.approx(140, rel=1e-3)
    assert f["cycles_per_op"] == pytest.approx(140, rel=0.01)
    assert f["pmu_agreement"] == pytest.approx(1.0, abs=0.01)
    assert f["chain_agreement"] == pytest.approx(1.0, abs=0.01)
    f_none = result_fields(Outcome("x/y", None, "ok", result={**res, "pmu_cycles": None}), 2.6e9)
    assert f_none.get("pmu_cycles_per_op") is None


def _chain_readings(fixed: float, ticks_per_add: float, rng: np.random.Generator, reads: int = 32) -> dict:
    """The runner's chain readings: chains of 256 and 2048 adds, fixed part + adds × ticks per add."""
    def jitter() -> np.ndarray:
        return rng.normal(0, 2, reads)

    return {"kind": "add", "adds": 2048, "short_adds": 256, "imuls": 512, "imul_latency": 3,
            "short_ticks": (fixed + 256 * ticks_per_add + jitter()).tolist(),
            "long_ticks": (fixed + 2048 * ticks_per_add + jitter()
                           + np.where(np.arange(reads) == 3, 5000, 0)).tolist(),  # one interrupted
            "add_ticks": [fixed + 2048 * ticks_per_add] * 2, "imul_ticks": [fixed + 1536 * ticks_per_add] * 2}


def test_chain_fixed_part_is_measured_not_assumed() -> None:
    # A timed chain = fixed part + adds × ticks per add. The empty timer pair (40 ticks) is not
    # the fixed part (60 here: the call and the fences): the ratio must come out exact anyway.
    from cyclebench.stats import clock

    rng = np.random.default_rng(3)
    chain = _chain_readings(60.0, 1 / 1.3, rng)
    fixed, se = clock.chain_fixed(chain)
    assert fixed == pytest.approx(60, abs=1.5) and 0 < se < 1.5
    res = {"unit": "ref-cycles", "timer_overhead": {"median": 40}, "chain": chain,
           "cal": [60 + 2048 / 1.3] * 16}
    assert np.allclose(clock.core_ratio(res), 1.3, rtol=1e-3)
    old = {**res, "chain": {k: v for k, v in chain.items() if k != "short_ticks"}}
    assert np.allclose(clock.core_ratio(old), 2048 / (2048 / 1.3 + 20))  # the pair's cost: biased
    assert clock.chain_agreement(res) == pytest.approx(1.0, abs=2e-3)
    assert clock.calibration_rse(res) == pytest.approx(se / (2048 / 1.3), rel=0.5)


def test_merged_processes_keep_their_own_fixed_part() -> None:
    from cyclebench.runner.interleave import merge
    from cyclebench.stats import clock

    rng = np.random.default_rng(4)
    parts = []
    for fixed in (50.0, 70.0):
        chain = _chain_readings(fixed, 1 / 1.3, rng)
        parts.append({"unit": "ref-cycles", "ladder": 8, "rounds": 2, "n": [1] * 16, "ticks": [1] * 16,
                      "disturbed": [0] * 16, "timer_overhead": {"median": 40, "min": 38}, "chain": chain,
                      "cal": [fixed + 2048 / 1.3] * 16})
    merged = merge(parts)
    assert len(merged["chains"]) == 2
    assert np.allclose(clock.core_ratio(merged), 1.3, rtol=2e-3)


def test_cycles_ci_carries_the_calibration_uncertainty() -> None:
    from cyclebench.model import Result
    from cyclebench.stats.result import CALIBRATION_FLOOR, with_calibration

    row = Result(cycles_per_op=300.0, cycles_ci_low=299.9, cycles_ci_high=300.1)
    f = with_calibration(row, 0.0)
    half = 1.959964 * 300 * CALIBRATION_FLOOR
    assert f["cycles_ci_high"] - 300 == pytest.approx(np.hypot(0.1, half), rel=1e-4)
    assert 300 - f["cycles_ci_low"] == pytest.approx(np.hypot(0.1, half), rel=1e-4)
    g = with_calibration(Result(cycles_per_op=300.0, cycles_ci_low=299.9, cycles_ci_high=300.1), 0.002)
    assert g["cycles_ci_high"] > f["cycles_ci_high"] and g.calibration_rse is not None
    assert g.calibration_rse > CALIBRATION_FLOOR
    # a new record: the one given is left as it was
    assert (row.cycles_ci_low, row.cycles_ci_high, row.calibration_rse) == (299.9, 300.1, None)
    with pytest.raises(TypeError):
        with_calibration(Result(), 0.0)


def test_net_of_the_loop_is_a_new_record() -> None:
    # run's net figures (README "--net"): the loop/empty row's cost taken off, CIs widened in
    # quadrature per side (stats.estimators.combine_difference); the row given is not changed.
    from cyclebench.model import Result
    from cyclebench.stats.result import add_net

    loop = Result(bench="loop/empty", unit="ref-cycles", per_op=1.0, ci_low=0.9, ci_high=1.2,
                  cycles_per_op=2.0, cycles_ci_low=1.8, cycles_ci_high=2.1)
    row = Result(bench="x/y", unit="ref-cycles", per_op=11.0, ci_low=10.7, ci_high=11.4,
                 cycles_per_op=22.0, cycles_ci_low=21.6, cycles_ci_high=22.3)
    net = add_net(row, loop)
    assert net.net_per_op == pytest.approx(10.0)
    assert net.net_ci_low == pytest.approx(10.0 - np.hypot(0.3, 0.2))
    assert net.net_ci_high == pytest.approx(10.0 + np.hypot(0.4, 0.1))
    assert net.cycles_net == pytest.approx(20.0)
    assert net.cycles_net_ci_low == pytest.approx(20.0 - np.hypot(0.4, 0.1))
    assert net.cycles_net_ci_high == pytest.approx(20.0 + np.hypot(0.3, 0.2))
    assert row.net_per_op is None and row.cycles_net is None  # the record given is unchanged
    assert add_net(row, None) is row and add_net(Result(bench="x/y"), loop).net_per_op is None
    ns = add_net(Result(unit="ns", per_op=5.0, ci_low=4.0, ci_high=6.0, cycles_per_op=22.0, cycles_ci_low=21.6,
                        cycles_ci_high=22.3), loop)
    assert ns.net_per_op is None and ns.cycles_net == pytest.approx(20.0)  # units differ: cycles~ only


def test_the_imul_add_agreement_is_of_every_reading_not_the_fastest() -> None:
    """On a TSC that advances in steps (26 ticks on the AMD EPYC guest, 2.4% of the imul chain)
    each reading sits on a step, and the fastest of five took the lower one whenever one reading
    did: the lab's stored results (the fastest of each five) read 1.027 with imul at 1,118 ticks
    and 1.003 with 1,144, one step apart. The ratio is of every reading's mean, less the fixed
    part: readings split between the two steps give the ratio between them, not the lower step's."""
    from cyclebench.stats import clock

    add, imul = [1508] * 10, [1118, 1144, 1144, 1144, 1118, 1144, 1144, 1118, 1144, 1144]
    res = {"chain": {"kind": "add", "adds": 2048, "imuls": 512, "imul_latency": 3, "add_ticks": add,
                     "imul_ticks": imul}, "timer_overhead": {"median": 63}}
    means = (1536 / (np.mean(imul) - 63)) / (2048 / (np.mean(add) - 63))
    assert clock.chain_agreement(res) == pytest.approx(means, rel=1e-12)
    stepped = {"chain": {**res["chain"], "add_ticks": [1508, 1508], "imul_ticks": [1118, 1118]},
               "timer_overhead": {"median": 63}}
    assert clock.chain_agreement(stepped) == pytest.approx(1.0273, abs=1e-3)  # the lower step alone
    assert 1.003 < means < 1.027
