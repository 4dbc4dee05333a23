from __future__ import annotations

import json
from pathlib import Path

from cyclebench.store import Store
from cyclebench.store import runfile as json_report

from conftest import DATA, FAST, cli


def test_json_export_round_trips(db: str, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    r = cli("run", str(DATA / "faults.c"), "-b", "faults/ok", "-b", "faults/verify_fails", "-b", "faults/gated",
            "--json", str(out), "-q", *FAST)
    assert r.exit_code == 1  # verify_fails
    first = json.loads(out.read_text())
    assert first["format"] == "cyclebench-run"
    assert {x["status"] for x in first["results"]} == {"ok", "invalid", "skipped"}
    ok = next(x for x in first["results"] if x["status"] == "ok")
    assert len(ok["samples"]["iters"]) == ok["n_samples"] + ok["n_disturbed"] + (ok["n_trimmed"] or 0) > 0

    other = Store(f"sqlite:///{tmp_path / 'other.db'}")
    rid = json_report.import_run(other, json_report.load(out))
    again = json_report.run_to_dict(other, rid)
    again.pop("source"), first.pop("source")
    assert again == first


def test_export_and_import_commands(db: str, tmp_path: Path) -> None:
    assert cli("run", str(DATA / "faults.c"), "-b", "faults/ok", "-q", *FAST).exit_code == 0
    out = tmp_path / "x.json"
    assert cli("export", "--json", str(out)).exit_code == 0
    r = cli("import", str(out), "--db", f"sqlite:///{tmp_path / 'b.db'}")
    assert r.exit_code == 0 and "imported as run #1" in r.output
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    r = cli("import", str(bad))
    assert r.exit_code == 2 and "not a cyclebench run export" in r.output
