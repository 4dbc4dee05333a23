"""The terminal's tables as HTML tables: a FitTable (report.fit) — built by the same function
that builds it for the terminal (results, compare, variants, hosts, scale, history) — becomes
a :class:`HtmlTable` the templates render, every column of it (the site has no width to fit),
each cell's text as the terminal shows it and its style as CSS classes: a disturbed row's
figures dimmed, an invalid row's struck through, a failed row red, as in the terminal
(report.console.STATUS_STYLE). Text is escaped by the templates (Jinja2 autoescape), never here.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from markupsafe import Markup
from rich.style import Style
from rich.text import Text

from cyclebench.report.fit import FitTable
from cyclebench.report.text import visible

# rich style attributes → CSS classes (site.css); colours by name
_ATTRS = ("bold", "dim", "italic", "strike")


@dataclass(frozen=True)
class Cell:
    """A cell: its text, its CSS classes and a link (relative to the page). The page sorts a
    column by the number each cell starts with, else by its text (static/site.js)."""

    text: str
    classes: str = ""
    href: str | None = None


@dataclass(frozen=True)
class Row:
    cells: list[Cell]
    classes: str = ""
    section_end: bool = False  # a rule under it (a group of the suite ends)


@dataclass(frozen=True)
class HtmlTable:
    title: str
    caption: str
    headers: list[str]
    numeric: list[bool]  # per column: right-aligned (numbers)
    rows: tuple[Row, ...] = ()
    notes: int | None = None  # the notes column, if any

    def html(self) -> Markup:
        """The <table> element (sortable: static/site.js), every text escaped here (as Jinja2's
        autoescape would: & < > " '): a lab's run pages hold hundreds of thousands of cells,
        which a template loop renders ten times slower."""
        tds = [("n " if num else "") + ("notes " if i == self.notes else "") for i, num in enumerate(self.numeric)]
        out = ['<table class="sortable"><thead><tr>']
        out += [('<th class="n">' if num else "<th>") + f"{esc(h)}</th>"
                for h, num in zip(self.headers, self.numeric, strict=True)]
        out.append("</tr></thead><tbody>")
        for r in self.rows:
            cls = (r.classes + (" end" if r.section_end else "")).strip()
            out.append(f'<tr class="{esc(cls)}">' if cls else "<tr>")
            for c, td in zip(r.cells, tds, strict=True):
                text = esc(c.text)
                if c.href:
                    text = f'<a href="{esc(c.href)}">{text}</a>'
                klass = td + c.classes
                out.append(f'<td class="{esc(klass.strip())}">{text}</td>' if klass else f"<td>{text}</td>")
            out.append("</tr>")
        out.append("</tbody></table>")
        return Markup("".join(out))


_SPECIAL = re.compile(r"[&<>\"']")


def esc(s: str) -> str:
    """``s`` escaped for HTML text and attribute values (html.escape), quickly when there is
    nothing to escape (most cells are numbers)."""
    return html.escape(s) if _SPECIAL.search(s) else s


@functools.lru_cache(maxsize=512)
def classes_of(style: Any) -> tuple[str, ...]:
    """CSS classes of a rich style (a Style or a style string such as "bold red"): one per
    attribute set (bold, dim, italic, strike) and ``c-<colour>`` for a named colour."""
    if not style:
        return ()
    st = style if isinstance(style, Style) else Style.parse(str(style))
    out = [a for a in _ATTRS if getattr(st, a)]
    if st.color is not None and st.color.name and not st.color.name.startswith("#"):
        out.append(f"c-{st.color.name}")
    return tuple(out)


def _cell_classes(t: Text) -> str:
    if not t.spans:
        return " ".join(classes_of(t.style))
    styles = [t.style, *(s.style for s in t.spans if s.start == 0 and s.end >= len(t.plain))]
    return " ".join(dict.fromkeys(c for s in styles for c in classes_of(s)))


def html_table(table: FitTable, link: Callable[[list[str]], str | None] | None = None) -> HtmlTable:
    """Every column and row of ``table`` (report.fit.FitTable), styles as classes. ``link``:
    given a row's plain cells, the address its first cell links to (None: no link)."""
    cols = table.columns
    rows = []
    for r in _rows_of(table):
        plain = [c.plain for c in r.cells]
        cells = [Cell(c.plain, _cell_classes(c)) for c in r.cells]
        if link is not None and cells:
            cells[0] = replace(cells[0], href=link(plain))
        rows.append(Row(cells, " ".join(classes_of(r.style)), r.end_section))
    # a header can be data (compare --by host's are host names): its controls made visible as a cell's are
    return HtmlTable(title=visible(_plain(table.title)), caption=visible(_plain(table.caption)),
                     headers=[visible(c.header, multiline=False) for c in cols],
                     numeric=[c.justify == "right" for c in cols], rows=tuple(rows),
                     notes=next((i for i, c in enumerate(cols) if c.notes), None))


def _rows_of(table: FitTable) -> Iterable[Any]:
    """The rows a FitTable holds with their styles (its ``rows`` property gives plain text only)."""
    return table._rows


def _plain(x: str | Text | None) -> str:
    if x is None:
        return ""
    return x.plain if isinstance(x, Text) else str(x)
