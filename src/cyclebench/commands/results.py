"""The stored runs: `runs`, `show`, `export`, `import`."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from cyclebench.commands._common import (
    UserError,
    err,
    open_store,
    out,
)
from cyclebench.report import console as console_report
from cyclebench.store import runfile as json_report


@click.command("export")
@click.argument("run_id", type=int, required=False)
@click.option("--json", "json_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Output file.")
@click.option("--db", metavar="URL", help="Database URL.")
def export_cmd(run_id: int | None, json_path: Path, db: str | None) -> None:
    """Write a stored run (default: the last) as lossless JSON."""
    store = open_store(db)
    rid = run_id if run_id is not None else store.last_run_id()
    if rid is None:
        raise UserError(f"no runs in {store.url}")
    try:
        json_report.dump(json_report.run_to_dict(store, rid), json_path)
    except json_report.ExportError as e:
        raise UserError(str(e)) from None
    err.print(f"run #{rid} written to {json_path}")


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
@click.argument("run_id", type=int, required=False)
@click.option("--db", metavar="URL", help="Database URL.")
def show_cmd(run_id: int | None, db: str | None) -> None:
    """Print the table of a stored run (default: the last)."""
    store = open_store(db)
    rid = run_id if run_id is not None else store.last_run_id()
    run = store.get_run(rid) if rid is not None else None
    if run is None:
        raise UserError(f"no run {'#' + str(rid) if rid is not None else ''} in {store.url}".replace("  ", " "))
    from cyclebench.report import plots
    from cyclebench.stats import scaling

    rows = store.results(rid)
    series = scaling.series_from_rows(rows)
    others = [r for r in rows if not scaling.is_scale_row(r)]
    if others or not series:
        console_report.print_results(others, out, title=f"run #{rid} · {run['status']} · {run['started_at']}")
    for ser in series:  # a scaling run: its own table and chart, as `scale` printed them
        out.print(plots.scale_table(ser))
    chart = plots.text_chart(series)
    if chart:
        out.print("\n".join(chart), highlight=False, markup=False)
    if run.get("calibration"):
        err.print(console_report.calibration_line(run.get("calibration")), highlight=False)


@click.command("runs")
@click.option("--db", metavar="URL", help="Database URL.")
@click.option("-n", "limit", type=int, default=20, show_default=True)
def runs_cmd(db: str | None, limit: int) -> None:
    """List stored runs, newest first."""
    store = open_store(db)
    table = Table(header_style="bold")
    for col in ("run", "started", "status", "host", "cpu model", "CPU", "command"):
        table.add_column(col)
    for r in store.list_runs(limit):
        table.add_row(str(r["id"]), r["started_at"], r["status"], r["host"] or "", r["cpu_model"] or "",
                      str(r["cpu"]), " ".join(r["command"] or []))
    out.print(table)


