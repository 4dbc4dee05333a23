"""The titles and the lines under the tables that a command prints and `show` of its run prints
again (docs/architecture.md: report reads records; `show` rebuilds them from the stored run):
pure text from a run's figures, no console."""

from __future__ import annotations

from collections.abc import Sequence

from cyclebench.model import Result, Run, WisCost

SIMULATED_TITLE = " · simulated (callgrind)"  # after the run's title, over callgrind's table


def run_title(run_id: int, cpu: int | None, cc_version: str | None) -> str:
    """The title of `run`'s table: ``run #ID · CPU n · compiler`` (the run row's cpu and the
    build's cc_version; each left out when unknown)."""
    return " · ".join([f"run #{run_id}", *([f"CPU {cpu}"] if cpu is not None else []),
                       *([cc_version] if cc_version else [])])


def compare_title(run_id: int, design: str) -> str:
    """The title of a compare's table: its run and how it was measured and judged."""
    return f"run #{run_id} · {design}"


def wis_run_title(run_id: int, mode: str) -> str:
    """The title of `run` on will-it-scale test cases: one task in ``mode`` (threads |
    processes), the figures in interval ticks per operation."""
    return f"run #{run_id} · 1 task, {mode} mode · interval ticks / operations"


def wis_cost_lines(rows: Sequence[Result]) -> list[str]:
    """Under a test-case run's table, per result row: its description, the 1-task throughput and
    where cycles~ come from (the add chain before and after the run, not during it), and a
    second line when they are doubtful (each from the row's ``wis``)."""
    lines = []
    for r in map(Result.of, rows):
        e: WisCost = r.wis or {}
        parts = [f"{r['bench']}: {e.get('description') or '(no description)'}"]
        if e.get("ops_per_s"):
            parts.append(f"{e['ops_per_s']:.4g} ops/s at 1 task")
        if e.get("cycles_source"):
            parts.append(f"cycles~ from the {e['cycles_source']}")
        lines.append(" · ".join(parts))
        if e.get("cycles_doubtful"):
            lines.append(f"  {r['bench']}: {e['cycles_doubtful']}")
    return lines


def damaged_lines(run: Run, rows: Sequence[Result] = ()) -> list[str]:
    """One line for a run whose stored columns are damaged (JSON that does not decode, text in a
    number's column: store/ read them as empty, model.Run.damaged) and one for each such row
    (`show` under its tables, `runs` under its list)."""
    lines = []
    if run.damaged:
        lines.append(f"cyclebench: run #{run.id}: damaged in the database, read as empty: {', '.join(run.damaged)}")
    for r in rows:
        if r.damaged:
            name = r.bench + ("" if r.param is None else f" [{r.param}]") + (f" [{r.variant}]" if r.variant else "")
            lines.append(f"cyclebench: run #{run.id}, {name}: damaged in the database, read as empty: "
                         f"{', '.join(r.damaged)}")
    return lines
