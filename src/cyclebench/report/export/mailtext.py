"""Plain text for mailing lists: the table (results, or compare's comparisons when given)
at most 72 columns wide, ASCII borders, no colour, no trailing spaces.

The table is a report.fit FitTable, fitted to 72 columns as the console fits it to a
terminal: the columns that carry the answer stay (benchmark, param, per op, ±CI95, unit,
cycles~; for comparisons "A → B", param, Δ, its CI and the verdict), secondary ones drop
(named in a last line), and notes go on a line under their row. The title and caption wrap.
"""

from __future__ import annotations

import io
import textwrap

from rich.console import Console

from cyclebench.report.export._rows import RESULT_HEADERS, comparison_table, result_cells
from cyclebench.report.export.base import Export, Exported
from cyclebench.report.fit import Column, FitTable

WIDTH = 72
NAME_FOLD = 20
# the console's priorities (report.console): 0 stays at any width, higher numbers drop first
RESULT_COLUMNS = (Column("benchmark", justify="left", fold=NAME_FOLD), Column("param"), Column("per op"),
                  Column("±CI95"), Column("unit", justify="left"), Column("cycles~"), Column("±CI95", priority=1),
                  Column("ns/op", priority=2), Column("min", priority=3), Column("rCV", priority=4),
                  Column("notes", justify="left", notes=True))
assert tuple(c.header for c in RESULT_COLUMNS) == RESULT_HEADERS


def compare_columns(headers: tuple[str, ...]) -> tuple[Column, ...]:
    """The columns of a table of comparisons under ``headers`` (_rows.compare_headers: B and Δ are
    named as the console names them). A and B share one column ("A → B", folding after the
    arrow): two names side by side leave no room for the numbers in 72 columns."""
    a, b, delta = headers[3:6]
    return (Column("A → B", justify="left", fold=24), Column("param"), Column(a, priority=4), Column(b, priority=3),
            Column(delta), Column("Δ%", priority=1), Column("CI of Δ"), Column("p", priority=5),
            Column("verdict", justify="left"), Column("unit", justify="left", priority=2),
            Column("notes", justify="left", notes=True))


class _AsciiText(io.StringIO):
    encoding = "ascii"  # rich draws ASCII borders for a stream that is not UTF-8 (text stays as it is)


def render(table: FitTable, width: int = WIDTH) -> str:
    """``table`` as plain text at most ``width`` cells wide (trailing spaces removed)."""
    buf = _AsciiText()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False, legacy_windows=False,
                      markup=False, emoji=False, highlight=False)
    console.print(table)
    lay = table.layout(console, width)
    text = "\n".join(line.rstrip() for line in buf.getvalue().splitlines()).strip("\n")
    if lay.dropped:
        text += "\n" + textwrap.fill(f"(not shown at {width} columns: {', '.join(lay.dropped)}; every column is in "
                                     "the csv and markdown exports)", width)
    return text


def write(data: Export) -> Exported:
    """The text table of the comparisons when there are any, else of the results."""
    if data.comparisons:
        headers, cells = comparison_table(data.comparisons)
        columns = compare_columns(headers)
        rows = [[f"{c[0]} → {c[1]}", *c[2:]] for c in cells]
    else:
        columns, rows = RESULT_COLUMNS, [result_cells(r) for r in data.results]
    table = FitTable(columns, title=data.title, caption=data.caption, title_justify="left", caption_justify="left",
                     header_style="", footer=False, boxed=True)
    for r in rows:
        table.add_row(*r)
    return Exported(render(table) + "\n")
