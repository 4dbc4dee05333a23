"""Google Benchmark JSON (``--benchmark_format=json``), as google/benchmark's
``tools/compare.py`` reads it.

``context``: date, host_name, executable, num_cpus, mhz_per_cpu (the timer rate) and
cyclebench's own keys. ``benchmarks``: per benchmark one entry per replicate — each runner
process's own estimate (``run_type: "iteration"``, ``repetitions``, ``repetition_index``),
rows of the same benchmark from several runs adding repetitions — then, with two or more,
the ``_mean``, ``_median`` and ``_stddev`` aggregates as Google Benchmark computes them.
``real_time`` = ``cpu_time`` = nanoseconds per operation, ``time_unit`` always ``ns``
(a Google Benchmark's invocation stored by `run --gbench`: its figure, which of the library's
times experiments.gbench.figures says, its library's own iterations and threads, and its
executable in the context)
(compare.py's geomean fails on other units); cycles~ per op in the user counter
``cycles_per_op``, the timer's own unit in ``ref_cycles_per_op`` (or ``ticks_per_op``).
Stat rows in ms (wall, user, sys, task-clock) are times per run of the command.

Left out, with a note: results without a valid figure (failed, crashed, skipped, invalid,
disturbed) and kinds that are not times (callgrind's Ir, scaling's ops/s, stat counts):
every Google Benchmark entry must carry a time.
"""

from __future__ import annotations

import json
from typing import TypedDict, cast

import numpy as np

from cyclebench.model import PROFILE, SCALING, SIMULATED, STAT, TIMING
from cyclebench.report.export._rows import (
    Group,
    finite,
    first_run,
    groups,
    left_out,
    measured,
    run_of,
    shared,
    slash_name,
    stat_values,
    timing_replicates,
)
from cyclebench.report.export.base import Export, Exported


# The JSON google/benchmark writes with --benchmark_format=json (its JSONReporter,
# src/json_reporter.cc) and tools/compare.py reads, as far as cyclebench fills it in.
class GBenchContext(TypedDict, total=False):
    """``context``: Google Benchmark's keys (the run's start as ``date``, ``host_name``,
    ``executable``, ``num_cpus``, ``mhz_per_cpu`` = the timer rate in MHz) and cyclebench's own
    (``cpu_model``, ``cyclebench_version``, ``cyclebench_runs``: the run ids joined by commas,
    ``timer``, ``timer_unit``); a key without a value is left out."""

    date: str
    host_name: str
    executable: str
    num_cpus: int
    mhz_per_cpu: int
    cpu_model: str
    cyclebench_version: str
    cyclebench_runs: str
    timer: str
    timer_unit: str


class GBenchCounters(TypedDict, total=False):
    """User counters (Google Benchmark writes each as a number beside the times): cycles~ per op
    and the timer's own unit per op (``_counter_name``: ref-cycles, ticks or ns)."""

    cycles_per_op: float
    ref_cycles_per_op: float
    ticks_per_op: float
    ns_per_op: float


class GBenchBenchmark(GBenchCounters, total=False):
    """One entry of ``benchmarks``: a replicate (``run_type`` "iteration", ``repetition_index``)
    or an aggregate over them (``aggregate_name`` mean | median | stddev, ``aggregate_unit``
    "time"); ``real_time`` = ``cpu_time`` in ``time_unit`` (always ns) per operation."""

    name: str
    family_index: int
    per_family_instance_index: int
    run_name: str
    run_type: str
    repetitions: int
    repetition_index: int
    aggregate_name: str
    aggregate_unit: str
    threads: int
    iterations: int
    real_time: float
    cpu_time: float
    time_unit: str


class GBenchRun(TypedDict):
    """The whole document: ``context`` and ``benchmarks``."""

    context: GBenchContext
    benchmarks: list[GBenchBenchmark]


AGGREGATES = ("mean", "median", "stddev")
PROFILE_NOTE = "a profile's function: per call, not per op, in csv"


def _counter_name(unit: str) -> str:
    return unit.replace("-", "_") + "_per_op"


def _replicates(g: Group, data: Export) -> list[dict[str, float]]:
    """Each replicate as {"ns": …, counters…}."""
    out: list[dict[str, float]] = []
    for row in g.rows:
        if not measured(row):
            continue
        if g.kind == TIMING:
            unit = str(row.get("unit") or "")
            gb = row.gbench or {}
            its = gb.get("iterations") or []
            for i, rep in enumerate(timing_replicates(row, run_of(data.runs, row))):
                values = {"ns": rep.ns}
                if len(its) == len(row.per_invocation or ()) and i < len(its):
                    # a Google Benchmark's invocation: the library's own iterations and threads
                    values.update(_iterations=float(its[i]), _threads=float(gb.get("threads") or 1))
                if rep.cycles is not None:
                    values["cycles_per_op"] = rep.cycles
                if rep.timer is not None:
                    values[_counter_name(unit)] = rep.timer
                out.append(values)
        elif g.kind == STAT and row.get("unit") == "ms":
            out += [{"ns": v * 1e6} for v in stat_values(row)]
    return out


