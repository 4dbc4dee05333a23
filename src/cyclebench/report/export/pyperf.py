"""pyperf's JSON (format version 1.0), as ``python -m pyperf compare_to`` and ``pyperf
show`` read it.

Suite metadata: hostname, cpu_model_name, cpu_count, date and cyclebench's own keys. One
benchmark per cyclebench benchmark (name ``bench[param] (variant)``), one pyperf *run* per
replicate — each runner process's own estimate, rows of the same benchmark from several runs
adding runs — with that one value. pyperf takes values in seconds, bytes or integers, all
greater than zero: timing results go as seconds per operation (ns_per_op · 1e-9), stat
metrics in ms as seconds per run of the command and max-rss (KiB) as bytes.

Left out, with a note: results without a valid figure (failed, crashed, skipped, invalid,
disturbed), values that are not above zero (pyperf refuses them), and what is neither a time
nor a size — callgrind's Ir, scaling's ops/s, cycles~ (which pyperf cannot carry: use the
benchstat or gbench export for cycles), other stat metrics.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, TypedDict, cast

from cyclebench.model import PROFILE, STAT, TIMING
from cyclebench.report.export._rows import (
    Group,
    first_run,
    groups,
    left_out,
    measured,
    run_of,
    shared,
    stat_values,
    timing_replicates,
)
from cyclebench.report.export.base import Export, Exported

VERSION = "1.0"


# pyperf's JSON file format, version 1.0 (pyperf's docs, "JSON format"; pyperf/_bench.py reads it).
class PyperfSuiteMetadata(TypedDict, total=False):
    """The suite's ``metadata``: pyperf's keys (``hostname``, ``cpu_model_name``, ``cpu_count``,
    ``date`` ISO 8601 to the second without a zone) and cyclebench's (``cyclebench_version``,
    ``cyclebench_runs``: the run ids joined by commas); a key without a value is left out."""

    hostname: str
    cpu_model_name: str
    cpu_count: int
    date: str
    cyclebench_version: str
    cyclebench_runs: str


class PyperfRunMetadata(TypedDict, total=False):
    """A pyperf run's ``metadata``: the cyclebench run its value came from (absent: unknown)."""

    cyclebench_run: int


class PyperfRun(TypedDict):
    """One pyperf run: one replicate's ``values`` (one value, in the benchmark's unit)."""

    metadata: PyperfRunMetadata
    values: list[float]


class PyperfBenchmarkMetadata(TypedDict):
    """A benchmark's ``metadata``: ``name`` (``bench[param] (variant)``) and ``unit`` (second or byte)."""

    name: str
    unit: str


class PyperfBenchmark(TypedDict):
    metadata: PyperfBenchmarkMetadata
    runs: list[PyperfRun]


class PyperfSuite(TypedDict):
    """The file: ``version`` "1.0", the suite's metadata, its benchmarks."""

    version: str
    metadata: PyperfSuiteMetadata
    benchmarks: list[PyperfBenchmark]


STAT_UNITS = {"ms": ("second", 1e-3), "KiB": ("byte", 1024.0)}


def _runs(g: Group, data: Export) -> tuple[str, list[tuple[float, int | None]]]:
    """The pyperf unit and the (value, run id) of each replicate."""
    out: list[tuple[float, int | None]] = []
    unit = "second"
    for row in g.rows:
        if not measured(row):
            continue
        if g.kind == TIMING:
            out += [(rep.ns * 1e-9, rep.run_id) for rep in timing_replicates(row, run_of(data.runs, row))]
        elif g.kind == STAT and row.get("unit") in STAT_UNITS:
            unit, scale = STAT_UNITS[str(row["unit"])]
            out += [(v * scale, row.get("run_id")) for v in stat_values(row)]
    return unit, out


def _date(text: Any) -> str | None:
    """pyperf's date format (ISO, seconds, no zone), from a stored ISO time."""
    try:
        return dt.datetime.fromisoformat(str(text)).replace(tzinfo=None).isoformat(timespec="seconds")
    except ValueError:
        return None


def metadata(data: Export) -> PyperfSuiteMetadata:
    run = first_run(data.runs, data.results)
    cpus = ((run.get("env") or {}).get("cpu_info") or {}).get("logical_cpus")
    md: dict[str, str | int | None] = {"hostname": run.get("host"), "cpu_model_name": shared(data.runs, "cpu_model"),
                                       "cpu_count": cpus if isinstance(cpus, int) and cpus > 0 else None,
                                       "date": _date(run.get("started_at")) if run.get("started_at") else None,
                                       "cyclebench_version": run.get("tool_version"),
                                       "cyclebench_runs": ",".join(map(str, data.runs)) or None}
    return cast(PyperfSuiteMetadata, {k: v for k, v in md.items() if v not in (None, "")})


def write(data: Export) -> Exported:
    """The pyperf JSON of ``data.results`` (see the module docstring)."""
    benchmarks: list[PyperfBenchmark] = []
    skipped: dict[str, list[str]] = {"no valid figure": [], "pyperf takes seconds, bytes or integers only": [],
                                     "value not above zero, which pyperf refuses": [],
                                     "a profile's function: per call, not per op, in csv": []}
    for g in groups(data.results):
        if g.kind == PROFILE:
            skipped["a profile's function: per call, not per op, in csv"].append(g.label)
            continue
        if g.kind not in (TIMING, STAT) or (g.kind == STAT and not all(r.get("unit") in STAT_UNITS for r in g.rows)):
            skipped["pyperf takes seconds, bytes or integers only"].append(g.label)
            continue
        unit, values = _runs(g, data)
        kept = [(v, rid) for v, rid in values if v > 0]
        if len(kept) < len(values):
            skipped["value not above zero, which pyperf refuses"].append(
                f"{g.label} ({len(values) - len(kept)} of {len(values)})")
        if not kept:
            if not values:
                skipped["no valid figure"].append(g.label)
            continue
        runs: list[PyperfRun] = [{"metadata": {"cyclebench_run": rid} if rid is not None else {}, "values": [v]}
                                 for v, rid in kept]
        benchmarks.append({"metadata": {"name": g.label, "unit": unit}, "runs": runs})
    doc: PyperfSuite = {"version": VERSION, "metadata": metadata(data), "benchmarks": benchmarks}
    return Exported(json.dumps(doc, indent=1, allow_nan=False) + "\n", left_out("pyperf", skipped))
