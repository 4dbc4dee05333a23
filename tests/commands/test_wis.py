"""will-it-scale test cases through the CLI (docs/will-it-scale.md): `scale -f 'dir/*.c'` runs them all like
will-it-scale's runalltests, a failing one costing its rows only; `--csv-format wis` writes
will-it-scale's own CSV; `run -f FILE.c` gives the cost of one operation at one task.
Statuses, names, files and ratios between figures of the same run are asserted, never rates."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import DATA, FAST, cli

WIS = DATA / "wis"
SHORT = ["--duration", "0.3", "--interval", "0.1", "--warmup", "0.1", "--passes", "1", "--retries", "0"]
OK_CASES = ("file_lock", "getppid", "page_fault", "pipe_pingpong", "slow_setup")  # slow_setup: the warm-up waits for it


@pytest.fixture(scope="module")
def scaled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every test case of tests/data/wis at 1 and 2 tasks in both modes, with a test case that
    does not compile beside them (in a copy of the directory)."""
    d = tmp_path_factory.mktemp("wis")
    cases = d / "cases"
    shutil.copytree(WIS, cases)
    (cases / "broken.c").write_text('char *testcase_description = "does not compile";\n'
                                    "void testcase(unsigned long long *iterations, unsigned long nr)\n"
                                    "{ for (;;) (*iterations)++ this_is_not_c; }\n")
    (d / "csv").mkdir()
    db = d / "r.db"
    res = cli("scale", "-f", f"{cases}/*.c", "--tasks", "1,2", "--mode", "both", *SHORT, "--db", f"sqlite:///{db}",
              "--csv", str(d / "csv" / "{name}.csv"), "--csv-format", "wis", "--json", str(d / "r.json"))
    rows = sqlite3.connect(db).execute("select bench, param, variant, status, reason, median, extra from results "
                                       "order by id").fetchall()
    return {"res": res, "dir": d, "rows": rows}


def test_scale_runs_every_test_case_in_both_modes(scaled: dict[str, Any]) -> None:
    res, rows = scaled["res"], scaled["rows"]
    assert res.exit_code == 1, res.output  # the crash, the stuck one and the broken one: exit 1, after all rows
    for stem in OK_CASES:
        got = [(n, v, s) for b, n, v, s, *_ in rows if b == f"wis/{stem}"]
        assert got == [(1, "threads", "ok"), (2, "threads", "ok"), (1, "processes", "ok"), (2, "processes", "ok")]
        assert f"wis/{stem} (threads)" in res.output and f"wis/{stem} (processes)" in res.output
    assert "wis/getppid: getppid(2) loop through syscall(2)" in res.output  # the description is shown
    extra = json.loads(next(r[6] for r in rows if r[0] == "wis/getppid"))
    assert extra["description"] == "getppid(2) loop through syscall(2)" and extra["intervals_measured"] == 3


def test_failures_cost_one_row_each_with_the_reason(scaled: dict[str, Any]) -> None:
    by = {(b, v): (n, s, r) for b, n, v, s, r, *_ in scaled["rows"] if b in ("wis/assert_crash", "wis/stuck",
                                                                              "wis/broken")}
    for mode in ("threads", "processes"):
        n, status, reason = by[("wis/assert_crash", mode)]
        assert (n, status) == (1, "crashed") and "Assertion" in reason
        n, status, reason = by[("wis/stuck", mode)]
        assert (n, status) == (1, "failed") and "never bumped its counter" in reason
        n, status, reason = by[("wis/broken", mode)]
        assert (n, status) == (1, "error") and "does not compile" in reason and "this_is_not_c" in reason
    assert len([r for r in scaled["rows"] if r[0] in ("wis/assert_crash", "wis/stuck", "wis/broken")]) == 6
    out = scaled["res"].output
    assert "wis/stuck (processes) with 1 task(s): task 0 never bumped its counter" in out


def test_wis_csv_is_will_it_scales_own(scaled: dict[str, Any]) -> None:
    d = scaled["dir"] / "csv"
    assert sorted(p.name for p in d.iterdir()) == sorted(f"{s}.csv" for s in (*OK_CASES, "assert_crash", "stuck",
                                                                              "broken"))
    with (d / "getppid.csv").open() as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["tasks", "processes", "processes_idle", "threads", "threads_idle", "linear"]
    assert rows[1] == ["0", "0", "100", "0", "100", "0"]
    assert [r[0] for r in rows[2:]] == ["1", "2"]
    one, two = ([float(x) for x in r] for r in rows[2:])
    assert one[1] > 0 and one[3] > 0 and 0 <= one[2] <= 100 and 0 <= one[4] <= 100
    assert one[5] == max(one[1], one[3]) and two[5] == 2 * one[5]  # linear: tasks × the better 1-task rate
    stored = {(v, n): m for b, n, v, s, r, m, e in scaled["rows"] if b == "wis/getppid"}
    assert one[1] == round(stored[("processes", 1)]) and two[3] == round(stored[("threads", 2)])
    with (d / "stuck.csv").open() as f:
        stuck = list(csv.reader(f))[2]  # 0 ops/s measured (the row says why), the machine's idle share beside it
    assert [stuck[i] for i in (0, 1, 3, 5)] == ["1", "0", "0", "0"] and 0 <= float(stuck[2]) <= 100
    with (d / "broken.csv").open() as f:
        assert list(csv.reader(f))[2] == ["1", "-1", "-1", "-1", "-1", "-1"]  # never ran: will-it-scale's -1


