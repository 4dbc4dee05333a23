"""What the export writers share: result rows grouped by benchmark, their replicates in the
units the formats use, names, and the cells of the table formats."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cyclebench.model import OK, SCALING, STAT, TIMING, Result
from cyclebench.report.console import comparison_figures, fmt, fmt_interval, has_min, notes, paired_table, sides_headers
from cyclebench.report.export.base import ComparisonRow

Row = Result  # a result record (Export makes every row one)
RunRow = Mapping[str, Any]  # a run's row (model.Run, or a mapping of its columns)


def finite(x: Any) -> bool:
    """A real number (not None, bool, NaN or ±inf)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


@dataclass(frozen=True)
class Group:
    """One benchmark (name, parameter, variant, kind) and its rows, from one run or several."""

    bench: str
    param: int | None
    variant: str
    kind: str
    rows: tuple[Row, ...] = ()

    @property
    def label(self) -> str:
        """``bench[param] (variant)``, as the console names a row."""
        p = "" if self.param is None else f"[{self.param}]"
        return f"{self.bench}{p}" + (f" ({self.variant})" if self.variant else "")


def kind_of(row: Row) -> str:
    return str(row.get("kind") or TIMING)


def groups(results: Iterable[Row]) -> list[Group]:
    """Rows grouped by (kind, bench, param, variant), in the order each first appears."""
    out: dict[tuple[Any, ...], list[Row]] = {}
    for r in results:
        key = (kind_of(r), str(r.get("bench") or ""), r.get("param"), str(r.get("variant") or ""))
        out.setdefault(key, []).append(r)
    return [Group(key[1], key[2], key[3], key[0], tuple(rows)) for key, rows in out.items()]


def measured(row: Row) -> bool:
    """Figures another tool may compare: status ok. Disturbed results (most batches preempted
    or migrated) stay out, as they stay out of cyclebench's own verdicts; failed, crashed,
    invalid, skipped… have no figure to give."""
    return row.get("status") == OK


def replicates(row: Row, key: str) -> list[float]:
    """The row's replicate values of ``key`` (per_op, cycles_per_op): each runner process's
    own estimate (its ``per_process``) when the rounds were spread over processes, else the
    row's one estimate; empty when there is none."""
    per = (row.per_process or {}).get(key)
    if isinstance(per, list) and per:
        return [float(x) for x in per if finite(x)]
    v = row.get(key)
    return [float(v)] if finite(v) else []


def ns_per_unit(row: Row, run: RunRow | None) -> float | None:
    """Nanoseconds per unit of the row's per-op figures: ns_per_op / per_op (the timer rate the
    row was converted with), else 1e9 / the run's timer rate; None when neither is known."""
    if row.get("unit") == "ns":
        return 1.0
    per, ns = row.get("per_op"), row.get("ns_per_op")
    if finite(per) and per and finite(ns):
        return float(ns) / float(per)
    rate = ((run or {}).get("calibration") or {}).get("rate_hz")
    return 1e9 / float(rate) if finite(rate) and rate > 0 else None


@dataclass(frozen=True)
class Replicate:
    """One replicate (a runner process, or a row without processes) of a timing result:
    ns per op, cycles~ per op (None without calibration), the timer's own unit per op (None
    when the timer counts ns) and the run it came from."""

    ns: float
    cycles: float | None
    timer: float | None
    run_id: int | None


def timing_replicates(row: Row, run: RunRow | None) -> list[Replicate]:
    """A timing row's replicates (see Replicate); empty when ns cannot be had."""
    per = replicates(row, "per_op")
    factor = ns_per_unit(row, run)
    if not per or factor is None:
        return []
    cycles: Sequence[float | None] = replicates(row, "cycles_per_op")
    if len(cycles) != len(per):
        cycles = [None] * len(per)
    own = row.get("unit") not in (None, "", "ns")
    return [Replicate(p * factor, c, p if own else None, row.get("run_id"))
            for p, c in zip(per, cycles, strict=True)]


def stat_values(row: Row) -> list[float]:
    """A stat row's value per repetition of the command, in the row's unit."""
    return [float(v) for v in ((row.stat or {}).get("values") or []) if finite(v)]


def go_token(s: str) -> str:
    """``s`` without whitespace or control characters (a Go benchmark name or unit is one field)."""
    return re.sub(r"[\s\x00-\x1f\x7f]+", "_", s.strip()) or "_"