def _entry(name: str, index: int, values: dict[str, float], n: int, run_type: str = "iteration",
           aggregate: str | None = None) -> GBenchBenchmark:
    e: GBenchBenchmark = {"name": name if aggregate is None else f"{name}_{aggregate}", "family_index": index,
                         "per_family_instance_index": 0, "run_name": name, "run_type": run_type, "repetitions": n}
    if aggregate is None:
        e["repetition_index"] = int(values.pop("_index"))
    else:
        e["aggregate_name"] = aggregate
        e["aggregate_unit"] = "time"
    e.update(threads=int(values.get("_threads", 1)),
             iterations=int(values.get("_iterations", 1)) if aggregate is None else n,
             real_time=values["ns"], cpu_time=values["ns"], time_unit="ns")
    e.update(cast(GBenchCounters, {k: v for k, v in values.items() if k != "ns" and not k.startswith("_")}))
    return e


def _aggregate(reps: list[dict[str, float]], how: str) -> dict[str, float]:
    keys = [k for k in reps[0] if all(k in r for r in reps)]
    f = {"mean": np.mean, "median": np.median, "stddev": lambda x: np.std(x, ddof=1)}[how]
    return {k: float(f(np.array([r[k] for r in reps]))) for k in keys}


def context(data: Export) -> GBenchContext:
    """Google Benchmark's context keys that cyclebench knows, and its own."""
    run = first_run(data.runs, data.results)
    env = run.get("env") or {}
    cal = run.get("calibration") or {}
    exe = (env.get("gbench") or {}).get("executable")  # a Google Benchmark's run: its executable
    ctx: dict[str, str | int | None] = {"date": run.get("started_at"), "host_name": run.get("host"),
                                        "executable": exe or "cyclebench"}
    cpus = (env.get("cpu_info") or {}).get("logical_cpus")
    if isinstance(cpus, int):
        ctx["num_cpus"] = cpus
    if finite(cal.get("rate_hz")):
        ctx["mhz_per_cpu"] = round(cal["rate_hz"] / 1e6)
    ctx.update({"cpu_model": shared(data.runs, "cpu_model") or run.get("cpu_model"),
                "cyclebench_version": run.get("tool_version"), "cyclebench_runs": ",".join(map(str, data.runs)),
                "timer": cal.get("timer"), "timer_unit": cal.get("unit")})
    return cast(GBenchContext, {k: v for k, v in ctx.items() if v not in (None, "")})


def write(data: Export) -> Exported:
    """The Google Benchmark JSON of ``data.results`` (see the module docstring)."""
    benchmarks: list[GBenchBenchmark] = []
    skipped: dict[str, list[str]] = {"no valid figure": [], "not a time: callgrind Ir, in benchstat and csv": [],
                                     "not a time: ops/s, in benchstat and csv": [],
                                     "stat metric not in ms, in benchstat and csv": [],
                                     PROFILE_NOTE: []}
    family = 0
    for g in groups(data.results):
        if g.kind == PROFILE:
            skipped[PROFILE_NOTE].append(g.label)
            continue
        if g.kind == SIMULATED:
            skipped["not a time: callgrind Ir, in benchstat and csv"].append(g.label)
            continue
        if g.kind == SCALING:
            skipped["not a time: ops/s, in benchstat and csv"].append(g.label)
            continue
        if g.kind == STAT and not all(r.get("unit") == "ms" for r in g.rows):
            skipped["stat metric not in ms, in benchstat and csv"].append(g.label)
            continue
        reps = _replicates(g, data)
        if not reps:
            skipped["no valid figure"].append(g.label)
            continue
        name = slash_name(g, ":")
        for i, r in enumerate(reps):
            benchmarks.append(_entry(name, family, {**r, "_index": i}, len(reps)))
        if len(reps) > 1:
            benchmarks += [_entry(name, family, _aggregate(reps, how), len(reps), "aggregate", how)
                           for how in AGGREGATES]
        family += 1
    doc: GBenchRun = {"context": context(data), "benchmarks": benchmarks}
    return Exported(json.dumps(doc, indent=2, allow_nan=False) + "\n", left_out("gbench", skipped))
