"""`compare RUN RUN RUN…` of stored runs over the lab fixture (tests/data/lab, bench/gallery.py):
every side given is shown (a ranked table per benchmark beside the rows each against the
baseline), Δ% is per op ÷ the baseline's − 1 in what is printed and in the JSON, --baseline picks
the side the others are judged against, a timed run is compared with one that also read counters
on their timing, and bad input is one line, exit 2. Runs 1–3 of the fixture: `run` (timing),
`run -e task-clock,page-faults` (timing with counters), `run --net` (timing); run 4 is callgrind's."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.labnumbers import Table, console_tables, number

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import gallery

BENCHES = ("loop/empty", "chain/add200")  # what runs 1, 2 and 3 all measured (chain/add400: run 1 only)


@pytest.fixture(scope="module")
def lab() -> Iterator[Path]:
    with gallery.lab_copy() as db:
        yield db


def _cycles(db: Path, run: int, bench: str) -> float:
    """The run's stored cycles~ per op of ``bench``: the figure stored runs are compared by."""
    con = sqlite3.connect(db)
    try:
        [(v,)] = con.execute("select cycles_per_op from results where run_id = ? and bench = ? and kind = 'timing'",
                             (run, bench)).fetchall()
    finally:
        con.close()
    return float(v)


def _compare(db: Path, *argv: str, columns: int = 80) -> gallery.Said:
    said = gallery.invoke(["compare", *argv], db, columns)
    assert said.error is None, said.error
    return said


def _json(db: Path, tmp_path: Path, *argv: str) -> list[dict]:
    out = tmp_path / "rows.json"
    said = _compare(db, *argv, "--json", str(out))
    assert said.exit_code == 0, said.output
    return json.loads(out.read_text())


def _ranked(text: str) -> dict[str, Table]:
    """The ranked tables printed, by benchmark (their title ``bench (unit), ranked``)."""
    return {t.title.split(" (")[0]: t for t in console_tables(text) if t.title.endswith(", ranked")}


def test_three_stored_runs_are_all_shown(lab: Path) -> None:
    said = _compare(lab, "1", "2", "3")
    assert said.exit_code == 0, said.output
    for bench in BENCHES:
        assert f"{bench} (cycles~), ranked" in said.output, said.output
        assert f"{bench} lab=plain #1 · #2" in said.output and f"{bench} lab=plain #1 · #3" in said.output
    tables = _ranked(gallery.invoke(["compare", "1", "2", "3", "--wide"], lab, 1000).output)
    assert set(tables) == set(BENCHES)
    for t in tables.values():
        assert sorted(r["run"] for r in t.rows) == ["#2", "#3", "lab=plain #1 [baseline]"]
    # chain/add400 only run 1 has: not silently gone, each side that lacks it is named
    assert "#2 not compared on chain/add400 (no valid result in #2)" in said.output
    assert "#3 not compared on chain/add400 (no valid result in #3)" in said.output
    assert "failed" not in said.output


def test_delta_pct_is_per_op_over_the_baseline_s_minus_one(lab: Path, tmp_path: Path) -> None:
    """In the ranked table (within the rounding of the cells) and in the JSON (exactly)."""
    tables = _ranked(gallery.invoke(["compare", "1", "2", "3", "--wide"], lab, 1000).output)
    for bench, t in tables.items():
        [base] = [r for r in t.rows if r["run"].endswith("[baseline]")]
        b = number(base["per op"])
        assert b is not None and b.near(_cycles(lab, 1, bench))
        for row in t.rows:
            if row is base:
                continue
            x, pct = number(row["per op"]), number(row["Δ% vs baseline"])
            assert x is not None and pct is not None, row
            run = int(row["run"].lstrip("#"))
            assert x.near(_cycles(lab, run, bench))
            want = 100 * (x.value / b.value - 1)
            slack = 100 * (x.slack / b.value + x.value * b.slack / b.value ** 2) + pct.slack
            assert abs(pct.value - want) <= slack, (bench, row, want)
            # and exactly, from what is stored: the cells are rounded, the arithmetic is not
            exact = 100 * (_cycles(lab, run, bench) / _cycles(lab, 1, bench) - 1)
            assert abs(pct.value - exact) <= pct.slack, (bench, row, exact)
            ci = re.fullmatch(r"\[([^,]+), ([^\]]+)\]", row["95% CI of Δ%"])
            assert ci, row  # run 1's build has replicate groups on this host: a run-to-run spread, a CI
            lo, hi = number(ci.group(1)), number(ci.group(2))
            assert lo is not None and hi is not None and lo.value <= pct.value <= hi.value
    rows = _json(lab, tmp_path, "1", "2", "3")
    assert sorted((r["a"], r["b"]) for r in rows) == sorted(
        (f"{bench} lab=plain #1", f"#{run}") for bench in BENCHES for run in (2, 3))
    for r in rows:
        c = r["comparison"]
        bench, run = r["a"].split(" ")[0], int(r["b"].lstrip("#"))
        assert c["median_a"] == pytest.approx(_cycles(lab, 1, bench), rel=1e-12)
        assert c["median_b"] == pytest.approx(_cycles(lab, run, bench), rel=1e-12)
        assert c["rel"] == pytest.approx(c["median_b"] / c["median_a"] - 1, rel=1e-12)


