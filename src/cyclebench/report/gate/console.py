"""`cyclebench ci`'s table on the terminal: one row per benchmark, failures first."""

from __future__ import annotations

from rich.console import Group, RenderableType

from cyclebench.gate import COUNTS, PASS, Gate
from cyclebench.report.console import NAME_FOLD, fmt
from cyclebench.report.fit import Column, FitTable
from cyclebench.report.gate.common import correction, counts, delta, headline, level, verdict
from cyclebench.report.text import safe_text


def gate_table(g: Gate, wide: bool = False) -> RenderableType:
    """The gate's rows (benchmark, base and head per op, Δ% with its CI, Ir Δ%, verdict, why),
    then the headline and how the base was chosen."""
    unit = next((r.row.unit for r in g.rows if r.row is not None), "")
    table = FitTable([
        Column("benchmark", justify="left", fold=NAME_FOLD),
        Column(f"base ({unit})" if unit else "base", priority=1),
        Column(f"head = base × (1 + Δ%) ({unit})" if unit else "head = base × (1 + Δ%)", priority=1),
        Column(f"Δ% [{level(g)} CI]" if level(g) else "Δ% [CI]", justify="left"),
        Column("Ir Δ%", justify="left", priority=0 if g.gate == COUNTS else 2),
        Column("verdict", justify="left"),
        Column("notes", justify="left", notes=True),
    ], title=f"run #{g.run_id} · {g.base.short} → {g.head.short}", wide=wide,
        caption=None if g.gate == COUNTS else "base: its per-op figure, as history gives it; Δ%: the median of "
        "the pairs' head/base − 1; head = base × (1 + Δ%), not head's own figure (history's)")
    for r in g.ranked():
        lk = r.look
        table.add_row(r.label, "-" if lk is None else fmt(lk.base), "-" if lk is None else fmt(lk.head),
                      delta(r), counts(r), verdict(r, g.counts_threshold), r.why if r.status != PASS else "")
    lines = [headline(g), f"base: {g.base.short} ({g.base_how}); {correction(g)}"]
    return Group(table, *(safe_text(x) for x in lines))
