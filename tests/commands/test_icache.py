"""Molnar's alignment study (docs/references.md#icache-alignment-linux-2015): the generated
I-cache workload and the -falign-functions sweep under callgrind."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cyclebench.build.icache import generate

from conftest import cli


def test_generated_source_has_the_functions() -> None:
    src = generate(funcs=10, size=3, seed=2)
    assert src.count("__attribute__((noinline, noclone)) static unsigned f") == 10
    assert "CB_BENCH(icache, calls10x3)" in src
    assert generate(10, 3, 2) == src and generate(10, 3, 3) != src  # the --seed argument sets the order
    with pytest.raises(ValueError):
        generate(1, 3)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed (apt-get install valgrind)")
def test_align_functions_changes_simulated_i1_misses(db: str, tmp_path: Path) -> None:
    src = tmp_path / "ic.c"
    # 1024 functions: I1 misses 703 (align 1) vs 1132 (align 32) on the AMD VM. With 2048 the order
    # flipped (2508 vs 2295) when the engine's code grew by a few hundred bytes: past twice the
    # I1 size, misses follow set conflicts of the absolute layout more than the footprint.
    assert cli("gen", "icache", "--funcs", "1024", "--size", "4", "-o", str(src)).exit_code == 0
    out = tmp_path / "v.json"
    r = cli("variants", str(src), "--callgrind", "--flags", "-O2 -falign-functions=1",
            "--flags", "-O2 -falign-functions=32", "--rounds", "6", "--min-time", "0.01", "--json", str(out))
    assert r.exit_code == 0, r.output
    [d] = json.loads(out.read_text())
    a, b = d["variants"]
    assert b["text_bytes"] > a["text_bytes"] * 1.1  # padding makes the code bigger
    assert a["simulated"]["Ir"] == b["simulated"]["Ir"]  # same instructions executed...
    assert b["simulated"]["I1mr"] > a["simulated"]["I1mr"] * 1.05  # ...with more I-cache misses
    assert a["simulated"]["I1mr"] > 300  # the footprint exceeds the simulated 32 KiB I1
    assert "ranked by per op" in r.output and "I1mr" in r.output  # callgrind events in the same table
