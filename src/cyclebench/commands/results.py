"""The stored runs: `runs`, `show`, `export`, `import`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from cyclebench.commands._common import (
    UserError,
    err,
    open_store,
    out,
)
from cyclebench.commands._options import OutputOptions, format_option, parse_labels, wide_option, writable


@click.command("export")
@click.argument("run_id", type=click.IntRange(1, 2**63 - 1), required=False)
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the lossless JSON to FILE (the same as --format json -o FILE).")
@format_option
@click.option("--db", metavar="URL", help="Database URL.")
def export_cmd(run_id: int | None, json_path: Path | None, output: OutputOptions, db: str | None) -> None:
    """Write a stored run (default: the last) in a format other tools read: json (lossless,
    `import` reads it), gbench (Google Benchmark JSON), benchstat (Go benchmark lines),
    pyperf, csv, markdown or text (72 columns, for mail). Without -o, to stdout.
    Fields and units: docs/exports.md."""
    if json_path is not None:
        if output.asked and (output.fmt != "json" or output.path is not None):
            raise click.UsageError("--json FILE is --format json -o FILE: give one or the other")
        output = OutputOptions("json", writable(json_path, "--json"))
    elif not output.asked:
        output = OutputOptions("json")
    store = open_store(db, create=False)
    rid = run_id if run_id is not None else store.last_run_id()
    if rid is None:
        raise UserError(f"no runs in {store.url}")
    if store.get_run(rid) is None:
        raise UserError(f"no run {rid} in {store.url}")
    from cyclebench.commands._export import deliver, export_runs  # heavy (the exports' statistics): here

    deliver(output, export_runs(store, [rid], output.fmt))


@click.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--db", metavar="URL", help="Database URL.")
def import_cmd(path: Path, db: str | None) -> None:
    """Load a run exported with --json into the database."""
    from cyclebench.store import runfile as json_report

    store = open_store(db)
    try:
        rid = json_report.import_run(store, json_report.load(path))
    except json_report.ExportError as e:
        raise UserError(str(e)) from None
    err.print(f"imported as run #{rid}")


@click.command("show")
@click.argument("run_id", type=click.IntRange(1, 2**63 - 1), required=False)
@click.option("--db", metavar="URL", help="Database URL.")
@wide_option
@format_option
def show_cmd(run_id: int | None, db: str | None, wide: bool, output: OutputOptions) -> None:
    """Print a stored run (default: the last) as the command that made it printed it: a run's
    results (callgrind's events, the counters), compare's verdicts, variants' rankings, scale's
    tables, stat's, a profile. --format F [-o FILE]: export it as `export` does (csv, markdown and
    text of a compare run: its comparisons)."""
    from cyclebench.commands import _show
    from cyclebench.commands._export import deliver

    store = open_store(db, create=False)
    rid = run_id if run_id is not None else store.last_run_id()
    run = store.get_run(rid) if rid is not None else None
    if run is None:
        raise UserError(f"no run {'#' + str(rid) if rid is not None else ''} in {store.url}".replace("  ", " "))
    if not output.to_stdout:  # stdout carries only the export
        _show.print_run(store, run, wide, out, err)
    if output.asked:
        deliver(output, _show.export(store, run, output.fmt))


@click.command("runs")
@click.option("--db", metavar="URL", help="Database URL.")
@click.option("-n", "limit", type=click.IntRange(1, 1_000_000), default=20, show_default=True,
              help="The newest this many runs (of those the filters pass).")
@click.option("--bench", metavar="GLOB", help="Only runs with a result of a benchmark matching GLOB (as run -b reads "
                                               "it: a group name selects its group).")
@click.option("--host", metavar="H", help="Only runs on host H (its name, or the host id `show` prints).")
@click.option("--label", "label_args", multiple=True, metavar="KEY=VALUE",
              help="Only runs labelled so (repeatable: every one must hold).")
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]), metavar="YYYY-MM-DD",
              help="Only runs started on that day (UTC) or later.")
def runs_cmd(db: str | None, limit: int, bench: str | None, host: str | None, label_args: tuple[str, ...],
             since: dt.datetime | None) -> None:
    """List stored runs, newest first, with their labels; filtered by benchmark, host, label and date."""
    labels = parse_labels(label_args)
    store = open_store(db, create=False)
    found = store.list_runs(limit, host=host, since=since.date() if since else None, labels=labels, bench=bench)
    if not found and (bench or host or labels or since):
        err.print(f"no run in {store.url} passes these filters", highlight=False)
        return
    from cyclebench.report.listing import runs_table

    out.print(runs_table(found))
