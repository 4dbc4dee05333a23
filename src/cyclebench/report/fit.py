"""Tables that fit the terminal (issue 12).

Each column has a priority: 0 for the columns that carry the answer (and name the row),
which are shown at any width; 1, 2, … for secondary columns, the highest number dropped
first until the table fits the width it is printed at. Numbers are never cut: their
columns are exactly as wide as their widest cell (``no_wrap``, and ``overflow="fold"``
rather than an ellipsis should a terminal be narrower than even the answer). Names may
fold down to a set width. The ``notes`` column, when it does not fit beside the others,
becomes a wrapped line under its row, spanning the table. ``wide=True`` shows every
column (notes under their rows only when they do not fit beside them); on a terminal too
narrow even for that, rich squeezes the table and cells fold over lines (never cropped,
never ``…``): --wide is for wide terminals and pipes.

The choice is made when the table is rendered, at the width of the console (or the
space it is given), so one table object prints right on a terminal, a pipe, or a test's
recording console. Every cell given as a string goes through :func:`safe_text`: data is
never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style, StyleType
from rich.table import Table
from rich.text import Text

from cyclebench.report.text import safe_text

__all__ = ["NOTES_MIN", "Column", "FitTable", "Layout"]

NOTES_MIN = 24  # narrowest notes column worth keeping beside the others
FOLD_FLOOR = 6  # names fold this far, as a last resort, before the numbers must fold
_NOTE_META = "cyclebench.note"  # marks the placeholder row a note under its row replaces
_UNBOUNDED = 1_000_000

Cell = str | Text | None


@dataclass(frozen=True)
class Column:
    """One column of a :class:`FitTable`.

    priority: 0 carries the answer or names the row, always shown; 1, 2, … secondary,
    the highest number dropped first. fold: a text column (names) that may fold down to
    this many cells; None: never narrower than its widest cell (numbers). notes: the
    notes column, which becomes a line under its row when it does not fit.
    """

    header: str
    priority: int = 0
    justify: JustifyMethod = "right"
    fold: int | None = None
    notes: bool = False


@dataclass
class _Row:
    cells: list[Text]
    style: StyleType
    end_section: bool = False


@dataclass
class Layout:
    """What a width allows: the indices of the columns shown, their content widths
    (None: rich decides, in wide mode or when not even the answer fits; then every column
    may fold, so a number too wide for the terminal breaks over lines instead of being
    cropped), and whether notes go under their rows."""

    shown: list[int]
    widths: list[int] | None
    notes_under: bool
    dropped: list[str] = field(default_factory=list)


def _longest_word(s: str) -> int:
    return max((cell_len(w) for w in s.split()), default=0)


def _width(t: Text) -> int:
    return max((cell_len(line.expandtabs(8)) for line in t.plain.split("\n")), default=0)


class FitTable:
    """A rich table that chooses its columns by the width it is printed at."""

    def __init__(self, columns: Sequence[Column], *, title: str | Text | None = None,
                 caption: str | Text | None = None, wide: bool = False, header_style: StyleType = "bold",
                 title_justify: JustifyMethod = "center", caption_justify: JustifyMethod = "center",
                 notes_min: int = NOTES_MIN) -> None:
        if sum(c.notes for c in columns) > 1:
            raise ValueError("at most one notes column")
        self.columns = list(columns)
        self.title = title
        self.caption = caption
        self.wide = wide
        self.header_style = header_style
        self.title_justify = title_justify
        self.caption_justify = caption_justify
        self.notes_min = notes_min
        self._rows: list[_Row] = []

    # building

    def add_row(self, *cells: Cell, style: StyleType = "") -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        self._rows.append(_Row([safe_text(c) for c in cells], style))

    def add_section(self) -> None:
        """A rule under the last row (between groups of rows)."""
        if self._rows:
            self._rows[-1].end_section = True

    @property
    def row_count(self) -> int:
        return len(self._rows)

    # layout

    def _full(self) -> list[int]:
        """Each column's widest cell, header included."""
        full = [cell_len(c.header) for c in self.columns]
        for row in self._rows:
            for i, cell in enumerate(row.cells):
                full[i] = max(full[i], _width(cell))
        return full

    def _least(self, full: list[int]) -> list[int]:
        """The narrowest each column may be: numbers their widest cell, names their fold
        width, notes ``notes_min`` (all capped at their widest cell)."""
        out = []
        for c, f in zip(self.columns, full, strict=True):
            least = self.notes_min if c.notes else c.fold
            out.append(f if least is None else min(f, max(least, cell_len(c.header))))
        return out

    def _need(self, console: Console, shown: list[int], least: list[int]) -> int:
        """The width of the table with these columns at these content widths (rich's
        measurement: padding and borders included); ``least`` is indexed by column."""
        probe = self._table(shown, [least[i] for i in shown], notes_under=False, with_rows=False)
        return Measurement.get(console, console.options.update_width(_UNBOUNDED), probe).minimum

    def layout(self, console: Console, width: int) -> Layout:
        """Choose the columns for ``width`` cells (see the module's docstring)."""
        n = len(self.columns)
        notes = next((i for i, c in enumerate(self.columns) if c.notes), None)
        full = self._full()
        least = self._least(full)
        has_notes = notes is not None and any(r.cells[notes].plain for r in self._rows)
        base = [i for i in range(n) if i != notes]
        # secondary columns in drop order: highest priority number first, the later column first among equals
        order = sorted((i for i in base if self.columns[i].priority > 0),
                       key=lambda i: (self.columns[i].priority, i), reverse=True)
        if self.wide:  # every column; the notes go under their rows only if they must
            order = []
            has_notes = notes is not None
        shown: list[int] = base
        for k in range(len(order) + 1):
            shown = [i for i in base if i not in order[:k]]
            dropped = [self.columns[i].header for i in order[:k]]
            tries: list[tuple[list[int], bool]] = [(shown, has_notes)]
            if has_notes and notes is not None:  # notes beside the row if they fit, else under it
                tries.insert(0, (sorted([*shown, notes]), False))
            for cols, notes_under in tries:
                need = self._need(console, cols, least)
                if need <= width:
                    return Layout(cols, self._spread(cols, full, least, width - need), notes_under, dropped)
        # not even the answer fits: fold the names further; else rich squeezes it (cells fold, never cut)
        floor = [min(f, max(FOLD_FLOOR, _longest_word(c.header))) if c.fold is not None else least_
                 for c, f, least_ in zip(self.columns, full, least, strict=True)]
        dropped = [self.columns[i].header for i in order]
        need = self._need(console, shown, floor)
        if need <= width:
            return Layout(shown, self._spread(shown, full, floor, width - need), has_notes, dropped)
        return Layout(shown, None, has_notes, dropped)

    def _spread(self, shown: list[int], full: list[int], least: list[int], slack: int) -> list[int]:
        """Content widths: the least each column needs, then the slack to the folding
        columns (names first, then notes) up to their widest cell. Fixed widths, so rich
        never has to squeeze a column below what this layout promised."""
        widths = {i: least[i] for i in shown}
        flexible = sorted((i for i in shown if full[i] > least[i]), key=lambda i: (self.columns[i].notes, i))
        for i in flexible:
            extra = min(full[i] - least[i], slack)
            widths[i] += extra
            slack -= extra
        return [widths[i] for i in shown]

    # rendering

    def _table(self, shown: list[int], widths: list[int] | None, notes_under: bool, with_rows: bool = True) -> Table:
        def annotation(x: str | Text | None, style: str) -> Text | None:
            return None if x is None else safe_text(x, style=style)

        table = Table(title=annotation(self.title, "table.title"), caption=annotation(self.caption, "table.caption"),
                      header_style=self.header_style, title_justify=self.title_justify,
                      caption_justify=self.caption_justify)
        for k, i in enumerate(shown):
            c = self.columns[i]
            # numbers get exactly their width; with no width set they must fold, since
            # rich crops a no_wrap cell that is too wide even with overflow="fold"
            wraps = c.notes or c.fold is not None or widths is None
            table.add_column(safe_text(c.header), justify=c.justify, no_wrap=not wraps, overflow="fold",
                             width=None if widths is None else widths[k])
        if not with_rows:
            return table
        notes = next((i for i, c in enumerate(self.columns) if c.notes), None)
        for j, row in enumerate(self._rows):
            note = row.cells[notes] if notes is not None and notes_under else None
            has_note = note is not None and bool(note.plain)
            table.add_row(*[row.cells[i] for i in shown], style=row.style,
                          end_section=row.end_section and not has_note)
            if has_note:  # a placeholder row, replaced by the note when rendered
                table.add_row(*[Text("") for _ in shown], style=Style(meta={_NOTE_META: j}),
                              end_section=row.end_section)
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lay = self.layout(console, options.max_width)
        table = self._table(lay.shown, lay.widths, lay.notes_under)
        if not lay.notes_under:
            yield table
            return
        notes = next(i for i, c in enumerate(self.columns) if c.notes)
        new_line = Segment.line()
        for line in console.render_lines(table, options, pad=False):
            marks = [k for k, seg in enumerate(line) if seg.style is not None and _NOTE_META in seg.style.meta]
            if not marks:
                yield from line
                yield new_line
                continue
            row = self._rows[line[marks[0]].style.meta[_NOTE_META]]  # type: ignore[union-attr]
            left, right = line[:marks[0]], line[marks[-1] + 1:]
            inner = Segment.get_line_length(line) - Segment.get_line_length(left) - Segment.get_line_length(right)
            note = row.cells[notes].copy()
            note.style = row.style or note.style
            body = Padding(note, (0, 1, 0, 3))  # indented under the row's name
            for body_line in console.render_lines(body, options.update_width(max(inner, 1)), pad=True):
                yield from left
                yield from body_line
                yield from right
                yield new_line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        lay = self.layout(console, options.max_width)
        return Measurement.get(console, options, self._table(lay.shown, lay.widths, lay.notes_under))
