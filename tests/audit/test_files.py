"""Files a user names that cannot be read or written: exit 2, and what was measured before the
output failed stays stored."""

from __future__ import annotations

import pytest

from .conftest import Shared, database
from .harness import Lab

pytestmark = pytest.mark.audit

MISSING = "{T}/missing/dir"
CMP_FAST = ("--repeat", "12", "--min-time", "0.02")


def test_a_missing_benchmark_file_is_refused(lab: Lab) -> None:
    assert lab.run("run", "{T}/nonexistent.c").rc == 2


@pytest.mark.audit_slow
def test_run_json_in_a_missing_directory_keeps_the_measured_run(lab: Lab) -> None:
    """The run is stored and finished before --json fails: exit 2, nothing left 'running'."""
    r = lab.run("run", "-b", "timer/rdtsc", "-q", "--json", f"{MISSING}/r.json")
    assert r.rc == 2, r
    assert lab.n_runs() >= 1
    statuses = lab.run_statuses()
    assert statuses and "running" not in statuses, statuses


OUTPUT_IN_A_MISSING_DIRECTORY = [
    pytest.param(("compare", "timer/rdtsc", "timer/rdtscp", *CMP_FAST, "--json", f"{MISSING}/c.json"),
                 id="compare-json"),
    pytest.param(("scale", "contend/padded", "--tasks", "2", "--duration", "0.3", "--passes", "1", "--cpus", "1,0",
                  "--csv", f"{MISSING}/s.csv"), id="scale-csv", marks=pytest.mark.audit_slow),
    pytest.param(("check", "--cpu", "1", "--json", f"{MISSING}/c.json"), id="check-json"),
]


@pytest.mark.parametrize("argv", OUTPUT_IN_A_MISSING_DIRECTORY)
def test_an_output_in_a_missing_directory_is_exit_2(lab: Lab, argv: tuple[str, ...]) -> None:
    r = lab.run(*argv)
    assert r.rc == 2, r


@pytest.mark.parametrize("argv", [("export", "--json", f"{MISSING}/r.json"),
                                  ("export", "999", "--json", "{T}/x.json")],
                         ids=["export-json-in-a-missing-directory", "export-of-an-unknown-run"])
def test_an_export_that_cannot_be_made_is_exit_2(lab: Lab, shared: Shared, argv: tuple[str, ...]) -> None:
    database(lab, shared, "seed")
    r = lab.run(*argv)
    assert r.rc == 2, r
