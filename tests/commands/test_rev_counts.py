"""`compare --rev … --backend callgrind` and `bisect --backend callgrind` on a real git repository
(tests/gitlib.py: commit 23 adds 12 dependent register adds to a 300-add chain that the
benchmark calls once an op, 24 changes a comment, 27 does not compile), counted under real
valgrind: the exact counts that `ci --gate counts` reads (experiments/revcounts.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitlib import BENCH, BROKEN, EXTRA, REGRESSION, make_repo

pytestmark = [
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed (apt-get install valgrind)"),
    pytest.mark.skipif(not all(shutil.which(t) for t in ("git", "make")), reason="needs git and make"),
]

# a benchmark whose work per op follows the clock: its count differs from one reading to the next
JITTER = BENCH + """
#include <time.h>
CB_BENCH(lib, jitter) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        for (long k = 0; k < (t.tv_nsec & 63); k++) x = work(x);
    }
    cb_do_not_optimize(x);
}
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], Path]:
    """The repository, its 40 commits, and a benchmark file outside it (gitlib's, plus lib/jitter)."""
    root = tmp_path_factory.mktemp("revcounts")
    shas = make_repo(root / "repo")
    bench = root / "outside_bench.c"
    bench.write_text(JITTER)
    return root / "repo", shas, bench


