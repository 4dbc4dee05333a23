"""annotate: perf record -e cpu-clock (no PMU needed) + perf annotate of the body."""

from __future__ import annotations

import shutil

import pytest

from conftest import DATA, cli


@pytest.mark.skipif(shutil.which("perf") is None, reason="perf not installed (apt-get install linux-perf)")
def test_annotate_shows_the_hot_instructions() -> None:
    r = cli("annotate", "chain/add400", "-f", str(DATA / "chain.c"), "--seconds", "0.3")
    assert r.exit_code == 0, r.output
    assert "cb_body_chain_add400" in r.output
    assert "hottest symbols" in r.output
    hot = [ln for ln in r.output.splitlines() if ":" in ln and " add " in f" {ln.split(':')[-1]} "]
    assert hot, "no add instruction in the annotation"


def test_annotate_unknown_benchmark() -> None:
    r = cli("annotate", "nosuch/bench", "-f", str(DATA / "chain.c"))
    assert r.exit_code == 2 and "unknown benchmark" in r.output


@pytest.mark.skipif(shutil.which("perf") is None, reason="perf not installed (apt-get install linux-perf)")
def test_annotate_blames_a_crashing_benchmark_not_perf() -> None:
    """Audit D19: a segfaulting body read 'perf record failed: no output'."""
    r = cli("annotate", "faults/segv", "-f", str(DATA / "faults.c"), "--seconds", "0.1")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "faults/segv produced no result under perf record" in r.output and "perf record failed" not in r.output
