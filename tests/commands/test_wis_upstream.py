"""will-it-scale's own 60 test cases (tests/data/will-it-scale, vendored unmodified) through
`cyclebench scale` and `run`: every one recognised and measured in both modes, each a row with
a number or the reason it has none; one that does not link costs its rows only; a C file that
is neither a test case nor a cyclebench file is named in one line and nothing else is measured
in its place; tlb_flush1..3 (their counter is an unsigned long) alone and mixed.

The whole corpus is built twice (threads, processes: 120 runners, each its own build) and swept
at 1 and 2 tasks with short options (0.15 s after 0.05 s of warm-up or until every task counts, one pass, no retries):
the 240 points are most of the time, not the builds (the sweep alone, builds cached: 159 s at
0.3 s after 0.3 s on the 2-vCPU VM at a load of 2). Statuses, names, reasons and which rows
exist are asserted, never rates.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import DATA, cli

UPSTREAM = DATA / "will-it-scale" / "tests"
# A row is asserted to have a number or a reason, never a rate: 3 intervals of 0.05 s (the fewest
# stats.scaling.MIN_KEPT judges disturbed intervals on; 0.3 s in 0.1 s ones before, the same 3).
# 0.05 s of warm-up: a test case that sets up inside testcase() (pread1 makes and writes its file,
# which under load outlasted 0.1 s) is measured once its tasks count, as the warm-up goes on until
# then (engine/scale.c); 0.3 s of fixed warm-up before cost 240 points × 0.25 s = 60 s here.
SHORT = ["--duration", "0.15", "--interval", "0.05", "--warmup", "0.05", "--passes", "1", "--retries", "0"]
MEASURED = ("ok", "disturbed")  # a number: disturbed rows keep theirs, with the note
LINK_FAILS = ('char *testcase_description = "calls a function nobody defines";\n'
              "void no_such_function(void);\n"
              "void testcase(unsigned long long *iterations, unsigned long nr)\n"
              "{ (void)nr; for (;;) { no_such_function(); (*iterations)++; } }\n")

pytestmark = pytest.mark.slow


def _rows(db: Path) -> list[tuple[Any, ...]]:
    if not db.exists():
        return []
    return sqlite3.connect(db).execute("select bench, param, variant, status, reason, median from results "
                                       "order by id").fetchall()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("upstream")
    (d / "link_fails.c").write_text(LINK_FAILS)
    res = cli("scale", "-f", f"{UPSTREAM}/*.c", "-f", str(d / "link_fails.c"), "--tasks", "1,2", "--mode", "both",
              *SHORT, "--db", f"sqlite:///{d / 'r.db'}")
    return {"res": res, "rows": _rows(d / "r.db")}


def test_every_upstream_test_case_is_a_row_in_both_modes(corpus: dict[str, Any]) -> None:
    res, rows = corpus["res"], corpus["rows"]
    stems = sorted(p.stem for p in UPSTREAM.glob("*.c"))
    assert len(stems) == 60
    for stem in stems:
        for mode in ("threads", "processes"):
            got = [(n, s, r, m) for b, n, v, s, r, m in rows if b == f"wis/{stem}" and v == mode]
            assert got, (stem, mode, res.output[-2000:])
            for n, status, reason, median in got:  # a number, or the reason there is none
                # ok only with a number; disturbed keeps its number, or says the host starved it (0 ops/s)
                assert (status in MEASURED and median and median > 0) or (status != "ok" and reason), \
                    (stem, mode, n, status, reason, median)
            if got[0][1] in MEASURED:  # a sweep goes on to 2 tasks unless a run failed
                assert [n for n, *_ in got] == [1, 2] or got[-1][1] not in MEASURED, (stem, mode, got)
    assert {b for b, *_ in rows} == {f"wis/{s}" for s in stems} | {"wis/link_fails"}  # nothing else measured
    assert "Traceback" not in res.output


def test_the_signatures_will_it_scale_accepts_are_measured(corpus: dict[str, Any]) -> None:
    """tlb_flush1..3 count in an unsigned long, lseek2's testcase takes no task index: here,
    on an LP64 host, each measures like the others."""
    for stem in ("tlb_flush1", "tlb_flush2", "tlb_flush3", "lseek2"):
        for mode in ("threads", "processes"):
            got = [(n, s, r) for b, n, v, s, r, _ in corpus["rows"] if b == f"wis/{stem}" and v == mode]
            assert [n for n, *_ in got] == [1, 2] and all(s in MEASURED for _, s, _ in got), (stem, mode, got)


def test_a_test_case_that_does_not_link_costs_its_rows_only(corpus: dict[str, Any]) -> None:
    res, rows = corpus["res"], corpus["rows"]
    assert res.exit_code == 1  # a row without a number: exit 1, after every other row
    bad = [(n, v, s, r) for b, n, v, s, r, _ in rows if b == "wis/link_fails"]
    assert [(n, v, s) for n, v, s, _ in bad] == [(1, "threads", "error"), (1, "processes", "error")], bad
    assert all("does not link" in r and "no_such_function" in r for *_, r in bad), bad
    assert sum(1 for *_, s, _r, _m in rows if s in MEASURED) >= 2 * 60  # the others went on


def test_a_c_file_of_neither_kind_is_named_and_nothing_is_measured(tmp_path: Path) -> None:
    helper = tmp_path / "helper.c"
    helper.write_text("int helper(int x) { return x + 1; }\n")
    db = tmp_path / "r.db"
    for argv in (["-f", str(UPSTREAM / "tlb_flush1.c"), "-f", str(helper)], [str(helper)],
                 [str(UPSTREAM / "getppid1.c"), str(helper), "loop/empty"]):
        r = cli("scale", *argv, "--tasks", "1", *SHORT, "--db", f"sqlite:///{db}")
        assert r.exit_code == 2, (argv, r.output)
        lines = [ln for ln in r.output.splitlines() if ln.strip()]
        assert len(lines) == 1 and str(helper) in lines[0] and "neither a will-it-scale test case" in lines[0], \
            r.output
        assert _rows(db) == []  # not loop/empty, not the test case beside it: nothing
    r = cli("run", str(helper), "--db", f"sqlite:///{db}")
    assert r.exit_code == 2 and "neither a will-it-scale test case" in r.output and _rows(db) == []


def test_a_testcase_with_a_signature_the_harness_cannot_call_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "int_counter.c"
    bad.write_text('char *testcase_description = "x";\nvoid testcase(int *iterations) { for (;;) ++*iterations; }\n')
    r = cli("scale", str(bad), str(UPSTREAM / "getppid1.c"), "--tasks", "1", *SHORT,
            "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert r.exit_code == 2 and "defines void testcase(int *iterations)" in r.output, r.output
    assert _rows(tmp_path / "r.db") == []


@pytest.mark.parametrize("extra", [[], ["-f", str(DATA / "spin.c")], [str(DATA / "spin.c"), "spin/*", "wis/tlb*"]],
                         ids=["alone", "with-a-cyclebench-file", "selected-by-globs"])
def test_tlb_flush_alone_and_beside_a_cyclebench_file(tmp_path: Path, extra: list[str]) -> None:
    db = tmp_path / "r.db"
    tlb = [str(UPSTREAM / f"tlb_flush{i}.c") for i in (1, 2, 3)]
    r = cli("scale", *tlb, *extra, "--tasks", "1", "--mode", "processes", *SHORT, "--db", f"sqlite:///{db}")
    assert r.exit_code == 0, r.output
    got = {(b, s) for b, _n, _v, s, _r, _m in _rows(db)}
    want = {f"wis/tlb_flush{i}" for i in (1, 2, 3)} | ({"spin/cpu_5ms"} if extra else set())
    assert {b for b, _ in got} == want and all(s in MEASURED for _, s in got), got


def test_a_test_case_left_out_by_the_globs_is_said(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    r = cli("scale", str(UPSTREAM / "tlb_flush1.c"), str(DATA / "spin.c"), "spin/*", "--tasks", "1", "--mode",
            "processes", *SHORT, "--db", f"sqlite:///{db}")
    assert r.exit_code == 0, r.output
    assert {b for b, *_ in _rows(db)} == {"spin/cpu_5ms"}
    assert "wis/tlb_flush1 (given as files) not selected by spin/*: not measured" in r.output


def test_run_measures_a_tlb_flush_test_case(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    r = cli("run", str(UPSTREAM / "tlb_flush2.c"), "--min-time", "0.2", "--processes", "1", "--db", f"sqlite:///{db}")
    rows = _rows(db)
    assert r.exit_code == 0, r.output
    assert [(b, s) for b, _n, _v, s, _r, _m in rows if s in MEASURED] == [("wis/tlb_flush2", rows[0][3])], rows


def test_a_test_case_broken_in_one_mode_costs_that_modes_row(tmp_path: Path) -> None:
    src = tmp_path / "threads_only.c"
    src.write_text((UPSTREAM / "getppid1.c").read_text() + "#ifndef THREADS\n#error built for threads only\n#endif\n")
    db = tmp_path / "r.db"
    r = cli("scale", str(src), "--tasks", "1", "--mode", "both", *SHORT, "--db", f"sqlite:///{db}")
    assert r.exit_code == 1, r.output
    by = {v: (s, why) for _b, _n, v, s, why, _m in _rows(db)}
    assert by["threads"][0] in MEASURED, by
    assert by["processes"][0] == "error" and "does not compile (processes, without -DTHREADS)" in by["processes"][1]
    assert "built for threads only" in by["processes"][1]


def test_run_gives_a_test_case_that_does_not_link_its_row(tmp_path: Path) -> None:
    (tmp_path / "link_fails.c").write_text(LINK_FAILS)
    db = tmp_path / "r.db"
    r = cli("run", str(tmp_path / "link_fails.c"), str(UPSTREAM / "getppid1.c"), "--min-time", "0.2",
            "--processes", "1", "--db", f"sqlite:///{db}")
    assert r.exit_code == 1, r.output
    by = {b: (s, why) for b, _n, _v, s, why, _m in _rows(db)}
    assert by["wis/getppid1"][0] in MEASURED, by
    assert by["wis/link_fails"][0] == "error" and "does not link" in by["wis/link_fails"][1], by


def test_a_test_case_that_cannot_run_here_says_why(tmp_path: Path) -> None:
    """Upstream test cases check their system calls with assert() (read3 asserts the O_DIRECT
    open a tmpfs refuses): the row carries the assertion and the errno the call left."""
    src = tmp_path / "missing_file.c"
    src.write_text('#include <assert.h>\n#include <fcntl.h>\nchar *testcase_description = "a file not there";\n'
                   "void testcase(unsigned long long *iterations, unsigned long nr)\n"
                   '{ int fd = open("/nonexistent/cyclebench-wis", O_RDONLY); (void)nr; assert(fd >= 0);\n'
                   "  for (;;) (*iterations)++; }\n")
    db = tmp_path / "r.db"
    r = cli("scale", str(src), "--tasks", "1", "--mode", "both", *SHORT, "--db", f"sqlite:///{db}")
    assert r.exit_code == 1, r.output
    rows = _rows(db)
    assert [(v, s) for _b, _n, v, s, _r, _m in rows] == [("threads", "crashed"), ("processes", "crashed")], rows
    for *_, why, _m in rows:
        assert "Assertion `fd >= 0' failed; errno: No such file or directory" in why, why
    assert "errno: No such file or directory" in r.output
