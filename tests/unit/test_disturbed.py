"""Disturbed is a status (docs/method.md §4), not a footnote. Constructed runner results (no
compiler): a few disturbed batches are dropped as before; when most are, the result keeps
its figures from all of them but its status is ``disturbed``, its reason says what happened
and what to do, and it is left out of verdicts unless asked. The table, the JSON export and
the database carry the status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console

from cyclebench.model import DISTURBED, FAILED_STATUSES, OK, STATUSES, Outcome
from cyclebench.report import console as report
from cyclebench.stats.result import (
    MIGRATED,
    PREEMPTED,
    disturbance,
    disturbed_note,
    result_fields,
    usable_for_verdict,
)

RATE = 2.6e9


def runner_result(flags: list[int], per_op: float = 100.0, slow: float = 40.0, seed: int = 1,
                  cpu: int | None = 3) -> dict[str, Any]:
    """A runner result line of 20 rounds over an 8-step ladder; a disturbed batch took
    ``slow`` times longer per op (another program had the CPU for most of it)."""
    rng = np.random.default_rng(seed)
    n = np.concatenate([rng.permutation(np.arange(1, 9) * 1000) for _ in range(len(flags) // 8)])
    mult = np.where(np.asarray(flags) != 0, slow, 1.0)
    ticks = 50 + per_op * n * mult + rng.normal(0, 20, len(n))
    res: dict[str, Any] = {
        "type": "result", "unit": "ref-cycles", "ladder": 8, "seed": seed, "n": n.tolist(),
        "ticks": ticks.round().astype(int).tolist(), "timer_overhead": {"median": 40, "min": 38},
        "cal": None, "pmu_cycles": None, "disturb_source": "nivcsw+run_delay", "disturbed": flags,
    }
    if cpu is not None:
        res["cpu"] = cpu
    return res


def flags(disturbed: int, total: int = 160, bit: int = PREEMPTED) -> list[int]:
    """``disturbed`` of ``total`` batches flagged, spread over the run."""
    idx = set(np.linspace(0, total - 1, disturbed).round().astype(int).tolist()) if disturbed else set()
    return [bit if i in idx else 0 for i in range(total)]


def fields(res: dict[str, Any], status: str = OK) -> dict[str, Any]:
    return dict(result_fields(Outcome("vfs/mix", None, status, result=res), RATE))


def test_a_few_disturbed_batches_are_dropped() -> None:
    f = fields(runner_result(flags(12)))
    assert f["status"] == OK and f["reason"] is None
    assert f["n_disturbed"] == 12
    assert f["per_op"] == pytest.approx(100, rel=0.01)  # the 40x-slow batches are gone
    assert f["n_samples"] + f["n_disturbed"] + f["n_trimmed"] == 160
    assert disturbed_note(runner_result(flags(12))) is None


def test_mostly_disturbed_is_a_status_with_a_note() -> None:
    res = runner_result(flags(150))
    f = fields(res)
    assert f["status"] == DISTURBED
    assert f["reason"].startswith("150 of 160 batches preempted: another program shared CPU 3; run `cyclebench check`")
    assert "cyclebench check" in f["reason"] and "pin elsewhere" in f["reason"] and "run again" in f["reason"]
    # figures kept, from every batch (nothing dropped, nothing trimmed): stored and shown, marked
    assert f["per_op"] is not None and f["per_op"] > 10 * 100
    assert f["n_disturbed"] == 0 and f["n_samples"] == 160 and f["n_trimmed"] is None
    assert f["disturbance"] == {"batches": 160, "disturbed": 150, "preempted": 150, "migrated": 0}
    assert "disturbed_ignored" not in f["line"]


def test_the_threshold_is_half_the_batches() -> None:
    assert fields(runner_result(flags(80)))["status"] == OK  # half: rejection still applies
    assert fields(runner_result(flags(81)))["status"] == DISTURBED


def test_too_few_clean_batches_left_is_disturbed_too() -> None:
    res = runner_result([0, 0, 1, 1, 0, 1, 1, 1])  # 3 of 8 clean: enough
    assert fields(res)["status"] == DISTURBED  # 5 of 8 > half
    res = runner_result([1, 0, 0, 1, 0, 0, 0, 0])
    assert fields(res)["status"] == OK


def test_migrations_and_preemptions_are_told_apart() -> None:
    f = flags(120, bit=MIGRATED)
    both = [i for i, x in enumerate(f) if x][:2]
    for i in both:
        f[i] |= PREEMPTED
    f[next(i for i, x in enumerate(f) if not x)] = PREEMPTED
    res = runner_result(f)
    assert disturbance(res) == {"batches": 160, "disturbed": 121, "preempted": 3, "migrated": 120}
    note = disturbed_note(res)
    assert note is not None
    assert note.startswith("121 of 160 batches preempted or migrated (3 preempted, 120 migrated): another program "
                           "shared CPU 3 and the runner moved between CPUs;")
    only_mig = disturbed_note(runner_result(flags(120, bit=MIGRATED)))
    assert only_mig is not None and only_mig.startswith("120 of 160 batches migrated: the runner moved between CPUs;")


def test_old_flags_count_as_preempted_and_no_cpu_says_its_cpu() -> None:
    res = runner_result(flags(100, bit=1), cpu=None)
    note = disturbed_note(res)
    assert note is not None and "another program shared its CPU" in note
    legacy = runner_result(flags(100), cpu=None)
    legacy["disturbed"] = [None if x == 0 else 1 for x in legacy["disturbed"]]  # samples read back from a DB
    assert disturbance(legacy)["disturbed"] == 100


def test_a_failed_outcome_keeps_its_status() -> None:
    f = fields(runner_result(flags(150)), status="invalid")
    assert f["status"] == "invalid"


def test_disturbed_is_a_status_but_not_a_failure() -> None:
    assert DISTURBED in STATUSES
    assert DISTURBED not in FAILED_STATUSES  # the run exits 0: the machine, not the code, is at fault


def test_usable_for_verdict() -> None:
    ok = fields(runner_result(flags(3)))
    bad = fields(runner_result(flags(150)))
    assert usable_for_verdict(ok) and not usable_for_verdict(bad)
    assert usable_for_verdict(bad, include_disturbed=True)
    assert not usable_for_verdict({"status": "crashed"}, include_disturbed=True)
    # the paired path sees runner outcomes, before any result row exists
    assert usable_for_verdict(Outcome("a/b", None, OK, result=runner_result(flags(3))))
    storm = Outcome("a/b", None, OK, result=runner_result(flags(150)))
    assert not usable_for_verdict(storm) and usable_for_verdict(storm, include_disturbed=True)
    assert not usable_for_verdict(Outcome("a/b", None, "crashed"), include_disturbed=True)


def render(rows: list[dict[str, Any]], width: int = 200) -> tuple[str, str]:
    """The table as plain text and with its styles (ANSI)."""
    console = Console(record=True, width=width, file=open("/dev/null", "w"), color_system="standard")  # noqa: SIM115
    console.print(report.results_table(rows, wide=True))
    console.file.close()
    return console.export_text(clear=False), console.export_text(styles=True)


def test_the_table_shows_the_figures_dimmed_and_the_note() -> None:
    ok = {**fields(runner_result(flags(3))), "bench": "syscall/getpid"}
    bad = fields(runner_result(flags(150)))
    text, styled = render([ok, bad])
    line = next(ln for ln in text.splitlines() if "vfs/mix" in ln)
    assert report.fmt(bad["per_op"]) in line  # the figures stay, to be seen and stored
    assert "disturbed: 150 of 160 batches preempted" in text
    dim = "\x1b[2"  # SGR 2: faint, alone or with the row's colour
    bad_line = next(ln for ln in styled.splitlines() if "vfs/mix" in ln)
    ok_line = next(ln for ln in styled.splitlines() if "syscall/getpid" in ln)
    assert dim in bad_line.split(report.fmt(bad["per_op"]))[0][-30:] or f"{dim};" in bad_line
    assert dim not in ok_line
    lines = report.environment_lines([ok, bad])
    assert any(ln.startswith("1 result(s) disturbed") for ln in lines), lines
    assert any("disturbed samples: 3 dropped" in ln and "blocking by design does not count" in ln for ln in lines)


def test_the_json_export_and_the_database_carry_the_status(tmp_path: Path) -> None:
    from cyclebench.stats.result import sample_rows
    from cyclebench.store import Store, runfile

    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    run_id = store.begin_run(command=["run"])
    res = runner_result(flags(150))
    f = fields(res)
    store.add_result(run_id, f, sample_rows(res))
    store.finish_run(run_id, "complete")
    row = store.results(run_id)[0]
    assert row["status"] == DISTURBED and row["reason"] == f["reason"]
    data = runfile.run_to_dict(store, run_id)
    path = tmp_path / "run.json"
    runfile.dump(data, path)
    assert json.loads(path.read_text())["results"][0]["status"] == DISTURBED
    other = Store(f"sqlite:///{tmp_path / 'b.db'}")
    new = runfile.import_run(other, runfile.load(path))
    back = other.results(new)[0]
    assert back["status"] == DISTURBED and back["reason"] == f["reason"]
    assert [s[3] for s in other.samples(back["id"])] == res["disturbed"]
