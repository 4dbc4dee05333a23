"""The flat profile of `cyclebench profile` (gprof's columns, raw and compensated side by side)."""

from __future__ import annotations

from typing import Any

from cyclebench.report.console import fmt
from cyclebench.report.fit import Column, FitTable
from cyclebench.report.text import safe_text


def profile_table(rows: list[dict[str, Any]], unit: str, title: str, simulated: bool = False, wide: bool = False,
                  limit: int = 30) -> FitTable:
    """Timed: % self, calls, self/call (compensated, its ±, raw), total/call (compensated, raw),
    function. Simulated (callgrind): % self, calls, Ir self/call and total/call — exact counts,
    no probe to subtract. The ``limit`` largest rows."""
    if simulated:
        cols = [Column("% self"), Column("calls"), Column("self Ir/call"), Column("total Ir/call"),
                Column("function", justify="left")]
    else:
        cols = [Column("% self"), Column("calls"), Column(f"self/call ({unit})"), Column("±", priority=2),
                Column("raw self/call", priority=1), Column("mean self", priority=4), Column("total/call"),
                Column("raw total/call", priority=3), Column("function", justify="left")]
    caption = ("exact calls and simulated instructions (callgrind): no timing" if simulated else
               "self/call and total/call: medians over the calls, the probe's cost measured here subtracted "
               "(raw: as recorded; mean self: gprof's time/calls); ±: the probe's own spread; % of the "
               "compensated self time")
    table = FitTable(cols, title=title, wide=wide, caption=caption)
    for r in rows[:limit]:
        name = safe_text(r["function"], multiline=False)
        if simulated:
            table.add_row(f"{r['pct']:.1f}", str(r["calls"]), fmt(r["self"]), fmt(r["total"]), name)
        else:
            table.add_row(f"{r['pct']:.1f}", str(r["calls"]), fmt(r["self"]),
                          fmt(r["self_pm"]) if r.get("self_pm") is not None else "", fmt(r["self_raw"]),
                          fmt(r["self_mean"]), fmt(r["total"]), fmt(r["total_raw"]), name)
    return table
