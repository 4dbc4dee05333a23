"""The interrupts taken on the pinned CPU during each batch (engine/disturb.h: flag 4), and the
imul chain timed after every batch beside the add chain (stats.clock.clock_split)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from cyclebench.build import BuildSpec, build
from cyclebench.model import Outcome
from cyclebench.runner import Runner
from cyclebench.runner.plan import MeasureOptions
from cyclebench.stats import batches, clock
from cyclebench.stats.result import result_fields

from conftest import DATA

TRACEFS = next((p for p in (Path("/sys/kernel/tracing"), Path("/sys/kernel/debug/tracing"))
                if (p / "events" / "irq").is_dir()), None)
CPU = max(os.sched_getaffinity(0))


@pytest.fixture(scope="module")
def binary() -> Path:
    return build(BuildSpec(sources=(DATA / "faults.c",))).path


@pytest.mark.skipif(os.geteuid() != 0 or TRACEFS is None,
                    reason="counting a whole CPU's interrupts needs root and tracefs (bash dev.sh mounts it as root)")
def test_the_tick_on_the_pinned_cpu_is_counted_and_its_batches_left_out(binary: Path) -> None:
    """The timer tick (100–1000 Hz on a busy CPU) lands in some batches of 0.2 s of them: each such
    batch is flagged, the flagged are no more than the interrupts, and the estimate leaves them out
    (counted among the trimmed) while they are at most half."""
    out = Runner(binary, cpu=CPU).run("faults/ok", None, MeasureOptions(min_time=0.2, warmup=0), timeout=60)
    res = out.result
    assert res is not None, out.reason
    assert res["irq_source"].startswith(f"tracepoints on CPU {CPU} (")
    flagged = int(((batches.flags(res) & batches.INTERRUPTED) != 0).sum())
    assert res["irqs"] is not None and res["irqs"] >= flagged >= 1
    row = result_fields(out, 1e9)
    # Beside a loaded CPU (a parallel test run) some batches are preempted too: those are the
    # disturbed ones, and an interrupt alone never makes a batch one of them.
    shared = batches.disturbed(res)
    only = int((((batches.flags(res) & batches.INTERRUPTED) != 0) & ~shared).sum())
    if row.n_trimmed is None:
        pytest.skip(f"most batches were preempted ({int(shared.sum())} of {len(res['n'])}): machine busy")
    assert row.n_disturbed == int(shared.sum())
    if only <= (len(res["n"]) - shared.sum()) / 2 and len(res["n"]) - shared.sum() - only >= batches.MIN_CLEAN:
        assert row.n_trimmed >= only


def test_unpinned_no_interrupts_are_counted_and_it_says_why(binary: Path) -> None:
    """A runner free to move has no one CPU to count: none counted, no batch flagged, the reason given."""
    res = Runner(binary, cpu=None).run("faults/ok", None, MeasureOptions(min_time=0.01, warmup=0), timeout=30).result
    assert res is not None
    if len(os.sched_getaffinity(0)) > 1:
        assert res["irqs"] is None and res["irq_source"] == "none: not pinned to one CPU"
        assert not ((batches.flags(res) & batches.INTERRUPTED) != 0).any()


def test_an_imul_chain_is_timed_after_every_batch_with_its_own_fixed_part(binary: Path) -> None:
    """One imul reading a batch and 128 of each length for its fixed part; both chains measure the
    same core clock, so the split lies well inside the ±10% beyond which the clock is broken (on
    guests of three CPU kinds processes read −0.2…+2.4%)."""
    out = Runner(binary, cpu=CPU).run("faults/ok", None, MeasureOptions(min_time=0.02, warmup=0), timeout=30)
    res = out.result
    assert res is not None, out.reason
    assert len(res["cal_imul"] or []) == len(res["n"]) == len(res["cal"])
    chain = res["chain"]
    assert len(chain["imul_short_ticks"]) == len(chain["imul_long_ticks"]) == 128 == len(chain["short_ticks"])
    imul = clock.imul_fixed(chain)
    assert imul is not None and imul[0] > 0
    split = clock.clock_split(res)
    assert split is not None and abs(split) < 0.10
    assert np.median(res["cal_imul"]) > 0
    row = result_fields(Outcome(out.bench, None, "ok", result=res), 1e9)
    assert row.chain_agreement == pytest.approx(1 + split)


@pytest.mark.skipif(os.geteuid() != 0 or TRACEFS is None,
                    reason="counting a whole CPU's interrupts needs root and tracefs (bash dev.sh mounts it as root)")
def test_a_pinned_runner_keeps_the_tracepoints_registered_for_the_process() -> None:
    """Held once a process (runner/tracepoints.py): every interrupt tracepoint the engine opens,
    so a runner's exit does not unregister them (0.28 s a process where none was held)."""
    from cyclebench.runner import tracepoints

    present = sum((TRACEFS / "events" / e / "id").exists() for e in tracepoints.EVENTS)
    assert tracepoints.hold() == present > 0
    assert tracepoints.hold() == present  # once: no more descriptors


def test_the_runner_holds_the_very_tracepoints_the_engine_opens() -> None:
    """runner/tracepoints.py keeps registered what engine/disturb.c opens: one list in two languages,
    held equal here (a tracepoint the engine adds and the runner does not hold costs 0.28 s a process)."""
    import re

    from cyclebench.runner import tracepoints

    src = (Path(tracepoints.__file__).parents[1] / "engine" / "disturb.c").read_text()
    table = re.search(r"irq_events\[CB_IRQ_EVENTS\]\s*=\s*\{(.*?)\};", src, re.S)
    assert table is not None, "engine/disturb.c: no irq_events table"
    assert tuple(re.findall(r'"([^"]+)"', table[1])) == tracepoints.EVENTS
