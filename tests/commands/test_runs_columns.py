"""A column is left out only when there is no room for it, and `runs` says what it lists: over the lab
fixture (tests/data/lab) at 80 columns, every table every reader prints hides only the columns whose
natural width would not fit beside the others; `runs` is in the order its caption names (start time,
newest first: an imported run where it started), says how many runs it left out and the option that
shows them; its commands wrap between words, never inside a name."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.measure import Measurement
from rich.text import Text

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import gallery

from cyclebench.report.fit import Column, FitTable, pieces, wrap_words

COLUMNS = 80
_ROW = re.compile(r"^\s*(\d+)\s+(\d{4}-\d\d-\d\dT\S+)\s")  # a runs row: its id and start


def _natural(table: FitTable, i: int) -> int:
    """Column ``i``'s width on one line a cell: its header's and its widest cell's."""
    cells = [row[i] for row in table.rows]
    return max([cell_len(table.columns[i].header)] + [cell_len(ln) for c in cells for ln in c.split("\n")])


def _crowded(table: FitTable, console: Console, width: int) -> list[str]:
    """The columns ``table`` left out at ``width`` although there was room for them: a hidden
    column's natural width and its separator within the cells the printed table leaves."""
    lay = table.layout(console, width)
    if lay.records:  # not even the answer fits beside itself: nothing else could
        return []
    printed = Measurement.get(console, console.options.update_width(width), table).maximum
    gap = 3 if table.boxed else 2  # a separator: two spaces, or " │ " between ruled columns
    hidden = [i for i, c in enumerate(table.columns) if c.priority > 0 and not c.notes and i not in lay.shown
              and not (lay.names_above and c.fold is not None)]  # names above their row are shown
    return [f"{table.columns[i].header!r} ({_natural(table, i)} cells) left out of a table {printed} wide at {width}"
            for i in hidden if printed + gap + _natural(table, i) <= width]


@pytest.fixture(scope="module")
def lab() -> Iterator[Path]:
    with gallery.lab_copy() as db:
        yield db


def _runs_of(db: Path) -> list[tuple[int, str]]:
    con = sqlite3.connect(db)
    try:
        return [(int(i), str(s)) for i, s in con.execute("select id, started_at from runs")]
    finally:
        con.close()


