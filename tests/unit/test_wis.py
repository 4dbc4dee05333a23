"""will-it-scale test cases (docs/will-it-scale.md), the parts that need no compiler: recognising a test case,
the cost per operation from intervals (run), will-it-scale's CSV. The rest builds and runs
the engine: tests/engine/test_wis.py, tests/commands/test_wis.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cyclebench.build import BuildSpec, wis
from cyclebench.model import CRASHED, DISTURBED, ERROR, OK, ScaleRun, Series
from cyclebench.stats import scaling

from conftest import DATA

WIS = DATA / "wis"
CASES = {"getppid": "getppid(2) loop through syscall(2)",
         "page_fault": "Anonymous page faults: mmap 16 MiB, write each page, munmap",
         "file_lock": "Per-task fcntl(F_SETLK) write lock and unlock of its own file",
         "pipe_pingpong": "Context switches: one byte ping-ponged over two pipes with a helper task",
         "assert_crash": "Fails an assert after 1000 getppid calls",
         "stuck": "Never bumps its counter: sleeps until it is killed"}


@pytest.mark.parametrize("stem", sorted(CASES))
def test_every_test_case_is_recognised_with_its_description(stem: str) -> None:
    case = wis.recognise(WIS / f"{stem}.c")
    assert case is not None
    assert case.name == f"wis/{stem}" and case.description == CASES[stem]


@pytest.mark.parametrize("name", ["spin.c", "chain.c", "scale_crash.c", "broken.c"])
def test_cyclebench_files_are_not_test_cases(name: str) -> None:
    assert wis.recognise(DATA / name) is None


@pytest.mark.parametrize(("text", "found"), [
    # the two definitions, with other spellings will-it-scale's test cases use
    ('char *testcase_description = "x";\nvoid *testcase(unsigned long long *it, unsigned long nr)\n{ }', True),
    ('char* testcase_description="x";\nvoid testcase(unsigned long long*iterations,unsigned long n){}', True),
    ('const char *testcase_description = "x";\nvoid testcase(unsigned long long *i, unsigned long nr) {}', True),
    # missing one, commented out, only declared, or another signature
    ('void testcase(unsigned long long *i, unsigned long nr) {}', False),
    ('char *testcase_description = "x";\n/* void testcase(unsigned long long *i, unsigned long nr) {} */', False),
    ('// char *testcase_description = "x";\nvoid testcase(unsigned long long *i, unsigned long nr) {}', False),
    ('char *testcase_description = "x";\nvoid testcase(unsigned long long *i, unsigned long nr);', False),
    ('char *testcase_description = "x";\nvoid testcase(unsigned int *i, unsigned long nr) {}', False),
    ('char *testcase_description = "x";\nvoid testcase(unsigned long long i, unsigned long nr) {}', False),
    ('char *testcase_description = "x";\nvoid testcase(unsigned long long *i, char *s) {}', False),
    ('char *testcase_description = "x";\nvoid testcase(void) {}', False),
    # the other signatures will-it-scale's harness links (its tlb_flush1..3, lseek2) and their kin
    ('char *testcase_description = "x";\nvoid testcase(unsigned long *iteration, unsigned long nr) {}', True),
    ('char *testcase_description = "x";\nvoid testcase(unsigned long long *iterations)\n{}', True),
    ('char *testcase_description = "x";\nvoid testcase(uint64_t *it, unsigned int nr) {}', True),
    ('char *testcase_description = "x";\nvoid testcase(unsigned long long int *it, unsigned long int nr) {}', True),
    ('char *testcase_description = "x";\nvoid testcase(unsigned long long *) {}', True),
    ('char *testcase_description = "x";\nint testcase(unsigned long long *i, unsigned long nr) {}', True),
])
def test_recognition_needs_both_definitions(text: str, found: bool) -> None:
    assert (wis.parse(text, Path("t.c")) is not None) is found


UPSTREAM = DATA / "will-it-scale" / "tests"  # will-it-scale's own 60 test cases, unmodified (its README.md)


def test_every_upstream_test_case_is_recognised() -> None:
    """All 60, with the counter type each declares: will-it-scale's harness links every one."""
    files = sorted(UPSTREAM.glob("*.c"))
    assert len(files) == 60
    cases = {f.stem: wis.recognise(f) for f in files}
    assert [stem for stem, c in cases.items() if c is None] == []
    longs = sorted(stem for stem, c in cases.items() if c is not None and c.counter == "unsigned long")
    assert longs == ["tlb_flush1", "tlb_flush2", "tlb_flush3"]
    assert cases["lseek2"].description == "Same file lseek"  # type: ignore[union-attr]  # testcase() without nr
    assert cases["tlb_flush2"].description == "TLB flush of anonymous memory private mapping"  # type: ignore[union-attr]


