"""What every command shares: the two consoles (stdout for results, stderr for the rest),
the one-line user error (exit 2), parameter lists, opening the database, and files written
whole (``write_text``; a table as plain text: ``write_table``, its file made first: ``open_output``)."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console, RenderableType
from rich.text import Text

from cyclebench.atomic import write_atomic
from cyclebench.model import FAILED_STATUSES
from cyclebench.report.text import safe_text

if TYPE_CHECKING:  # imported where used: a command that lists stored runs needs no numpy (bench/startup.py)
    from cyclebench.store import Store

__all__ = ["FAILED_STATUSES", "UserError", "err", "null_context", "open_output", "open_store", "out", "parse_params",
           "root_command", "write_table", "write_text", "writing"]


def _unbounded(stream: Any) -> bool:
    """A pipe or a file with no COLUMNS to fit: a log or a mail, read at any width. Its console
    soft-wraps (lines are neither cropped nor folded), and report.fit prints every column of
    a table at its natural width there, as --wide does; COLUMNS, when set, always wins."""
    return "COLUMNS" not in os.environ and stream is not None and not stream.isatty()  # None: closed


def _console(stream: Any, stderr: bool = False) -> Console:
    piped = _unbounded(stream)
    # markup=False: nothing a benchmark, runner, file or database wrote is ever parsed as rich
    # markup (a reason ending in "[/dev/cpu/0/msr-nope]" would end the command in a MarkupError);
    # styles are given as Text or style=, and data goes through report.text.safe_text. emoji=False:
    # nothing printed is an emoji code either (":fire:" in a str stays ":fire:"), and rich's
    # emoji table (rich._emoji_codes, 11 ms of a compare beside a busy loop) is never loaded.
    return Console(stderr=stderr, width=200 if piped else None, soft_wrap=piped, markup=False, emoji=False)


out = _console(sys.stdout)
err = _console(sys.stderr, stderr=True)


class UserError(click.ClickException):
    """One line on stderr, exit 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        err.print(Text.assemble(("cyclebench: error:", "bold red"), " ", safe_text(self.message)), highlight=False,
                  soft_wrap=True)


def root_command(name: str) -> click.Command | None:
    """The top-level command ``name``, found through click's context (the group that is running:
    the fleet never imports the command line, which imports it). RuntimeError outside one."""
    ctx = click.get_current_context().find_root()
    group = ctx.command
    return group.get_command(ctx, name) if isinstance(group, click.Group) else None


INT64_MAX = 2**63 - 1


def parse_params(values: tuple[str, ...]) -> list[int]:
    out_: list[int] = []
    for v in values:
        for part in v.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                value = int(part, 0)
            except ValueError:
                raise click.BadParameter(f"'{part}' is not an integer", param_hint="-p/--param") from None
            if not 0 <= value <= INT64_MAX:  # sizes and counts; the DB stores int64 (1e23 once gave a traceback)
                raise click.BadParameter(f"'{part}' is not a size or count (0..{INT64_MAX})", param_hint="-p/--param")
            out_.append(value)
    return out_


def open_store(db: str | None, create: bool = True) -> Store:
    """The database of ``--db`` (or the default). Read-only commands pass ``create=False``: a
    mistyped path is an error, not a new empty database. Writing commands mark the
    runs whose process is gone as 'abandoned' (store/liveness.py), not
    'running' forever."""
    from cyclebench.store import Store, StoreError

    try:
        store = Store(db, create=create)
        if create:
            store.reconcile()
        return store
    except StoreError as e:
        raise UserError(str(e)) from None


class null_context:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: object) -> None:
        return None


def spinner(text: str, quiet: bool = False) -> contextlib.AbstractContextManager[Any]:
    """rich's spinner beside ``text`` on stderr while a block runs, on a terminal only. In a pipe
    rich draws none, yet making one imported rich.status and parsed ``text`` as markup, which
    loads rich's emoji table: ~7 ms of a compare into a pipe (-X importtime). ``quiet``: none."""
    if quiet or not err.is_terminal:
        return null_context()
    return err.status(text, spinner="dots")


@contextlib.contextmanager
def writing(path: Path, stored: str = "") -> Iterator[None]:
    """Inside it an output file is written (--json, --csv, -o, --plot): a missing directory, no
    permission or no space is one line, exit 2, saying that what was measured is stored
    (``stored``, e.g. "run #3")."""
    try:
        yield
    except OSError as e:
        kept = f"; the results are stored ({stored})" if stored else ""
        raise UserError(f"cannot write {path}: {e.strerror or e}{kept}") from None


def write_text(path: Path, text: str, stored: str = "") -> None:
    """Write an output file whole or not at all (cyclebench.atomic: on a full disk the old file
    stays); its errors as :func:`writing` says them."""
    with writing(path, stored):
        write_atomic(path, text)


def open_output(path: Path) -> None:
    """Create or empty ``path`` before anything runs, as perf stat -o does: a file that cannot be
    written is one line (UserError, exit 2) before a repetition is spent."""
    try:
        with path.open("w"):
            pass
    except OSError as e:
        raise UserError(f"-o: cannot write {path}: {e.strerror or e}") from None


def write_table(path: Path, table: RenderableType, stored: str) -> None:
    """The table as plain text (no colour, 200 columns as when piped) into ``path``."""
    buf = io.StringIO()
    Console(file=buf, width=200, color_system=None, markup=False, emoji=False, force_terminal=False).print(table)
    write_text(path, buf.getvalue(), stored)
