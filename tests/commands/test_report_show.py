"""`show` and `runs` of stored runs: readable at 80 columns and never broken by
what a benchmark, the runner or an imported file wrote (rich markup, control characters). No compiler: the runs
are written to the database directly."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cyclebench.store import Store

from conftest import cli, cli_at

REASON = "cannot open MSR device [/dev/cpu/0/msr-nope]"
OSC = "\x1b]0;pwned\x07"


def _ok(**kw: Any) -> dict[str, Any]:
    row = {"bench": "copy/rep_movsb", "param": 65536, "status": "ok", "unit": "ref-cycles", "per_op": 1234.567,
           "ci_low": 1230.1, "ci_high": 1240.3, "min": 1201.9, "rcv": 0.0123, "cycles_per_op": 1789.12,
           "cycles_ci_low": 1780.0, "cycles_ci_high": 1799.5, "ns_per_op": 612.345, "n_samples": 40,
           "outliers": 9, "pmu_cycles_per_op": 1790.0, "pmu_agreement": 1.0004}
    row.update(kw)
    return row


def _store_run(url: str) -> int:
    store = Store(url)
    rid = store.begin_run(command=["cyclebench", "run", "[/oops]", OSC], host="h\x1b[31mred",
                          cpu_model="AMD [i]x[/i]", cpu=1)
    store.add_result(rid, _ok())
    store.add_result(rid, _ok(bench="copy/memcpy", param=64, per_op=0.61234, ci_low=0.6, ci_high=0.63, min=0.58,
                              cycles_per_op=0.8812, cycles_ci_low=0.87, cycles_ci_high=0.89, ns_per_op=0.3012,
                              outliers=0, pmu_cycles_per_op=None))
    store.add_result(rid, {"bench": "crash/msr", "status": "crashed", "reason": f"SIGABRT: {REASON}",
                           "unit": "ref-cycles"})
    store.add_result(rid, {"bench": "[/x]", "status": "failed", "reason": f"[i]x[/i] {OSC}", "unit": "ref-cycles"})
    store.update_run(rid, status="complete")
    return rid


def _show(db: str, columns: int, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI on ``db`` as ``COLUMNS=columns python -m cyclebench ARGS`` prints into pipes, in
    this process (conftest.cli_at): ~0.015 s of CPU a call where a process of its own took ~0.5 s."""
    r = cli_at(columns, *args, env={"CYCLEBENCH_DB": db})
    return subprocess.CompletedProcess(["cyclebench", *args], r.exit_code, r.stdout, r.stderr)


def test_show_at_80_columns_keeps_the_answer(db: str) -> None:
    _store_run(db)
    r = _show(db, 80, "show")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    rule = next(i for i, ln in enumerate(lines) if ln.startswith("─"))
    head = " ".join(lines[max(0, rule - 3):rule])  # a header wraps at its spaces where columns need the room
    for h in ("benchmark", "param", "per", "op", "±CI95", "unit", "cycles~"):
        assert h in head, h
    dropped = [h for h in ("min", "rCV", "ns/op") if h not in head]  # what 80 columns cannot hold
    assert dropped and f"not shown at 80 columns: {', '.join(dropped)}" in " ".join(r.stdout.split())
    # a CI lopsided beyond the digits shown prints both its ends (console.fmt_interval)
    for number in ("1,235", "-4.5/+5.7", "1,789", "0.612", "-0.012/+0.018", "0.881"):
        assert number in r.stdout, number
    assert "…" not in r.stdout
    assert REASON in r.stdout and "[i]x[/i] \\x1b]0;pwned\\x07" in r.stdout and "\x1b" not in r.stdout

    wide = _show(db, 200, "show", "--wide")
    head = next(ln for ln in wide.stdout.splitlines() if "benchmark" in ln)
    for h in ("min", "rCV", "ns/op", "notes"):
        assert h in head, h


