"""`--format F [-o FILE]` of `export`, `run` and `compare`: the rows of stored runs (or a
compare's comparisons) through a report.export writer, or the store's lossless run JSON;
notes on what a format left out go to stderr, the export to FILE or, alone, to stdout."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click

from cyclebench.model import Result
from cyclebench.report.export import TABLE_FORMATS, ComparisonRow, Export, Exported, write
from cyclebench.report.text import safe_text
from cyclebench.ui.common import UserError, err, write_text
from cyclebench.ui.options import OutputOptions

if TYPE_CHECKING:
    from cyclebench.store import Store

MEASURED_ONLY = ("gbench", "benchstat", "pyperf")  # formats of measured results, not of comparisons


def _with_spread(store: Store, run_id: int, rows: Sequence[Result]) -> list[Result]:
    """The rows with this host's run-to-run (sd, df) in their ``run_to_run`` where earlier
    replicate groups of the same build taught it (as `run` shows it)."""
    from cyclebench.experiments.history import host_spread, with_spread

    return with_spread(rows, host_spread(store, store.get_run(run_id) or {}, {run_id}))


def run_json(store: Store, run_id: int) -> str:
    """The lossless run JSON (store.runfile), each result with its run-to-run spread when known."""
    from cyclebench.store import runfile  # here: its schema check (jsonschema, ~0.1 s) only for a run file

    try:
        data = runfile.run_to_dict(store, run_id)
    except runfile.ExportError as e:
        raise UserError(str(e)) from None
    spread = {(r.get("bench"), r.get("param"), r.get("variant") or ""): r.run_to_run
              for r in _with_spread(store, run_id, store.results(run_id)) if r.run_to_run is not None}
    for r in data["results"]:
        rr = spread.get((r.get("bench"), r.get("param"), r.get("variant") or ""))
        if rr is not None:
            r["run_to_run"] = rr
    return json.dumps(data, indent=1, allow_nan=True) + "\n"


def export_runs(store: Store, run_ids: Sequence[int], fmt: str, title: str | None = None) -> Exported:
    """The stored runs ``run_ids`` (their rows in order: replicate runs add replicates) in
    ``fmt``. json is one run's file: the last of ``run_ids``, with a note when there are more."""
    if not run_ids:
        raise UserError(f"no runs in {store.url}")
    if fmt == "json":
        notes = (f"json: a run file holds one run: #{run_ids[-1]} written; the others with "
                 f"`cyclebench export RUN` ({', '.join(map(str, run_ids[:-1]))})",) if len(run_ids) > 1 else ()
        return Exported(run_json(store, run_ids[-1]), notes)
    runs: dict[int, Mapping[str, Any]] = {}
    results: list[Result] = []
    for rid in run_ids:
        run = store.get_run(rid)
        if run is None:
            raise UserError(f"no run {rid} in {store.url}")
        runs[rid] = run
        results += _with_spread(store, rid, store.results(rid))
    if title is None:
        first = runs[run_ids[0]]
        title = (f"run{'s' if len(run_ids) > 1 else ''} #{', #'.join(map(str, run_ids))} · {first.get('host') or '?'}"
                 f" · {first.get('cpu_model') or '?'} · {str(first.get('started_at') or '?')[:16].replace('T', ' ')}")
    return write(fmt, Export(results, runs, title=title))


def check_compare_format(output: OutputOptions, stored_runs: bool) -> None:
    """gbench, benchstat and pyperf export measured results: a compare of stored runs has none
    (UserError before anything is done)."""
    if output.asked and stored_runs and output.fmt in MEASURED_ONLY:
        raise UserError(f"--format {output.fmt} exports measured results, and a compare of stored runs measures "
                        f"none: export the runs themselves (cyclebench export RUN --format {output.fmt})")


def export_comparisons(store: Store, rows: Sequence[ComparisonRow], fmt: str, run_id: int | None,
                       title: str | None = None, alpha: float = 0.002) -> Exported:
    """A compare's export: json = its rows as `compare --json` writes them; csv, markdown and
    text = its comparisons; gbench, benchstat and pyperf = the results it measured (run
    ``run_id``; None for stored runs: UserError)."""
    if fmt == "json":
        return Exported(json.dumps([r.to_dict() for r in rows], indent=1) + "\n")  # type: ignore[attr-defined]
    if fmt in TABLE_FORMATS:
        from cyclebench.report import console as console_report

        caption = console_report.comparisons_table(rows, alpha=alpha).caption
        return write(fmt, Export(comparisons=rows, title=title, caption=str(caption) if caption else None))
    if run_id is None:
        check_compare_format(OutputOptions(fmt), stored_runs=True)
    return export_runs(store, [run_id] if run_id is not None else [], fmt)


def deliver(output: OutputOptions, exported: Exported, stored: str = "") -> None:
    """Notes to stderr; the export to ``output.path`` (one line, exit 2, when it cannot be
    written, saying what is stored) or, alone, to stdout."""
    for note in exported.notes:
        err.print(safe_text(f"cyclebench: note: {note}"), highlight=False)
    if output.path is None:
        click.echo(exported.text, nl=False)
        return
    write_text(output.path, exported.text, stored)
    err.print(safe_text(f"{output.fmt} export written to {output.path}"), highlight=False)
