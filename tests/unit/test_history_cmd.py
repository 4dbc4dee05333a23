"""`cyclebench history` over a stored history (docs/method.md §9): the table, the change point, the
gate, the plot and bad input — on runs written through the store (no compiler, no timing)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cyclebench.store import Store

from conftest import cli


def _history(db: str, values: list[float], bench: str = "hist/op", param: int | None = None) -> list[int]:
    s = Store(db)
    ids = []
    for i, v in enumerate(values):
        rid = s.begin_run(command=["cyclebench", "run"], host="h", cpu=1)
        s.update_run(rid, labels={"extra": "0" if i < 5 else "40"})
        s.add_result(rid, {"bench": bench, "param": param, "status": "ok", "unit": "ref-cycles", "per_op": v / 1.3,
                           "ci_low": v / 1.3 - 0.5, "ci_high": v / 1.3 + 0.5, "cycles_per_op": v,
                           "cycles_ci_low": v - 0.6, "cycles_ci_high": v + 0.6})
        s.finish_run(rid, "complete")
        ids.append(rid)
    s.close()
    return ids


def test_history_marks_the_step_and_gates_on_it(db: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    values = list(300 + rng.normal(0, 1.5, 10))
    values[5:] = [v * 1.10 for v in values[5:]]
    ids = _history(db, values)
    out, plot = tmp_path / "h.json", tmp_path / "h.png"
    r = cli("history", "hist/op", "--json", str(out), "--plot", str(plot), "--fail-on-regression")
    assert r.exit_code == 1, r.output  # the step is within the last 10 runs
    data = json.loads(out.read_text())
    assert [c["run"] for c in data["changes"]] == [ids[5]] and data["changes"][0]["regression"]
    assert data["unit"] == "cycles~" and len(data["points"]) == 10
    assert "▲ slower +10" in r.output and "regression" in r.output
    assert plot.read_bytes()[:4] == b"\x89PNG"
    # older than the window: green again; and the runs before the step never were red
    assert cli("history", "hist/op", "--fail-on-regression", "--window", "4").exit_code == 0
    assert cli("history", "hist/op", "--label", "extra=40").exit_code == 0  # a filter: one level only


def test_history_needs_its_bench_and_a_parameter(db: str) -> None:
    _history(db, [300.0, 301.0, 299.0], bench="copy/x", param=48)
    _history(db, [100.0], bench="copy/x", param=4096)
    r = cli("history", "copy/x")
    assert r.exit_code == 2 and "several parameters (48, 4096): pass -p" in r.output
    assert cli("history", "copy/x", "-p", "48").exit_code == 0
    r = cli("history", "nosuch/x")
    assert r.exit_code == 2 and "no valid result of nosuch/x" in r.output
    assert cli("history", "copy/x", "-p", "48", "--since", "yesterday").exit_code == 2
    assert cli("history", "copy/x", "-p", "48", "--plot", "h.txt").exit_code == 2
    assert cli("history", "copy/x", "-p", "48", "--since", "2999-01-01").exit_code == 2  # nothing that recent


def test_history_json_is_named_by_import(db: str, tmp_path: Path) -> None:
    _history(db, [300.0, 301.0, 299.0, 300.5])
    out = tmp_path / "h.json"
    assert cli("history", "hist/op", "--json", str(out)).exit_code == 0
    assert json.loads(out.read_text())["format"] == "cyclebench-history"
    r = cli("import", str(out))
    assert r.exit_code == 2 and "history's --json" in r.output


def test_history_exports(db: str, tmp_path: Path) -> None:
    """--format on history: json is the history itself; the table formats take the runs'
    results (one replicate a run); stdout then carries only the export."""
    import csv
    import io

    _history(db, [300.0, 301.0, 299.0, 300.5])
    r = cli("history", "hist/op", "--format", "csv")
    assert r.exit_code == 0 and "history of" not in r.stdout
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) == 4 and {x["bench"] for x in rows} == {"hist/op"}
    r = cli("history", "hist/op", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["format"] == "cyclebench-history"
    out = tmp_path / "h.md"
    r = cli("history", "hist/op", "--format", "markdown", "-o", str(out))
    assert r.exit_code == 0 and "history of hist/op" in r.output and "|" in out.read_text()
