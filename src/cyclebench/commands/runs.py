"""`cyclebench runs`: the stored runs by start time, newest first, filtered."""

from __future__ import annotations

import datetime as dt

import click

from cyclebench.ui.common import (
    err,
    open_store,
    out,
)
from cyclebench.ui.options import parse_labels


@click.command("runs")
@click.option("--db", metavar="URL", help="Database URL.")
@click.option("-n", "limit", type=click.IntRange(1, 1_000_000), default=20, show_default=True,
              help="How many runs to list: those started last (of those the filters pass).")
@click.option("--bench", metavar="GLOB", help="Only runs with a result of a benchmark matching GLOB (as run -b reads "
                                               "it: a group name selects its group).")
@click.option("--host", metavar="H", help="Only runs on host H (its name, or the host id `show` prints).")
@click.option("--label", "label_args", multiple=True, metavar="KEY=VALUE",
              help="Only runs labelled so (repeatable: every one must hold).")
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]), metavar="YYYY-MM-DD",
              help="Only runs started on that day (UTC) or later.")
def runs_cmd(db: str | None, limit: int, bench: str | None, host: str | None, label_args: tuple[str, ...],
             since: dt.datetime | None) -> None:
    """List stored runs by start time, newest first, with their labels; filtered by benchmark, host, label and date."""
    labels = parse_labels(label_args)
    store = open_store(db, create=False)
    day = since.date() if since else None
    found = store.list_runs(limit, host=host, since=day, labels=labels, bench=bench, by_start=True)
    filtered = bool(bench or host or labels or since)
    if not found and filtered:
        err.print(f"no run in {store.url} passes these filters", highlight=False)
        return
    from cyclebench.report.listing import runs_table
    from cyclebench.report.titles import damaged_lines

    # counted only when the limit may have cut the list: "20 of 29 runs"
    total = (store.count_runs(host=host, since=day, labels=labels, bench=bench) if len(found) >= limit
             else len(found))
    out.print(runs_table(found, total=total, filtered=filtered))
    for run in found:
        for line in damaged_lines(run):
            err.print(line, highlight=False, markup=False, soft_wrap=True)
