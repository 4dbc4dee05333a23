"""The ranked table of Molnar's alignment thread (docs/references.md#icache-alignment-linux-2015):
N stored runs (or replicate groups) of one benchmark, one line each, ranked by cost — per op with
its interval (the one run's 95% CI, or the sd between the side's runs), min, Δ% vs the baseline
(marked) with its 95% CI where the runs give one, verdict vs the baseline."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from cyclebench.report.console import fmt, fmt_ci, fmt_interval
from cyclebench.report.fit import Column, FitTable
from cyclebench.report.text import safe_text

NAN = float("nan")


@dataclass(frozen=True)
class RankedSide:
    """One side's line of the ranked table, in the benchmark's unit: ``mean`` of its runs'
    estimates, ``spread`` (sd over its runs, or the one run's own 95% CI half-width), ``best``
    (lowest per-sample cost of its runs), ``rel`` vs the baseline (a fraction: mean ÷ the
    baseline's − 1; NaN: none), ``verdict`` vs the baseline (slower | faster | ~ | "-" none | ""
    the baseline itself), ``note`` why there is no verdict (and what was not compared).
    ``rel_low``/``rel_high``: the 95% CI of ``rel`` (fractions; NaN: the runs give none; both
    equal to ``rel``: exact counts). ``low``/``high``: the one run's own 95% CI (NaN: several
    runs, ``spread`` is their sd, or no CI stored)."""

    name: str
    mean: float
    spread: float
    best: float
    baseline: bool
    rel: float = NAN
    verdict: str | None = None
    note: str = ""
    rel_low: float = NAN
    rel_high: float = NAN
    low: float = NAN
    high: float = NAN


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:+.2f}%"


def _rel_ci(e: RankedSide) -> str:
    """Δ%'s 95% CI by its ends; ``exact`` for exact counts (no spread: the difference is the answer)."""
    if e.baseline or math.isnan(e.rel_low) or math.isnan(e.rel_high):
        return "-"
    if e.rel_low == e.rel_high == e.rel:
        return "exact"
    return f"[{_pct(e.rel_low)}, {_pct(e.rel_high)}]"


def _interval(e: RankedSide) -> str:
    """The one run's own CI beside its figure (both ends where it is lopsided: console.fmt_interval),
    or the sd between the side's runs."""
    if not (math.isnan(e.low) or math.isnan(e.high)):
        return fmt_interval(e.mean, e.low, e.high)
    return fmt_ci(e.spread)


def ranked_table(bench: str, unit: str, entries: Sequence[RankedSide], wide: bool = False) -> FitTable:
    """``entries``: one per side (RankedSide), sorted by mean, NaN last; ``bench`` the title's
    name (bench [variant] [param]), ``unit`` its figures'. Δ% is each side's mean ÷ the
    baseline's − 1 (its CI: the CI of Δ ÷ the baseline's mean)."""
    table = FitTable([
        Column("run", justify="left", fold=16),
        Column("per op"),
        Column("±"),
        Column("± %", priority=3),
        Column("min", priority=2),
        Column("Δ% vs baseline"),
        Column("95% CI of Δ%"),
        Column("verdict", justify="left"),
        Column("notes", justify="left", notes=True),
    ], title=f"{bench} ({unit}), ranked", title_justify="left", wide=wide,
        # "min", not "best": the lowest single sample of the side's runs (docs/method.md §2), with no
        # interval of its own, below what any run estimates (a 200-add chain's cycles~ min read 158.5)
        caption="± : the run's own 95% CI (one run) or the sd between the side's runs (several runs); "
                "min: the lowest per-sample cost of its runs, one sample, not a floor; "
                "Δ% = per op ÷ the baseline's − 1, its CI where the runs give a run-to-run spread")
    for e in sorted(entries, key=lambda x: (math.isnan(x.mean), x.mean)):
        mean = e.mean
        pct = "" if not mean or math.isnan(mean) or math.isnan(e.spread) else f"{100 * e.spread / mean:.2f}%"
        table.add_row(
            safe_text(e.name + (" [baseline]" if e.baseline else ""), multiline=False), fmt(mean),
            _interval(e), pct or "-", fmt(e.best),
            "-" if e.baseline else _pct(e.rel), _rel_ci(e),
            Text(e.verdict or "", style={"faster": "green", "slower": "red"}.get(e.verdict or "", "")),
            safe_text(e.note or ""),
        )
    return table
