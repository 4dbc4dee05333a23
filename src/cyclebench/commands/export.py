"""`cyclebench export`: a stored run in a format other tools read (docs/exports.md)."""

from __future__ import annotations

from pathlib import Path

import click

from cyclebench.ui.common import (
    UserError,
    open_store,
)
from cyclebench.ui.options import OutputOptions, format_option, writable


@click.command("export")
@click.argument("run_id", type=click.IntRange(1, 2**63 - 1), required=False)
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the lossless JSON to FILE (the same as --format json -o FILE; - is stdout).")
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
        # "-" is stdout, as for -o (POSIX utility syntax guideline 13)
        output = OutputOptions("json", None if str(json_path) == "-" else writable(json_path, "--json"))
    elif not output.asked:
        output = OutputOptions("json")
    store = open_store(db, create=False)
    rid = run_id if run_id is not None else store.last_run_id()
    if rid is None:
        raise UserError(f"no runs in {store.url}")
    if store.get_run(rid) is None:
        raise UserError(f"no run {rid} in {store.url}")
    from cyclebench.ui.export import deliver, export_runs  # heavy (the exports' statistics): here

    deliver(output, export_runs(store, [rid], output.fmt))