def cyclebench(db: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The program at 80 columns, as a terminal of that width runs it."""
    return subprocess.run([sys.executable, "-m", "cyclebench", *args], capture_output=True, text=True, timeout=900,
                          cwd=cwd, env={**os.environ, "COLUMNS": "80", "CYCLEBENCH_DB": db})


def fits(text: str) -> None:
    """Every line within 80 columns, nothing cut short with an ellipsis."""
    assert "…" not in text, text
    assert all(len(ln) <= 80 for ln in text.splitlines()), text


def test_compare_rev_counts_the_added_instructions_exactly(db: str, lib: tuple[Path, list[str], Path],
                                                          tmp_path: Path) -> None:
    """22 → 23: lib/work costs exactly EXTRA (12) more Ir per op, slower; lib/flat, untouched, Δ 0
    and equivalent. 23 → 24, a comment: Δ 0, equivalent. The rows are stored as simulated
    results (each side's, with its revision) and `show RUN` prints the same table."""
    from cyclebench.store import Store

    repo, shas, _ = lib
    out = tmp_path / "c.json"
    common = ["-f", "bench/work_bench.c", "--build", "make", "--ldflags", "libwork.a", "-I", "lib",
              "--backend", "callgrind", "--json", str(out)]
    r = cyclebench(db, "compare", "--rev", shas[REGRESSION - 2], "--rev", shas[REGRESSION - 1], *common, cwd=repo)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {row["a"].split(" @ ")[0]: row for row in json.loads(out.read_text())}
    work, flat = rows["lib/work"], rows["lib/flat"]
    assert work["unit"] == "Ir" and work["comparison"]["verdict"] == "slower", r.stdout
    assert work["comparison"]["diff"] == pytest.approx(EXTRA, abs=0.01)  # exactly the 12 adds a call
    assert work["comparison"]["ci_low"] == work["comparison"]["ci_high"] == work["comparison"]["diff"]
    assert flat["comparison"]["verdict"] == "equivalent" and flat["comparison"]["diff"] == 0.0
    fits(r.stdout)
    table = " ".join(r.stdout.split())
    assert r.stdout.count("(Ir/") == 2 and "+12.00" in table and "slower" in table and "equivalent" in table, r.stdout
    assert "exact counts per op (callgrind)" in table and "0.5% of A" in table

    s = Store(db)
    [run] = s.list_runs(None)
    assert run["labels"]["rev"] == shas[REGRESSION - 1] and run["labels"]["base"] == shas[REGRESSION - 2]
    results = s.results(run["id"])
    assert {(x["kind"], x["variant"], x["revision"]) for x in results if x["bench"] == "lib/work"} == {
        ("simulated", "base", shas[REGRESSION - 2]), ("simulated", "", shas[REGRESSION - 1])}
    assert all((x.simulated or {}).get("events", {}).get("Ir") for x in results)  # every event kept
    shown = cyclebench(db, "show", str(run["id"]))
    assert shown.returncode == 0, shown.stdout + shown.stderr
    fits(shown.stdout)
    assert "+12.00" in shown.stdout and "slower" in shown.stdout and "exact counts" in shown.stdout, shown.stdout

    r = cyclebench(db, "compare", "--rev", shas[REGRESSION - 1], "--rev", shas[REGRESSION], *common, "-b",
                   "lib/work", cwd=repo)
    assert r.returncode == 0, r.stdout + r.stderr
    [row] = json.loads(out.read_text())
    assert row["comparison"]["verdict"] == "equivalent" and row["comparison"]["diff"] == 0.0, r.stdout


def test_a_count_that_differs_between_readings_gets_no_verdict(db: str, lib: tuple[Path, list[str], Path],
                                                              tmp_path: Path) -> None:
    """lib/jitter's work follows the clock: its readings differ, "not exact", no verdict, exit 1."""
    repo, shas, bench = lib
    out = tmp_path / "c.json"
    r = cyclebench(db, "compare", "--rev", shas[5], "--rev", shas[6], "--repo", str(repo), "-f", str(bench),
                   "--build", "make", "--ldflags", "libwork.a", "-I", str(repo / "lib"), "-b", "lib/jitter",
                   "--backend", "callgrind", "--json", str(out))
    assert r.returncode == 1, r.stdout + r.stderr
    [row] = json.loads(out.read_text())
    assert row["comparison"]["verdict"] == "not exact", r.stdout
    assert "two readings differ" in row["note"] and "did not produce a verdict" in r.stderr
    fits(r.stdout)


def test_bisect_by_counts_names_the_commit_that_added_instructions(db: str, lib: tuple[Path, list[str], Path],
                                                                   tmp_path: Path) -> None:
    """GOOD = commit 14, BAD = 40 (26 commits; 27 does not compile): every measured step is bad
    exactly when it holds commit 23's 12 adds, Δ exactly 12 Ir per op; 23 is named; lib/flat shows
    no slowdown, Δ 0."""
    repo, shas, bench = lib
    out = tmp_path / "b.json"
    r = cyclebench(db, "bisect", "--good", shas[13], "--bad", shas[-1], "--repo", str(repo), "-f", str(bench),
                   "--build", "make", "--ldflags", "libwork.a", "-I", str(repo / "lib"), "-b", "lib/work",
                   "-b", "lib/flat", "--backend", "callgrind", "--json", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    assert doc["backend"] == "callgrind"
    work, flat = doc["searches"]
    assert flat["bench"] == "lib/flat" and flat["status"] == "no slowdown" and flat["steps"][0]["diff"] == 0.0
    assert work["status"] == "found" and work["first_bad"]["sha"] == shas[REGRESSION - 1], r.stdout
    measured = [s for s in work["steps"] if s["run_id"] is not None]
    assert len(measured) >= 4  # the confirmation and at least three steps: a real search
    for s in measured:
        k = shas.index(s["revision"]["sha"]) + 1
        assert s["unit"] == "Ir" and s["verdict"] == ("slower" if s["n"] == 0 else "bad" if k >= REGRESSION
                                                      else "good"), s
        assert s["per_op"] - s["good_per_op"] == pytest.approx(EXTRA if k >= REGRESSION else 0, abs=0.01), s
    [broken] = [s for s in work["steps"] if s["revision"]["sha"] == shas[BROKEN - 1]]
    assert broken["verdict"] == "skip" and "does not build" in broken["reason"]
    assert f"first bad commit {shas[REGRESSION - 1]}" in " ".join(r.stdout.split()), r.stdout
    table = r.stdout[r.stdout.index("\nbisect "):]  # the steps' lines as decided run long by design (soft wrap)
    fits(table)
    assert "GOOD (Ir/" in table and "Δ%" in table and "verdict" in table and "+12" in table, table
