"""--backend callgrind: exact, deterministic simulated counts per op."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cyclebench.runner.callgrind import parse_cache
from cyclebench.store import Store

from conftest import DATA, cli

pytestmark = pytest.mark.skipif(shutil.which("valgrind") is None,
                                reason="valgrind not installed (apt-get install valgrind)")


def events(store: Store) -> dict[tuple[str, int | None], dict[str, float]]:
    return {(r["bench"], r["param"]): (r.simulated or {})["events"] for r in store.results(store.last_run_id())
            if r["status"] == "ok"}


def test_chain_counts_are_exact_and_repeatable(db: str) -> None:
    runs = []
    for _ in range(2):
        r = cli("run", str(DATA / "chain.c"), "--backend", "callgrind", "-q")
        assert r.exit_code == 0, r.output
        runs.append(events(Store(db)))
    assert runs[0] == runs[1]  # identical from run to run
    ev = runs[0]
    assert ev[("chain/add400", None)]["Ir"] - ev[("chain/add200", None)]["Ir"] == pytest.approx(200, abs=0.2)
    assert ev[("chain/add200", None)]["Ir"] - ev[("loop/empty", None)]["Ir"] == pytest.approx(200, abs=1.2)
    # per op, the instructions the body executes and nothing more: a whole number (the two batches'
    # fixed costs cancel exactly: engine/simulate.c), 303.2 when they did not
    for (bench, _), e in ev.items():
        assert e["Ir"] == round(e["Ir"]), (bench, e["Ir"])


def test_rep_movsb_needs_far_fewer_instructions_than_a_byte_loop(db: str) -> None:
    r = cli("run", "-b", "copy/rep_movsb", "-b", "copy/byte_loop", "-b", "copy/memcpy", "-p", "4096",
            "--backend", "callgrind")
    assert r.exit_code == 0, r.output
    assert "simulated by callgrind" in r.output
    ev = events(Store(db))
    assert ev[("copy/rep_movsb", 4096)]["Ir"] * 4 < ev[("copy/byte_loop", 4096)]["Ir"]
    assert ev[("copy/memcpy", 4096)]["Ir"] < ev[("copy/byte_loop", 4096)]["Ir"] / 10


def test_cache_geometry_and_missing_valgrind(db: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert parse_cache("I1=16384,4,64")["I1"] == (16384, 4, 64)
    r = cli("run", str(DATA / "chain.c"), "--backend", "callgrind", "--cache", "I1=1000,3,64")
    assert r.exit_code == 2 and "multiple of assoc" in r.output
    monkeypatch.setenv("PATH", str(tmp_path))
    r = cli("run", str(DATA / "chain.c"), "--backend", "callgrind")
    assert r.exit_code == 2 and "valgrind not found" in r.output
