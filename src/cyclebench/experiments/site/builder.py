"""The build of `cyclebench report`'s site under way (experiments.site.build): every run's page
and every benchmark's history, BATCH runs (HISTORY_BATCH benchmarks) at a time, in forked worker
processes; what they give gathered for the site's lists (docs/site.md, "Scale")."""

from __future__ import annotations

import collections
import multiprocessing
import re
import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from cyclebench.experiments.history import (
    Chosen,
    analyse,
    choose,
    points_from,
    pooled_by_bench,
    replicates_of,
    series_spread,
)
from cyclebench.experiments.site.records import Batch, Filters, Gathered, HistoryBatch, LightResult, Show
from cyclebench.lifetime import die_with_parent
from cyclebench.model import OK, ORDINARY, RUN, TIMING, Result, Run, purpose_of, series_key
from cyclebench.report.site import Capture, Site
from cyclebench.report.site import pages as site_pages
from cyclebench.report.site.figures import Figure, Trace, scale_figure
from cyclebench.report.site.pages import Digest, Fleet, HostLine, Key, Lab, Regression, RunLine, SeriesLine, host_of
from cyclebench.report.site.revisions import RevisionRun
from cyclebench.stats import scaling
from cyclebench.store import Store
from cyclebench.store.db import bench_regex

BATCH = 50  # runs whose rows are read in one query
HISTORY_BATCH = 8  # benchmarks a worker writes the history pages of at a time
DIGEST = 100  # the newest compare, variants and scale runs gathered on their pages (all have run pages)
KINDS = ("compare", "variants", "scale")  # the runs gathered on pages of their own

T = TypeVar("T")
U = TypeVar("U")


