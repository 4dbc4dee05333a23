"""`compare --by host`'s table: one row per benchmark, one column per host (as Molnar's
alignment thread tabled the same kernels on an Intel and an AMD box,
docs/references.md#icache-alignment-linux-2015), and the slowest host over the fastest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cyclebench.report.console import fmt, fmt_ci
from cyclebench.report.fit import Column, FitTable
from cyclebench.report.text import safe_text


@dataclass(frozen=True)
class HostCell:
    """One host's figure for a benchmark: ``mean`` of its runs' estimates in ``unit``,
    ``spread`` (sd over its ``runs``, or the one run's own 95% CI half-width; None: unknown)."""

    mean: float
    spread: float | None
    unit: str
    runs: int


@dataclass(frozen=True)
class HostRow:
    """One benchmark (``bench``, ``param``, ``variant``) across hosts: host name → its HostCell,
    for the hosts that measured it validly."""

    bench: str
    param: int | None
    variant: str
    hosts: Mapping[str, HostCell] = field(default_factory=dict)


def _cell(c: HostCell | None, unit: str) -> str:
    if c is None:
        return "-"
    spread = f" ±{fmt_ci(c.spread)}" if c.spread is not None else ""
    return f"{fmt(c.mean)}{spread}" + ("" if c.unit == unit else f" {c.unit}")


def hosts_table(hosts: Sequence[str], rows: Sequence[HostRow], cpu: Mapping[str, str | None],
                wide: bool = False) -> FitTable:
    """``rows``: one HostRow per benchmark, its cells in ``hosts``' columns. The unit column
    is the most common unit of the row; a cell in another unit names its own, and the max/min
    ratio is given only when every host of the row has one unit."""
    caption = ("± : sd between a host's runs, or the run's own 95% CI. "
               + "; ".join(f"{h}: {cpu.get(h) or 'CPU model unknown'}" for h in hosts))
    table = FitTable([Column("benchmark", justify="left", fold=20), Column("unit", justify="left"),
                      *(Column(h) for h in hosts), Column("max/min", priority=1)],
                     title="per op, by host",
                     title_justify="left", caption=caption, wide=wide)
    for r in rows:
        cells = r.hosts
        units = [c.unit for c in cells.values()]
        unit = max(set(units), key=units.count)
        name = r.bench + ("" if r.param is None else f" [{r.param}]") + (f" [{r.variant}]" if r.variant else "")
        means = [c.mean for c in cells.values()]
        ratio = (f"{max(means) / min(means):.2f}×" if len(set(units)) == 1 and len(means) > 1 and min(means) > 0
                 else "")
        table.add_row(safe_text(name, multiline=False), unit, *(_cell(cells.get(h), unit) for h in hosts), ratio)
    return table
