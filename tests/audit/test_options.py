"""Option values a user can get wrong: each is refused with exit 2 (one line where the case says
so) before anything is built or measured; values at the edge of their range work."""

from __future__ import annotations

import os

import pytest

from .conftest import NewLab, Shared, database
from .harness import CASES, Lab, one_line

pytestmark = pytest.mark.audit

CMP = ("compare", "timer/rdtsc", "timer/rdtscp")
_N = os.cpu_count() or 1
ABSENT_CPUS = f"{_N + 5},{_N + 7}"  # CPUs this machine does not have

# (argv, one line on stderr as well as exit 2)
REFUSED = {
    "unknown-benchmark-glob": (("run", "-b", "nosuch/*"), True),
    "profile-timeout-nan": (("profile", "--timeout", "nan", "--", "/bin/true"), True),
    "repeat-0": (("run", "-b", "timer/*", "--repeat", "0"), False),
    "cpu-999": (("run", "-b", "timer/*", "--cpu", "999"), False),
    "cpu-negative": (("run", "-b", "timer/*", "--cpu", "-1"), False),
    "param-not-a-number": (("run", "-b", "copy/memcpy", "-p", "abc"), False),
    "param-beyond-64-bits": (("run", "-b", "copy/memcpy", "-p", "9" * 23), True),
    "warmup-1e9-beyond-its-range": (("run", "-b", "timer/rdtsc", "--warmup", "1e9", "-q"), True),
    "tasks-0": (("scale", "contend/*", "--tasks", "0"), False),
    "tasks-not-a-count": (("scale", "contend/*", "--tasks", "abc"), True),
    "tasks-5000": (("scale", "contend/*", "--tasks", "5000"), False),
    "alpha-2": ((*CMP, "--alpha", "2"), False),
    "alpha-0": ((*CMP, "--alpha", "0"), False),
    "scale-cpus-absent": (("scale", "contend/padded", "--tasks", "2", "--cpus", ABSENT_CPUS), False),
    "scale-cpus-not-numbers": (("scale", "contend/padded", "--tasks", "2", "--cpus", "a,b"), False),
    "scale-plot-not-an-image": (("scale", "contend/padded", "--tasks", "2", "--plot", "{T}/x.txt"), False),
    "unknown-event": (("run", "-b", "timer/rdtsc", "-e", "nosuch-event"), True),
    "event-group-unclosed": (("run", "-b", "timer/rdtsc", "-e", "{cycles"), True),
    "cache-geometry-not-numbers": (("run", "-b", "timer/rdtsc", "--backend", "callgrind", "--cache", "I1=abc"), True),
    "compiler-missing": (("run", f"{CASES}/ok.c", "--cc", "{T}/nonexistent/gcc"), True),
    "compiler-that-fails": (("run", f"{CASES}/ok.c", "--cc", "false"), False),
    "scale-cflags-unterminated-quote": (("scale", "contend/shared_add", "--tasks", "2", "--cflags", '"-O2'), False),
    "variants-flags-unterminated-quote": (("variants", f"{CASES}/ok.c", "--flags", '"-O2'), False),
    "stat-pre-unterminated-quote": (("stat", "--pre", '"x', "--", "true"), False),
    "show-without-a-database": (("show", "999"), False),
    "show-negative-run": (("show", "--", "-1"), False),
    "compare-one-benchmark": (("compare", "timer/rdtsc"), False),
    "compare-unknown-benchmark": (("compare", "timer/rdtsc", "nosuch/x"), False),
    "compare-a-glob": (("compare", "timer/*", "timer/rdtsc"), False),
    "selftest-too-few-aa-reps": (("selftest", "--quick", "--aa-reps", "5"), False),
    "selftest-unknown-check": (("selftest", "--quick", "--check", "nosuch"), False),
    "counters-sweep-unknown-benchmark": (("counters", "sweep", "nosuch/bench"), False),
    "counters-sweep-group-size-0": (("counters", "sweep", "timer/rdtsc", "--group-size", "0"), False),
}


@pytest.mark.parametrize(("argv", "single"), REFUSED.values(), ids=REFUSED.keys())
def test_a_bad_option_value_is_refused_with_exit_2(lab: Lab, argv: tuple[str, ...], single: bool) -> None:
    r = lab.run(*argv)
    assert r.rc == 2, r
    if single:
        assert one_line(r), r


@pytest.mark.parametrize("argv", [("run", "-b", "timer/rdtsc", "-q"), ("history", "timer/rdtsc"),
                                  ("selftest", "--quick")], ids=["run", "history", "selftest"])
def test_json_to_a_dash_is_refused_and_writes_no_file_named_dash(lab: Lab, argv: tuple[str, ...]) -> None:
    """`--json -` is stdout for `export` only; elsewhere it wrote a file named '-' where the
    command ran (ui/options.py, _json_file)."""
    r = lab.run(*argv, "--json", "-")
    assert r.rc == 2 and "'-' is not a file name here" in r.text, r
    assert not (lab.cwd / "-").exists()


# against a database holding run #1
REFUSED_WITH_A_RUN = {
    "compare-run-beyond-64-bits": ("compare", "1", "9" * 23),
    "compare-unknown-run": ("compare", "1", "999"),
    "compare-three-runs-of-one": ("compare", "1", "2", "3"),
}


@pytest.mark.parametrize("argv", REFUSED_WITH_A_RUN.values(), ids=REFUSED_WITH_A_RUN.keys())
def test_a_bad_run_number_is_refused_with_exit_2(lab: Lab, shared: Shared, argv: tuple[str, ...]) -> None:
    database(lab, shared, "seed")
    r = lab.run(*argv)
    assert r.rc == 2, r


def test_runs_with_a_negative_count_is_refused_or_lists_all(lab: Lab, shared: Shared) -> None:
    database(lab, shared, "seed")
    assert lab.run("runs", "-n", "-1").rc in (0, 2)


@pytest.mark.parametrize("argv", [("run", "-b", "timer/rdtsc", "--min-time", "0", "-q"),
                                  ("run", f"{CASES}/ok.c", "-q", "-I", "{T}/nonexistent"),
                                  ("counters", "list")],
                         ids=["min-time-0", "include-dir-missing", "counters-list"])
def test_a_value_at_the_edge_of_its_range_works(lab: Lab, argv: tuple[str, ...]) -> None:
    r = lab.run(*argv)
    assert r.rc == 0, r


@pytest.mark.audit_slow
def test_a_warmup_longer_than_the_timeout_times_the_row_out(new_lab: NewLab) -> None:
    """A warm-up beyond --timeout (its range ends at an hour) costs the row a timeout, not the
    run an hour."""
    lab = new_lab(timeout=None)
    r = lab.run("run", "-b", "timer/rdtsc", "--warmup", "3600", "--timeout", "3", "-q")
    assert r.rc == 1, r
    assert "timeout" in lab.statuses("timer/rdtsc")


def test_hardware_events_without_a_pmu_point_to_callgrind(lab: Lab) -> None:
    """On a machine without a PMU the refusal says what to use instead; with one, the run works."""
    r = lab.run("run", "-b", "timer/rdtsc", "-q", "-e", "cycles,instructions")
    assert r.rc == 0 or (r.rc == 2 and "callgrind" in r.text), r