@pytest.mark.parametrize(("text", "said"), [
    ('char *testcase_description = "x";\nint testcase(int *i) { for (;;) ++*i; }',
     "defines int testcase(int *i), but will-it-scale's harness passes testcase a pointer to a 64-bit"),
    ('void testcase(unsigned long long *i, unsigned long nr) { }', "no char *testcase_description"),
    ('char *testcase_description = "x";\n', "defines testcase_description but no testcase("),
])
def test_a_file_that_is_almost_a_test_case_is_told_why(text: str, said: str) -> None:
    assert wis.parse(text, Path("t.c")) is None
    assert said in (wis.diagnose(text) or "")


@pytest.mark.parametrize("text", ['#include <cyclebench.h>\nCB_BENCH(a, b) { }', "int helper(int x) { return x; }",
                                  "extern void *testcase(unsigned long long *, unsigned long);\nint main(void) { }"])
def test_cyclebench_files_and_helpers_are_not_diagnosed(text: str) -> None:
    assert wis.diagnose(text) is None


def test_spec_refuses_an_unsigned_long_counter_where_long_is_not_64_bits() -> None:
    base = BuildSpec(sources=())
    long_case = wis.recognise(UPSTREAM / "tlb_flush1.c")
    assert long_case is not None
    assert "CB_WIS_LONG_COUNTER=1" in wis.spec(base, long_case, "threads").engine_defines
    assert not any("LONG_COUNTER" in d for d in wis.spec(base, wis.recognise(UPSTREAM / "brk1.c"),  # type: ignore[arg-type]
                                                          "threads").engine_defines)


def test_description_literal_is_read_like_c() -> None:
    text = ('char *testcase_description = "a \\"quoted\\" "\n  "part, // not a comment";\n'
            "void testcase(unsigned long long *i, unsigned long nr) {}")
    case = wis.parse(text, Path("dir/my_case.c"))
    assert case is not None and case.name == "wis/my_case"
    assert case.description == 'a "quoted" part, // not a comment'
    built = 'char *testcase_description = NAME;\nvoid testcase(unsigned long long *i, unsigned long nr) {}'
    assert wis.parse(built, Path("m.c")).description is None  # type: ignore[union-attr]  # not one literal


def test_strip_comments_keeps_strings_and_lines() -> None:
    text = 'a /* x\ny */ b "/* kept */" // gone\nc \'"\' d'
    assert wis.strip_comments(text) == 'a  \n b "/* kept */"  \nc \'"\' d'


def test_spec_per_mode() -> None:
    base = BuildSpec(sources=(), defines=("N=2",), cflags=("-O1",), werror=True)
    case = wis.TestCase(Path("/x/my case.c"), "wis/my case", None)
    t, p = wis.spec(base, case, "threads"), wis.spec(base, case, "processes")
    assert t.sources == p.sources == (case.path,) and not t.werror and t.cflags == ("-O1",)
    assert t.defines == ("N=2", "THREADS") and p.defines == ("N=2",)
    assert t.engine_defines == p.engine_defines == ('CB_WIS_NAME="my case"', 'CB_WIS_FILE="/x/my case.c"')
    with pytest.raises(ValueError):
        wis.spec(base, case, "both")


# ----------------------------------------------------------------------------- op_cost (run -f FILE.c)

def _chain(ticks_per_add: float, fixed: float = 40.0) -> dict[str, Any]:
    """Add-chain readings as engine/scale.c prints them, for a core clock of 1/ticks_per_add cycles per tick."""
    return {"kind": "add", "cpu": 1, "adds": 2048, "short_adds": 256, "imuls": 512, "imul_latency": 3,
            "add_ticks": [fixed + 2048 * ticks_per_add], "imul_ticks": [fixed + 1536 * ticks_per_add],
            "short_ticks": [fixed + 256 * ticks_per_add] * 16, "long_ticks": [fixed + 2048 * ticks_per_add] * 16}


