"""`cyclebench stat`'s table: perf-stat-like, one line per metric."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from cyclebench.report.console import fmt
from cyclebench.stats.repetitions import Metric


def stat_table(metrics: Sequence[Metric], title: str | None = None) -> Table:
    """Metric, mean, ± stddev (% of the mean), min, max, unit, notes; metrics without a number
    say why (yellow), derived ones their value alone (dim)."""
    table = Table(title=title, header_style="bold")
    table.add_column("metric", no_wrap=True)
    for col in ("mean", "± stddev", "min", "max"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("unit", no_wrap=True)
    table.add_column("notes", overflow="fold", min_width=12)
    for m in metrics:
        s = m.summary()
        if m.status in ("not counted", "not supported"):
            table.add_row(m.name, f"<{m.status}>", "", "", "", m.unit, m.reason or "", style="yellow")
            continue
        if m.status == "derived":
            table.add_row(m.name, f"{s['mean']:.3f}", "", "", "", m.unit, ", ".join(m.notes), style="dim")
            continue
        sd = "-" if s["cv"] is None else f"± {100 * s['cv']:.2f}%"
        table.add_row(m.name, fmt(s["mean"]), sd, fmt(s["min"]), fmt(s["max"]), m.unit, ", ".join(m.notes))
    return table
