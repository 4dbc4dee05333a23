"""Counters: names, the group-read parser on recorded buffers, and -e on this machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cyclebench import counters
from cyclebench.build import BuildSpec, build
from cyclebench.runner import Runner

from conftest import DATA, cli


@pytest.mark.timing
def test_software_events_per_op(db: str, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = cli("run", "-b", "syscall/getpid", "-e", "task-clock,context-switches", "--json", str(out),
            "--min-time", "0.02", "--repeat", "10")
    assert r.exit_code == 0, r.output
    assert "counters per op" in r.output
    row = next(x for x in json.loads(out.read_text())["results"] if x["bench"] == "syscall/getpid")
    ev = row["extra"]["counters"]["events"]
    assert ev["task-clock"]["status"] == "counted"
    assert ev["task-clock"]["per_op"] == pytest.approx(row["ns_per_op"], rel=0.3)  # task-clock is in ns
    assert ev["context-switches"]["per_op"] < 0.01


def test_hardware_events_without_a_pmu(db: str) -> None:
    runner = Runner(build(BuildSpec(sources=(DATA / "chain.c",))).path)
    [error] = runner.probe([[counters.resolve("cycles")]])
    r = cli("run", str(DATA / "chain.c"), "-b", "chain/add200", "-e", "cycles", "--min-time", "0.01",
            "--repeat", "8")
    if error is None:  # a machine with a PMU: cycles per op are counted
        assert r.exit_code == 0 and "counters per op" in r.output
    else:
        assert r.exit_code == 2
        assert "hardware events are not available here" in r.output and "--backend callgrind" in r.output


def test_counters_list_tries_every_event(db: str) -> None:
    r = cli("counters", "list")
    assert r.exit_code == 0, r.output
    line = next(ln for ln in r.output.splitlines() if " task-clock " in ln)
    assert "yes" in line
    assert "events countable here" in r.output


def test_counters_sweep(db: str) -> None:
    r = cli("counters", "sweep", "syscall/getpid")
    assert r.exit_code == 0, r.output
    assert "task-clock" in r.output