def test_show_and_runs_of_hostile_text(db: str, tmp_path: Path) -> None:
    """A reason with a closing tag, a markup-like name, an imported command with
    `[/oops]` and ESC sequences: printed literally, never a MarkupError."""
    rid = _store_run(db)
    r = cli("show", str(rid))
    assert r.exit_code == 0
    assert REASON in r.output and "[/x]" in r.output and "\\x1b]0;pwned\\x07" in r.output
    assert "\x1b" not in r.output

    out = tmp_path / "evil.json"
    assert cli("export", str(rid), "--json", str(out)).exit_code == 0
    data = json.loads(out.read_text())
    data["run"]["command"] = ["[/oops]", "[bold]x", OSC]
    out.write_text(json.dumps(data))
    assert cli("import", str(out)).exit_code == 0
    r = cli("runs")
    assert r.exit_code == 0
    assert "[/oops] [bold]x \\x1b]0;pwned\\x07" in r.output and "h\\x1b[31mred" in r.output
    assert "\x1b" not in r.output


def test_show_of_a_stat_run_at_80_columns(db: str) -> None:
    """show of a stat run prints stat's own table: metric, mean and ± stay at 80 columns."""
    assert cli("stat", "-r", "2", "--", "true").exit_code == 0
    r = _show(db, 80, "show")
    assert r.returncode == 0, r.stderr
    header = next(ln for ln in r.stdout.splitlines() if "metric" in ln)
    assert "mean" in header and "± stddev" in header
    assert "wall" in r.stdout and "task-clock" in r.stdout
    assert all(len(ln) <= 80 for ln in r.stdout.splitlines())


def test_show_of_a_compare_run_at_80_columns(db: str) -> None:
    """show of a compare run adds its verdicts: Δ, its CI and the verdict stay at 80 columns."""
    from conftest import DATA

    r = cli("compare", "chain/add200", "chain/add400", "-f", str(DATA / "chain.c"), "--repeat", "20",
            "--min-time", "0.05")
    assert r.exit_code == 0, r.output
    r = _show(db, 80, "show")
    assert r.returncode == 0, r.stderr
    header = next(ln for ln in r.stdout.splitlines() if "verdict" in ln)
    assert "Δ" in header and "95% CI of Δ" in header
    assert "slower" in r.stdout
    assert all(len(ln) <= 80 for ln in r.stdout.splitlines())


def _revision_run(url: str, confinement: str | None) -> int:
    """A `compare --rev` run as it is stored (its environment's ``revisions``), with ``confinement``
    recorded, or none (stored before it was)."""
    revisions = {"repo": "/src/lib", "a": "a" * 40, "b": "b" * 40, "build": ["make"]}
    if confinement is not None:
        revisions["confinement"] = confinement
    store = Store(url)
    rid = store.begin_run(command=["cyclebench", "compare", "--rev", "a", "--rev", "b"], host="lab", cpu=1,
                          env={"revisions": revisions}, labels={"rev": "b" * 40, "base": "a" * 40},
                          purpose="revision")
    store.add_result(rid, _ok(bench="lib/work", param=None, variant="base", revision="a" * 40))
    store.add_result(rid, _ok(bench="lib/work", param=None, revision="b" * 40))
    store.update_run(rid, summary={"compare": [], "display": {"design": "revisions a → b", "alpha": 0.002}})
    store.finish_run(rid, "complete")
    return rid


@pytest.mark.parametrize(("confinement", "said"), [
    ("bwrap", "revisions built and run in a bwrap sandbox (no network; $HOME, the work tree and the database "
     "hidden)"),
    ("unconfined: --no-sandbox", "revisions built and run UNCONFINED, with the user's rights and the network: "
     "--no-sandbox"),
    (f"unconfined: bwrap refused ({OSC}[red]x[/red])", "UNCONFINED, with the user's rights and the network: bwrap "
     "refused (\\x1b]0;pwned\\x07[red]x[/red])"),  # the probe's stderr line, printed literally
    (None, "revisions' confinement not recorded (a run stored before it was)"),
])
def test_show_of_a_revision_run_says_how_its_code_ran(db: str, confinement: str | None, said: str) -> None:
    """compare --rev, bisect and ci runs record their confinement in their environment; `show`
    says it under the run's identity, confined or not; a run of before says it is not recorded."""
    rid = _revision_run(db, confinement)
    r = _show(db, 200, "show", str(rid))
    assert r.returncode == 0, r.stderr
    assert said in r.stderr and "\x1b" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith(("revisions built and run", "revisions' confinement")))
    assert lines[at - 1].startswith("host lab"), r.stderr  # under the run's identity
    plain = _store_run(db)  # a run of no revision says nothing of it
    r = _show(db, 200, "show", str(plain))
    assert r.returncode == 0 and "confinement" not in r.stderr and "built and run" not in r.stderr, r.stderr