def _run(ticks_per_op: list[float], ops: int = 100_000, wait: float = 0.0, before: float = 0.8, after: float = 0.8,
         status: str = OK) -> ScaleRun:
    """One runner process of 1 task: a warm-up interval, then one interval of ``ops`` operations
    per entry of ticks_per_op, each waiting ``wait`` of its 0.05 s for its CPU."""
    ivs = [{"type": "interval", "i": 0, "dt": 0.05, "ticks": 1, "warmup": True, "deltas": [1], "run_ns": [0],
            "wait_ns": [0]}]
    ivs += [{"type": "interval", "i": i + 1, "dt": 0.05, "ticks": round(t * ops), "warmup": False, "deltas": [ops],
             "run_ns": [int(5e7 * (1 - wait))], "wait_ns": [int(5e7 * wait)]} for i, t in enumerate(ticks_per_op)]
    return ScaleRun("wis/x", None, "processes", 1, status=status, intervals=ivs,
                    start={"unit": "ref-cycles", "cpus": [1], "interval": 0.05, "wis": {"description": "d"},
                           "chain_before": _chain(before)},
                    end={"chain_after": _chain(after)})


def test_op_cost_from_interval_ticks() -> None:
    runs = [_run([500, 510, 490, 505]), _run([495, 500, 520, 500])]
    f = scaling.op_cost(runs, rate_hz=2e9)
    assert f["status"] == OK and f["unit"] == "ref-cycles" and f["method"] == "intervals-2level"
    assert f["per_op"] == pytest.approx(500.0) and f["ci_low"] <= 500 <= f["ci_high"]
    assert f["min"] == pytest.approx(490.0) and f["n_samples"] == f["rounds"] == 8
    assert f["ns_per_op"] == pytest.approx(250.0)  # 500 ticks at 2 GHz
    assert f["cycles_per_op"] == pytest.approx(625.0)  # 1.25 core cycles per tick
    assert f["cycles_ci_low"] < 625 < f["cycles_ci_high"]
    assert f["core_ghz"] == pytest.approx(2.5) and f["chain_agreement"] == pytest.approx(1.0)
    e = f.wis
    assert e is not None and f.line is None and f.processes == 2
    assert e["description"] == "d" and e["ops_per_s"] == pytest.approx(2e6) and e["cpu"] == 1
    assert "before and after" in e["cycles_source"] and "cycles_doubtful" not in e


def test_op_cost_flags_a_clock_that_moved() -> None:
    f = scaling.op_cost([_run([500] * 4, before=0.8, after=0.88), _run([500] * 4)], rate_hz=2e9)
    assert "before and 1.136 after process 1 (-9.1%)" in (f.wis or {})["cycles_doubtful"]
    assert f["cycles_ci_high"] - f["cycles_ci_low"] > 0.08 * f["cycles_per_op"]  # widened by the readings' range


def test_op_cost_drops_disturbed_intervals_and_says_when_all_were() -> None:
    run = _run([500, 500, 500, 900])
    run.intervals[-1]["wait_ns"] = [int(0.4 * 5e7)]  # the slow one waited 40% for its CPU
    f = scaling.op_cost([run], rate_hz=2e9)
    assert f["per_op"] == pytest.approx(500.0) and f["n_disturbed"] == 1 and f["status"] == OK
    f = scaling.op_cost([_run([900] * 4, wait=0.4)], rate_hz=2e9)
    assert f["status"] == DISTURBED and "waited 40%" in f["reason"]


def test_op_cost_of_a_failed_run() -> None:
    f = scaling.op_cost([_run([], status=CRASHED)], rate_hz=2e9)
    assert f["status"] == CRASHED and f.get("per_op") is None
    f = scaling.op_cost([_run([500, 500])], rate_hz=2e9)
    assert f["status"] == ERROR and "2 usable interval(s)" in f["reason"]


# ----------------------------------------------------------------------------- will-it-scale's CSV

def test_wis_csv_rows() -> None:
    def pt(n: int, ops: float | None, idle: float | None = 10.0) -> dict[str, Any]:
        return {"tasks": n, "total_median": ops, "idle_pct": idle}

    threads = Series("wis/g", None, "threads", [pt(1, 1000.4), pt(2, 1900.0, 0.0)])
    procs = Series("wis/g", None, "processes", [pt(1, 1100.0, 50.0), pt(2, None, None)])
    rows = scaling.wis_csv_rows([threads, procs])
    assert rows == [["tasks", "processes", "processes_idle", "threads", "threads_idle", "linear"],
                    [0, 0, "100", 0, "100", 0],
                    [1, 1100, "50.00", 1000, "10.00", 1100],
                    [2, -1, "-1", 1900, "0.00", 2200]]
    only = scaling.wis_csv_rows([threads])
    assert only[2] == [1, -1, "-1", 1000, "10.00", 1000]
