"""`import` takes every JSON cyclebench writes that holds a run — the run file of `run --json`,
`scale --json` and `export --json` (stat has no --json: its run is exported like any other) —
and names, in one line with exit 2, each one that does not: compare's verdicts, variants'
summary, check's findings, selftest's report, and other tools' formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cyclebench.experiments.selftest import Check, SelftestReport, to_dict
from cyclebench.store import Store
from cyclebench.store import runfile as rf

from conftest import DATA, cli

CHAIN = [str(DATA / "chain.c"), "-b", "chain/add200", "--min-time", "0.01", "--repeat", "10"]


def _refused(path: Path, db: str) -> str:
    before = len(Store(db).list_runs(None))
    r = cli("import", str(path), "--db", db)
    assert r.exit_code == 2 and "Traceback" not in r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1, r.output
    assert len(Store(db).list_runs(None)) == before  # nothing written
    return lines[0]


def _imported(path: Path, db: str) -> int:
    r = cli("import", str(path), "--db", db)
    assert r.exit_code == 0, r.output
    return int(r.output.strip().rsplit("#", 1)[1])


def test_run_scale_and_export_files_import(db: str, tmp_path: Path) -> None:
    target = f"sqlite:///{tmp_path / 'target.db'}"
    run_json, scale_json, stat_json = tmp_path / "run.json", tmp_path / "scale.json", tmp_path / "stat.json"
    assert cli("run", *CHAIN, "-q", "--json", str(run_json), "--label", "k=v").exit_code == 0
    assert cli("scale", "chain/add200", "-f", str(DATA / "chain.c"), "--tasks", "1", "--duration", "0.05",
               "--passes", "1", "--warmup", "0", "--json", str(scale_json)).exit_code == 0
    assert cli("stat", "-r", "2", "-q", "--", "true").exit_code == 0
    assert cli("export", "--json", str(stat_json)).exit_code == 0
    source = Store(db, create=False)
    for path, rid in ((run_json, 1), (scale_json, 2), (stat_json, 3)):
        new = _imported(path, target)
        got = rf.run_to_dict(Store(target, create=False), new)
        want = rf.run_to_dict(source, rid)
        got.pop("source"), want.pop("source")
        assert got == want, path.name
    shown = cli("show", "2", "--db", target)
    assert shown.exit_code == 0 and "chain/add200" in shown.output and "tasks" in shown.output


def test_compare_json_is_named_and_the_run_it_stored_imports(db: str, tmp_path: Path) -> None:
    rows = tmp_path / "compare.json"
    r = cli("compare", "chain/add200", "chain/add400", "-f", str(DATA / "chain.c"), "--repeat", "12",
            "--processes", "2", "--min-time", "0.01", "--json", str(rows))
    assert r.exit_code == 0, r.output
    line = _refused(rows, db)
    assert "this is compare's --json: its verdicts, without the run and the samples" in line
    assert "cyclebench export RUN --json FILE" in line
    # following the hint: the run compare stored, exported, imports with its verdicts
    run_file = tmp_path / "compare-run.json"
    assert cli("export", "--json", str(run_file)).exit_code == 0
    rid = _imported(run_file, db)
    shown = cli("show", str(rid))
    assert shown.exit_code == 0 and "slower" in shown.output
    assert f"run #{rid} · paired, interleaved" in shown.output  # compare's title, under the id it has here
    # compare of stored runs writes the same rows
    stored = tmp_path / "stored.json"
    assert cli("run", *CHAIN, "-q").exit_code == 0 and cli("run", *CHAIN, "-q").exit_code == 0
    last = Store(db).last_run_id()
    assert cli("compare", str(last - 1), str(last), "--json", str(stored)).exit_code == 0
    assert "this is compare's --json" in _refused(stored, db)


def test_variants_and_check_json_are_named(db: str, tmp_path: Path) -> None:
    variants, check = tmp_path / "variants.json", tmp_path / "check.json"
    r = cli("variants", str(DATA / "chain.c"), "--flags", "-O1", "--flags", "-O2", "-b", "chain/add200", "--rounds",
            "6", "--min-time", "0.01", "--json", str(variants))
    assert r.exit_code == 0, r.output
    assert "this is variants' --json: a summary per benchmark and variant, without the samples" in _refused(
        variants, db)
    cli("check", "--json", str(check))  # its exit code says how the machine is set up
    assert "this is check's --json: findings on the machine's settings" in _refused(check, db)


@pytest.mark.parametrize(("data", "says"), [
    (to_dict(SelftestReport((Check("A/A", "no verdict", "none", True),), 1.0, 1)), "this is selftest's --json"),
    ({"context": {"date": "x"}, "benchmarks": [{"name": "a", "real_time": 1.0}]}, "this is Google Benchmark JSON"),
    ({"version": "1.0", "metadata": {}, "benchmarks": []}, "this is pyperf JSON"),
    ({"format": "cyclebench-history", "bench": "a"}, "this is history's --json"),
    ({"format": "cyclebench-future", "bench": "a"}, "this is a 'cyclebench-future' file, not a run"),
    ({"x": 1}, "not a cyclebench run export"),
    ([1, 2], "not a cyclebench run export (a JSON list)"),
], ids=["selftest", "gbench", "pyperf", "history", "other-cyclebench-format", "object", "list"])
def test_other_json_is_named(db: str, tmp_path: Path, data: object, says: str) -> None:
    Store(db).close()
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    line = _refused(path, db)
    assert says in line and line.startswith(f"cyclebench: error: {path}: ")
    if "not a cyclebench run export" in says or "a run" in says:
        assert "import takes a run file (written by run --json, scale --json and export --json)" in line