def test_timing_is_compared_with_timing_and_counters(lab: Path, tmp_path: Path) -> None:
    """Run 2 also read counters: run 1 and run 2 are compared on their timing, the note says the
    counters are not compared."""
    said = _compare(lab, "1", "2")
    assert said.exit_code == 0, said.output
    assert "failed" not in said.output and "kinds of measurement differ" not in said.output
    assert "also read counters" in " ".join(said.output.split())
    rows = _json(lab, tmp_path, "1", "2")
    assert sorted(r["a"].split(" ")[0] for r in rows) == sorted(BENCHES)
    for r in rows:
        assert r["comparison"] is not None, r
        assert r["comparison"]["median_b"] == pytest.approx(_cycles(lab, 2, r["a"].split(" ")[0]), rel=1e-12)
        assert "#2 also read counters (task-clock, page-faults): not compared" in r["note"], r["note"]


def test_baseline_is_honoured(lab: Path, tmp_path: Path) -> None:
    tables = _ranked(gallery.invoke(["compare", "1", "2", "3", "--baseline", "3", "--wide"], lab, 1000).output)
    for bench, t in tables.items():
        assert [r["run"] for r in t.rows if r["run"].endswith("[baseline]")] == ["#3 [baseline]"]
        for row in t.rows:
            if row["run"] != "#3 [baseline]":
                run = int(row["run"].split("#")[1].split(" ")[0])
                exact = 100 * (_cycles(lab, run, bench) / _cycles(lab, 3, bench) - 1)
                pct = number(row["Δ% vs baseline"])
                assert pct is not None and abs(pct.value - exact) <= pct.slack, (bench, row)
    rows = _json(lab, tmp_path, "1", "2", "3", "--baseline", "3")
    assert {r["a"].split(" ", 1)[1] for r in rows} == {"#3"} and {r["b"] for r in rows} == {"lab=plain #1", "#2"}
    for r in rows:
        assert r["comparison"]["median_a"] == pytest.approx(_cycles(lab, 3, r["a"].split(" ")[0]), rel=1e-12)


def test_a_side_with_no_kind_in_common_is_named_not_dropped(lab: Path) -> None:
    """Run 4 is callgrind's: beside timed runs it is left out in one line that names the kinds;
    with no other side there is nothing to compare: that line, exit 2."""
    said = _compare(lab, "1", "4", "2")
    assert said.exit_code == 0, said.output
    note = next(ln for ln in said.output.splitlines() if ln.startswith("cyclebench: note: #4"))
    assert "not compared on anything" in note and "callgrind beside lab=plain #1's timing" in note
    assert "loop/empty (cycles~), ranked" in said.output
    said = _compare(lab, "1", "4")
    assert said.exit_code == 2
    [line] = said.output.splitlines()
    assert line.startswith("cyclebench: error: #4 not compared") and "no kind of measurement shared" in line


@pytest.mark.parametrize(("argv", "says"), [
    (["1", "99"], "no run 99"),
    (["1", "2", "1"], "run #1 is given in two sides"),
    (["1", "1"], "run #1 is given in two sides"),
    (["1,1", "2"], "run #1 is given twice in one side"),
    (["1", "2", "--baseline", "7"], "--baseline 7 is not one of the sides"),
])
def test_bad_input_is_one_line_and_exit_2(lab: Path, argv: list[str], says: str) -> None:
    said = _compare(lab, *argv)
    assert said.exit_code == 2, said.output
    [line] = said.output.splitlines()
    assert line.startswith("cyclebench: error: ") and says in line, line


def test_the_help_says_n_stored_runs_and_baseline(lab: Path) -> None:
    text = " ".join(gallery.invoke(["compare", "--help"], lab, 200).output.split())
    assert "RUN_A RUN_B" not in text and "two stored runs" not in text
    assert "N stored runs RUN RUN [RUN...]" in text and "or --baseline" in text
