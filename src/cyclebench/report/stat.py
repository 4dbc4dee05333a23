"""`cyclebench stat`'s table: perf-stat-like, one line per metric, fitted to the terminal
(metric, mean and ± stay at any width; min, max and unit drop; notes go under their row)."""

from __future__ import annotations

from collections.abc import Sequence

from cyclebench.report.console import fmt, signed
from cyclebench.report.fit import Column, FitTable
from cyclebench.report.text import safe_text
from cyclebench.stats.repetitions import FLOOR, Metric

# Units whose every value is a whole number: a repetition's count (page-faults, callgrind's Ir) or
# max RSS in KiB. Its min and max are one repetition's own count and print as one: 48 and 49
# page faults, not "48.00 49.00" beside their mean 48.50 (a mean of counts has fractions). A
# multiplexed count, scaled by enabled/running, is an estimate of a whole number: rounded too.
WHOLE_UNITS = ("count", "KiB")
CONSTANT = "constant"  # the ± of a metric every repetition gave alike (sys 0 and 0 ms, max-rss 1,080 KiB twice)


def whole(x: float | None) -> str:
    """A count as a count: ``48``, ``1,080``."""
    return "-" if x is None else f"{x:,.0f}"


def interval_note(m: Metric) -> str | None:
    """What a row says of a 95% interval of its mean whose low end fell below FLOOR (stats.
    repetitions.MeanInterval): the interval shown, the end it was clipped from, and the repetition
    that spreads it: ``95% CI [0, 1,288]: its low end -1,098 clipped at 0 (2 repetitions);
    repetition 1 read 189.1, 142× the other's 1.33``. None when not clipped."""
    got = m.interval()
    if got is None or not got.clipped:
        return None
    f = whole if m.unit in WHOLE_UNITS else fmt
    low = f"{FLOOR:g}"  # clipped there: the floor itself, "0", not an estimate "0.000"
    out = (f"95% CI [{low}, {f(got.high)}]: its low end {signed(got.t_low)} clipped at {low} "
           f"({got.n} repetitions)")
    if got.off is not None and got.off_value is not None and got.others is not None:
        # the repetition named with what it read against the rest, the reader to judge: wall's
        # 189.1 ms is 142× the other's 1.33 (it waited), user's 1.79 ms only 1.41× its 1.27
        rest = "the other's" if got.n == 2 else "the others' median"
        times = f", {got.off_value / got.others:.3g}×" if got.others else ""
        out += f"; repetition {got.off} read {f(got.off_value)}{times} {rest} {f(got.others)}"
    return out


def stat_table(metrics: Sequence[Metric], title: str | None = None, wide: bool = False) -> FitTable:
    """Metric, mean, ± stddev (% of the mean; ``constant`` when every repetition gave one value),
    min, max (whole numbers for counts: WHOLE_UNITS), unit, notes (a 95% interval of the mean
    clipped at 0 says so: interval_note); metrics without a number say why (yellow), derived
    ones their value alone (dim)."""
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
        # a spread of 0 is no ± 0.00% (max-rss) nor a "-" (sys: a CV of a zero mean is undefined)
        # beside two equal values: they are alike, and the row says it
        sd = CONSTANT if m.constant else "-" if s["cv"] is None else f"± {100 * s['cv']:.2f}%"
        ends = whole if m.unit in WHOLE_UNITS else fmt
        notes = [*m.notes, *filter(None, [interval_note(m)])]
        table.add_row(safe_text(m.name), fmt(s["mean"]), sd, ends(s["min"]), ends(s["max"]), m.unit,
                      safe_text(", ".join(notes)))
    return table
