"""The ranked table of Molnar's alignment thread (docs/references.md#icache-alignment-linux-2015):
N stored runs (or replicate groups) of one benchmark, one line each, ranked by cost — mean ±
spread, min, % vs the baseline (marked), verdict vs the baseline."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from cyclebench.report.console import fmt
from cyclebench.report.fit import Column, FitTable
from cyclebench.report.text import safe_text


@dataclass(frozen=True)
class RankedSide:
    """One side's line of the ranked table, in the benchmark's unit: ``mean`` of its runs'
    estimates, ``spread`` (sd over its runs, or the one run's own 95% CI half-width), ``best``
    (lowest per-sample cost of its runs), ``rel`` vs the baseline (a fraction; NaN: none),
    ``verdict`` vs the baseline (slower | faster | ~ | "-" none | "" the baseline itself),
    ``note`` why there is no verdict."""

    name: str
    mean: float
    spread: float
    best: float
    baseline: bool
    rel: float = float("nan")
    verdict: str | None = None
    note: str = ""


def ranked_table(bench: str, unit: str, entries: Sequence[RankedSide], wide: bool = False) -> FitTable:
    """``entries``: one per side (RankedSide), sorted by mean, NaN last."""
    table = FitTable([
        Column("run", justify="left", fold=16),
        Column("mean"),
        Column("±"),
        Column("min", priority=2),
        Column("vs baseline"),
        Column("verdict", justify="left"),
        Column("notes", justify="left", notes=True),
    ], title=f"{bench} ({unit}), ranked", title_justify="left", wide=wide,
        # "min", not "best": the lowest single sample of the side's runs (docs/method.md §2), with no
        # interval of its own, below what any run estimates (a 200-add chain's cycles~ min read 158.5)
        caption="± : sd between the side's runs (several runs) or the run's own 95% CI (one run); "
                "min: the lowest per-sample cost of its runs, one sample, not a floor")
    for e in sorted(entries, key=lambda x: (math.isnan(x.mean), x.mean)):
        mean = e.mean
        pct = "" if not mean or math.isnan(mean) else f"( ± {100 * e.spread / mean:.2f}% )"
        table.add_row(
            safe_text(e.name + (" [baseline]" if e.baseline else ""), multiline=False), fmt(mean),
            f"{fmt(e.spread)} {pct}".strip(), fmt(e.best),
            "-" if e.baseline else f"{100 * e.rel:+.2f}%",
            Text(e.verdict or "", style={"faster": "green", "slower": "red"}.get(e.verdict or "", "")),
            safe_text(e.note or ""),
        )
    return table
