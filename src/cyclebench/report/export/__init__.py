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

import importlib

from cyclebench.report.export.base import ComparisonRow, Export, Exported, Writer

__all__ = ["FORMATS", "TABLE_FORMATS", "ComparisonRow", "Export", "Exported", "Writer", "write"]


# format → its reporter's module (report/export/NAME.py, each with ``write``), imported when asked
# for: a csv export loads no benchstat, gbench or console table
_MODULES = {"gbench": "gbench", "benchstat": "benchstat", "pyperf": "pyperf", "csv": "csvfile",
            "markdown": "markdown", "text": "mailtext"}


FORMATS = tuple(_MODULES)  # json: store.runfile
TABLE_FORMATS = ("csv", "markdown", "text")  # the ones that can show comparisons


def write(fmt: str, data: Export) -> Exported:
    """The export of ``data`` in ``fmt`` (one of FORMATS; ValueError otherwise)."""
    if fmt not in _MODULES:
        raise ValueError(f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")
    writer: Writer = importlib.import_module(f"cyclebench.report.export.{_MODULES[fmt]}").write
    return writer(data)
