"""The flat profile of `cyclebench profile` (gprof's columns, raw and compensated side by side)."""

from __future__ import annotations

from collections.abc import Sequence

from cyclebench.model import ProfileRow
from cyclebench.report.console import fmt, net_fmt
from cyclebench.report.fit import Column, FitTable
from cyclebench.report.text import safe_text
from cyclebench.stats.profile import COMPENSATION_NOTE


def _net(x: float, pm: float | None) -> str:
    """A compensated figure as `--net` prints one: ``≈0`` when its ± reaches zero, ``<0`` when
    even its upper end is below zero."""
    return net_fmt(x, None if pm is None else x - pm, None if pm is None else x + pm)


def profile_table(rows: Sequence[ProfileRow], unit: str, title: str, simulated: bool = False, wide: bool = False,
                  limit: int = 30) -> FitTable:
    """Timed: % self, calls, self/call (compensated, its ±, raw, mean), total/call (compensated,
    raw), the compensation's share of the raw self (marked over COMPENSATION_NOTE), Ir per call
    (callgrind, where present), function. Simulated (callgrind): % self, calls, Ir self/call and
    total/call — exact counts, no probe to subtract. The ``limit`` largest rows."""
    with_ir = not simulated and any(r.get("ir_self") is not None for r in rows)
    if simulated:
        cols = [Column("% self"), Column("calls"), Column("self Ir/call"), Column("total Ir/call"),
                Column("function", justify="left")]
    else:
        cols = [Column("% self"), Column("calls"), Column(f"self/call ({unit})"), Column("±", priority=1),
                Column("raw self/call", priority=2), Column("mean self", priority=5), Column("total/call"),
                Column("raw total/call", priority=4), Column("probe/raw", priority=2),
                *([Column("self Ir/call", priority=3)] if with_ir else []), Column("function", justify="left")]
    share = f"{COMPENSATION_NOTE:.0%}"
    caption = ("exact calls and simulated instructions (callgrind): no timing" if simulated else
               "self/call and total/call: medians over the calls with the probe's cost measured here subtracted "
               "(raw: as recorded; mean self: gprof's time/calls); ±: what the probe's cost may be off by "
               "(its range over bodies and callers, its drift, the clock's conversion); ≈0: zero within it, <0: "
               "below zero beyond it; "
               f"probe/raw: the cost subtracted as a share of the raw self, ! over {share} (the figure is mostly "
               "compensation); total = self + the children's totals; %: the function's share of the profile, its "
               "calls × self over the sum of that over every function"
               + ("; self Ir/call: callgrind's exact instructions, nothing to compensate" if with_ir else ""))
    if len(rows) > limit:  # the rest are listed nowhere else on screen: say how many and how to see them
        caption += (f"\n{limit} of {len(rows)} functions shown, by % self (profile --limit N shows more; the run "
                    "keeps every one: export RUN --format csv)")
    shaky = [r for r in rows[:limit] if r.get("untrustworthy")]
    for r in shaky:  # named in the table, never a confident figure (as run's disturbed results)
        caption += f"\nuntrustworthy (?): {safe_text(r['function'], multiline=False)}, {r['untrustworthy']}"
    table = FitTable(cols, title=title, wide=wide, caption=caption)
    for r in rows[:limit]:
        name = safe_text(r["function"], multiline=False) + (" (?)" if r.get("untrustworthy") else "")
        if simulated:
            table.add_row(f"{r['pct']:.1f}", str(r["calls"]), fmt(r["self"]), fmt(r["total"]), name)
            continue
        pm = r.get("self_pm")
        note = "" if pm is None else f"{r['comp_share']:.0%}" + ("!" if r.get("compensated") else "")
        ir = [fmt(r["ir_self"]) if r.get("ir_self") is not None else "-"] if with_ir else []
        table.add_row(f"{r['pct']:.1f}", str(r["calls"]), _net(r["self"], pm), fmt(pm) if pm is not None else "",
                      fmt(r["self_raw"]), fmt(r["self_mean"]), _net(r["total"], r.get("total_pm")),
                      fmt(r["total_raw"]), note, *ir, name)
    return table