class Snapshot:
    """The read side of Store that show's recipe (Show.print_run) and host_spread call, served
    from what the report has read: ``results`` of the run being shown, ``list_runs(None)`` of
    every run in the database (``every()``), ``results_of`` of replicate runs (read once, kept
    as LightResults); any other call goes to the store itself."""

    def __init__(self, store: Store, every: Callable[[], list[Run]]) -> None:
        self._store = store
        self._every = every
        self.current: dict[int, list[Result]] = {}
        self.kept: dict[int, list[LightResult]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def results(self, run_id: int) -> list[Result]:
        if run_id in self.current:
            return self.current[run_id]
        return self._store.results(run_id)

    def list_runs(self, limit: int | None = 20, **filters: Any) -> list[Run]:
        if filters or (limit is not None and limit >= 0):
            return self._store.list_runs(limit, **filters)
        return self._every()

    def results_of(self, run_ids: Sequence[int], *, raw: bool = True) -> dict[int, Sequence[Mapping[str, Any]]]:
        """The rows of replicate runs as LightResults, the run being shown whole."""
        missing = [int(i) for i in run_ids if int(i) not in self.kept and int(i) not in self.current]
        if missing:
            got = self._store.results_of(missing, raw=False)
            self.kept.update({i: [LightResult.of(r) for r in rows] for i, rows in got.items()})
        return {int(i): self.current.get(int(i)) or self.kept.get(int(i), []) for i in run_ids}


def _slim(run: Run) -> Run:
    """A run whose page is written keeps what the other pages show (host, CPU, kernel, labels,
    its build's key for host_spread): its machine, calibration and summary go."""
    return replace(run, env=None, calibration=None, summary=None)


_FORKED: Builder | None = None  # the builder a forked worker inherits (Builder._forked)


def _child_start(die: Callable[[], None]) -> None:
    """A worker's start: it dies with cyclebench (lifetime.die_with_parent), leaves Ctrl-C and
    SIGTERM to the parent (which ends the pool), drops the parent's database connections
    without closing them (SQLAlchemy's advice for a fork) and opens its own."""
    die()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    b = _FORKED
    assert b is not None
    b.store.engine.dispose(close=False)
    b.store = Store(b.db, create=False)
    b.snapshot = Snapshot(b.store, b.every_run)


def _child_batch(ids: list[int]) -> Batch:
    assert _FORKED is not None
    return _FORKED.batch(ids)


def _child_histories(keys: list[Key]) -> HistoryBatch:
    assert _FORKED is not None
    return _FORKED.history_batch(keys)


def _no_link(_cells: list[str]) -> str | None:
    return None


def _series_of(host: str, pairs: list[tuple[Run, LightResult]]
               ) -> list[tuple[str, Chosen[Run, LightResult]]]:
    """A benchmark's series on ``host`` among its ordinary runs' ``pairs`` (oldest first), as
    `history` chooses one (model.series_key; experiments.history.choose): one per measurement,
    unit and purpose, each of its benchmark file's newest version. Each labelled by its host and
    what sets it apart ("lab1 · callgrind", "lab1 · fleet"), the timing series of runs first."""
    groups: dict[tuple[str, str, str], list[tuple[Run, LightResult]]] = {}
    for run, row in pairs:
        k = series_key(run, row)
        groups.setdefault((k.measurement, k.unit, k.purpose), []).append((run, row))
    out = []
    for (measurement, _unit, purpose), got in sorted(groups.items(), key=lambda g: (g[0][0] != TIMING,
                                                                                     g[0][2] != RUN, g[0])):
        chosen = choose(got, purpose, measurement)
        label = " · ".join(x for x in (host, measurement if measurement != TIMING else "",
                                       purpose if purpose != RUN else "") if x)
        out.append((label, chosen))
    return out


class Builder:
    """The build under way: the runs shown (newest first), what their pages gave so far."""

    def __init__(self, store: Store, db: str | None, site: Site, runs: list[Run], every: list[Run] | None,
                 filters: Filters, show: Show, window: int, alpha: float) -> None:
        self.store, self.db, self.site, self.show = store, db, site, show
        self.order = [int(r.id or 0) for r in runs]  # newest first
        self.by_id = {int(r.id or 0): r for r in runs}  # slimmed (_slim) as their pages are written
        self.every = every  # None: the runs shown are every run
        self.window, self.alpha = window, alpha
        self.snapshot = Snapshot(store, self.every_run)
        self.rx = re.compile(bench_regex(filters.bench)) if filters.bench else None
        self.series: dict[Key, dict[str, list[tuple[Run, LightResult]]]] = {}  # per host: (run, row)
        self.timed: set[Key] = set()
        self.counts: dict[int, int] = {}
        self.digests = {k: collections.deque[Digest](maxlen=DIGEST) for k in KINDS}  # the newest
        self.n_kind = dict.fromkeys(KINDS, 0)
        self.spreads: dict[tuple[int, ...], dict[tuple[Any, ...], tuple[float, int]]] = {}
        self.lines: list[SeriesLine] = []
        self.regressions: list[Regression] = []
        self.revisions: list[RevisionRun] = []  # the runs that measured revisions (report.site.revisions)

    def every_run(self) -> list[Run]:
        """Store.list_runs(None): every run in the database, newest first."""
        return list(self.every) if self.every is not None else [self.by_id[i] for i in self.order]

    def shown(self, bench: str) -> bool:
        """Whether the site shows ``bench`` (--bench)."""
        return self.rx is None or self.rx.match(str(bench)) is not None

    def _forked(self, jobs: int, work: Callable[[T], U], chunks: list[T]) -> Iterator[U]:
        """``work(chunk)`` for every chunk, in ``jobs`` forked processes that inherit this
        builder (_child_start), the results in the chunks' order."""
        global _FORKED
        _FORKED = self
        try:
            ctx = multiprocessing.get_context("fork")
            with ctx.Pool(min(jobs, len(chunks)), initializer=_child_start, initargs=(die_with_parent(),)) as pool:
                yield from pool.imap(work, chunks)
        finally:
            _FORKED = None

    # ------------------------------------------------------------------ runs
    def run_pages(self, jobs: int) -> None:
        """Every run's page, BATCH runs at a time, in ``jobs`` processes (forked: each reads its
        batches through a connection of its own and writes their pages); what the histories and
        the other pages need comes back to this one."""
        ordered = sorted(self.order)
        batches = [ordered[i:i + BATCH] for i in range(0, len(ordered), BATCH)]
        if jobs <= 1 or len(batches) <= 1:
            for ids in batches:
                self.merge(self.batch(ids))
            return
        for done in self._forked(jobs, _child_batch, batches):
            self.merge(done)

    def batch(self, ids: list[int]) -> Batch:
        """The pages of the runs ``ids`` and what the rest of the site needs of them."""
        counts: dict[int, int] = {}
        gathered: list[Gathered] = []
        digests: list[Digest] = []
        revisions: list[RevisionRun] = []
        rows_of = self.store.results_of(ids, raw=False)
        before = dict(self.site.pages)
        for rid in ids:
            run, rows = self.by_id[rid], rows_of[rid]
            counts[rid] = len(rows)
            self.snapshot.current = {rid: rows}
            if run.group_id is not None:
                self.snapshot.kept[rid] = [LightResult.of(r) for r in rows]
            host = host_of(run)
            ordinary = purpose_of(run) in ORDINARY
            gathered += [Gathered(LightResult.of(r), ordinary and r.kind in site_pages.HISTORY_KINDS, host, rid)
                         for r in rows if r.status == OK and self.shown(r.bench)]
            digests += self.run_page(run, rows)
            if (seen := RevisionRun.of(run, len(rows))) is not None:
                revisions.append(seen)
        self.snapshot.current = {}
        pages = {k: v for k, v in self.site.pages.items() if before.get(k) != v}
        return Batch(counts=counts, gathered=tuple(gathered), digests=tuple(digests), pages=pages,
                     revisions=tuple(revisions))

    def run_page(self, run: Run, rows: list[Result]) -> list[Digest]:
        """Write the page of ``run`` (show's tables, its environment); a compare, variants or
        scale run's digest for its kind's page."""
        cap, notes = Capture(), Capture()
        self.show.print_run(self.snapshot, run, True, cap, notes)
        figure: Figure | None = None
        scale_rows = [r for r in rows if scaling.is_scale_row(r)]
        if scale_rows:
            scale = (run.env or {}).get("scale") if isinstance(run.env, Mapping) else None
            cpus = scale.get("cpus") if isinstance(scale, Mapping) else None
            figure = scale_figure(f"cyclebench scale · run #{run.id}", scaling.series_from_rows(scale_rows),
                                  len(set(cpus)) if cpus else None)
        # names link to their histories, which follow ordinary runs: another run's rows may have none
        link = site_pages.link_of(rows, self.shown) if purpose_of(run) in ORDINARY else _no_link
        line, tables = site_pages.run_page(self.site, run, rows, cap, notes, link, figure)
        digests = [Digest("scale", line, tables, figure)] if figure is not None else []
        if self.show.is_comparison(run) and "bisect" not in (run.summary or {}):  # a sitting: on its bisect's page
            digests.append(Digest("compare", line, tables))
        elif self.show.is_variants(run):
            digests.append(Digest("variants", line, tables))
        return digests

    def merge(self, done: Batch) -> None:
        """Take in a batch: its runs slimmed (their pages are written), its results gathered by
        benchmark and host, its digests."""
        self.counts.update(done.counts)
        self.by_id.update({rid: _slim(self.by_id[rid]) for rid in done.counts})
        self.site.pages.update(done.pages)
        for g in done.gathered:
            if g.timed:
                self.timed.add(g.row.key)
            self.series.setdefault(g.row.key, {}).setdefault(g.host, []).append((self.by_id[g.run], g.row))
        for d in done.digests:
            self.n_kind[d.kind] += 1
            self.digests[d.kind].append(d)
        self.revisions += done.revisions

    # ------------------------------------------------------------------ histories
    def spread_for(self, last: Run, exclude: set[int]) -> dict[tuple[Any, ...], tuple[float, int]]:
        """experiments.history.host_spread(store, last, exclude), from the runs in memory: the
        pooled spread of the same replicate runs is computed once."""
        reps = replicates_of(self.every_run(), last, exclude)
        ids = tuple(int(r["id"]) for r in reps)
        if ids not in self.spreads:
            self.spreads[ids] = pooled_by_bench(reps, self.snapshot.results_of(list(ids)))
        return self.spreads[ids]

    def histories(self, jobs: int) -> None:
        """Every benchmark's history page, in ``jobs`` forked processes as the run pages."""
        keys = sorted(self.timed, key=lambda k: (k[0], k[1] is not None, k[1] or 0, k[2]))
        chunks = [keys[i:i + HISTORY_BATCH] for i in range(0, len(keys), HISTORY_BATCH)]
        done = (map(self.history_batch, chunks) if jobs <= 1 or len(chunks) <= 1
                else self._forked(jobs, _child_histories, chunks))
        for d in done:
            self.lines += d.series
            self.regressions += d.regressions
            self.site.pages.update(d.pages)

    def history_batch(self, keys: list[Key]) -> HistoryBatch:
        """The history pages of ``keys``: per host, `history`'s series, spread and change points."""
        lines: list[SeriesLine] = []
        regressions: list[Regression] = []
        before = dict(self.site.pages)
        for key in keys:
            traces: list[Trace] = []
            for host, got in sorted(self.series[key].items(), key=lambda hg: hg[0]):
                pairs = sorted(got, key=lambda rv: (rv[0].started_at or "", int(rv[0].id or 0)))
                for label, chosen in _series_of(host, pairs):
                    points, unit, runs, _rows = points_from(chosen.pairs)
                    spread = series_spread(self.spread_for(runs[-1], {int(r["id"]) for r in runs}), chosen.key)
                    h, margin = analyse(points, spread, self.alpha)
                    traces.append(Trace(label, unit, points, h, margin, runs))
            line, found = site_pages.history_page(self.site, key, traces, self.window)
            lines.append(line)
            regressions += found
        pages = {k: v for k, v in self.site.pages.items() if before.get(k) != v}
        return HistoryBatch(series=tuple(lines), regressions=tuple(regressions), pages=pages)

    # ------------------------------------------------------------------ the rest
    def lab(self) -> Lab:
        """What the site's lists show, from what the run and history pages gave."""
        runs = [self.by_id[i] for i in self.order]  # newest first
        hosts: dict[str, list[Run]] = {}
        for r in runs:
            hosts.setdefault(host_of(r), []).append(r)
        return Lab(runs=tuple(RunLine.of(r, self.counts.get(int(r.id or 0))) for r in runs),
                   hosts=tuple(HostLine.of(h, rs) for h, rs in hosts.items()),
                   series=tuple(self.lines), regressions=tuple(self.regressions),
                   digests={k: tuple(d) for k, d in self.digests.items()}, n_kind=dict(self.n_kind),
                   fleet=self.fleet(runs), window=self.window)

    def fleet(self, runs: list[Run]) -> Fleet:
        """compare --by host over each host's newest complete run among those shown (newest first)."""
        sides: dict[str, list[Run]] = {}
        for run in runs:
            if run.status == "complete" and host_of(run) not in sides:
                sides[host_of(run)] = [run]
        ids = tuple((h, tuple(int(r.id or 0) for r in side)) for h, side in sides.items())
        if len(sides) < 2:
            return Fleet(sides=ids)
        cpu = {h: next((r.cpu_model for r in side if r.cpu_model), None) for h, side in sides.items()}
        return Fleet(sides=ids, rows=self.show.host_rows(self.store, sides), cpu=cpu)


