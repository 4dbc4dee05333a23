"""`cyclebench cache info|clean`: the build cache (one runner binary per source/flag set) and the
revisions' checkouts beside it (experiments.revisions; docs/revisions.md)."""

from __future__ import annotations

import time

import click

from cyclebench.build.compile import PRUNE_AFTER_DAYS, UnsafeCache, cache_entries, cache_root, prune
from cyclebench.experiments import revisions
from cyclebench.report.text import safe_text
from cyclebench.ui.common import UserError, err, out
from cyclebench.ui.options import FloatRange


@click.group("cache")
def cache_group() -> None:
    """The build cache: how big it is, and removing what is not used."""


@cache_group.command("info")
def cache_info() -> None:
    """Where the cache is, its entries and size."""
    try:
        entries = cache_entries()
    except UnsafeCache as e:
        raise UserError(str(e)) from None
    total = sum(e.bytes for e in entries)
    oldest = (time.time() - entries[0].last_used) / 86400 if entries else 0.0
    n = len(entries)
    out.print(safe_text(f"{cache_root() / 'build'}: {n} entr{'y' if n == 1 else 'ies'}, {total / 2**20:.1f} MiB"
                        + (f", least recently used {oldest:.0f} day{'s' * (round(oldest) != 1)} ago" if entries
                           else "")), highlight=False)
    revs = revisions.entries()
    partial = sum(e.partial for e in revs)
    size = sum(e.bytes for e in revs) / 2**20
    n = f"{len(revs)} checkout{'' if len(revs) == 1 else 's'}" + (f", {partial} half made" if partial else "")
    out.print(safe_text(f"{cache_root() / 'revisions'}: {n}, {size:.1f} MiB"), highlight=False)


@cache_group.command("clean")
@click.option("--all", "everything", is_flag=True, help="Remove every entry (they are rebuilt on demand).")
@click.option("--older-than", type=FloatRange(0, 36500), default=PRUNE_AFTER_DAYS, show_default=True,
              metavar="DAYS", help="Remove entries unused for this many days.")
def cache_clean(everything: bool, older_than: float) -> None:
    """Remove unused entries and builds killed half-way (done once a day on its own), and the
    revisions' checkouts likewise. An entry a running cyclebench is using is kept, and named."""
    try:
        done = prune(older_than, everything)
    except UnsafeCache as e:
        raise UserError(str(e)) from None
    for e in done.in_use:
        err.print(safe_text(f"kept {e.path}: in use by a running cyclebench"), highlight=False)
    gone = done.removed
    err.print(f"removed {len(gone)} entr{'y' if len(gone) == 1 else 'ies'} "
              f"({sum(e.bytes for e in gone) / 2**20:.1f} MiB)", highlight=False)
    old = [e for e in revisions.entries() if everything or e.partial or time.time() - e.last_used > older_than * 86400]
    kept = [e for e in old if not revisions.remove(e)]
    for e in kept:
        err.print(safe_text(f"kept {e.path}: in use by a running cyclebench"), highlight=False)
    gone_revs = [e for e in old if e not in kept]
    err.print(f"removed {len(gone_revs)} revision checkout{'' if len(gone_revs) == 1 else 's'} "
              f"({sum(e.bytes for e in gone_revs) / 2**20:.1f} MiB)", highlight=False)
