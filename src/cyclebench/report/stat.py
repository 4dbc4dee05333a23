"""`cyclebench stat`'s table: perf-stat-like, one line per metric, fitted to the terminal
(metric, mean and ± stay at any width; min, max and unit drop; notes go under their row)."""

from __future__ import annotations

from collections.abc import Sequence

from cyclebench.report.console import fmt
from cyclebench.report.fit import Column, FitTable
from cyclebench.report.text import safe_text
from cyclebench.stats.repetitions import Metric


def stat_table(metrics: Sequence[Metric], title: str | None = None, wide: bool = False) -> FitTable:
    """Metric, mean, ± stddev (% of the mean), min, max, unit, notes; metrics without a number
    say why (yellow), derived ones their value alone (dim)."""
    table = FitTable([
        Column("metric", justify="left"),
        Column("mean"),
        Column("± stddev"),
        Column("min", priority=2),
        Column("max", priority=2),
        Column("unit", justify="left", priority=1),
        Column("notes", justify="left", notes=True),
    ], title=title, wide=wide)
    for m in metrics:
        s = m.summary()
        if m.status in ("not counted", "not supported"):
            table.add_row(safe_text(m.name), f"<{m.status}>", "", "", "", m.unit, safe_text(m.reason or ""),
                          style="yellow")
            continue
        if m.status == "derived":
            table.add_row(safe_text(m.name), f"{s['mean']:.3f}", "", "", "", m.unit, ", ".join(m.notes), style="dim")
            continue
        sd = "-" if s["cv"] is None else f"± {100 * s['cv']:.2f}%"
        table.add_row(safe_text(m.name), fmt(s["mean"]), sd, fmt(s["min"]), fmt(s["max"]), m.unit,
                      safe_text(", ".join(m.notes)))
    return table