def slash_name(g: Group, sep: str) -> str:
    """The benchmark as a path: ``bench/PARAM`` (scaling: ``bench/tasks{sep}N``) and
    ``/variant{sep}V`` when the row has a variant."""
    name = g.bench
    if g.param is not None:
        name += f"/tasks{sep}{g.param}" if g.kind == SCALING else f"/{g.param}"
    if g.variant:
        name += f"/variant{sep}{g.variant}"
    return name


def left_out(fmt_name: str, what: dict[str, list[str]]) -> tuple[str, ...]:
    """One note per reason: '<format>: left out (<reason>): a, b, c…' (at most 6 names)."""
    out = []
    for why, names in what.items():
        if names:
            shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
            out.append(f"{fmt_name}: {len(names)} result(s) left out ({why}): {shown}")
    return tuple(out)


def run_of(runs: Mapping[int, RunRow], row: Row) -> RunRow | None:
    rid = row.get("run_id")
    return runs.get(rid) if isinstance(rid, int) else None


def first_run(runs: Mapping[int, RunRow], results: Sequence[Row]) -> RunRow:
    """The run of the first row (or the first run given): the context of a header."""
    for r in results:
        run = run_of(runs, r)
        if run is not None:
            return run
    return next(iter(runs.values()), {})


def shared(runs: Mapping[int, RunRow], key: str) -> Any:
    """The value of ``key`` that every run has (None when they differ or none has it)."""
    values = {str(r.get(key)) for r in runs.values() if r.get(key) is not None}
    if len(values) != 1:
        return None
    return next(r.get(key) for r in runs.values() if r.get(key) is not None)


# ---------------------------------------------------------------- table cells
RESULT_HEADERS = ("benchmark", "param", "per op", "±CI95", "unit", "cycles~", "±CI95", "ns/op", "min", "rCV",
                  "notes")


def _interval(row: Row, value: Any, lo: str, hi: str) -> str:
    """The row's CI as the console's ±CI95 columns print it (console.fmt_interval: one half-width
    where it gives both ends, else both)."""
    a, b = row.get(lo), row.get(hi)
    return fmt_interval(float(value), float(a), float(b)) if finite(value) and finite(a) and finite(b) else "-"


def result_cells(row: Row) -> list[str]:
    """The cells of RESULT_HEADERS for one result. per op is the row's estimate in its unit
    (a scaling row's median total ops/s, a stat row's mean); figures of a row with no
    number are '-'; notes as the console gives them (why a row has no number, wide CI…)."""
    bench = str(row.get("bench") or "") + (f" [{row['variant']}]" if row.get("variant") else "")
    param = "" if row.get("param") is None else str(row["param"])
    unit = str(row.get("unit") or "")
    value = row.get("per_op") if row.get("per_op") is not None else row.get("median")
    if value is None or row.get("status") not in ("ok", "invalid", "disturbed"):
        return [bench, param, "-", "-", unit, "-", "-", "-", "-", "-", notes(row)]
    cv = row.get("rcv")
    note = notes(row)
    if kind_of(row) == STAT:
        note = "; ".join([*((row.stat or {}).get("notes") or []), *([note] if note else [])])
    return [bench, param, fmt(value), _interval(row, value, "ci_low", "ci_high"), unit, fmt(row.get("cycles_per_op")),
            _interval(row, row.get("cycles_per_op"), "cycles_ci_low", "cycles_ci_high"), fmt(row.get("ns_per_op")),
            fmt(row.get("min")) if has_min(row) else "-", "-" if not finite(cv) else f"{100 * cv:.1f}%", note]


def compare_headers(paired: bool) -> tuple[str, ...]:
    """The headers of a table of comparisons; ``paired`` (console.paired_table): its Δ is the
    median of the pairs' differences and its B is A + Δ, as the console's table says."""
    return ("A", "B", "param", *sides_headers(paired), "Δ%", "CI of Δ", "p", "verdict", "unit", "notes")


COMPARE_HEADERS = compare_headers(False)


def comparison_cells(r: ComparisonRow, paired: bool) -> list[str]:
    """The cells of compare_headers(paired) for one comparison, as the console shows them
    (console.comparison_figures): another table of the same comparison prints the same numbers."""
    c = r.cmp
    param = "" if r.param is None else str(r.param)
    if c is None:
        return [r.a, r.b, param, "-", "-", "-", "-", "-", "-", "failed", r.unit, r.note]
    return [r.a, r.b, param, *comparison_figures(c, paired), c.verdict, r.unit, r.note]


def comparison_table(rows: Sequence[ComparisonRow]) -> tuple[tuple[str, ...], list[list[str]]]:
    """The headers and cells of a table of ``rows``, paired or not as the console decides it."""
    paired = paired_table(rows)
    return compare_headers(paired), [comparison_cells(r, paired) for r in rows]