def test_every_table_of_the_lab_hides_a_column_only_without_room_for_it(lab: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every FitTable every reader of the gallery prints at 80 columns, judged as it is printed (the
    consoles are the reader's while it runs: gallery.invoke)."""
    found: list[str] = []
    tables = 0
    argv: list[str] = []
    render = FitTable.__rich_console__

    def spy(self: FitTable, console: Console, options: ConsoleOptions) -> Any:
        nonlocal tables
        if not console.soft_wrap:  # a pipe's tables: every column, by design
            tables += 1
            found.extend(f"cyclebench {' '.join(argv)}: {p}" for p in _crowded(self, console, options.max_width))
        return render(self, console, options)

    monkeypatch.setattr(FitTable, "__rich_console__", spy)
    for argv in [a for _, _, commands in gallery.entries(lab) for a in commands]:
        said = gallery.invoke(argv, lab, COLUMNS)
        assert said.error is None, said.error
    assert tables > 50
    assert not found, "\n".join(found)


def test_runs_lists_in_the_order_its_caption_names(lab: Path) -> None:
    """Start time, newest first (the last stored first among equal starts): the lab's import, stored
    last, started with the run it was exported from, and is listed there."""
    stored = _runs_of(lab)
    said = gallery.invoke(["runs", "-n", str(len(stored))], lab, COLUMNS)
    assert said.exit_code == 0, said.output
    rows = [(int(m.group(1)), m.group(2)) for ln in said.output.splitlines() if (m := _ROW.match(ln))]
    assert sorted(rows) == sorted(stored)
    expected = sorted(stored, key=lambda r: (r[1], r[0]), reverse=True)
    assert rows == expected
    assert rows != sorted(stored, reverse=True), "the fixture's import no longer tests the order"
    flat = " ".join(said.output.split())
    assert f"by start time, newest first: {len(stored)} runs" in flat and "shows more" not in flat  # none left out


def test_runs_says_how_many_it_left_out_and_how_to_see_them(lab: Path) -> None:
    from cyclebench.commands.runs import runs_cmd

    options = {o for p in runs_cmd.params for o in p.opts}
    total = len(_runs_of(lab))
    said = gallery.invoke(["runs"], lab, COLUMNS)  # the default limit: 20
    flat = " ".join(said.output.split())
    assert f"by start time, newest first: 20 of the {total} runs (-n N shows more)" in flat, said.output
    assert "-n" in options
    passing = gallery.invoke(["runs", "-n", "100", "--bench", "chain/*"], lab, COLUMNS)
    n = sum(bool(_ROW.match(ln)) for ln in passing.output.splitlines())
    said = gallery.invoke(["runs", "-n", "3", "--bench", "chain/*"], lab, COLUMNS)
    flat = " ".join(said.output.split())
    assert n > 3 and f"by start time, newest first: 3 of the {n} runs the filters pass (-n N shows more)" in flat


def test_runs_wraps_a_command_between_its_words_never_inside_a_name(lab: Path) -> None:
    """Each piece of a stored command (a path's directories and its file name: report.fit.pieces) is
    printed whole, on one line: rich folded "…/predict_blocks.c" after "predict_blo"."""
    said = gallery.invoke(["runs", "-n", "100"], lab, COLUMNS)
    con = sqlite3.connect(lab)
    try:
        commands = [c for (c,) in con.execute("select command from runs")]
    finally:
        con.close()
    words = {w for c in commands for w in json.loads(c or "[]")}
    assert any("/" in w and len(w) > 40 for w in words)  # a path longer than a line beside the command
    lines = said.output.splitlines()
    missing = [p for w in words for p in pieces(w) if not any(p.rstrip() in ln for ln in lines)]
    assert not missing, missing


def test_a_wide_column_dropped_does_not_take_narrow_ones_with_it() -> None:
    """A labels column no 80 columns hold (priority 1, dropped last) left out alone: host and CPU, which
    are dropped before it, fit beside the answer once it is gone."""
    table = FitTable([Column("run"), Column("labels", justify="left", priority=1),
                      Column("host", justify="left", priority=2), Column("CPU", priority=3),
                      Column("command", justify="left", notes=True)])
    table.add_row("1", "rev=" + "a" * 40 + ",base=" + "b" * 40, "vm", "1", "cyclebench run x.c")
    console = Console(width=80, file=open("/dev/null", "w"))  # noqa: SIM115
    lay = table.layout(console, 80)
    assert lay.dropped == ["labels"] and [table.columns[i].header for i in lay.shown][:3] == ["run", "host", "CPU"]
    assert _crowded(table, console, 80) == []
    assert table.layout(console, 40).dropped == ["labels"]


@pytest.mark.parametrize("width", [12, 20, 30, 45])
def test_a_note_wraps_at_spaces_and_a_long_path_between_its_names(width: int) -> None:
    note = "cyclebench run /tmp/cyclebench-lab-abcdefgh/predict_blocks.c -b blocks/branchy --min-time 0.01"
    lines = wrap_words(Text(note), width).plain.split("\n")
    assert "".join(lines).replace(" ", "") == note.replace(" ", "")  # every character, in order
    for ln in lines:  # wider than the width only where one piece is
        assert cell_len(ln) <= width or len(pieces(ln)) == 1, (width, ln)
    for piece in pieces(note):  # never cut inside a name
        assert any(piece.rstrip() in ln for ln in lines), (width, piece, lines)
    assert wrap_words(Text("two words"), 4).plain == "two\nwords"  # prose: at its spaces, as rich wraps
