"""The Go benchmark format (golang.org/x/perf/benchfmt), as benchstat reads it.

A header of configuration lines shared by the results (``goos``, ``goarch``, ``pkg:
cyclebench``, ``cpu`` when every run has the same model: benchstat puts results whose
configuration differs in separate tables), a ``#`` comment naming the runs, then one line
per replicate — each runner process's own estimate, so benchstat sees several samples —::

    Benchmarksyscall/getpid  1  313.2 cycles/op  104.6 ns/op  240.6 ref-cycles/op

The name is cyclebench's after ``Benchmark`` (benchstat shows it without that prefix),
whitespace made ``_``, the parameter as ``/N`` (scaling: ``/tasks=N``), a variant as
``/variant=V``. The iteration count is 1: each line is one estimate, not a count of
operations. Units: ``cycles/op`` (cycles~), ``ns/op`` (benchstat shows sec/op), the timer's
own ``ref-cycles/op`` or ``ticks/op``; callgrind: every simulated event per op (``Ir/op``,
``D1mr/op``…; one that a difference of two runs' counts gave below zero is written 0, with a
note, as the console shows it); scaling: ``ops/s`` (with ``Unit ops/s better=higher``); stat:
the metric's unit per run of the command (ms as ``sec/op``, others as ``UNIT/op``).

Left out, with a note: results without a valid figure (failed, crashed, skipped, invalid,
disturbed) and emulated variants (no timing).
"""

from __future__ import annotations

from cyclebench.model import EMULATED, PROFILE, SCALING, SIMULATED, STAT, TIMING
from cyclebench.report.export._rows import (
    Group,
    Row,
    finite,
    first_run,
    go_token,
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

GOARCH = {"x86_64": "amd64", "aarch64": "arm64", "i686": "386", "armv7l": "arm", "ppc64le": "ppc64le",
          "riscv64": "riscv64", "s390x": "s390x"}


def _num(x: float) -> str:
    return f"{x:.10g}"


def _events(row: Row) -> dict[str, float]:
    events = (row.simulated or {}).get("events") or {"Ir": row.get("per_op")}
    return {str(k): float(v) for k, v in events.items() if finite(v)}


def _below_zero(g: Group) -> list[str]:
    """What a simulated result's line writes as 0 (the note that says so)."""
    return [f"benchstat: {g.label} {k}/op written as 0: the difference of the two runs' counts gave {v:.3g}"
            for row in g.rows if measured(row) for k, v in _events(row).items() if v < 0]


def _lines(g: Group, data: Export) -> list[list[tuple[float, str]]]:
    """Per replicate, its (value, unit) pairs."""
    out: list[list[tuple[float, str]]] = []
    for row in g.rows:
        if not measured(row):
            continue
        if g.kind == TIMING:
            own = go_token(str(row.get("unit") or "")) + "/op"
            for rep in timing_replicates(row, run_of(data.runs, row)):
                pairs = [(rep.cycles, "cycles/op")] if rep.cycles is not None else []
                pairs.append((rep.ns, "ns/op"))
                if rep.timer is not None:
                    pairs.append((rep.timer, own))
                out.append(pairs)
        elif g.kind == SIMULATED:
            # a count per op is a difference of two runs' counts (runner/callgrind.per_op): one that came
            # out below zero (the simulated predictor's state) is written 0, as the console shows it
            pairs = [(max(v, 0.0), go_token(str(k)) + "/op") for k, v in _events(row).items()]
            if pairs:
                out.append(pairs)
        elif g.kind == SCALING:
            v = row.get("median")
            if finite(v):
                out.append([(float(v), "ops/s")])
        elif g.kind == STAT:
            unit = str(row.get("unit") or "count")
            scale, name = (1e-3, "sec/op") if unit == "ms" else (1.0, go_token(unit) + "/op")
            out += [[(v * scale, name)] for v in stat_values(row)]
    return out


def header(data: Export) -> list[str]:
    """The configuration lines and the comment naming the runs."""
    run = first_run(data.runs, data.results)
    machine = ((run.get("env") or {}).get("kernel") or {}).get("machine")
    ids = ", ".join(f"#{i}" for i in data.runs)
    lines = [f"# cyclebench run{'s' if len(data.runs) > 1 else ''} {ids} on {run.get('host') or '?'}, "
             f"{run.get('started_at') or '?'}: Go benchmark format for benchstat (cyclebench docs/exports.md)",
             "goos: linux"]
    if machine:
        lines.append(f"goarch: {GOARCH.get(str(machine), go_token(str(machine)))}")
    lines.append("pkg: cyclebench")
    cpu = shared(data.runs, "cpu_model") if data.runs else None
    if cpu:
        lines.append(f"cpu: {' '.join(str(cpu).split())}")
    return lines


def write(data: Export) -> Exported:
    """The Go benchmark lines of ``data.results`` (see the module docstring)."""
    body: list[str] = []
    skipped: dict[str, list[str]] = {"no valid figure": [], "emulated: no timing": [],
                                     "a profile's function: per call, not per op, in csv": []}
    higher = False
    zeroed: list[str] = []
    for g in groups(data.results):
        if g.kind == EMULATED:
            skipped["emulated: no timing"].append(g.label)
            continue
        if g.kind == PROFILE:
            skipped["a profile's function: per call, not per op, in csv"].append(g.label)
            continue
        lines = _lines(g, data)
        if not lines:
            skipped["no valid figure"].append(g.label)
            continue
        higher = higher or g.kind == SCALING
        zeroed += _below_zero(g) if g.kind == SIMULATED else []
        name = "Benchmark" + go_token(slash_name(g, "="))
        body += [f"{name}\t1\t" + "\t".join(f"{_num(v)} {u}" for v, u in pairs) for pairs in lines]
    units = ["Unit ops/s better=higher"] if higher else []
    return Exported("\n".join([*header(data), *units, *body]) + "\n", (*left_out("benchstat", skipped), *zeroed))
