"""`cyclebench import`: a run file (`--json`, `export --format json`) back into the database."""

from __future__ import annotations

from pathlib import Path

import click

from cyclebench.ui.common import (
    UserError,
    err,
    open_store,
)


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
