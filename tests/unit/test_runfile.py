"""An export file is validated before anything is written, and imported in one
transaction; every bad file fails with one ExportError (a ValueError) naming the place."""

from __future__ import annotations

import copy
import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cyclebench.store import Store
from cyclebench.store import runfile as rf

from conftest import FIXTURES


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("runfile") / "src.db"
    shutil.copy(FIXTURES / "db" / "c7ecbb2.db", path)
    return rf.run_to_dict(Store(f"sqlite:///{path}"), 1)


@pytest.fixture
def export(exported: dict[str, Any]) -> dict[str, Any]:
    """Run #1 of the c7ecbb2 fixture (2 timing results with samples), as exported now."""
    return copy.deepcopy(exported)


@pytest.fixture
def target(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path / 'dst.db'}")


def counts(store: Store) -> tuple[int, int, int]:
    with store.engine.connect() as conn:
        return tuple(conn.exec_driver_sql(f"SELECT count(*) FROM {t}").scalar()  # type: ignore[return-value]
                     for t in ("runs", "results", "samples"))


def test_export_imports_and_round_trips(export: dict[str, Any], target: Store, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    rf.dump(export, path)
    rid = rf.import_run(target, rf.load(path))
    again = rf.run_to_dict(target, rid)
    again.pop("source"), export.pop("source")
    assert again == export
    assert counts(target) == (1, 2, len(export["results"][0]["samples"]["iters"]) * 2)


def test_export_masks_passwords(tmp_path: Path) -> None:
    path = tmp_path / "src.db"
    shutil.copy(FIXTURES / "db" / "c7ecbb2.db", path)
    data = rf.run_to_dict(Store(f"sqlite:///{path}"), 6)  # its command holds --db postgresql://bench:S3cret@…
    assert "S3cret" not in json.dumps(data) and data["run"]["command"][-1] == "postgresql://bench:***@db/x"


def test_files_without_samples_or_optional_lists_import(export: dict[str, Any], target: Store) -> None:
    data = copy.deepcopy(export)
    data["results"][0].pop("samples")
    for k in ("cal", "disturbed", "pmu"):
        data["results"][1]["samples"].pop(k)
    for k in ("kind", "variant", "created_at", "host_id", "pid", "heartbeat_at"):
        data["results"][1].pop(k, None)
        data["run"].pop(k, None)
    rid = rf.import_run(target, data)
    rows = target.results(rid)
    assert rows[1]["kind"] == "timing" and rows[1]["variant"] == "" and rows[1]["created_at"]
    assert target.samples(rows[0]["id"]) == []
    assert target.samples(rows[1]["id"])[0][2:] == (None, None, None)


BAD: list[tuple[str, Callable[[dict[str, Any]], Any], str]] = [
    ("missing run", lambda d: d.pop("run"), "top level: 'run' is a required property"),
    ("missing results", lambda d: d.pop("results"), "'results' is a required property"),
    ("bad version", lambda d: d.update(version="abc"), "version: 'abc' is not of type 'integer'"),
    ("newer version", lambda d: d.update(version=99), "export version 99 is newer than this cyclebench"),
    ("not an export", lambda d: d.update(format="x"), "not a cyclebench run export"),
    ("missing bench", lambda d: d["results"][0].pop("bench"), "results[0]: 'bench' is a required property"),
    ("missing started_at", lambda d: d["run"].pop("started_at"), "run: 'started_at' is a required property"),
    ("string per_op", lambda d: d["results"][1].update(per_op="12.5"),
     "results[1].per_op: '12.5' is not of type 'number', 'null'"),
    ("huge param", lambda d: d["results"][0].update(param=2**70),
     "results[0].param: 1180591620717411303424 is greater than the maximum of 9223372036854775807"),
    ("huge int per_op", lambda d: d["results"][0].update(per_op=2**70),
     "results[0].per_op = 1180591620717411303424 is an integer beyond 64 bits"),
    ("huge sample", lambda d: d["results"][0]["samples"]["ticks"].__setitem__(2, 2**64),
     "results[0].samples.ticks[2] = 18446744073709551616 does not fit a 64-bit integer"),
    ("string sample", lambda d: d["results"][1]["samples"]["iters"].__setitem__(0, "7"),
     "results[1].samples.iters[0] is \"7\", not an integer"),
    ("null tick", lambda d: d["results"][1]["samples"]["ticks"].__setitem__(0, None),
     "results[1].samples.ticks[0] is null, not an integer"),
    ("mismatched samples", lambda d: d["results"][0]["samples"]["ticks"].pop(),
     "results[0].samples.ticks has 47 values but iters has 48"),
    ("mismatched cal", lambda d: d["results"][1]["samples"]["cal"].append(1),
     "results[1].samples.cal has 49 values but iters has 48"),
    ("samples not lists", lambda d: d["results"][0].update(samples={"iters": 3, "ticks": []}),
     "results[0].samples.iters: 3 is not of type 'array'"),
    ("results not a list", lambda d: d.update(results={"a": 1}), "results: {'a': 1} is not of type 'array'"),
    ("status too long", lambda d: d["run"].update(status="x" * 30), "run.status: 'xxxxxxxxxx"),
    ("bad kind", lambda d: d["results"][0].update(kind="guess"), "results[0].kind: 'guess' is not one of"),
    ("boolean cpu", lambda d: d["run"].update(cpu=True), "run.cpu: True is not of type 'integer', 'null'"),
    ("NUL in text", lambda d: d["run"].update(host="a\x00b"), "NUL character"),
    ("lone surrogate", lambda d: d["run"].update(host="a\ud800"), "unpaired surrogate"),
]


@pytest.mark.parametrize(("case", "spoil", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_export_is_refused_in_one_line_and_writes_nothing(
        export: dict[str, Any], target: Store, tmp_path: Path,
        case: str, spoil: Callable[[dict[str, Any]], Any], message: str) -> None:
    data = copy.deepcopy(export)
    spoil(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data, allow_nan=True))
    with pytest.raises(rf.ExportError) as e:
        rf.load(path)
    assert isinstance(e.value, ValueError)
    assert message in str(e.value) and str(e.value).startswith(str(path)) and "\n" not in str(e.value)
    with pytest.raises(rf.ExportError, match=message.replace("[", r"\[").replace("(", r"\(")[:30]):
        rf.import_run(target, data)  # data straight to import_run is checked just the same
    assert counts(target) == (0, 0, 0)


@pytest.mark.parametrize(("content", "message"), [
    (b'{"format": "cyclebench-run", "host": "caf\xe9"}', "not UTF-8 text (byte 0xe9 at offset 41)"),
    (b"{not json", "not JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b"[]", "not a cyclebench run export"),
    (b"", "not JSON"),
])
def test_unreadable_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(rf.ExportError, match=message.replace("(", r"\(").replace(")", r"\)")):
        rf.load(path)


def test_a_database_failure_mid_import_leaves_nothing(export: dict[str, Any], tmp_path: Path) -> None:
    """One transaction: a result the database rejects (here: a trigger) rolls the run back too."""
    path = tmp_path / "trig.db"
    store = Store(f"sqlite:///{path}")
    con = sqlite3.connect(path)
    con.execute("CREATE TRIGGER no_loop BEFORE INSERT ON results WHEN NEW.bench = 'timer/rdtsc' "
                "BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END")
    con.commit()
    con.close()
    from cyclebench.store import StoreError

    with pytest.raises(StoreError, match="refused by trigger"):
        rf.import_run(store, copy.deepcopy(export))
    assert counts(store) == (0, 0, 0)


def test_nan_and_infinity_import(export: dict[str, Any], target: Store) -> None:
    data = copy.deepcopy(export)
    data["results"][0].update(per_op=float("nan"), ci_high=float("inf"))
    rid = rf.import_run(target, data)
    r = target.results(rid)[0]
    assert r["per_op"] is None and r["ci_high"] == float("inf")  # SQLite stores NaN as NULL


def test_validation_is_fast_for_many_samples(export: dict[str, Any]) -> None:
    import time

    data = copy.deepcopy(export)
    n = 200_000
    data["results"][0]["samples"] = {"iters": list(range(n)), "ticks": list(range(n)), "cal": [None] * n,
                                     "disturbed": [0] * n, "pmu": [None] * n}
    t = time.perf_counter()
    rf.validate(data)
    assert time.perf_counter() - t < 5  # ~0.3 s here; jsonschema item by item would take ~20 s


ROOT = Path(__file__).parents[2]


def published_schema() -> dict[str, Any]:
    return json.loads((ROOT / rf.SCHEMA_FILE).read_text())


def test_published_schema_is_the_one_the_store_generates() -> None:
    """docs/runfile.schema.json is generated from the tables: a new column without a regenerated
    file fails here (python -m cyclebench.store.runfile > docs/runfile.schema.json)."""
    import jsonschema

    text = (ROOT / rf.SCHEMA_FILE).read_text()
    assert text == rf.schema_json(), f"{rf.SCHEMA_FILE} is stale: python -m cyclebench.store.runfile > {rf.SCHEMA_FILE}"
    jsonschema.Draft202012Validator.check_schema(published_schema())
    # the same tables as import's schema; only the sample items are added
    full, fast = published_schema(), rf.schema()
    assert full["properties"]["run"] == fast["properties"]["run"]
    assert set(full["properties"]["results"]["items"]["properties"]) == set(
        fast["properties"]["results"]["items"]["properties"])


def test_published_schema_refuses_what_import_refuses(export: dict[str, Any]) -> None:
    """What import checks in Python beyond its fast schema (sample types and ranges), the
    published schema says: a consumer validating with it refuses the same files."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(published_schema())
    assert not list(validator.iter_errors(export))
    for key, value in (("ticks", "12"), ("iters", None), ("disturbed", 2**31), ("pmu", 2**63)):
        bad = copy.deepcopy(export)
        bad["results"][0]["samples"][key][0] = value
        assert list(validator.iter_errors(bad)), (key, value)
        with pytest.raises(rf.ExportError):
            rf.validate(bad)


@pytest.mark.parametrize("make", ["device", "fifo", "huge"])
def test_import_refuses_what_is_not_a_bounded_regular_file(tmp_path: Path, make: str) -> None:
    """`import /dev/zero` read without end (MemoryError, or the machine's RAM); a FIFO blocks;
    a sparse file beyond MAX_BYTES is refused unread. One line, exit 2, a 1 GiB address-space
    cap on the process so a regression fails instead of filling the machine."""
    import resource
    import subprocess
    import sys

    if make == "device":
        path = Path("/dev/zero")
        says = "/dev/zero: not a regular file"
    elif make == "fifo":
        path = tmp_path / "fifo.json"
        os.mkfifo(path)
        says = "fifo.json: not a regular file"
    else:
        path = tmp_path / "huge.json"
        with path.open("wb") as f:
            f.truncate(256 * 2**20 + 1)  # sparse: no disk used
        says = "huge.json: 256 MiB, larger than any run export (at most 256 MiB)"

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))

    p = subprocess.run([sys.executable, "-m", "cyclebench", "import", str(path), "--db",
                        f"sqlite:///{tmp_path / 'i.db'}"], capture_output=True, text=True, timeout=60, preexec_fn=cap)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert len(p.stderr.strip().splitlines()) == 1 and says in p.stderr, p.stderr


def test_the_run_files_typed_dicts_name_every_column(export: dict[str, Any]) -> None:
    """RunFileRun, RunFileResult and RunFilePrediction name the columns run_to_dict writes (a
    column added to the tables without its key here fails), and the schema's keywords are JsonSchema's."""
    from typing import get_type_hints

    from cyclebench.store.schema import PREDICTION_FIELDS, RESULT_FIELDS, RUN_FIELDS

    assert set(get_type_hints(rf.RunFileRun)) == set(RUN_FIELDS) == set(export["run"])
    assert set(get_type_hints(rf.RunFileResult)) == {*RESULT_FIELDS, "samples", "run_to_run"}
    assert set(export["results"][0]) == {*RESULT_FIELDS, "samples"}  # run_to_run: added by commands._export
    assert set(get_type_hints(rf.RunFilePrediction)) == set(PREDICTION_FIELDS)
    assert set(get_type_hints(rf.RunFileSamples)) == set(rf.SAMPLE_LISTS) == set(export["results"][0]["samples"])
    assert set(export) <= set(get_type_hints(rf.RunFile))
    keywords = set(get_type_hints(rf.JsonSchema))

    def used(node: dict[str, Any]) -> set[str]:  # the keywords of a schema and of those inside it
        inner = [node["items"]] if "items" in node else []
        return set(node).union(*map(used, [*inner, *(node.get("properties") or {}).values()]))

    assert used(rf.full_schema()) <= keywords
