"""GitHub-flavoured Markdown: the title in bold, one table (results, or compare's
comparisons when given) with every column the console can show, and the caption in
italics. Cells are escaped (``|`` → ``\\|``, ``\\`` → ``\\\\``, Markdown's inline
characters (`` \\`*_[]<>|~ ``) backslash-escaped, line breaks as spaces, controls made visible), so a benchmark
name or a crash reason can neither break the table nor format itself."""

from __future__ import annotations

import re

from cyclebench.report.export._rows import RESULT_HEADERS, comparison_table, result_cells
from cyclebench.report.export.base import Export, Exported
from cyclebench.report.text import visible

LEFT = {"benchmark", "unit", "notes", "A", "B", "verdict"}
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")  # what formats inside a table cell


def cell(text: str) -> str:
    """A table cell: literal text, one line, never a column separator."""
    flat = " ".join(visible(text, multiline=True).split("\n"))
    return _SPECIAL.sub(r"\\\1", flat).strip()


def table(headers: tuple[str, ...], rows: list[list[str]]) -> list[str]:
    line = ["| " + " | ".join(cell(h) for h in headers) + " |",
            "|" + "|".join(":---" if h in LEFT else "---:" for h in headers) + "|"]
    return line + ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]


def write(data: Export) -> Exported:
    """The Markdown of the comparisons when there are any, else of the results."""
    if data.comparisons:
        lines = table(*comparison_table(data.comparisons))
    else:
        lines = table(RESULT_HEADERS, [result_cells(r) for r in data.results])
    head = [f"**{cell(data.title)}**", ""] if data.title else []
    tail = ["", f"*{cell(data.caption)}*"] if data.caption else []
    return Exported("\n".join(head + lines + tail) + "\n")
