"""cycles~, disturbed samples, net-of-loop and --fifo, measured here."""

from __future__ import annotations

import os

import pytest

from cyclebench.store import Store

from conftest import DATA, cli


def rows_by_bench(store: Store) -> dict[str, dict]:
    return {r["bench"]: r for r in store.results(store.last_run_id())}


@pytest.mark.timing
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


@pytest.mark.timing
def test_sleeping_benchmark_is_not_disturbed(db: str) -> None:
    # nanosleep is a voluntary context switch in every batch: sleeping by design is not a
    # disturbance (only being kept off the CPU is), so the samples are kept and the result is ok.
    r = cli("run", str(DATA / "slow.c"), "-b", "slow/sleep_us", "-p", "1", "--min-time", "0.02", "--repeat", "5",
            "--warmup", "0", "-q")
    assert r.exit_code == 0, r.output
    row = rows_by_bench(Store(db))["slow/sleep_us"]
    assert (row.line or {})["disturb_source"].startswith("nivcsw")
    assert row["status"] == "ok", row["reason"]
    assert row["n_samples"] + row["n_disturbed"] + row["n_trimmed"] == 40


def test_net_table(db: str) -> None:
    r = cli("run", str(DATA / "chain.c"), "-b", "chain/add200", "--net", "--min-time", "0.01", "--repeat", "8")
    assert r.exit_code == 0
    assert "net per op" in r.output and "cycles~ net" in r.output


@pytest.mark.timing  # SCHED_FIFO takes the CPU whole: another test's runner there would stop
@pytest.mark.skipif(os.geteuid() != 0, reason="SCHED_FIFO needs root here")
def test_fifo_runs_as_root(db: str) -> None:
    r = cli("run", str(DATA / "chain.c"), "-b", "chain/add200", "--fifo", "1", "--min-time", "0.01", "--repeat", "8",
            "-q")
    assert r.exit_code == 0, r.output
    assert rows_by_bench(Store(db))["chain/add200"]["status"] == "ok"
