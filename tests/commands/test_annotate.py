"""annotate: perf record -e cpu-clock (no PMU needed) + perf annotate of the body."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

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
    # at 80 columns (as the gallery prints it), perf's rule under its header (103 dashes) is cut to
    # the console, not wrapped onto a second line of dashes
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import gallery

    said = gallery.invoke(["annotate", "chain/add400", "-f", str(DATA / "chain.c"), "--seconds", "0.1"],
                          Path(tempfile.mkdtemp()) / "r.db")
    lines = said.output.splitlines()
    rule = [i for i, ln in enumerate(lines) if ln and set(ln) == {"-"}]
    assert said.exit_code == 0 and rule and not [i for i in rule if i + 1 in rule], said.output


def test_annotate_unknown_benchmark() -> None:
    r = cli("annotate", "nosuch/bench", "-f", str(DATA / "chain.c"))
    assert r.exit_code == 2 and "unknown benchmark" in r.output


@pytest.mark.skipif(shutil.which("perf") is None, reason="perf not installed (apt-get install linux-perf)")
def test_annotate_blames_a_crashing_benchmark_not_perf() -> None:
    """A segfaulting body once read 'perf record failed: no output', blaming perf."""
    r = cli("annotate", "faults/segv", "-f", str(DATA / "faults.c"), "--seconds", "0.1")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "faults/segv produced no result under perf record" in r.output and "perf record failed" not in r.output


@pytest.mark.skipif(shutil.which("perf") is None, reason="perf not installed (apt-get install linux-perf)")
def test_annotate_follows_the_body_into_a_hot_callee() -> None:
    """A body calling a non-inlined recursive fib (tests/data/callee.c): nearly every sample is in
    fib, which the body reaches; annotate shows fib's instructions with most of the samples, not
    only the body's handful."""
    import re

    r = cli("annotate", "callee/fib", "-f", str(DATA / "callee.c"), "--seconds", "0.3")
    assert r.exit_code == 0, r.output
    [header] = [ln for ln in r.output.splitlines() if "on their call chain; annotated" in ln]
    shown = re.findall(r"(\S+) (\d+\.\d)%", header.split("annotated, by share of those: ", 1)[1])
    names = [n for n, _ in shown]
    shares = {n: float(v) for n, v in shown}
    assert names[0] == "fib" and shares["fib"] > 50, header
    assert len(names) <= 3 + 1  # --top 3, and the body when it is not among them
    assert [shares[n] for n in names if n != "cb_body_callee_fib"] == sorted(
        (shares[n] for n in names if n != "cb_body_callee_fib"), reverse=True)
    # fib's own listing: its disassembly, holding more samples than half the body's
    under = int(re.search(r"(\d+) samples \(\d+%\) have cb_body_callee_fib", header).group(1))
    fib_samples = [int(m) for m in re.findall(r"Disassembly of runner for cpu-clock \((\d+) samples", r.output)]
    assert "<fib>:" in r.output and fib_samples and max(fib_samples) > under / 2, r.output[-3000:]
