"""`cyclebench show`: a stored run printed again as the command that made it printed it."""

from __future__ import annotations

import click

from cyclebench.commands._common import (
    UserError,
    err,
    open_store,
    out,
)
from cyclebench.commands._options import OutputOptions, format_option, wide_option


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
