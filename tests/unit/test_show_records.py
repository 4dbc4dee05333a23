"""`show`'s and the stored comparisons' records without a compiler: experiments/show.py rebuilds
a stored run as report/show.py's frozen records, experiments/stored.py compares stored runs into
report.ranked's and report.hosts' records (docs/architecture.md), and `compare --by host
--json` keeps its document's shape."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from cyclebench.experiments import show, stored
from cyclebench.experiments.errors import ExperimentError
from cyclebench.report.hosts import HostCell, HostRow
from cyclebench.report.show import ComparisonTables, RunTables, ShownRun, VariantsTables
from cyclebench.store import Store

from conftest import cli

COMPARISON = {"median_a": 10.0, "median_b": 12.0, "diff": 2.0, "ci_low": 1.5, "ci_high": 2.5, "rel": 0.2,
              "p": 0.001, "pairs": 60, "margin": 0.5, "verdict": "slower"}


def _run(store: Store, host: str, per_op: float, **fields: object) -> int:
    rid = store.begin_run(command=["cyclebench", "run"], host=host, cpu_model=f"{host} cpu", **fields)
    store.add_result(rid, {"bench": "syscall/getpid", "status": "ok", "unit": "ref-cycles", "per_op": per_op,
                           "ci_low": per_op - 1, "ci_high": per_op + 1, "min": per_op - 2})
    store.finish_run(rid, "complete")
    return rid


def test_a_run_is_rebuilt_as_frozen_records(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    rid = _run(store, "lab1", 300.0, cpu=2, summary={"display": {"net": True}})
    shown = show.rebuild(store, store.get_run(rid))  # type: ignore[arg-type]
    assert isinstance(shown, ShownRun) and shown.problem is None and shown.run_id == rid
    (tables,) = shown.tables
    assert isinstance(tables, RunTables) and tables.net and tables.title == f"run #{rid} · CPU 2"
    assert [r.per_op for r in tables.rows] == [300.0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        shown.problem = "x"  # type: ignore[misc]


def test_compare_and_variants_summaries_become_their_tables(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    row = {"a": "x", "b": "y", "param": 8, "unit": "cycles~", "comparison": COMPARISON, "note": "",
           "sequential": None}
    cmp_id = _run(store, "lab1", 1.0, summary={"compare": [row], "display": {"design": "fixed", "alpha": 0.01}})
    var_id = _run(store, "lab1", 1.0, summary={"variants": [{"bench": "b", "variants": [{"disasm": {}}]}]})
    (compared,) = show.rebuild(store, store.get_run(cmp_id)).tables  # type: ignore[arg-type]
    assert isinstance(compared, ComparisonTables)
    assert compared.title == f"run #{cmp_id} · fixed" and compared.alpha == 0.01
    assert compared.rows[0].cmp is not None and compared.rows[0].cmp.verdict == "slower"
    (ranked,) = show.rebuild(store, store.get_run(var_id)).tables  # type: ignore[arg-type]
    assert isinstance(ranked, VariantsTables) and ranked.disasm and ranked.sort == "cycles"


def test_a_damaged_summary_is_a_problem_not_an_exception(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    rid = _run(store, "lab1", 1.0, summary={"compare": [{"a": "x"}]})
    shown = show.rebuild(store, store.get_run(rid))  # type: ignore[arg-type]
    assert shown.tables == () and shown.problem is not None and shown.problem.startswith("KeyError")
    assert [r.bench for r in shown.rows] == ["syscall/getpid"]


def test_host_rows_are_records_and_the_json_keeps_its_shape(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(db)
    ids = [_run(store, "intel1", 300.0), _run(store, "intel1", 310.0), _run(store, "amd1", 150.0)]
    sides = stored.host_sides(store, [])  # each host's newest complete run
    assert {h: [r.id for r in side] for h, side in sides.items()} == {"intel1": [ids[1]], "amd1": [ids[2]]}
    rows = stored.host_rows(store, stored.host_sides(store, ids))
    (row,) = rows
    assert isinstance(row, HostRow) and (row.bench, row.param, row.variant) == ("syscall/getpid", None, "")
    intel = row.hosts["intel1"]
    assert (intel.mean, intel.unit, intel.runs) == (305.0, "ref-cycles", 2)
    assert intel.spread == pytest.approx(50 ** 0.5)  # sd of 300 and 310
    assert row.hosts["amd1"] == HostCell(150.0, 1.0, "ref-cycles", 1)  # one run: its own CI half-width
    out = tmp_path / "h.json"
    r = cli("compare", "--by", "host", *map(str, ids), "--db", db, "--json", str(out))
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["hosts"] == {"intel1": {"runs": ids[:2], "cpu_model": "intel1 cpu"},
                            "amd1": {"runs": [ids[2]], "cpu_model": "amd1 cpu"}}
    (row,) = doc["rows"]
    assert list(row) == ["bench", "param", "variant", "hosts"]
    assert row["hosts"]["amd1"] == {"mean": 150.0, "spread": 1.0, "unit": "ref-cycles", "runs": 1}


def test_stored_runs_ranked_per_benchmark(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    ids = [_run(store, "lab1", v) for v in (300.0, 310.0, 290.0)]
    judged = stored.judge_stored([str(i) for i in ids], store, baseline=str(ids[1]))
    assert judged.sides[0] == (ids[1],) and len(judged.rows) == 2
    (ranked,) = judged.ranked
    assert ranked.label == "syscall/getpid" and [s.baseline for s in ranked.sides] == [True, False, False]
    assert [s.mean for s in ranked.sides] == [310.0, 300.0, 290.0] and ranked.sides[2].best == 288.0
    with pytest.raises(ExperimentError, match="at least two sides"):
        stored.judge_stored([str(ids[0])], store)
