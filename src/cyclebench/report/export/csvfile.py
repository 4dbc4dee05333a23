"""CSV (the csv module, comma-separated, a header line, ``\\n`` line ends): one row per result,
or per comparison when compare's rows are given. The columns are fixed and listed in
docs/exports.md; new columns are only ever added at the end. Numbers are written in full
precision (Python's repr), absent values as empty fields; replicate lists are one field,
values separated by spaces.

Text cells are made safe to open in a spreadsheet: control characters are made visible as the
terminal tables show them (report.text.visible: ESC → ``\\x1b``), and a cell that a spreadsheet
would read as a formula (first character ``=``, ``+``, ``-``, ``@``, tab or CR) gets a leading
single quote, as OWASP's "CSV Injection" page advises; a cell that is a plain number (``-1.5``,
``+3e-2``) stays a number."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from typing import Any, TypedDict, cast

from cyclebench.report.console import notes
from cyclebench.report.export._rows import finite, kind_of
from cyclebench.report.export.base import ComparisonRow, Export, Exported
from cyclebench.report.text import visible

RESULT_COLUMNS = (
    "run_id", "kind", "bench", "param", "variant", "status", "reason", "unit",
    "per_op", "ci_low", "ci_high", "median", "min", "rcv",
    "cycles_per_op", "cycles_ci_low", "cycles_ci_high", "cycles_min", "ns_per_op",
    "net_per_op", "net_ci_low", "net_ci_high", "cycles_net", "cycles_net_ci_low", "cycles_net_ci_high",
    "pmu_cycles_per_op", "n_samples", "n_disturbed", "n_trimmed", "outliers", "rounds", "processes",
    "per_process", "cycles_per_process", "run_to_run_sd", "run_to_run_df", "method", "confidence", "wall_s",
    "created_at", "notes",
)
COMPARISON_COLUMNS = ("a", "b", "param", "unit", "verdict", "median_a", "median_b", "diff", "rel", "ci_low",
                      "ci_high", "p", "pairs", "margin", "sequential", "note")


class CsvResult(TypedDict):
    """A result's row as RESULT_COLUMNS, in their order (docs/exports.md, "csv"); None: absent.
    The result's own columns as model.Result types them, and what csv adds: ``processes`` and
    each process's estimate (``per_process`` in the timer's unit, ``cycles_per_process`` in
    cycles~), this host's run-to-run sd and its degrees of freedom, the row's notes."""

    run_id: int | None
    kind: str | None
    bench: str | None
    param: int | None
    variant: str | None
    status: str | None
    reason: str | None
    unit: str | None
    per_op: float | None
    ci_low: float | None
    ci_high: float | None
    median: float | None
    min: float | None
    rcv: float | None
    cycles_per_op: float | None
    cycles_ci_low: float | None
    cycles_ci_high: float | None
    cycles_min: float | None
    ns_per_op: float | None
    net_per_op: float | None
    net_ci_low: float | None
    net_ci_high: float | None
    cycles_net: float | None
    cycles_net_ci_low: float | None
    cycles_net_ci_high: float | None
    pmu_cycles_per_op: float | None
    n_samples: int | None
    n_disturbed: int | None
    n_trimmed: int | None
    outliers: int | None
    rounds: int | None
    processes: int | None
    per_process: list[float] | None
    cycles_per_process: list[float] | None
    run_to_run_sd: float | None
    run_to_run_df: float | None
    method: str | None
    confidence: float | None
    wall_s: float | None
    created_at: str | None
    notes: str | None


class CsvComparison(TypedDict, total=False):
    """A comparison's row as COMPARISON_COLUMNS: A, B, the parameter, the medians' unit, the
    Comparison's fields (model.ComparisonJSON; absent and ``verdict`` "failed" without one),
    ``sequential`` yes | no, the note."""

    a: str
    b: str
    param: int | None
    unit: str
    verdict: str
    median_a: float
    median_b: float
    diff: float
    rel: float
    ci_low: float
    ci_high: float
    p: float
    pairs: int
    margin: float
    sequential: str
    note: str | None


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # owasp.org/www-community/attacks/CSV_Injection
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def text_cell(s: str) -> str:
    """A text cell a spreadsheet shows as text: controls visible, a formula quoted (``'=…``)."""
    s = visible(s)
    return "'" + s if s.startswith(FORMULA_START) and not _NUMBER.fullmatch(s) else s


def cell(v: Any) -> Any:
    """One CSV field: absent and non-finite values empty, a list of numbers one field of values
    separated by spaces, text through :func:`text_cell`, numbers as they are."""
    if v is None or (isinstance(v, float) and not finite(v)):
        return ""
    if isinstance(v, list):
        return " ".join(repr(float(x)) if finite(x) else "" for x in v)
    return text_cell(v) if isinstance(v, str) else v


def result_record(row: Mapping[str, Any]) -> CsvResult:
    """One result as RESULT_COLUMNS (absent: None)."""
    per = row.per_process or {}
    rr = row.run_to_run or {}
    rec = cast(CsvResult, {c: row.get(c) for c in RESULT_COLUMNS})
    rec.update(kind=kind_of(row), processes=row.processes, per_process=per.get("per_op"),
               cycles_per_process=per.get("cycles_per_op"), run_to_run_sd=rr.get("sd"), run_to_run_df=rr.get("df"),
               notes=notes(row) or None)
    return rec


def comparison_record(r: ComparisonRow) -> CsvComparison:
    """One comparison as COMPARISON_COLUMNS (absent: None)."""
    rec: CsvComparison = {"a": r.a, "b": r.b, "param": r.param, "unit": r.unit, "note": r.note or None,
                          "sequential": "yes" if r.sequential else "no"}
    if r.cmp is not None:
        rec.update(cast(CsvComparison, {k: v for k, v in r.cmp.to_dict().items() if k in COMPARISON_COLUMNS}))
    else:
        rec["verdict"] = "failed"
    return rec


def write(data: Export) -> Exported:
    """The CSV of the comparisons when there are any, else of the results."""
    buf = io.StringIO()
    records: list[CsvComparison] | list[CsvResult]
    if data.comparisons:
        cols, records = COMPARISON_COLUMNS, [comparison_record(r) for r in data.comparisons]
    else:
        cols, records = RESULT_COLUMNS, [result_record(r) for r in data.results]
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for rec in records:
        w.writerow({k: cell(rec.get(k)) for k in cols})
    return Exported(buf.getvalue())
