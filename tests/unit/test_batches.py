"""Which batches an estimate uses (stats.batches), the clock split of the add and imul chains
timed after every batch (stats.clock.clock_split) and what each does to a result's figures."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cyclebench.model import Outcome
from cyclebench.stats import batches, clock
from cyclebench.stats.result import disturbance, disturbed_note, result_fields, with_calibration

RATE = 2.6e9


def _result(flags: list[int], per_op: float = 300.0, lump: float = 0.0, rounds: int = 40) -> dict[str, Any]:
    """A runner result of ``rounds`` rounds of 8 batches (sizes 1000..8000) at ``per_op`` ticks an
    op, each flagged batch with bit 4 lengthened by ``lump`` ticks (an interrupt's handler)."""
    rng = np.random.default_rng(3)
    n = np.tile(np.arange(1, 9) * 1000, rounds)
    f = (flags * (len(n) // len(flags) + 1))[: len(n)]
    t = 500 + per_op * n * (1 + rng.normal(0, 2e-4, len(n))) + lump * (np.asarray(f) & batches.INTERRUPTED > 0)
    return {"n": n.tolist(), "ticks": t.round().astype(int).tolist(), "disturbed": f, "ladder": 8, "unit": "ref-cycles",
            "seed": 1, "timer_overhead": {"min": 40, "median": 50}}


def test_an_interrupted_batch_is_left_out_while_at_most_half_are() -> None:
    """A lump of 20,000 ticks in three batches of every ten (an interrupt's handler): left out, the
    slope is the body's; counted among the trimmed, not the disturbed."""
    res = _result([0, 0, 4, 0, 0, 4, 0, 0, 4, 0], lump=20_000)
    keep = np.ones(len(res["n"]), dtype=bool)
    assert batches.interrupted(res, keep).sum() == sum(1 for f in res["disturbed"] if f & 4)
    row = result_fields(Outcome("x", None, "ok", result=res), RATE)  # type: ignore[arg-type]
    assert row.per_op == pytest.approx(300, rel=2e-4)
    assert row.n_disturbed == 0 and (row.n_trimmed or 0) >= 96
    assert disturbance(res)["disturbed"] == 0 and disturbed_note(res) is None


def test_when_most_batches_are_interrupted_all_are_kept() -> None:
    """Interrupts in most batches are the benchmark's own, or so frequent that few batches would be
    left: all are kept, and their time is part of the figure; the result is not disturbed."""
    res = _result([4, 4, 0, 4, 4, 0, 4, 4, 4, 4], lump=20_000)
    keep = np.ones(len(res["n"]), dtype=bool)
    assert not batches.interrupted(res, keep).any()
    row = result_fields(Outcome("x", None, "ok", result=res), RATE)  # type: ignore[arg-type]
    assert row.status == "ok" and row.per_op is not None
    assert disturbance(res)["disturbed"] == 0


def test_preempted_and_interrupted_flags_are_told_apart() -> None:
    """Bit 1 (preempted) and 2 (migrated) are disturbances, bit 4 is not; a batch both preempted
    and interrupted (5) is disturbed."""
    res = {"n": [1, 2, 3, 4, 5], "disturbed": [0, 1, 4, 5, 2]}
    assert batches.disturbed(res).tolist() == [False, True, False, True, True]
    assert disturbance(res) == {"batches": 5, "disturbed": 3, "preempted": 2, "migrated": 1}
    # flags missing (a stored result from before them): nothing is disturbed or interrupted
    assert not batches.disturbed({"n": [1, 2]}).any()
    assert not batches.interrupted({"n": [1, 2]}, np.ones(2, dtype=bool)).any()


def _chain_result(split: float, fixed_add: float = 62.0, fixed_imul: float = 58.0, n: int = 320) -> dict[str, Any]:
    """A result whose chains ran at 0.7 ticks a cycle, the add chain ``split`` slower than the imul
    chain (a 1-cycle op slowed by a neighbour), each with its own fixed part (128 readings of each
    length, as the engine takes); readings spread over a 26-tick TSC step (AMD EPYC guests') at
    evenly spaced phases, so the means are exact and the test is of the arithmetic."""
    rng = np.random.default_rng(5)
    tick_add, tick_imul = 0.7 * (1 + split), 0.7

    def reads(fixed: float, cycles: float, tick: float, k: int) -> list[float]:  # at evenly spread phases
        return (fixed + cycles * tick + rng.permutation(np.linspace(-13, 13, k))).tolist()

    chain = {"kind": "add", "adds": 2048, "short_adds": 256, "imuls": 512, "imul_latency": 3, "imul_block": 128,
             "short_ticks": reads(fixed_add, 256, tick_add, 128), "long_ticks": reads(fixed_add, 2048, tick_add, 128),
             "imul_short_ticks": reads(fixed_imul, 384, tick_imul, 128),
             "imul_long_ticks": reads(fixed_imul, 1536, tick_imul, 128),
             "add_ticks": reads(fixed_add, 2048, tick_add, 10), "imul_ticks": reads(fixed_imul, 1536, tick_imul, 10)}
    return {"chain": chain, "cal": reads(fixed_add, 2048, tick_add, n),
            "cal_imul": reads(fixed_imul, 1536, tick_imul, n), "n": list(range(n)), "disturbed": [0] * n, "ladder": 8}


@pytest.mark.parametrize("split", [0.0, 0.006, 0.024])
def test_clock_split_reads_the_add_chain_slowed_against_the_imul_chain(split: float) -> None:
    """The add chain 0.6% slow (an AMD EPYC guest's sitting read +0.59%), each chain with its own
    fixed part (4 ticks apart: read with the add chain's, the split would be 0.3% off)."""
    res = _chain_result(split)
    assert clock.clock_split(res) == pytest.approx(split, abs=1e-5)
    assert clock.chain_agreement(res) == pytest.approx(1 + clock.clock_split(res))
    del res["cal_imul"]  # a result from before: no split, the agreement from the chains at the ends
    assert clock.clock_split(res) is None and clock.chain_agreement(res) is not None


def test_a_split_widens_the_cycles_interval_to_cover_it() -> None:
    """Code of 3-cycle ops reads the split low with the add chain's clock: the 95% CI reaches
    past it (uniform over the span, 1.13 × split), and no split leaves the CI as before."""
    from cyclebench.model import Result

    row = Result(cycles_per_op=300.0, cycles_ci_low=299.5, cycles_ci_high=300.5)
    plain = with_calibration(row, 0.0005)
    wide = with_calibration(row, 0.0005, 0.006)
    assert plain.cycles_ci_low == with_calibration(row, 0.0005, 0.0).cycles_ci_low
    assert wide.cycles_ci_low is not None and wide.cycles_ci_high is not None
    assert 300 - wide.cycles_ci_low >= 1.13 * 0.006 * 300 and wide.cycles_ci_high - 300 >= 1.13 * 0.006 * 300
    assert (wide.calibration_rse or 0) > (plain.calibration_rse or 0)


def test_the_selftest_watch_counts_a_split_as_a_busy_host() -> None:
    """Beyond SPLIT_MAX the attempt's host is busy (what /proc cannot show); beyond SPLIT_BROKEN it is
    no host's, and the watch says nothing of it (the imul-vs-add check FAILs it)."""
    from cyclebench.experiments.selftest import SPLIT_BROKEN, SPLIT_MAX, HostWatch

    def seen(split: float) -> tuple[str, ...]:
        w = HostWatch(cpu=0)
        w.note([Outcome("selftest/add300", None, "ok", result=_chain_result(split))])  # type: ignore[arg-type]
        return w.stop().busy

    assert not any("imul chain" in b for b in seen(0.0))
    assert any("0.6" in b and "imul chain" in b for b in seen(0.006))
    assert SPLIT_MAX < 0.006 < SPLIT_BROKEN
    assert not any("imul chain" in b for b in seen(0.3))
