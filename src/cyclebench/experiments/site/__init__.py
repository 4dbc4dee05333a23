"""`cyclebench report`'s reading: the database read once, in batches of runs, into the pages of
the site (report.site.pages writes them; docs/site.md says what each page shows).

Every page says what a command says, through that command's own code:

- a run's page is what `show RUN --wide` prints (``Show.print_run``, handed in by the command,
  into a report.site.Capture instead of a terminal), with its environment and calibration lines;
- a benchmark's history is `history BENCH -p P --variant V --host H` for each host: the same
  series (experiments.history.points_from), run-to-run spread (experiments.history) and change
  points (experiments.history.analyse, stats.changepoint);
- the comparisons, variants and scale pages gather the tables of those runs' pages;
- the fleet page is `compare --by host` (``Show.host_rows``) over each host's newest complete run.

A lab's database holds thousands of runs of a hundred results and more (bench/report_site.py
measures 2,000 × 150): runs are read builder.BATCH at a time, their rows without the
calibration chains' raw readings (Store.results_of(raw=False)), what the histories need of each
row kept as a records.LightResult, and show's recipe reads the run being shown and the replicate
runs from memory (builder.Snapshot), not once more from the database. Run and history pages are
written by forked worker processes (builder.Builder; docs/site.md, "Scale"). The records that
flow to the pages are report.site.pages's; this package's own are in records.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.site.builder import Builder
from cyclebench.experiments.site.records import Built, Filters, Show
from cyclebench.lifetime import owner_tag, sweep
from cyclebench.report.site import Site, SiteError, foreign
from cyclebench.report.site import pages as site_pages
from cyclebench.report.site.revisions import revision_pages
from cyclebench.stats import changepoint

if TYPE_CHECKING:
    from cyclebench.store import Store

__all__ = ["Built", "Filters", "Show", "build"]


def _target(out: Path) -> Path:
    """Where the site goes: ``out`` absolute, a symbolic link followed (the link stays a link to
    the site), "." and ".." resolved (so `-o .` has a name to build beside)."""
    return Path(os.path.realpath(out))


def _fresh_dir(out: Path) -> Path:
    """A new empty directory beside ``out`` to build into (its contents moved into ``out`` at the
    end), named with this process's tag, and the builds of processes gone swept from there.
    ExperimentError when ``out`` is a file, holds anything a site build did not write (the
    first such path named), or cannot be written."""
    if out.exists() and not out.is_dir():
        raise ExperimentError(f"-o {out}: not a directory")
    if out.is_dir():
        try:
            first = foreign(out)
        except OSError as e:
            raise ExperimentError(f"cannot write the site to {out}: {e.strerror or e}") from None
        if first is not None:
            raise ExperimentError(f"-o {out}: {first} is not a cyclebench site's file; give a new or empty "
                                  "directory (a site is replaced whole)")
    if out.parent == out:
        raise ExperimentError(f"-o {out}: a site is built beside its directory, and / has nothing beside it")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        sweep(out.parent, f".{out.name}.")
        return Path(tempfile.mkdtemp(prefix=f".{out.name}.{owner_tag()}.", dir=out.parent))
    except OSError as e:
        raise ExperimentError(f"cannot write the site to {out}: {e.strerror or e}") from None


def _swap(new: Path, out: Path) -> None:
    """Put the built site ``new`` at ``out``. A directory already there stays the directory it
    is (a shell's or a web server's working directory, a link's target, its mode): the old
    site's entries are moved out of it and the new ones in, renames all, then the old removed."""
    if not out.is_dir():
        os.chmod(new, 0o755)  # mkdtemp makes it private; a site is published
        new.rename(out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.{owner_tag()}.", dir=out.parent))
    for entry in out.iterdir():  # all the old site's: _fresh_dir refused anything else
        entry.rename(old / entry.name)
    for entry in new.iterdir():
        entry.rename(out / entry.name)
    new.rmdir()
    shutil.rmtree(old, ignore_errors=True)


def build(store: Store, db: str | None, out: Path, filters: Filters, show: Show, window: int = 10,
          alpha: float = changepoint.ALPHA, jobs: int = 1) -> Built:
    """Write the site of the runs ``filters`` choose in ``store`` (opened from ``db``: workers
    open their own) into ``out``, replacing the site there, the run and history pages in
    ``jobs`` processes; ``window``: the runs a change point is open among; ``alpha``: the change
    points' (stats.changepoint). ExperimentError (exit 2) for no run, a bad ``out``, or
    Jinja2/plotly missing."""
    runs = store.list_runs(None, host=filters.host, since=filters.since, labels=filters.labels or None,
                           bench=filters.bench)
    if not runs:
        raise ExperimentError(f"no runs in {store.url}" if not filters else
                              f"no run in {store.url} matches {filters.text()}")
    every = store.list_runs(None) if filters else None
    out = _target(out)
    tmp = _fresh_dir(out)
    collecting = gc.isenabled()
    # Python's cycle collector walks every live object each time enough have been made: a
    # build keeps hundreds of thousands (the series of every benchmark on every host) and makes
    # millions, and half its time went there (bench/report_site.py); what it frees is freed by
    # reference counting alone (peak memory unchanged without it), so it rests until the end.
    gc.disable()
    try:
        try:
            site = Site(tmp, store.url, filters.text())
        except SiteError as e:
            raise ExperimentError(str(e)) from None
        b = Builder(store, db, site, runs, every, filters, show, window, alpha)
        del runs  # the builder holds them, each slimmed once its page is written (builder._slim)
        b.run_pages(jobs)
        b.histories(jobs)
        site_pages.lab_pages(site, b.lab())
        revision_pages(site, b.revisions)
        site.seal()
        _swap(tmp, out)
    except OSError as e:
        raise ExperimentError(f"cannot write the site to {out}: {e.strerror or e}") from None
    finally:
        if collecting:
            gc.enable()
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return Built(written=site.written, runs=len(b.order), histories=len(b.lines))
