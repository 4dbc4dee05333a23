"""Progress of a command that takes more than ~2 s: a rich bar with ETA on a terminal, one plain
line per step on stderr otherwise (stdout stays clean for exports)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any

from rich.console import Console

from cyclebench.report.text import visible
from cyclebench.ui.common import err, spinner

if TYPE_CHECKING:  # rich.progress only for a bar, on a terminal: a pipe's lines need none of it
    from rich.progress import Progress, TaskID


def bar(console: Console = err, disable: bool = False) -> Progress:
    """rich's bar as the commands show it: what is measured, the bar, done/total, the time
    elapsed and the ETA; gone when it ends (transient). rich.progress is imported here, for a
    bar only."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=True,
                    disable=disable)


class Notes:
    """An experiments.progress.Progress for a design that runs without a bar: its notes on stderr
    (Steps, the one with a bar, says its notes the same way)."""

    def __init__(self, console: Console = err, quiet: bool = False) -> None:
        self.console, self.quiet = console, quiet

    def step(self, label: str) -> None:
        return None

    def note(self, text: str) -> None:
        """A line for the user on stderr (above the bar, for Steps)."""
        if not self.quiet:
            self.console.print(visible(text), highlight=False, soft_wrap=True)


class Steps(Notes):
    """``with Steps(total, "measuring") as p: p.step("label")`` after each step; ``total`` may be
    raised later (``p.total = n``). Quiet: nothing at all."""

    def __init__(self, total: int, what: str, console: Console = err, quiet: bool = False, plain: bool = False) -> None:
        """``plain``: lines even on a terminal (a command printing there itself would tear a bar)."""
        self.total, self.what, self.console, self.quiet, self.plain = max(total, 1), what, console, quiet, plain
        self.done = 0
        self._t0 = time.monotonic()
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Steps:
        if not self.quiet and not self.plain and self.console.is_terminal:
            self._bar = bar(self.console)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.what, total=self.total)
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.__exit__(et, e, tb)

    def start(self, label: str) -> None:
        """What is being measured now (the bar's description; nothing in plain mode)."""
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, description=f"{visible(label, multiline=False):<40.40}")

    def step(self, label: str, n: int = 1) -> None:
        self.done += n
        self.total = max(self.total, self.done)
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=self.done, total=self.total)
        elif not self.quiet:
            self.console.print(f"cyclebench: {self.what} {self.done}/{self.total} {visible(label, multiline=False)} "
                               f"({time.monotonic() - self._t0:.1f} s)", highlight=False, soft_wrap=True)


class LineProgress:
    """experiments.progress.Progress on a terminal's status line (nothing in a pipe): what is
    being built or measured; notes as lines on stderr."""

    def __init__(self, status: Any) -> None:
        self.status = status

    def step(self, label: str) -> None:
        if self.status is not None:
            self.status.update(label)

    def note(self, text: str) -> None:
        err.print(f"cyclebench: {text}", highlight=False, markup=False)


@contextmanager
def progress() -> Iterator[LineProgress]:
    """A LineProgress on stderr's status line (a terminal), or lines only (a pipe)."""
    with spinner("starting") as st:
        yield LineProgress(st)
