"""cycles~, disturbed samples, net-of-loop and --fifo, measured here."""

from __future__ import annotations

import os

import pytest

from cyclebench.store import Store

from conftest import DATA, cli


def rows_by_bench(store: Store) -> dict[str, dict]:
    return {r["bench"]: r for r in store.results(store.last_run_id())}


def test_cycles_estimate_counts_a_chain_of_adds(db: str) -> None:
    # A dependent chain of n reg-reg adds costs n core cycles on every x86-64 and arm64 core:
    # cycles~ must say so whatever the core clock was (here it drifts between 2 and 4 GHz).
    r = cli("run", str(DATA / "chain.c"), "--min-time", "0.05", "--repeat", "20", "-q")
    assert r.exit_code == 0, r.output
    rows = rows_by_bench(Store(db))
    for bench, n in (("chain/add200", 200), ("chain/add400", 400)):
        row = rows[bench]
        assert row["cycles_per_op"] == pytest.approx(n, rel=0.10), row
        assert row["chain_agreement"] == pytest.approx(1.0, abs=0.1)
        assert row["core_ghz"] > 0.5
    loop = rows["loop/empty"]
    assert loop["per_op"] > 0
    # net = per_op − loop, with a CI at least as wide as either part's
    add = rows["chain/add400"]
    assert add["net_per_op"] == pytest.approx(add["per_op"] - loop["per_op"])
    assert add["net_ci_high"] - add["net_ci_low"] >= add["ci_high"] - add["ci_low"]


def test_sleeping_benchmark_is_seen_as_disturbed(db: str) -> None:
    # nanosleep is a voluntary context switch in every batch: every sample is disturbed,
    # and rather than dropping all of them the result keeps them and says so.
    r = cli("run", str(DATA / "slow.c"), "-b", "slow/sleep_us", "-p", "1", "--min-time", "0.02", "--repeat", "5",
            "--warmup", "0", "-q")
    assert r.exit_code == 0, r.output
    row = rows_by_bench(Store(db))["slow/sleep_us"]
    assert row["extra"]["disturb_source"] in ("perf", "getrusage")
    assert row["extra"].get("disturbed_ignored") is True
    assert row["n_samples"] == 40 and row["n_disturbed"] == 0


def test_net_table(db: str) -> None:
    r = cli("run", str(DATA / "chain.c"), "-b", "chain/add200", "--net", "--min-time", "0.01", "--repeat", "8")
    assert r.exit_code == 0
    assert "net per op" in r.output and "cycles~ net" in r.output


@pytest.mark.skipif(os.geteuid() != 0, reason="SCHED_FIFO needs root here")
def test_fifo_runs_as_root(db: str) -> None:
    r = cli("run", str(DATA / "chain.c"), "-b", "chain/add200", "--fifo", "1", "--min-time", "0.01", "--repeat", "8",
            "-q")
    assert r.exit_code == 0, r.output
    assert rows_by_bench(Store(db))["chain/add200"]["status"] == "ok"


def test_pmu_cycles_path_without_a_pmu() -> None:
    # No PMU here: feed the analysis a recorded-style result whose PMU counted 1.4 core cycles
    # per TSC tick (plus a fixed 3000-cycle read overhead), with a chain saying the same.
    import numpy as np

    from cyclebench.commands.run import result_fields
    from cyclebench.model import Outcome

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
