"""The suite's variants from the experiments of docs/references.md: each runs and verifies; one
ordering no CPU can reverse."""

from __future__ import annotations

import platform

import pytest

from cyclebench.build import BuildSpec, build, suite_sources
from cyclebench.model import DISTURBED, OK
from cyclebench.runner import Runner
from cyclebench.runner.plan import MeasureOptions
from cyclebench.stats import estimate

X86 = platform.machine() == "x86_64"
QUICK = MeasureOptions(min_time=0.005, repeat=6, warmup=0.001)
COUNTERS = ["plain_add", "lock_add", "lock_xadd", "cmpxchg_loop", "mfence_add"]
X86_COUNTERS = ["addl", "addl_adcl", "addl_jnc", "critical_section", "cmpxchg8b", "lock_cmpxchg8b", "cmpxchg16b",
                "lock_cmpxchg16b"]


@pytest.fixture(scope="module")
def suite() -> Runner:
    return Runner(build(BuildSpec(sources=tuple(suite_sources()), werror=True)).path, cpu=None)


def test_the_experiments_variants_are_listed(suite: Runner) -> None:
    names = {b.name for b in suite.list()}
    want = [f"counter/{n}{x}" for n in COUNTERS + (X86_COUNTERS if X86 else []) for x in ("", "_x4")]
    want += ["vfs/creat_mix", *(["copy/inline48", "copy/bcopy_call", "copy/bcopy_je_call"] if X86 else [])]
    assert not set(want) - names, sorted(set(want) - names)


@pytest.mark.skipif(not X86, reason="the i386-style counter variants and rep movs copies are x86-64 asm")
@pytest.mark.parametrize("name", [f"{n}{x}" for n in X86_COUNTERS for x in ("", "_x4")])
def test_every_counter_variant_keeps_every_increment(suite: Runner, name: str) -> None:
    """verify sums the counters against cb_total_iters: a lost, doubled or torn update fails."""
    o = suite.run(f"counter/{name}", None, QUICK, 30)
    assert o.status in (OK, DISTURBED), (o.status, o.reason)


@pytest.mark.skipif(not X86, reason="rep movs copies are x86-64 asm")
@pytest.mark.parametrize(("bench", "param"), [("copy/inline48", 48), ("copy/bcopy_call", 48),
                                              ("copy/bcopy_call", 53), ("copy/bcopy_je_call", 53)])
def test_the_r333266_copies_verify(suite: Runner, bench: str, param: int) -> None:
    o = suite.run(bench, param, QUICK, 30)
    assert o.status in (OK, DISTURBED), (o.status, o.reason)


def test_creat_mix_runs_and_verifies(suite: Runner) -> None:
    o = suite.run("vfs/creat_mix", None, QUICK, 60)
    assert o.status in (OK, DISTURBED), (o.status, o.reason)  # blocking in the journal is disturbed, not failed


@pytest.mark.timing
def test_a_lock_costs_more_than_a_plain_add_in_one_process(suite: Runner) -> None:
    """A locked RMW drains the store buffer (≥ 8 cycles on every x86 and arm64 core we know);
    a plain add is ≤ 5 — measured interleaved in one process, so the host's mood hits both."""
    outs = suite.run_many([("counter/plain_add", None), ("counter/lock_add", None)], QUICK, 30)
    assert all(o.status in (OK, DISTURBED) for o in outs), [(o.status, o.reason) for o in outs]
    plain, lock = (estimate(o.result["n"], o.result["ticks"], group=o.result["ladder"]).per_op for o in outs)
    assert lock > 2 * plain, (plain, lock)
