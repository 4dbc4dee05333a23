"""The one interface every export writer has: ``Export`` in, ``Exported`` out (the package's
docstring says what each format is). Apart from the package so the writers import it without
importing the package that lists them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cyclebench.model import ComparisonRow, Result

__all__ = ["ComparisonRow", "Export", "Exported", "Writer"]


@dataclass(frozen=True)
class Export:
    """What a writer gets.

    ``results``: result records in order (``model.Result``, with ``run_id`` and ``kind``; each
    process's own estimate in its ``per_process``; a mapping of a record's fields, ``dict(r)``,
    is made the record again), from one run or several (rows of one benchmark from several
    runs are its replicates, in that order).
    ``runs``: the run rows by id (``host``, ``cpu_model``, ``started_at``, ``calibration``,
    ``env``…), for the formats' context headers; may be empty. ``comparisons``: compare's
    rows; when given, the table formats (csv, markdown, text) show them instead of the
    results. ``title``/``caption``: the table's, for markdown and text.
    """

    results: Sequence[Result] = ()
    runs: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)
    comparisons: Sequence[ComparisonRow] = ()
    title: str | None = None
    caption: str | None = None

    def __post_init__(self) -> None:
        records = tuple(Result.of(r) for r in self.results)
        object.__setattr__(self, "results", records)


@dataclass(frozen=True)
class Exported:
    """A writer's output: the text of the format (ends in a newline) and notes, one line
    each, on what it left out and why."""

    text: str
    notes: tuple[str, ...] = ()


Writer = Callable[[Export], Exported]
