"""What a design says while it runs, without printing: the command gives a Progress (a bar and
stderr lines on a terminal, nothing under --quiet) and the design calls it."""

from __future__ import annotations

from typing import Protocol

__all__ = ["SILENT", "Progress"]


class Progress(Protocol):
    """``step(label)``: one unit of the planned work is starting; ``note(text)``: a line worth
    the user's eye on stderr (a warning, what was skipped and why)."""

    def step(self, label: str) -> None: ...

    def note(self, text: str) -> None: ...


class _Silent:
    def step(self, label: str) -> None:
        return None

    def note(self, text: str) -> None:
        return None


SILENT: Progress = _Silent()
