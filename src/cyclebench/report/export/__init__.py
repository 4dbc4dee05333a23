"""Exports that other tools read: one small writer per format, behind one interface.

Every writer is a function ``Export → Exported``: it gets result rows (``model.Result`` dicts
as ``store.results`` gives them, possibly from several runs — a history), the run rows they
belong to, and optionally compare's comparison rows; it returns the text of its format and
notes on what it left out (the command prints them on stderr). Writers are pure: no files,
no database, no terminal. docs/exports.md gives each format's fields and units.

=========  ==========================================================  ============================
format     what                                                        read by
=========  ==========================================================  ============================
gbench     Google Benchmark JSON: ns per op, cycles as user counters   benchmark's tools/compare.py
benchstat  Go benchmark lines: cycles/op, sec/op, Ir/op, ops/s          benchstat
pyperf     pyperf JSON: seconds per op (bytes for max-rss)             python -m pyperf compare_to
csv        one row per result (or per comparison), fixed columns       spreadsheets, pandas, R
markdown   GitHub table                                                GitHub, GitLab, docs
text       plain table of at most 72 columns                           mailing lists
=========  ==========================================================  ============================

The lossless run JSON (``json``) is the store's own (store.runfile) and is written by the
commands, not here (report may not import store).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from cyclebench.model import Comparison

__all__ = ["FORMATS", "TABLE_FORMATS", "ComparisonRow", "Export", "Exported", "Writer", "write"]


class ComparisonRow(Protocol):
    """A comparison as compare makes it (commands.compare.Row): A, B, the parameter, the
    unit of the medians, the Comparison (None: failed, ``note`` says why) and, for the
    sequential design, its looks."""

    a: str
    b: str
    param: int | None
    unit: str
    cmp: Comparison | None
    note: str
    sequential: dict[str, Any] | None


@dataclass(frozen=True)
class Export:
    """What a writer gets.

    ``results``: result rows in order (``model.Result`` dicts with ``run_id``, ``kind`` and
    ``extra``; each process's own estimate in ``extra["per_process"]``), from one run or
    several (rows of one benchmark from several runs are its replicates, in that order).
    ``runs``: the run rows by id (``host``, ``cpu_model``, ``started_at``, ``calibration``,
    ``env``…), for the formats' context headers; may be empty. ``comparisons``: compare's
    rows; when given, the table formats (csv, markdown, text) show them instead of the
    results. ``title``/``caption``: the table's, for markdown and text.
    """

    results: Sequence[Mapping[str, Any]] = ()
    runs: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)
    comparisons: Sequence[ComparisonRow] = ()
    title: str | None = None
    caption: str | None = None


@dataclass(frozen=True)
class Exported:
    """A writer's output: the text of the format (ends in a newline) and notes, one line
    each, on what it left out and why."""

    text: str
    notes: tuple[str, ...] = ()


Writer = Callable[[Export], Exported]


def _writers() -> dict[str, Writer]:
    from cyclebench.report.export import benchstat, csvfile, gbench, mailtext, markdown, pyperf

    return {"gbench": gbench.write, "benchstat": benchstat.write, "pyperf": pyperf.write, "csv": csvfile.write,
            "markdown": markdown.write, "text": mailtext.write}


FORMATS = ("gbench", "benchstat", "pyperf", "csv", "markdown", "text")  # json: store.runfile
TABLE_FORMATS = ("csv", "markdown", "text")  # the ones that can show comparisons


def write(fmt: str, data: Export) -> Exported:
    """The export of ``data`` in ``fmt`` (one of FORMATS; ValueError otherwise)."""
    writers = _writers()
    if fmt not in writers:
        raise ValueError(f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")
    return writers[fmt](data)
