"""`cyclebench show`: a stored run printed again as the command that made it printed it (the
tables rebuilt by experiments/show.py, printed by report/show.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from cyclebench.ui.common import (
    UserError,
    err,
    open_store,
    out,
)
from cyclebench.ui.options import OutputOptions, format_option, wide_option

if TYPE_CHECKING:
    from rich.console import Console

    from cyclebench.report.export import Exported
    from cyclebench.store import Store


def print_run(store: Store, run: Mapping[str, Any], wide: bool, console: Console, notes: Console) -> None:
    """Print the stored run ``run`` (a store.get_run record) as its command printed it: its
    tables to ``console``, then on ``notes`` its status and start, who made it, how a run of
    revisions ran their code (confined or not) and the timer
    (experiments.show.rebuild, report.show.print_shown)."""
    from cyclebench.experiments.show import rebuild
    from cyclebench.report.show import print_shown

    print_shown(rebuild(store, run), wide, console, notes)


def export(store: Store, run: Mapping[str, Any], fmt: str) -> Exported:
    """`show RUN --format F`: what `export RUN --format F` writes, except that csv, markdown and
    text of a compare run are its comparisons, the table show prints (as `compare --format`)."""
    from cyclebench.experiments.show import comparisons
    from cyclebench.report.export import TABLE_FORMATS
    from cyclebench.report.show import DAMAGED
    from cyclebench.ui.export import export_comparisons, export_runs

    rid = int(run["id"])
    try:
        compared = comparisons(run)
    except DAMAGED:  # damaged (print_run says so): the rows
        compared = None
    if compared is not None and fmt in TABLE_FORMATS:
        return export_comparisons(store, list(compared.rows), fmt, rid, compared.title, compared.alpha)
    return export_runs(store, [rid], fmt)


def show_bisect(store: Store, bisect: str, wide: bool, output: OutputOptions) -> None:
    """`show --bisect ID`: every step of the bisect and its answer, as `bisect` ended
    (experiments.show.stored_bisect, report.bisect.print_stored); --format: its sittings' rows."""
    from cyclebench.experiments.show import bisect_ids, stored_bisect
    from cyclebench.report.bisect import print_stored
    from cyclebench.ui.export import deliver, export_runs

    got = stored_bisect(store, bisect)
    if got is None:
        there = bisect_ids(store)
        raise UserError(f"no bisect {bisect} in {store.url} ("
                        + (f"bisects there: {', '.join(there)})" if there else "none there)"))
    if not output.to_stdout:
        print_stored(got, wide, out, err)
    if output.asked:
        deliver(output, export_runs(store, list(got.runs), output.fmt))


@click.command("show")
@click.argument("run_id", type=click.IntRange(1, 2**63 - 1), required=False)
@click.option("--bisect", "bisect", metavar="ID", help="Print the bisect ID (its sittings' label bisect=ID, which "
              "`show` of any sitting names): every step and its answer, as `bisect` ended.")
@click.option("--db", metavar="URL", help="Database URL.")
@wide_option
@format_option
def show_cmd(run_id: int | None, bisect: str | None, db: str | None, wide: bool, output: OutputOptions) -> None:
    """Print a stored run (default: the last) as the command that made it printed it: a run's
    results (callgrind's events, the counters), compare's verdicts, variants' rankings, scale's
    tables, stat's, a profile. --bisect ID: a bisect's steps and answer, as it ended. --format F
    [-o FILE]: export it as `export` does (csv, markdown and text of a compare run: its
    comparisons; of a bisect: its sittings' rows)."""
    from cyclebench.ui.export import deliver

    store = open_store(db, create=False)
    if bisect is not None:
        if run_id is not None:
            raise UserError("show: a run or --bisect ID, not both")
        show_bisect(store, bisect, wide, output)
        return
    rid = run_id if run_id is not None else store.last_run_id()
    run = store.get_run(rid) if rid is not None else None
    if run is None:
        raise UserError(f"no run {'#' + str(rid) if rid is not None else ''} in {store.url}".replace("  ", " "))
    if not output.to_stdout:  # stdout carries only the export
        print_run(store, run, wide, out, err)
    if output.asked:
        deliver(output, export(store, run, output.fmt))
