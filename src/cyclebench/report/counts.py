"""A simulated count per op as every table shows it: never below zero.

callgrind's per-op figure is a difference of two runs' counts over the difference of their
sizes (runner/callgrind.per_op: (E(2·n1) − E(n1)) / n1). A miss count that came out lower at
the longer run — the simulated branch predictor's state differs between the two, its history
not reset — gives a negative "count": loop/empty's and chain/add200's Bcm/op read −0.2 in the
lab fixture (runs 4 and 15). A count is never negative, so it is shown as 0 with a note that
gives the difference as it came out, and a table ranked by it ranks on the 0 it shows.

The one rule for every table that prints callgrind's events (console.simulated_table for `run`
and `show` of its run, report.variants for `variants --backend callgrind`): :func:`clipped`
for the value a table shows and ranks by, :func:`cell` for its cell, :func:`clipped_note` for
its note. Imports nothing of the project, so console and variants both may use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

SHOWN = "0"  # the cell of a count that came out below zero


def clipped(x: float | None) -> float | None:
    """The count a table shows and ranks by: ``x``, or 0 when the difference came out below it."""
    return 0.0 if x is not None and x < 0 else x


def below(events: Mapping[str, float | None], names: Iterable[str]) -> list[str]:
    """The events of ``names`` whose per-op difference came out below zero, in ``names``' order."""
    return [e for e in names if (events.get(e) or 0) < 0]


def cell(x: float | None, fmt: Callable[[float | None], str]) -> str:
    """A count's cell: ``0`` for one below zero (no estimate of 0.000: nothing was counted
    there), else ``fmt(x)``."""
    return SHOWN if x is not None and x < 0 else fmt(x)


def clipped_note(label: str, value: float) -> str:
    """What a row says of a count shown as 0: the difference as it came out (``Bcm/op shown as 0:
    the difference of the two runs' counts gave -0.2``)."""
    return f"{label} shown as 0: the difference of the two runs' counts gave {value:.3g}"
