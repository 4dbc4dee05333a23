"""cycles~, disturbed samples, net-of-loop and --fifo, measured here.

Here the parts that need no compiler (parsers, statistics, fixture trees); the rest, which
builds and runs the engine, is in tests/engine or tests/commands under the same name."""

from __future__ import annotations

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
