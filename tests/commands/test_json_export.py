from __future__ import annotations

import json
import subprocess
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
    # faults/ok and the loop reference every run measures first: each ok, or disturbed when the test
    # workers beside it took its CPU (seen once with three workers on two CPUs, and once for one of
    # the two alone); either keeps its number and its samples
    status = {x["bench"]: x["status"] for x in first["results"]}
    assert status["faults/verify_fails"] == "invalid" and status["faults/gated"] == "skipped", status
    measured = {b: v for b, v in status.items() if b not in ("faults/verify_fails", "faults/gated")}
    assert "faults/ok" in measured and set(measured.values()) <= {"ok", "disturbed"}, status
    ok = next(x for x in first["results"] if x["status"] in ("ok", "disturbed"))
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


def test_every_stored_kind_exports_to_the_published_schema(db: str, tmp_path: Path) -> None:
    """The run files of run --json and scale --json, and export --json of a run of each command
    that stores one (run, run --backend callgrind, compare, variants, scale, stat, profile), validate
    against docs/runfile.schema.json as any consumer would read it."""
    import shutil

    import jsonschema

    validator = jsonschema.Draft202012Validator(
        json.loads((Path(__file__).parents[2] / json_report.SCHEMA_FILE).read_text()))
    chain = [str(DATA / "chain.c"), "-b", "chain/add200", "-q", *FAST]
    files = {"run --json": tmp_path / "run.json", "scale --json": tmp_path / "scale.json"}
    steps: list[tuple[str, tuple[str, ...]]] = [
        ("run", ("run", *chain, "--json", str(files["run --json"]))),
        ("compare", ("compare", "chain/add200", "chain/add400", "-f", str(DATA / "chain.c"), "--processes", "2",
                     "--repeat", "12", "--min-time", "0.01")),
        ("variants", ("variants", str(DATA / "chain.c"), "--flags", "-O1", "--flags", "-O2", "-b", "chain/add200",
                      "--rounds", "6", "--min-time", "0.01")),
        ("scale", ("scale", "chain/add200", "-f", str(DATA / "chain.c"), "--tasks", "1", "--duration", "0.05",
                   "--passes", "1", "--warmup", "0", "--json", str(files["scale --json"]))),
        ("stat", ("stat", "-r", "2", "-q", "--", "true")),
    ]
    if shutil.which("valgrind"):
        steps.append(("run --backend callgrind", ("run", *chain, "--backend", "callgrind")))
        prog = tmp_path / "prog"
        subprocess.run(["cc", "-O2", str(DATA / "profile_prog.c"), "-o", str(prog)], check=True)
        steps.append(("profile --backend callgrind", ("profile", "--backend", "callgrind", "--", str(prog))))
    kinds = set()
    for what, args in steps:
        r = cli(*args)
        assert r.exit_code == 0, (what, r.output)
        rid = Store(db).last_run_id()
        files[f"export --json of {what}"] = path = tmp_path / f"export-{rid}.json"
        assert cli("export", str(rid), "--json", str(path)).exit_code == 0
        kinds |= {x["kind"] for x in json.loads(path.read_text())["results"]}
    assert {"timing", "scaling", "stat", *(["simulated", "profile"] if shutil.which("valgrind") else [])} <= kinds
    for what, path in files.items():
        data = json.loads(path.read_text())
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]
        assert not errors, (what, errors[:3])
        assert data["results"] and all(x["samples"]["iters"] is not None for x in data["results"]), what