def test_json_export_carries_the_test_cases(scaled: dict[str, Any]) -> None:
    data = json.loads((scaled["dir"] / "r.json").read_text())
    assert {r["bench"] for r in data["results"]} >= {f"wis/{s}" for s in OK_CASES}


def test_wis_csv_needs_a_name_per_benchmark(tmp_path: Path, db: str) -> None:
    r = cli("scale", "-f", str(WIS / "getppid.c"), "-f", str(WIS / "stuck.c"), "--csv", str(tmp_path / "x.csv"),
            "--csv-format", "wis", *SHORT)
    assert r.exit_code == 2 and "put {name} in the --csv path" in r.output, r.output


def test_two_test_cases_with_one_name_are_refused(tmp_path: Path, db: str) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        shutil.copy(WIS / "getppid.c", tmp_path / sub / "getppid.c")
    r = cli("scale", "-f", str(tmp_path / "a" / "getppid.c"), "-f", str(tmp_path / "b" / "getppid.c"), *SHORT)
    assert r.exit_code == 2 and "two will-it-scale test cases named wis/getppid" in r.output


def test_scale_without_bench_or_test_case_is_a_usage_error(db: str) -> None:
    r = cli("scale", "--tasks", "1")
    assert r.exit_code == 2 and "Missing argument" in r.output
    r = cli("scale", str(WIS / "getppid.c"), "-p", "4", "--tasks", "1")  # a test case has no parameters
    assert r.exit_code == 2 and "will-it-scale test cases have none" in r.output, r.output


# ----------------------------------------------------------------------------- run -f FILE.c


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("wisrun")
    db = d / "r.db"
    res = cli("run", "-f", str(WIS / "getppid.c"), "-f", str(WIS / "stuck.c"), *FAST, "--processes", "2",
              "--db", f"sqlite:///{db}", "--json", str(d / "r.json"))
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    rows = {r["bench"]: dict(r) for r in con.execute("select * from results")}
    return {"res": res, "rows": rows, "dir": d}


def test_run_gives_the_cost_of_one_operation(ran: dict[str, Any]) -> None:
    res, row = ran["res"], ran["rows"]["wis/getppid"]
    assert res.exit_code == 1, res.output  # the stuck test case
    assert row["status"] in ("ok", "disturbed"), row["reason"]
    assert row["unit"] in ("ref-cycles", "ticks", "ns") and row["kind"] == "timing"
    assert row["ci_low"] <= row["per_op"] <= row["ci_high"] and row["method"] == "intervals-2level"
    extra = json.loads(row["extra"])
    # one figure, two ways: ns per op and the 1-task throughput of the same intervals
    assert row["ns_per_op"] == pytest.approx(1e9 / extra["ops_per_s"], rel=0.25)
    assert extra["processes"] == 2 and extra["description"] == "getppid(2) loop through syscall(2)"
    if row["unit"] == "ref-cycles":
        assert row["cycles_per_op"] > 0 and 0.2 < row["cycles_per_op"] / row["per_op"] < 10
        assert "before and after each run, not during it" in extra["cycles_source"]
        assert "cycles~ from the add chain timed on CPU" in res.output
    assert "wis/getppid: getppid(2) loop through syscall(2)" in res.output


def test_run_reports_the_stuck_test_case_as_its_row(ran: dict[str, Any]) -> None:
    row = ran["rows"]["wis/stuck"]
    assert row["status"] == "failed" and "never bumped its counter" in row["reason"]
    assert "failed: task 0 never bumped" in " ".join(ran["res"].output.split())


def test_run_refuses_what_does_not_apply(db: str) -> None:
    r = cli("run", "-f", str(WIS / "getppid.c"), "-f", str(DATA / "spin.c"))
    assert r.exit_code == 2 and "run them separately" in r.output
    r = cli("run", "-f", str(WIS / "getppid.c"), "--backend", "callgrind")
    assert r.exit_code == 2 and "--backend callgrind does not apply to will-it-scale test cases" in r.output


def test_run_lists_test_cases(db: str) -> None:
    r = cli("run", "-f", str(WIS / "getppid.c"), "-f", str(WIS / "page_fault.c"), "--list")
    assert r.exit_code == 0, r.output
    assert "wis/getppid" in r.output and "wis/page_fault" in r.output and "Anonymous page faults" in r.output
