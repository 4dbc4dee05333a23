"""The stored runs: `runs`, `show`, `export`, `import`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import click

from cyclebench.commands._common import (
    UserError,
    err,
    open_store,
    out,
)
from cyclebench.commands._comparison import Row
from cyclebench.commands._export import deliver, export_runs
from cyclebench.commands._options import OutputOptions, format_option, parse_labels, writable
from cyclebench.model import STAT, Comparison
from cyclebench.report import console as console_report
from cyclebench.report.listing import runs_table
from cyclebench.report.stat import stat_table
from cyclebench.report.text import safe_text
from cyclebench.stats.repetitions import Metric
from cyclebench.store import runfile as json_report


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
    deliver(output, export_runs(store, [rid], output.fmt))


@click.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--db", metavar="URL", help="Database URL.")
def import_cmd(path: Path, db: str | None) -> None:
    """Load a run exported with --json into the database."""
    store = open_store(db)
    try:
        rid = json_report.import_run(store, json_report.load(path))
    except json_report.ExportError as e:
        raise UserError(str(e)) from None
    err.print(f"imported as run #{rid}")


@click.command("show")
@click.argument("run_id", type=click.IntRange(1, 2**63 - 1), required=False)
@click.option("--db", metavar="URL", help="Database URL.")
@click.option("--wide", is_flag=True, help="All columns, however wide the terminal.")
def show_cmd(run_id: int | None, db: str | None, wide: bool) -> None:
    """Print the table of a stored run (default: the last)."""
    store = open_store(db, create=False)
    rid = run_id if run_id is not None else store.last_run_id()
    run = store.get_run(rid) if rid is not None else None
    if run is None:
        raise UserError(f"no run {'#' + str(rid) if rid is not None else ''} in {store.url}".replace("  ", " "))
    from cyclebench.report import plots
    from cyclebench.stats import scaling

    rows = store.results(rid)
    series = scaling.series_from_rows(rows)
    stat = [r for r in rows if r.get("kind") == STAT]
    others = [r for r in rows if not scaling.is_scale_row(r) and r.get("kind") != STAT]
    title = f"run #{rid} · {run['status']} · {run['started_at']}"
    if others or not (series or stat):
        console_report.print_results(others, out, title=title, wide=wide)
    if stat:  # a stat run: its own table, as `stat` printed it
        out.print(stat_table([_metric(r) for r in stat], title=title, wide=wide))
    compared = (run.get("summary") or {}).get("compare")
    if compared:  # a compare run: its verdicts too
        console_report.print_comparisons([_comparison(c) for c in compared], out, title=f"run #{rid}: comparisons",
                                         wide=wide)
    for ser in series:  # a scaling run: its own table and chart, as `scale` printed them
        out.print(plots.scale_table(ser, wide=wide))
    chart = plots.text_chart(series)
    if chart:
        out.print(safe_text("\n".join(chart)))
    identity = console_report.identity_line(run)
    if identity:
        err.print(safe_text(identity, multiline=False), highlight=False, soft_wrap=True)
    if run.get("calibration"):
        err.print(safe_text(console_report.calibration_line(run.get("calibration"))))


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
    out.print(runs_table(found))


def _metric(row: dict[str, Any]) -> Metric:
    """A stored stat row back as the Metric `stat` printed (values per repetition in extra)."""
    extra = row.get("extra") or {}
    status = ("derived" if extra.get("derived") else "not counted" if row.get("status") == "skipped" else "ok")
    return Metric(str(extra.get("metric") or row["bench"]), row.get("unit") or "", list(extra.get("values") or []),
                  status=status, notes=list(extra.get("notes") or []), reason=row.get("reason"))


def _comparison(d: dict[str, Any]) -> Row:
    """A stored compare summary row back as the Row `compare` printed."""
    c = d.get("comparison")
    return Row(d["a"], d["b"], d.get("param"), d.get("unit") or "", Comparison(**c) if c else None, d.get("note") or "")
