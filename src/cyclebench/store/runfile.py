"""Lossless JSON export and import of a stored run.

Format (``format: "cyclebench-run"``, ``version: 1``): the run row, and for each result
its row and its raw samples as parallel integer lists ``iters``, ``ticks`` (and ``cal``,
``disturbed``, ``pmu``, each absent or as long). Loading the file and importing it into
another database gives back the same rows and samples, so a run can be moved between
machines and re-analysed. Passwords are not exported (the source URL and the stored command
line are masked).

Only the run file is importable: the other JSON cyclebench writes (compare's verdicts,
variants' summary, check's findings, selftest's report) holds no run and no samples, and is
refused in one line that names it (``what_it_is``), as are Google Benchmark and pyperf files.

An import is checked before anything is written — JSON Schema (built from the tables, so a
string never reaches a number column, an integer never exceeds its column, a text never its
length) plus what a schema cannot say (sample lists of one length, no NUL, valid Unicode) —
and is then inserted in one transaction: a bad file leaves the database as it was, and
fails with one ExportError (a ValueError) naming the place in the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, TypedDict, TypeVar, cast

import jsonschema
from sqlalchemy import JSON, BigInteger, Boolean, Column, Float, Integer, String, Table, Text

from cyclebench.atomic import write_atomic
from cyclebench.model import KINDS, RunToRun
from cyclebench.store import predictions as stored_predictions
from cyclebench.store import urls
from cyclebench.store.db import Store
from cyclebench.store.rows import row_of
from cyclebench.store.schema import (
    PREDICTION_FIELDS,
    RESULT_FIELDS,
    RUN_FIELDS,
    ResultRow,
    RunRow,
    predictions,
    results,
    runs,
)

FORMAT, VERSION = "cyclebench-run", 1
# The most `import` reads: an export takes ~53 bytes a sample (dump's indent=1, all five lists of
# 10-digit numbers), so 256 MiB holds ~5 M samples; more than any run, less than a machine's RAM
# once json.loads has made objects of it.
MAX_BYTES = 256 * 2**20
SAMPLE_LISTS = ("iters", "ticks", "cal", "disturbed", "pmu")
INT64 = (-(2**63), 2**63 - 1)
INT32 = (-(2**31), 2**31 - 1)  # Integer columns are 32-bit on PostgreSQL


class ExportError(ValueError):
    """Unknown run id, or a file that is not a valid cyclebench run export (import refused)."""


# ---------------------------------------------------------------- the file's shape (docs/exports.md, "json")
class RunFileRun(RunRow, total=False):
    """``run``: the run's row of the runs table (store.schema.RunRow). Only ``started_at`` is
    required on import; what is absent the store fills in."""


class _SampleTimes(TypedDict):
    iters: list[int]
    ticks: list[int]


class RunFileSamples(_SampleTimes, total=False):
    """A result's raw batches as parallel lists (the samples table): ``iters`` operations and
    ``ticks`` of the timer per batch, and where taken ``cal`` (ticks of the calibration chain
    timed beside it), ``disturbed`` (1: a context switch or migration hit it), ``pmu`` (PMU
    cycles); None where not taken. All as long as ``iters``."""

    cal: list[int | None]
    disturbed: list[int | None]
    pmu: list[int | None]


class RunFileResult(ResultRow, total=False):
    """One of ``results``: a result's row (store/schema.py's results columns but ``id`` and
    ``run_id``; RESULT_FIELDS; units as model.Result says; ``extra`` the record's typed parts
    as store.rows.row_of writes them), its ``samples`` and, written by
    `run` and `export` where the host's replicate groups taught it, ``run_to_run`` (not
    imported: learnt again where the file lands). Only ``bench`` and ``status`` are required
    on import."""

    samples: RunFileSamples
    run_to_run: RunToRun


class RunFilePrediction(TypedDict, total=False):
    """One of ``predictions`` (runs made with --predict or explain): a static model's row of the
    predictions table (store/schema.py; PREDICTION_FIELDS): the tool, its status, cycles per loop
    trip and per operation, its bounds, ``detail`` (the loop, the CPU model's why, notes)."""

    bench: str
    param: int | None
    variant: str | None
    tool: str
    status: str
    reason: str | None
    tool_version: str | None
    mcpu: str | None
    cpu_model: str | None
    cycles_per_iter: float | None
    trips_per_op: float | None
    cycles_per_op: float | None
    throughput: float | None
    lcd: float | None
    coverage: float | None
    detail: Mapping[str, Any] | None
    created_at: str | None


class RunFileSource(TypedDict, total=False):
    """``source``: where the run was exported from (the database, passwords masked; its id there)."""

    db: str
    run_id: int


class _RunFileKeys(TypedDict):
    format: str
    version: int
    run: RunFileRun
    results: list[RunFileResult]


class RunFile(_RunFileKeys, total=False):
    """The run file (``format`` "cyclebench-run", ``version`` 1; docs/exports.md, "json"):
    one run, its results with their samples, ``source`` and, optionally, ``predictions``."""

    source: RunFileSource
    predictions: list[RunFilePrediction]


# JSON Schema (draft 2020-12) as the builders below write it: the keywords they use.
JsonSchema = TypedDict("JsonSchema", {
    "$schema": str,
    "title": str,
    "description": str,
    "type": str | list[str],
    "const": str,
    "enum": list[str | None],
    "properties": "dict[str, JsonSchema]",
    "required": list[str],
    "items": "JsonSchema",
    "minimum": int,
    "maximum": int,
    "maxLength": int,
}, total=False)


def run_to_dict(store: Store, run_id: int) -> RunFile:
    run = store.get_run(run_id)
    if run is None:
        raise ExportError(f"no run {run_id} in {store.url}")
    out_results = []
    for r in store.results(run_id):
        s = store.samples(r["id"])
        row = cast(RunFileResult, row_of(r))
        row["samples"] = {"iters": [x[0] for x in s], "ticks": [x[1] for x in s], "cal": [x[2] for x in s],
                          "disturbed": [x[3] for x in s], "pmu": [x[4] for x in s]}
        out_results.append(row)
    run_out = cast(RunFileRun, {k: run.get(k) for k in RUN_FIELDS})
    if isinstance(run_out.get("command"), list):
        run_out["command"] = urls.redact_argv(run_out["command"])
    data: RunFile = {"format": FORMAT, "version": VERSION, "run": run_out,
            "source": {"db": urls.display(store.url), "run_id": run_id}, "results": out_results}
    if preds := stored_predictions.of_run(store, run_id):  # optional: runs made with --predict or explain
        data["predictions"] = cast("list[RunFilePrediction]", preds)
    return data


def dump(data: RunFile, path: Path) -> None:
    write_atomic(path, json.dumps(data, indent=1, allow_nan=True) + "\n")


# ---------------------------------------------------------------- the file's schema
def _column_schema(col: Column[Any], required: bool) -> JsonSchema:
    t = col.type
    if isinstance(t, JSON):
        s: JsonSchema = {}
    elif isinstance(t, Boolean):
        s = {"type": "boolean"}
    elif isinstance(t, Float):
        s = {"type": "number"}
    elif isinstance(t, BigInteger):
        s = {"type": "integer", "minimum": INT64[0], "maximum": INT64[1]}
    elif isinstance(t, Integer):
        s = {"type": "integer", "minimum": INT32[0], "maximum": INT32[1]}
    elif isinstance(t, String) and t.length:
        s = {"type": "string", "maxLength": t.length}
    elif isinstance(t, (String, Text)):
        s = {"type": "string"}
    else:  # pragma: no cover - a column type this file does not know yet
        raise TypeError(f"no JSON schema for {col.name}: {t!r}")
    if col.name == "kind":
        s = {"enum": list(KINDS)}
    if s and not required:  # what the store fills in when absent (variant "", created_at now…) may be null
        if "enum" in s:
            s["enum"].append(None)
        else:
            s["type"] = [s["type"], "null"]
    return s


def _table_schema(table: Table, fields: Sequence[str], required: Sequence[str]) -> JsonSchema:
    props = {name: _column_schema(table.c[name], name in required) for name in fields}
    return {"type": "object", "properties": props, "required": list(required)}


SCHEMA_FILE = "docs/runfile.schema.json"  # the published copy of full_schema() (tests compare the two)


def _sample_items(key: str) -> JsonSchema:
    lo, hi = INT32 if key == "disturbed" else INT64
    item: JsonSchema = {"type": "integer", "minimum": lo, "maximum": hi}
    if key not in ("iters", "ticks"):  # cal, disturbed and pmu are null where not taken
        item["type"] = ["integer", "null"]
    return item


def _schema(items: bool) -> JsonSchema:
    result = _table_schema(results, RESULT_FIELDS, ("bench", "status"))
    result["properties"]["samples"] = {
        "type": "object",
        "properties": {k: {"type": "array", **({"items": _sample_items(k)} if items else {})} for k in SAMPLE_LISTS},
        "required": ["iters", "ticks"],
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "cyclebench run file",
        "description": (f"format {FORMAT!r}, version {VERSION}: one stored run (its row of the runs table), "
                        "its results (rows of the results table) and each result's raw samples as parallel "
                        "lists, as run --json, scale --json and export --json write it (docs/exports.md). "
                        "Generated from the store's tables (cyclebench.store.runfile.full_schema); unknown "
                        "keys are allowed and ignored on import."),
        "type": "object",
        "properties": {
            "format": {"const": FORMAT},
            "version": {"type": "integer", "minimum": 1, "maximum": VERSION},
            "run": _table_schema(runs, RUN_FIELDS, ("started_at",)),
            "source": {"type": "object"},
            "results": {"type": "array", "items": result},
            "predictions": {"type": "array", "items": _table_schema(predictions, PREDICTION_FIELDS,
                                                                    ("bench", "tool", "status"))},
        },
        "required": ["format", "version", "run", "results"],
    }


@cache
def schema() -> JsonSchema:
    """JSON Schema (2020-12) an import is validated with, built from the tables of the current
    schema: :func:`full_schema` without the items of the sample lists, which _check_samples checks
    in Python (a run of 10^5 samples validates in milliseconds instead of seconds). Unknown keys
    are allowed (a newer cyclebench may add columns) and ignored on import."""
    return _schema(items=False)


def full_schema() -> JsonSchema:
    """The published JSON Schema (2020-12) of a run file, docs/runfile.schema.json: :func:`schema`
    plus the type and range of every sample (what import checks in Python)."""
    return _schema(items=True)


def schema_json() -> str:
    """:func:`full_schema` as the text of docs/runfile.schema.json (regenerate it with
    ``python -m cyclebench.store.runfile > docs/runfile.schema.json``)."""
    return json.dumps(full_schema(), indent=1) + "\n"


def _where(path: Sequence[Any]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "top level"


def _short(text: str, n: int = 160) -> str:
    return text if len(text) <= n else text[:n] + "…"


def _check_samples(data: RunFile, name: str) -> None:
    for i, r in enumerate(data["results"]):
        smp = r.get("samples")
        if smp is None:
            continue
        n = len(smp["iters"])
        for key in SAMPLE_LISTS:
            values = smp.get(key)
            if values is None:
                continue
            where = f"results[{i}].samples.{key}"
            if len(values) != n:
                raise ExportError(f"{name}: {where} has {len(values)} values but iters has {n}: "
                                  "the sample lists must be as long as each other")
            lo, hi = INT32 if key == "disturbed" else INT64
            nullable = key not in ("iters", "ticks")
            for j, v in enumerate(values):
                if v is None and nullable:
                    continue
                if type(v) is not int:
                    raise ExportError(f"{name}: {where}[{j}] is {_short(json.dumps(v))}, not an integer")
                if not lo <= v <= hi:
                    raise ExportError(f"{name}: {where}[{j}] = {v} does not fit a {64 if hi == INT64[1] else 32}-bit "
                                      "integer")


def _check_float_columns(data: RunFile, name: str) -> None:
    """An integer literal in a float column must fit 64 bits too (databases bind it as one)."""
    rows = [("run", runs, data["run"])] + [(f"results[{i}]", results, r) for i, r in enumerate(data["results"])]
    for where, table, row in rows:
        for k, v in row.items():
            if (k in table.c and isinstance(table.c[k].type, Float) and type(v) is int
                    and not INT64[0] <= v <= INT64[1]):
                raise ExportError(f"{name}: {where}.{k} = {v} is an integer beyond 64 bits (write it as a float)")


IMPORTABLE = "import takes a run file (written by run --json, scale --json and export --json)"
_STORED = "the run that command stored imports once exported (cyclebench export RUN --json FILE)"


def _rows_with(data: list[Any], keys: set[str]) -> bool:
    return bool(data) and all(isinstance(x, dict) and keys <= set(x) for x in data)


def what_it_is(data: Any) -> str:
    """What a JSON document that is not a run file is, as one clause of the refusal: the
    other files cyclebench writes (compare's, variants', check's and selftest's --json) are
    recognised by their shape and named with why they cannot become a run (no run row, no
    raw samples), as are the formats other tools read (Google Benchmark, pyperf)."""
    if isinstance(data, list):
        if _rows_with(data, {"a", "b", "comparison"}):
            return (f"this is compare's --json: its verdicts, without the run and the samples they came from; "
                    f"{_STORED}")
        if _rows_with(data, {"bench", "variants"}):
            return (f"this is variants' --json: a summary per benchmark and variant, without the samples; "
                    f"{_STORED}")
        if _rows_with(data, {"name", "status", "detail", "fix"}):
            return "this is check's --json: findings on the machine's settings, not a measurement"
        return f"not a cyclebench run export (a JSON list): {IMPORTABLE}"
    if isinstance(data, dict):
        fmt = data.get("format")
        if {"passed", "checks"} <= set(data):
            return "this is selftest's --json: its checks of cyclebench itself, not a stored run"
        if "benchmarks" in data and "context" in data:
            return ("this is Google Benchmark JSON: statistics per benchmark, without the raw samples and "
                    f"the environment a run keeps; {IMPORTABLE}")
        if "benchmarks" in data and "metadata" in data:
            return f"this is pyperf JSON: values per benchmark, without the raw batches a run keeps; {IMPORTABLE}"
        if fmt == "cyclebench-history":
            return ("this is history's --json: per-run estimates and change points of one benchmark, taken from "
                    f"runs stored elsewhere; {IMPORTABLE}")
        if isinstance(fmt, str) and fmt.startswith("cyclebench-"):
            return f"this is a '{_short(fmt, 40)}' file, not a run: {IMPORTABLE}"
    return f"not a cyclebench run export (no \"format\": \"{FORMAT}\"): {IMPORTABLE}"


def validate(data: Any, name: str = "import") -> None:
    """Raise ExportError (one line, naming the place) unless ``data`` is an importable run;
    a file cyclebench wrote that is not a run is named (what_it_is)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ExportError(f"{name}: {what_it_is(data)}")
    version = data.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
        raise ExportError(f"{name}: export version {version} is newer than this cyclebench (it reads {VERSION})")
    validator = jsonschema.Draft202012Validator(schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        raise ExportError(f"{name}: {_where(error.absolute_path)}: {_short(error.message)}")
    _check_samples(data, name)
    _check_float_columns(data, name)
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=True)
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ExportError(f"{name}: a string holds an unpaired surrogate: not valid Unicode") from None
    except (ValueError, RecursionError) as e:
        raise ExportError(f"{name}: cannot be stored: {_short(str(e))}") from None
    if "\\u0000" in text:
        raise ExportError(f"{name}: a string holds a NUL character (\\u0000), which databases cannot store")


def load(path: Path) -> RunFile:
    """Read and validate an export; raises ExportError (a ValueError) for any bad file: one
    that is not a regular file (/dev/zero, a FIFO: endless or blocking) or holds more than
    MAX_BYTES is refused before it is read."""
    import stat

    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise ExportError(f"{path}: not a regular file (an export is a file written by `cyclebench export`)")
        if st.st_size > MAX_BYTES:
            raise ExportError(f"{path}: {st.st_size / 2**20:.0f} MiB, larger than any run export "
                              f"(at most {MAX_BYTES // 2**20} MiB)")
        with path.open("rb") as f:
            raw = f.read(MAX_BYTES + 1)  # bounded even if the file grows meanwhile
    except OSError as e:
        raise ExportError(f"{path}: cannot read: {e.strerror or e}") from None
    if len(raw) > MAX_BYTES:
        raise ExportError(f"{path}: larger than any run export (at most {MAX_BYTES // 2**20} MiB)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ExportError(f"{path}: not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ExportError(f"{path}: not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise ExportError(f"{path}: not importable JSON: nested too deeply") from None
    validate(data, str(path))
    return cast(RunFile, data)


_Row = TypeVar("_Row", RunFileRun, RunFileResult, RunFilePrediction)


def _coerce(table: Table, row: _Row, fields: Sequence[str]) -> _Row:
    """The row's ``fields`` (those of ``table``; others, such as a result's ``samples``, left
    out) as their columns hold them: 2**70 in a float column is a float, 3.0 in an integer
    column an int (the schema allowed both)."""
    out: dict[str, object] = {}
    for k in fields:
        v = row.get(k)
        t = table.c[k].type
        if v is not None and isinstance(t, Float) and isinstance(v, int):
            v = float(v)
        elif v is not None and isinstance(t, Integer) and isinstance(v, float):
            v = int(v)
        out[k] = v
    return cast(_Row, out)


def import_run(store: Store, data: RunFile) -> int:
    """Insert an exported run (new ids) in one transaction; returns the new run id. Raises
    ExportError if ``data`` is not a valid export (nothing is written), StoreError if the
    database fails (nothing is written either)."""
    validate(data)
    run = _coerce(runs, data["run"], RUN_FIELDS)
    run["status"] = run.get("status") or "complete"
    rows = []
    for r in data["results"]:
        smp = r.get("samples") or {}
        iters, ticks = smp.get("iters") or [], smp.get("ticks") or []
        n = len(iters)
        cal = smp.get("cal") or [None] * n
        dist = smp.get("disturbed") or [None] * n
        pmu = smp.get("pmu") or [None] * n
        rows.append((_coerce(results, r, RESULT_FIELDS), list(zip(iters, ticks, cal, dist, pmu, strict=True))))
    run_id = store.insert_run(run, rows)
    if data.get("predictions"):
        stored_predictions.add(store, run_id, [_coerce(predictions, p, PREDICTION_FIELDS) for p in data["predictions"]])
    return run_id


if __name__ == "__main__":  # python -m cyclebench.store.runfile > docs/runfile.schema.json
    import sys

    sys.stdout.write(schema_json())
