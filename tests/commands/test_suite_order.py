"""Rows in the suite's order everywhere (model.suite_order, docs/exports.md "Order"): `run
--target-ci` stores a row when its last pass ends, so rows that got extra passes are stored last;
the table of `run`, `show`, the JSON and the CSV exports still list them with their benchmark."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import cyclebench

from conftest import FAST

PARAMS = (64, 4096, 65536)
# The rows given extra passes: two sizes of memcpy, and memmove whole (so that memmove's first row is
# stored after all of copy/ but memcpy's: only the plan index, not the stored order, says its place).
WIDE = {("copy/memcpy", 64), ("copy/memcpy", 65536), *(("copy/memmove", p) for p in PARAMS)}
# The process, with the precision estimate pinned: the WIDE rows read a CI of ±1.2% (the target is
# ±1%: within reach, stats.result.worth_more), every other one ±0, so exactly these get passes 4
# and 5 (3 processes planned, at most 6) and are stored after all the others.
DRIVER = f"""
import sys
from cyclebench.experiments import run as _run
WIDE = {sorted(WIDE)!r}
_run.relative_halfwidth = lambda res, n_resamples=400: (
    0.012 if ((res or {{}}).get("bench"), (res or {{}}).get("param")) in WIDE else 0.0)
from cyclebench.entry import main
sys.argv = ["cyclebench", *sys.argv[1:]]
main()
"""


def _cyclebench(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own, 200 columns wide."""
    src = str(Path(cyclebench.__file__).resolve().parents[1])
    env = {**os.environ, "COLUMNS": "200", "CYCLEBENCH_DB": db,
           "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", DRIVER, *args], env=env, text=True, capture_output=True, timeout=600,
                       check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def _table_rows(stdout: str) -> list[tuple[str, int | None]]:
    """(benchmark, param) of each row of a results table, top to bottom (the param is right-aligned
    under its header; rows of loop/empty have none)."""
    lines = stdout.splitlines()
    head = next(ln for ln in lines if ln.split()[:2] == ["benchmark", "param"])
    end = head.index("param") + len("param")
    out = []
    for line in lines[lines.index(head) + 1:]:
        cells = line[:end].split()
        if cells and "/" in cells[0]:
            out.append((cells[0], int(cells[1]) if len(cells) > 1 else None))
    return out


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, subprocess.CompletedProcess[str]]:
    """`run -b 'copy/*' -p 64,4096,65536 --target-ci 1` with a JSON and a CSV export, in a database of its own."""
    tmp = tmp_path_factory.mktemp("order")
    db = f"sqlite:///{tmp / 'results.db'}"
    r = _cyclebench(db, "run", "-b", "copy/*", "-p", ",".join(map(str, PARAMS)), *FAST, "--target-ci", "1",
                    "--json", str(tmp / "run.json"), "--format", "csv", "-o", str(tmp / "run.csv"))
    return db, tmp, r


@pytest.fixture(scope="module")
def suite(measured: tuple[str, Path, subprocess.CompletedProcess[str]]) -> list[tuple[str, int | None]]:
    """The suite's order: loop/empty (measured first), then the copy benchmarks taking these sizes in
    the order the registry lists them (`run --list`), each size ascending."""
    db, _tmp, _r = measured
    lines = _cyclebench(db, "run", "--list", "-b", "copy/*").stdout.splitlines()
    head = next(ln for ln in lines if ln.split()[:2] == ["benchmark", "params"])
    span = slice(head.index("params"), head.index("requires"))
    benches = [ln.split()[0] for ln in lines[lines.index(head) + 1:] if ln.startswith("copy/")
               and set(map(str, PARAMS)) <= set(ln[span].replace(",", " ").split())]
    assert "copy/memcpy" in benches and "copy/memmove" in benches and len(benches) >= 5
    return [("loop/empty", None), *((b, p) for b in benches for p in PARAMS)]


def test_rows_with_extra_passes_are_stored_last(measured: tuple[str, Path, subprocess.CompletedProcess[str]],
                                                suite: list[tuple[str, int | None]]) -> None:
    """The case the order is for: by id, the rows that got extra passes come after all the others."""
    db, _tmp, _r = measured
    con = sqlite3.connect(db.removeprefix("sqlite:///"))
    stored = [(b, p, json.loads(e).get("processes"), s)
              for b, p, e, s in con.execute("SELECT bench, param, extra, status FROM results ORDER BY id")]
    con.close()
    assert {(b, p) for b, p, _n, _s in stored[-len(WIDE):]} == WIDE
    assert sorted((b, p) for b, p, _n, _s in stored) == sorted(suite)
    assert all(n == (5 if (b, p) in WIDE else 3) for b, p, n, s in stored if s == "ok")
    assert [(b, p) for b, p, _n, _s in stored] != suite


def test_run_prints_its_rows_in_the_suite_order(measured: tuple[str, Path, subprocess.CompletedProcess[str]],
                                                suite: list[tuple[str, int | None]]) -> None:
    _db, _tmp, r = measured
    assert _table_rows(r.stdout) == suite


def test_run_exports_its_rows_in_the_suite_order(measured: tuple[str, Path, subprocess.CompletedProcess[str]],
                                                 suite: list[tuple[str, int | None]]) -> None:
    _db, tmp, _r = measured
    assert [(x["bench"], x["param"]) for x in json.loads((tmp / "run.json").read_text())["results"]] == suite
    rows = list(csv.DictReader(io.StringIO((tmp / "run.csv").read_text())))
    assert [(x["bench"], int(x["param"]) if x["param"] else None) for x in rows] == suite


def test_show_and_export_list_the_stored_rows_in_the_suite_order(
        measured: tuple[str, Path, subprocess.CompletedProcess[str]], suite: list[tuple[str, int | None]]) -> None:
    db, _tmp, _r = measured
    assert _table_rows(_cyclebench(db, "show", "1").stdout) == suite
    data = json.loads(_cyclebench(db, "export", "1", "--format", "json").stdout)
    assert [(x["bench"], x["param"]) for x in data["results"]] == suite
    assert [x["plan_index"] for x in data["results"]] == sorted(x["plan_index"] for x in data["results"])
    rows = list(csv.DictReader(io.StringIO(_cyclebench(db, "export", "1", "--format", "csv").stdout)))
    assert [(x["bench"], int(x["param"]) if x["param"] else None) for x in rows] == suite


def test_an_imported_run_keeps_the_suite_order(measured: tuple[str, Path, subprocess.CompletedProcess[str]],
                                               suite: list[tuple[str, int | None]], tmp_path: Path) -> None:
    """The plan's order survives the run file: imported elsewhere, it shows in the same order."""
    _db, tmp, _r = measured
    other = f"sqlite:///{tmp_path / 'other.db'}"
    _cyclebench(other, "import", str(tmp / "run.json"))
    assert _table_rows(_cyclebench(other, "show").stdout) == suite
    exported = json.loads(_cyclebench(other, "export", "--format", "json").stdout)["results"]
    assert [x["plan_index"] for x in exported] == [x["plan_index"] for x in
                                                   json.loads((tmp / "run.json").read_text())["results"]]
