"""Tables that fit the width they are printed at: one layout rule for every table.

Each column has a priority: 0 for the columns that carry the answer (and name the row),
shown at any width; 1, 2, … for secondary columns, dropped whole, the highest number
first, until the table fits; then each column dropped on the way that fits in the room left
is put back, the lowest number first: a column is left out only when there is no room for it
(a wide labels column dropped does not take the narrow host column with it) — while the names
keep their fold width; once only the answer is left, nothing comes back. A line under the
table names what was left out and how to see it (``--wide``, or a wider ``COLUMNS``). Numbers
are never cut: a number column is exactly as wide as its widest cell. Headers wrap at their
spaces (never "…"); names (``fold``) wrap after a ``/``, a space or an ``_``, never inside a word.
The notes column, when it does not fit beside the others, becomes a wrapped line under its row;
notes wrap at their spaces, and a word no line holds (a path in a command) after a ``/`` or an
``_`` in it (:func:`wrap_words`).

When even the answer columns do not fit — or ``wide`` asks for every column on a width
that cannot hold them — each row is printed as a record: its name on a line, then one
``column  value`` line per column (the layout ``psql``'s expanded display uses), so no
cell is ever squeezed, folded mid-number or cropped.

A console that soft-wraps (``cyclebench``'s stdout when it is a pipe or a file and
``COLUMNS`` is unset: ui/common) has no width to fit: every column is printed at
its natural width, as ``--wide`` does, for logs and mail that are read at any width.

Titles and the notes under a table (its caption) are left-aligned and wrap between words, as
perf stat's and benchstat's notes do: centred, a wrapped note's lines start at a different column
each and read as scattered words.

A note longer than ``NOTE_SHOWN`` (4,096) characters is shown cut there, followed by how many more
there are and where they are whole (``[9,995,912 more characters not shown: …]``): a failure
reason can be megabytes, and a table is not where it is read. The table keeps every cell whole
(``rows``, the site's tables), as the csv, markdown and json exports do. Every cell, title and note
is rendered in time linear in its length (:func:`linewise`).

The choice is made when the table is rendered, at the width of the console (or the
space it is given), so one table object prints right on a terminal, a pipe, or a test's
recording console. Every cell given as a string goes through :func:`safe_text`: data is
never parsed as markup.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, JustifyMethod, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style, StyleType
from rich.table import Table
from rich.text import Span, Text

from cyclebench.report.text import safe_text, visible

__all__ = ["NAME_LINES", "NOTES_MIN", "NOTE_SHOWN", "Column", "FitTable", "Heading", "Layout", "bounded", "linewise",
           "pieces", "wrap_at", "wrap_words"]

NOTES_MIN = 40  # narrowest notes column worth keeping beside the others: narrower, a note of
# a crash or a disturbed row wraps over 3–4 lines beside numbers that take one
_NOTE_META = "cyclebench.note"  # marks the placeholder row a note under its row replaces
_NAME_META = "cyclebench.name"  # marks the placeholder row its name above the row replaces
_UNBOUNDED = 1_000_000
# the most of a note a table shows: 4 KiB is 60 lines at 72 columns, beyond what a row's note is read for.
# A 10 MB failure reason shown whole, even rendered linearly (linewise), took 3.8 s (one word), 6.2 s
# (words) and 86 s and 1.1 GB (10-character lines: rich's work is per line) in `export --format text`,
# and a pipe's table (every column at its natural width) padded each of its lines to the note's 10 M
# cells; cut here, 0.6-0.9 s
NOTE_SHOWN = 4096
_RECORD_INDENT = 2
NAME_LINES = 2  # a name folded onto more lines goes on a line above its row (FitTable._names_fit)
# as perf stat, benchstat and hyperfine print: a rule under the header, columns two spaces apart, no
# vertical lines (each costs three cells a column: 24 of 80 for the eight answer columns of compare)
BOX = box.SIMPLE_HEAD

Cell = str | Text | None


@dataclass(frozen=True)
class Column:
    """One column of a :class:`FitTable`.

    priority: 0 carries the answer or names the row, always shown; 1, 2, … secondary,
    the highest number dropped first. fold: a name column that may wrap (after ``/``, a
    space or ``_``) down to this many cells, never inside a word; None: never narrower than its
    widest cell (numbers). notes: the notes column, which becomes a line under its row
    when it does not fit. names: the column names the row (a record's heading); name
    columns (``fold``) always do.
    """

    header: str
    priority: int = 0
    justify: JustifyMethod = "right"
    fold: int | None = None
    notes: bool = False
    names: bool = False

    @property
    def heading(self) -> bool:
        return self.names or self.fold is not None


@dataclass(frozen=True)
class Layout:
    """What a width allows: the indices of the columns shown, their content widths (None
    in record mode), whether notes go under their rows, the headers of the columns left out
    (in table order), ``names_above``: the name columns left out of the grid, each row's
    name on a line above it, and ``records``: each row as a record (see the module's
    docstring)."""

    shown: list[int]
    widths: list[int] | None
    notes_under: bool
    dropped: list[str] = field(default_factory=list)
    records: bool = False
    names_above: bool = False


# a name may wrap after a '/', a space or an '_' (the words of a C identifier: will-it-scale's
# test cases and users' benchmarks run to 30 cells, "another_very_long_benchmark_name")
_BREAK = re.compile(r"(?<=[/ _])")


def pieces(s: str) -> list[str]:
    """The parts a name wraps between: each ends at a ``/``, a space or an ``_`` (kept with it)."""
    return [p for p in _BREAK.split(s) if p]


def _longest_piece(s: str) -> int:
    return max((cell_len(p.rstrip(" ")) for line in s.split("\n") for p in pieces(line)), default=0)


def _longest_word(s: str) -> int:
    return max((cell_len(w) for w in s.split()), default=0)


def _broken(text: Text, width: int, units: Callable[[str], Iterator[tuple[str, int | None]]]) -> Text:
    """``text`` with a line break before each unit of a line (``units``: (piece, span)) that would
    take its line past ``width`` cells, judged by the piece's own width, or by ``span`` where given
    (the first piece of a word no line holds: it starts a line). Styles are kept."""
    out: list[Text] = []
    for line in text.split("\n", allow_blank=True):
        if cell_len(line.plain) <= width:
            out.append(line)
            continue
        offsets, used, pos = [], 0, 0
        for p, span in units(line.plain):
            w = cell_len(p.rstrip(" ")) if span is None else span
            if used and used + w > width:
                offsets.append(pos)
                used = 0
            used += cell_len(p)
            pos += len(p)
        for part in line.divide(offsets):
            part.rstrip()
            out.append(part)
    return Text("\n").join(out)


def wrap_at(text: Text, width: int) -> Text:
    """``text`` with line breaks inserted after a ``/``, a space or an ``_`` so no line is wider
    than ``width`` cells where the pieces allow it (a piece wider than ``width`` stays whole
    on its own line: the caller gives enough width). Styles are kept."""
    return _broken(text, width, lambda plain: ((p, None) for p in pieces(plain)))


_WORD = re.compile(r"(?<= )(?=[^ ])")  # before each word: a word keeps the spaces after it


def _word_units(plain: str, width: int) -> Iterator[tuple[str, int | None]]:
    """wrap_words' units: each word whole; a word wider than ``width``, which no line holds, by its
    pieces, the first starting a line of its own (its span is the whole word's)."""
    for word in _WORD.split(plain):
        if cell_len(word.rstrip(" ")) <= width:
            yield word, None
            continue
        for i, p in enumerate(pieces(word)):
            yield p, cell_len(word.rstrip(" ")) if i == 0 else None


def wrap_words(text: Text, width: int) -> Text:
    """``text`` (a note: prose, or a command line) with line breaks inserted at its spaces so no
    line is wider than ``width`` cells, as rich wraps prose; but a word wider than ``width``, which
    rich would cut every ``width`` cells ("…/predict_blo" "cks.c"), is broken after a ``/`` or an
    ``_`` in it instead, as names are (:func:`wrap_at`); only a piece wider than ``width`` is left
    for rich to fold. Styles are kept."""
    return _broken(text, width, lambda plain: _word_units(plain, width))


class _Linewise(Text):
    """A Text whose rendering is cut into one segment a line. rich's own ``Text`` renders its wrapped
    lines joined, one segment a style, and ``Segment.split_and_crop_lines`` (every table cell, every
    padding, the console's buffer) then cuts such a segment at each line break with ``str.partition``,
    copying the rest of it at every line: quadratic in the cell. A failure reason of 10 MB under its
    row took 47 s (one word) and 64 s (words) in `export --format text`, 1 MB of 10-character lines
    12.6 s; cut here, with one ``str.split``, 3.8, 6.2 and 4.5 s (the rest is rich's work per line:
    NOTE_SHOWN bounds it)."""

    __slots__ = ()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in super().__rich_console__(console, options):
            text, style, control = segment
            if control or "\n" not in text:
                yield segment
                continue
            for k, part in enumerate(text.split("\n")):
                if k:
                    yield Segment("\n", style)
                if part:
                    yield Segment(part, style)


def linewise(t: Text) -> Text:
    """``t`` as a Text that renders in time linear in its length (:class:`_Linewise`); what every cell,
    title, note and name a FitTable prints is rendered as."""
    if type(t) is _Linewise:
        return t
    return _Linewise(t.plain, style=t.style, justify=t.justify, overflow=t.overflow, no_wrap=t.no_wrap, end=t.end,
                     tab_size=t.tab_size, spans=list(t.spans))


def _width(t: Text) -> int:
    return max((cell_len(line.expandtabs(8)) for line in t.plain.split("\n")), default=0)


def bounded(cell: Cell, limit: int = NOTE_SHOWN) -> Text:
    """``cell`` as :func:`safe_text` makes it, or its first ``limit`` characters followed by a dim
    ``[N more characters not shown: …]`` that says where they are whole (a note: the csv and json exports of its run).
    A long string is cut before it becomes a Text: rich's Text strips control codes from the whole
    of it (str.translate, 0.5 s for a 10 MB note of non-ASCII lines), as slicing a Text copies it."""
    plain = cell.plain if isinstance(cell, Text) else visible("" if cell is None else str(cell))
    if len(plain) <= limit:
        return cell if isinstance(cell, Text) else Text(plain)
    if isinstance(cell, Text):
        cut = Text(plain[:limit], style=cell.style, spans=[Span(a, min(b, limit), s) for a, b, s in cell.spans
                                                            if a < limit])
    else:
        cut = Text(plain[:limit])
    cut.append(f" [{len(plain) - limit:,} more characters not shown: `cyclebench export RUN --format csv` writes "
               "the whole note]", style="dim")
    return cut


@dataclass(frozen=True)
class _Row:
    shown: list[Text]  # what the terminal shows: a note bounded (NOTE_SHOWN)
    style: StyleType
    end_section: bool = False
    whole: dict[int, Cell] = field(default_factory=dict)  # the cells ``shown`` cut, by column, as given

    @cached_property
    def cells(self) -> list[Text]:
        """Every cell whole, as :func:`safe_text` makes it: what ``rows`` and the site's tables read."""
        return [safe_text(self.whole[i]) if i in self.whole else t for i, t in enumerate(self.shown)]


class FitTable:
    """A rich table that chooses its columns by the width it is printed at."""

    def __init__(self, columns: Sequence[Column], *, title: str | Text | None = None,
                 caption: str | Text | None = None, wide: bool = False, header_style: StyleType = "bold",
                 title_justify: JustifyMethod = "left", caption_justify: JustifyMethod = "left",
                 notes_min: int = NOTES_MIN, footer: bool = True, boxed: bool = False) -> None:
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
        self.footer = footer
        self.boxed = boxed  # ruled on every side (mail: rich draws it in ASCII), else BOX
        self._rows: list[_Row] = []

    # building

    def add_row(self, *cells: Cell, style: StyleType = "") -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        shown = [bounded(v) if c.notes else safe_text(v) for c, v in zip(self.columns, cells, strict=True)]
        # a note bounded is longer than NOTE_SHOWN by what it says of the rest; its cell kept as given
        whole = {i: v for i, (v, t) in enumerate(zip(cells, shown, strict=True)) if len(t) > NOTE_SHOWN}
        self._rows.append(_Row(shown, style, whole=whole))

    def add_section(self) -> None:
        """A rule under the last row (between groups of rows)."""
        if self._rows:
            self._rows[-1] = replace(self._rows[-1], end_section=True)

    @property
    def row_count(self) -> int:
        return len(self._rows)

    @property
    def rows(self) -> list[list[str]]:
        """The cells as plain text, row by row (for tests and exports)."""
        return [[c.plain for c in r.cells] for r in self._rows]

    # layout

    def _notes(self) -> int | None:
        return next((i for i, c in enumerate(self.columns) if c.notes), None)

    def _full(self) -> list[int]:
        """Each column's widest cell, header included (on one line)."""
        full = [cell_len(c.header) for c in self.columns]
        for row in self._rows:
            for i, cell in enumerate(row.shown):
                full[i] = max(full[i], _width(cell))
        return full

    def _floor(self) -> list[int]:
        """The narrowest each column can be without cutting anything: numbers their widest
        cell, names their longest piece, notes and headers their longest word."""
        floor = []
        for i, c in enumerate(self.columns):
            head = _longest_word(c.header)
            cells = [r.shown[i].plain for r in self._rows]
            if c.notes:
                least = max((_longest_word(s) for s in cells), default=0)
            elif c.fold is not None:
                least = max((_longest_piece(s) for s in cells), default=0)
            else:
                least = max((_width(r.shown[i]) for r in self._rows), default=0)
            floor.append(max(head, least))
        return floor

    def _least(self, full: list[int], floor: list[int]) -> list[int]:
        """What a column is given before names must wrap further: names their fold width,
        notes ``notes_min`` (never below the floor, never above the widest cell)."""
        out = []
        for c, f, fl in zip(self.columns, full, floor, strict=True):
            want = self.notes_min if c.notes else c.fold
            out.append(fl if want is None else min(f, max(want, fl)))
        return out

    def _need(self, console: Console, shown: list[int], widths: list[int]) -> int:
        """The width of the table with these columns at these content widths (rich's
        measurement: padding and borders included); ``widths`` is indexed by column."""
        probe = self._table(shown, [widths[i] for i in shown], notes_under=False, with_rows=False)
        return Measurement.get(console, console.options.update_width(_UNBOUNDED), probe).minimum

    def layout(self, console: Console, width: int) -> Layout:
        """Choose the columns for ``width`` cells (see the module's docstring)."""
        n = len(self.columns)
        notes = self._notes()
        full = self._full()
        has_notes = notes is not None and any(r.shown[notes].plain for r in self._rows)
        base = [i for i in range(n) if i != notes]
        if self.wide or width >= _UNBOUNDED:  # every column: notes beside, else under their rows
            every = list(range(n))
            for cols, notes_under, widths in self._wide_tries(every, base, has_notes, full):
                need = self._need(console, cols, widths)
                if need <= width:
                    return Layout(cols, self._spread(cols, full, widths, width - need), notes_under)
            return Layout(every, None, False, records=True)
        floor = self._floor()
        least = self._least(full, floor)
        # secondary columns in drop order: highest priority number first, the later column first among equals
        order = sorted((i for i in base if self.columns[i].priority > 0),
                       key=lambda i: (self.columns[i].priority, i), reverse=True)
        for k in range(len(order) + 1):
            shown = [i for i in base if i not in order[:k]]
            tries: list[tuple[list[int], bool]] = [(shown, has_notes)]
            if has_notes and notes is not None:  # notes beside the row if they fit, else under it
                tries.insert(0, (sorted([*shown, notes]), False))
            for cols, notes_under in tries:
                need = self._need(console, cols, least)
                if need <= width:
                    cols, need = self._put_back(console, cols, order[:k], least, width, need)
                    return self._names_fit(console, Layout(cols, self._spread(cols, full, least, width - need),
                                                           notes_under, self._left_out(cols, order)),
                                           full, least, width, order)
        # only the answer left: names wrap down to their longest piece, headers to their longest word
        answer = [i for i in base if self.columns[i].priority == 0]
        # no column put back from here on: with the names squeezed below their fold width, or on a line
        # above their row, a narrower terminal would show more columns than a wider one
        dropped = [self.columns[i].header for i in sorted(order)]
        need = self._need(console, answer, floor)
        if need <= width:
            return self._names_fit(console, Layout(answer, self._spread(answer, full, floor, width - need), has_notes,
                                                   dropped), full, floor, width)
        # the names on a line above their row, the numbers in the grid below them
        numbers = [i for i in answer if self.columns[i].fold is None]
        if numbers != answer and numbers:
            need = self._need(console, numbers, floor)
            if need <= width:
                return Layout(numbers, self._spread(numbers, full, floor, width - need), has_notes, dropped,
                              names_above=True)
        # not even that: one record a row, every answer column kept
        return Layout(answer + ([notes] if has_notes and notes is not None else []), None, False, dropped,
                      records=True)

    def _wide_tries(self, every: list[int], base: list[int], has_notes: bool, full: list[int]
                    ) -> Iterator[tuple[list[int], bool, list[int]]]:
        """``wide``'s layouts, widest first: (columns, notes under their rows, content widths). The
        narrower widths are measured only when the widest does not fit: a pipe's table (every
        column at its widest) never needs them (`runs -n 100`: its layout 3.3 → 0.9 ms)."""
        yield every, False, full
        yield base, has_notes, full
        floor = self._floor()
        yield base, has_notes, self._least(full, floor)
        yield base, has_notes, floor

    def _put_back(self, console: Console, shown: list[int], dropped: Sequence[int], widths: list[int], width: int,
                  need: int, names: bool = True) -> tuple[list[int], int]:
        """``shown`` with each of ``dropped`` (in drop order) that still fits put back, the last
        dropped (the lowest priority number) first, and the width the table then needs: dropping
        stops at the first column whose loss makes the table fit, and the narrower columns dropped
        before it would otherwise be left out with room for them (`runs`: host, CPU model and CPU
        gone with a labels column no terminal holds). ``names``: name columns may come back (not
        when the names are on a line above their row)."""
        for i in reversed(dropped):
            if not names and self.columns[i].fold is not None:
                continue
            cols = sorted([*shown, i])
            got = self._need(console, cols, widths)
            if got <= width:
                shown, need = cols, got
        return shown, need

    def _left_out(self, shown: list[int], order: Sequence[int]) -> list[str]:
        """The headers of the secondary columns not in ``shown``, in table order."""
        return [self.columns[i].header for i in sorted(order) if i not in shown]

    def _names_fit(self, console: Console, lay: Layout, full: list[int], least: list[int], width: int,
                   order: Sequence[int] | None = None) -> Layout:
        """``lay``, unless a name in it folds onto more than NAME_LINES lines (a name, a label and run
        ids stacked in a cell read as three rows): then the names on a line above their row, when the
        numbers fit without them (and the number columns dropped that fit beside them put back)."""
        assert lay.widths is not None
        tall = any(c.fold is not None and any(len(wrap_at(r.shown[i], w).plain.split("\n")) > NAME_LINES
                                              for r in self._rows)
                   for i, w in zip(lay.shown, lay.widths, strict=True) for c in (self.columns[i],))
        numbers = [i for i in lay.shown if self.columns[i].fold is None and not self.columns[i].notes]
        if not tall or not numbers:
            return lay
        need = self._need(console, numbers, least)
        if need > width:
            return lay
        dropped = lay.dropped
        if order is not None:  # from layout's first loop: the room the names left is the numbers' (_put_back)
            gone = [i for i in order if i not in lay.shown]
            numbers, need = self._put_back(console, numbers, gone, least, width, need, names=False)
            # every name column is on the line above (_lines): only the numbers not put back are left out
            dropped = [self.columns[i].header for i in sorted(gone)
                       if i not in numbers and self.columns[i].fold is None]
        has_notes = lay.notes_under or any(self.columns[i].notes for i in lay.shown)
        return Layout(numbers, self._spread(numbers, full, least, width - need), has_notes, dropped,
                      names_above=True)

    def _spread(self, shown: list[int], full: list[int], least: list[int], slack: int) -> list[int]:
        """Content widths: the least each column needs, then the slack to the wrapping
        columns (names first, then notes) up to their widest cell. Fixed widths, so rich
        never has to squeeze a column below what this layout promised."""
        widths = {i: least[i] for i in shown}
        # names first, then headers back on one line, then notes
        flexible = sorted((i for i in shown if full[i] > least[i]),
                          key=lambda i: (self.columns[i].notes, self.columns[i].fold is None, i))
        for i in flexible:
            extra = min(full[i] - least[i], slack)
            widths[i] += extra
            slack -= extra
        return [widths[i] for i in shown]

    # rendering

    def _annotation(self, x: str | Text | None, style: str) -> Text | None:
        return None if x is None else linewise(safe_text(x, style=style))

    def _table(self, shown: list[int], widths: list[int], notes_under: bool, with_rows: bool = True,
               names_above: bool = False) -> Table:
        table = Table(title=self._annotation(self.title, "table.title"),
                      caption=self._annotation(self.caption, "table.caption"), header_style=self.header_style,
                      title_justify=self.title_justify, caption_justify=self.caption_justify,
                      **({"box": box.HEAVY_HEAD} if self.boxed else
                         {"box": BOX, "show_edge": False, "pad_edge": False, "padding": (0, 1, 0, 0)}))
        for k, i in enumerate(shown):
            c = self.columns[i]
            header = wrap_at(safe_text(c.header), widths[k])
            # names and headers arrive wrapped at their break points; notes wrap at spaces
            table.add_column(header, justify=c.justify, no_wrap=not c.notes, overflow="fold", width=widths[k])
        if not with_rows:
            return table
        notes = self._notes()
        for j, row in enumerate(self._rows):
            note = row.shown[notes] if notes is not None and notes_under else None
            has_note = note is not None and bool(note.plain)
            cells = [linewise(wrap_at(row.shown[i], widths[k]) if self.columns[i].fold is not None
                              else wrap_words(row.shown[i], widths[k]) if self.columns[i].notes else row.shown[i])
                     for k, i in enumerate(shown)]
            if names_above:  # a placeholder row, replaced by the row's name when rendered
                table.add_row(*[Text("") for _ in shown], style=Style(meta={_NAME_META: j}))
            table.add_row(*cells, style=row.style, end_section=row.end_section and not has_note)
            if has_note:  # a placeholder row, replaced by the note when rendered
                table.add_row(*[Text("") for _ in shown], style=Style(meta={_NOTE_META: j}),
                              end_section=row.end_section)
        return table

    def _footer(self, lay: Layout, width: int) -> Text | None:
        if not (self.footer and lay.dropped):
            return None
        return Text(f"not shown at {width} columns: {', '.join(lay.dropped)} (--wide, or a wider COLUMNS, "
                    "shows every column)", style="dim")

    def _records(self, lay: Layout) -> Iterator[RenderableType]:
        """Each row as a record: its name columns on one line, then ``column  value``."""
        if self.title is not None:
            yield linewise(safe_text(self.title, style="table.title"))
        heading = [i for i in lay.shown if self.columns[i].heading]
        rest = [i for i in lay.shown if i not in heading]
        key_width = max((cell_len(self.columns[i].header) for i in rest), default=0)
        for row in self._rows:
            name = Text(" · ").join(row.shown[i] for i in heading if row.shown[i].plain)
            name.stylize("bold")
            grid = Table.grid(padding=(0, 2))
            grid.add_column(no_wrap=True, width=key_width)
            grid.add_column(overflow="fold")
            for i in rest:
                if row.shown[i].plain:
                    grid.add_row(Text(self.columns[i].header, style="dim"), linewise(row.shown[i]))
            yield Group(linewise(name), Padding(grid, (0, 0, 0, _RECORD_INDENT), style=row.style or ""))
        if self.caption is not None:
            yield linewise(safe_text(self.caption, style="table.caption"))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = _UNBOUNDED if console.soft_wrap else options.max_width
        lay = self.layout(console, width)
        footer = self._footer(lay, width)
        if lay.records:
            yield from self._records(lay)
            if footer is not None:
                yield footer
            return
        widths = lay.widths
        assert widths is not None
        table = self._table(lay.shown, widths, lay.notes_under, names_above=lay.names_above)
        if width >= _UNBOUNDED:  # a soft-wrapping console: the table at its natural width
            natural = Measurement.get(console, options.update_width(_UNBOUNDED), table).maximum
            # a soft-wrapping print asks for no_wrap: the title and caption would be cropped
            options = options.update(width=natural, no_wrap=False, overflow="fold")
        yield from self._lines(console, options, table, lay)
        if footer is not None:
            yield footer

    def _lines(self, console: Console, options: ConsoleOptions, table: Table, lay: Layout) -> Iterator[Segment]:
        new_line = Segment.line()
        notes = self._notes()
        for line in console.render_lines(table, options, pad=False):
            marks = [k for k, seg in enumerate(line) if seg.style is not None
                     and (_NOTE_META in seg.style.meta or _NAME_META in seg.style.meta)]
            if not marks or (notes is None and not lay.names_above):
                yield from line
                yield new_line
                continue
            meta = line[marks[0]].style.meta  # type: ignore[union-attr]
            left, right = line[:marks[0]], line[marks[-1] + 1:]
            inner = Segment.get_line_length(line) - Segment.get_line_length(left) - Segment.get_line_length(right)
            if _NAME_META in meta:  # the row's name columns, on a line of their own above it
                row = self._rows[meta[_NAME_META]]
                name = Text(" · ").join(row.shown[i] for i, c in enumerate(self.columns)
                                        if c.fold is not None and row.shown[i].plain)
                name.stylize(row.style or "bold")
                body = Padding(linewise(wrap_at(name, max(inner, 1))), (0, 0, 0, 0))
            else:
                row = self._rows[meta[_NOTE_META]]
                note = wrap_words(row.shown[notes], max(inner - 4, 1)).copy()  # type: ignore[index]
                note.style = row.style or note.style
                body = Padding(linewise(note), (0, 1, 0, 3))  # indented under the row's name
            for body_line in console.render_lines(body, options.update_width(max(inner, 1)), pad=True):
                yield from left
                yield from body_line
                yield from right
                yield new_line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        width = _UNBOUNDED if console.soft_wrap else options.max_width
        lay = self.layout(console, width)
        if lay.records or lay.widths is None:
            return Measurement(1, options.max_width)
        return Measurement.get(console, options.update_width(width), self._table(lay.shown, lay.widths,
                                                                                  lay.notes_under))


class Heading:
    """A section's heading: rich's rule with the title in it when the title fits, else the title
    wrapped between words, left-aligned, above a plain rule — rich's Rule crops a long title with
    "…" (a symbol's name, a variant's flags), and nothing cyclebench prints is cut."""

    def __init__(self, title: str | Text) -> None:
        self.title = safe_text(title, multiline=False)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.rule import Rule

        width = options.max_width
        if console.soft_wrap or cell_len(self.title.plain) + 6 <= width:  # rich's rule: "─ title ─" at least
            yield Rule(self.title)
            return
        yield self.title
        yield Rule()
