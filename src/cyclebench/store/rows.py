"""Result records ↔ rows of the results table: the one place a record's typed parts
(model.Result: what was measured, what the analysis added) become the table's ``extra`` JSON
column and come back from it (docs/architecture.md, "Where a new thing goes"). The database,
the run file (store.runfile) and every reader of a stored row go through here; nothing else
knows the column.

The column holds the keys it always held: the measured part's keys as it has them (a runner's
result line in the runner's order, a scaling point's summary, a stat metric, a profile row…),
then what the analysis added, in the order the analysis adds it (ADDED). Which part a stored
row's keys are is told by its kind (a timing row of a will-it-scale test case by its
``ops_per_s``), so a database or run file written before the parts existed reads the same.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from cyclebench.model import (
    EMULATED,
    PROFILE,
    SCALING,
    SIMULATED,
    STAT,
    TIMING,
    Result,
    profile_row,
)
from cyclebench.store import columns

if TYPE_CHECKING:
    from cyclebench.store.schema import ResultRow

# What the analysis adds to a measured part, in the order it adds it (stats.result: disturbance,
# per_process, calibration_rse, counters; then the designs: the allocator, a partial pass, the
# per-invocation figures, the revision; the run-to-run spread last), each a Result field of the
# same name. Keys the runner's line never has.
ADDED = ("disturbance", "per_process", "calibration_rse", "counters", "allocator", "partial", "per_invocation",
         "revision", "run_to_run")
# The measured parts: at most one is set (the kind says which).
MEASURED = ("line", "wis", "gbench", "simulated", "stat", "scale", "profile", "emulated")
# What reading a row sets, never stored: the columns found damaged (sound)
READ = ("damaged",)


def extra_of(r: Result) -> dict[str, object] | None:
    """The ``extra`` JSON column of a record: its measured part's keys, then ADDED's that are set
    (tuples as lists); None when the record has no part."""
    doc: dict[str, object] = {}
    for name in MEASURED:
        part = getattr(r, name)
        if part is not None:
            doc.update(part.to_json() if name == "profile" else part)
    for name in ADDED:
        value = getattr(r, name)
        if value is not None:
            doc[name] = list(value) if isinstance(value, tuple) else value
    return doc or None


def _measured_field(kind: str | None, doc: Mapping[str, object]) -> str:
    """Which Result field a stored row's measured keys are, by its kind."""
    if kind == PROFILE:
        return "profile"
    if kind == STAT:
        return "stat"
    if kind == SCALING:
        return "scale"
    if kind == SIMULATED:
        return "simulated"
    if kind == EMULATED:
        return "emulated"
    if "ops_per_s" in doc:  # timing: a will-it-scale test case's cost
        return "wis"
    return "gbench" if "library_version" in doc else "line"  # a Google Benchmark's, or a runner's line


def parts_of(kind: str | None, extra: object) -> dict[str, object]:
    """The typed fields a stored ``extra`` holds (Result field → value): ADDED's keys (a list
    as the field's tuple), the rest as the measured part of a row of ``kind``; {} for none."""
    if not isinstance(extra, Mapping) or not extra:
        return {}
    out: dict[str, object] = {}
    measured: dict[str, object] = {}
    for k, v in extra.items():
        if k in ADDED:
            out[k] = tuple(v) if k == "per_invocation" and isinstance(v, list) else v
        else:
            measured[k] = v
    if measured:
        name = _measured_field(kind, measured)
        out[name] = profile_row(measured) if name == "profile" else measured
    return out


def row_of(r: Result) -> ResultRow:
    """A record as the results table's columns (but ``id`` and ``run_id``), ``extra`` included:
    what is inserted, and what a run file holds of a result."""
    row = {k: (extra_of(r) if k == "extra" else r[k]) for k in columns.RESULT_FIELDS}
    return cast("ResultRow", row)


class DamagedJSON(str):
    """A JSON column's stored text that does not decode (store.db reads every JSON column through
    lenient_json): read as None by the records, its column named in their ``damaged``."""


def lenient_json(text: str | bytes) -> object:
    """json.loads, except that text which is not JSON comes back as DamagedJSON: one damaged
    row must not stop a query that reads thousands (SQLAlchemy decodes as it fetches)."""
    try:
        return json.loads(text)
    except ValueError:
        return DamagedJSON(text if isinstance(text, str) else text.decode("utf-8", "replace"))


def _number(v: object) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))


def sound(fields: dict[str, object], numeric: frozenset[str], json: frozenset[str]) -> tuple[str, ...]:
    """Read a stored row's damaged columns as None (``fields`` changed in place): a JSON column
    that did not decode (DamagedJSON), a number's column holding something else (SQLite keeps
    whatever was written: ``UPDATE results SET per_op = 'abc'``). Returns their names."""
    bad = tuple(k for k, v in fields.items()
                if (k in json and isinstance(v, DamagedJSON)) or (k in numeric and not _number(v)))
    for k in bad:
        fields[k] = None
    return bad


# the results table's columns a record has as fields (``extra`` is the parts), its numbers' and its JSON's
_FIELDS = frozenset(columns.HEAD_COLUMNS["results"]) - {"extra"}
_NUMERIC = columns.INTEGER["results"] | columns.FLOAT["results"]


def result_of(row: Mapping[str, Any]) -> Result:
    """The record of a stored row (a database row, a run file's result): its columns, and the
    parts of its ``extra`` (by its kind; a row that does not say its kind as guess_kind tells
    it). Keys that are not columns (a run file's ``samples``, ``run_to_run``) are not part of
    it. Damaged columns (sound) read as None, named in its ``damaged``."""
    fields: dict[str, object] = {k: v for k, v in row.items() if k in _FIELDS or k == "extra"}
    bad = sound(fields, _NUMERIC, columns.JSON["results"])
    extra = fields.pop("extra", None)
    fields.update(parts_of(fields.get("kind") or guess_kind({**fields, "extra": extra}), extra))
    return Result.of({**fields, "damaged": bad} if bad else fields)


def guess_kind(fields: Mapping[str, Any]) -> str:
    """The kind of a result row that does not say it, told from its unit and ``extra`` as the
    commands made them (stat rows, emulated variants, scaling rows, callgrind's Ir)."""
    extra = fields.get("extra")
    extra = extra if isinstance(extra, dict) else {}
    unit = fields.get("unit")
    if extra.get("stat"):
        return STAT
    if unit == "emulated" or extra.get("emulated"):
        return EMULATED
    if unit == "ops/s" and "intervals_measured" in extra:
        return SCALING
    if unit == "Ir" or extra.get("simulated"):
        return SIMULATED
    return TIMING
