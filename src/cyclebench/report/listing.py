"""Tables that list rather than measure: the suite (`run --list`), will-it-scale test cases
(`scale --list`), stored runs (`runs`), counter events (`counters list`) and the events a sweep
found (`counters sweep`). Each on report.fit's one layout rule."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from rich.text import Text

from cyclebench.model import Run
from cyclebench.report.fit import Column, FitTable
from cyclebench.report.text import safe_text, visible

NAME_FOLD = 20


def bench_list_table(benches: Iterable[Any], wide: bool = False) -> FitTable:
    """``benches``: model.BenchInfo. Name and parameters stay at any width (parameters wrap at
    their spaces); the source, what a benchmark requires and whether it verifies drop in that
    order."""
    table = FitTable([Column("benchmark", justify="left", fold=NAME_FOLD), Column("params", justify="left", fold=12),
                      Column("requires", justify="left", priority=2), Column("verify", justify="left", priority=3),
                      Column("source", justify="left", priority=1)], wide=wide)
    for b in benches:
        table.add_row(*(safe_text(x, multiline=False) for x in (
            b.name, ", ".join(map(str, b.params)) if b.params else "", b.require or "",
            "yes" if b.has_verify else "", f"{Path(b.file).name}:{b.line}")))
    return table


def cases_table(cases: Iterable[Any], wide: bool = False) -> FitTable:
    """will-it-scale test cases (build.wis.TestCase): name, its file, its description (the
    notes: beside when they fit, under the row else)."""
    table = FitTable([Column("benchmark", justify="left", fold=NAME_FOLD), Column("source", justify="left", priority=1),
                      Column("description", justify="left", notes=True)], wide=wide)
    for c in cases:
        table.add_row(*(safe_text(x, multiline=False) for x in (c.name, str(c.path), c.description or "")))
    return table


def runs_table(runs: Sequence[Run], wide: bool = False, *, total: int | None = None, filtered: bool = False
               ) -> FitTable:
    """Stored runs (store rows: id, started_at, status, labels, host, cpu_model, cpu, command), as
    Store.list_runs(by_start=True) gives them: run, start and status stay; labels and the CPU, then
    the host, then the CPU model drop; the command is the notes. The caption says the order and,
    when ``total`` (how many the filters pass) is more than ``runs``, how many are not shown."""
    count = len(runs) if total is None else max(total, len(runs))
    which = ("run" if count == 1 else "runs") + (" the filters pass" if filtered else "")
    # the order first: a line of the table's that starts with a number is a run's row
    caption = (f"by start time, newest first: {len(runs)} of the {count} {which} (-n N shows more)"
               if count > len(runs) else f"by start time, newest first: {count} {which}")
    table = FitTable([Column("run"), Column("started", justify="left"), Column("status", justify="left"),
                      Column("labels", justify="left", priority=1, fold=16),
                      Column("host", justify="left", priority=2, fold=16),
                      Column("cpu model", justify="left", priority=3, fold=16), Column("CPU", priority=1),
                      Column("command", justify="left", notes=True)], caption=caption, wide=wide)
    for r in runs:
        command = r["command"] if isinstance(r["command"], list) else [r["command"] or ""]
        labels = r.get("labels")
        label_text = ", ".join(f"{k}={v}" for k, v in labels.items()) if isinstance(labels, dict) else ""
        table.add_row(*(safe_text(x, multiline=False) for x in (
            r["id"], r["started_at"], r["status"], label_text, r["host"] or "", r["cpu_model"] or "", r["cpu"],
            " ".join(map(str, command)))))
    return table


def events_table(listed: Sequence[tuple[str, Any, str | None]], title: str, wide: bool = False) -> FitTable:
    """``listed``: (source, event with .name and .encoding, why it cannot be counted or None).
    The event and whether it counts here stay (the reason is the notes); its encoding, then its
    source drop."""
    table = FitTable([Column("source", justify="left", priority=2), Column("event", justify="left", fold=NAME_FOLD),
                      Column("encoding", justify="left", priority=1),
                      Column("countable here", justify="left", notes=True)], title=title, wide=wide)
    for src, ev, e in listed:
        table.add_row(src, safe_text(ev.name), ev.encoding,
                      Text("yes", "green") if not e else Text.assemble(("no", "red"), f" ({visible(e)})"))
    return table


class SweptEvent(Protocol):
    """What sweep_table reads of an event of a sweep (experiments/counters.SweptEvent)."""

    @property
    def event(self) -> str: ...
    @property
    def encoding(self) -> str: ...
    @property
    def per_op(self) -> float | None: ...


def sweep_table(found: Sequence[SweptEvent], title: str, raw: bool, wide: bool = False) -> FitTable:
    """``found``: the events to list, largest first. Event and per op stay; the raw encoding
    drops first."""
    from cyclebench.report.console import fmt

    table = FitTable([Column("event", justify="left", fold=NAME_FOLD),
                      *([Column("encoding", justify="left", priority=1)] if raw else []), Column("per op")],
                     title=title, wide=wide)
    for r in found:
        table.add_row(safe_text(r.event), *([r.encoding] if raw else []), fmt(r.per_op))
    return table
