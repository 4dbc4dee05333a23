"""A command over several benchmarks, variants or tasks where one fails: that one is named with
its reason, the others are measured and kept, and the exit status says something failed."""

from __future__ import annotations

import shutil

import pytest

from .conftest import NewLab
from .harness import CASES, Lab

pytestmark = pytest.mark.audit

CMP_FAST = ("--repeat", "12", "--min-time", "0.02")
needs_perf = pytest.mark.skipif(shutil.which("perf") is None, reason="perf not installed (apt-get install linux-perf)")
needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None,
                                    reason="valgrind not installed (apt-get install valgrind)")


def test_a_variant_with_a_syntax_error_is_named_and_the_other_is_measured(lab: Lab) -> None:
    """One variant that did not compile aborted every variant, without naming it."""
    r = lab.run("variants", f"{CASES}/varcrash.c", "--flags", "-O2", "--flags", "-O2 -DBROKEN", "--rounds", "6")
    assert r.rc in (1, 2), r
    assert "-DBROKEN" in r.text
    assert "ok" in lab.statuses("vc/work")


@pytest.mark.audit_slow
def test_a_variant_that_crashes_is_a_crashed_row(lab: Lab) -> None:
    r = lab.run("variants", f"{CASES}/varcrash.c", "--flags", "-O2", "--flags", "-O2 -DCRASH", "--rounds", "6")
    assert r.rc == 1, r
    assert "crashed" in r.text


@pytest.mark.audit_slow
@pytest.mark.parametrize(("mode", "says"), [("threads", "crashed"), ("processes", "crash")])
def test_a_task_that_crashes_in_scale_ends_the_run_with_the_rest_kept(lab: Lab, mode: str, says: str) -> None:
    r = lab.run("scale", "sc/*", "-f", f"{CASES}/scalecrash.c", "--tasks", "1..2", "--duration", "0.6", "--passes",
                "1", "--cpus", "1,0", "--warmup", "0.2", "--retries", "0", "--mode", mode)
    assert r.rc == 1, r
    assert says in r.text
    statuses = lab.run_statuses()
    assert statuses and "running" not in statuses, statuses


def test_compare_blames_the_benchmark_that_crashes_not_its_partner(lab: Lab) -> None:
    """compare once marked the healthy benchmark crashed, and exited 0."""
    r = lab.run("compare", "cc/good", "cc/bad", "-f", f"{CASES}/cmpcrash.c", *CMP_FAST)
    assert r.rc == 1, r
    assert "cc/bad" in r.text and "cc/good: crashed" not in r.text


def test_compare_still_judges_a_against_a2_when_b_crashes(lab: Lab) -> None:
    r = lab.run("compare", "cc/good", "cc/good2", "cc/bad", "-f", f"{CASES}/cmpcrash.c", *CMP_FAST)
    assert r.rc == 1, r
    assert "ok" in lab.statuses("cc/good2")
    assert "cc/good: crashed" not in r.text


@needs_perf
def test_annotate_of_a_crashing_benchmark_says_it_crashed(lab: Lab) -> None:
    """It read 'perf record failed: no output'."""
    r = lab.run("annotate", "crash/segv", "@f:" + f"{CASES}/segv.c", "--seconds", "0.2")
    assert r.rc in (1, 2), r
    assert any(w in r.text.lower() for w in ("crashed", "sigsegv", "segmentation")), r.text
    assert "perf record failed" not in r.text


@needs_perf
@pytest.mark.audit_slow
def test_annotate_of_a_hanging_benchmark_times_out_cleanly(new_lab: NewLab) -> None:
    """annotate's own limit is 64 s for --seconds 0.2."""
    lab = new_lab(limit=80)
    r = lab.run("annotate", "hang/forever", "@f:" + f"{CASES}/hang.c", "--seconds", "0.2")
    assert r.rc in (1, 2), r
    assert "timed out" in r.text.lower() or "timeout" in r.text.lower(), r.text


@pytest.mark.audit_slow
@needs_valgrind
def test_the_callgrind_backend_honours_timeout(new_lab: NewLab) -> None:
    lab = new_lab(limit=25)
    r = lab.run("run", f"{CASES}/hang.c", "--backend", "callgrind", "--timeout", "2", "-q")
    assert r.rc == 1, r
    assert r.wall < 15, f"took {r.wall:.1f} s"
