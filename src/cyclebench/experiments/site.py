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
measures 2,000 × 150): runs are read BATCH at a time, their rows without the calibration
chains' raw readings (Store.results_of(raw=False)), what the histories need of each row kept
as a :class:`LightResult`, and show's recipe reads the run being shown and the replicate runs
from memory (:class:`Snapshot`), not once more from the database. Run and history pages are
written by forked worker processes (docs/site.md, "Scale").
"""

from __future__ import annotations

import collections
import datetime as dt
import gc
import multiprocessing
import os
import re
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.history import analyse, points_from, pooled_by_bench, replicates_of
from cyclebench.lifetime import die_with_parent
from cyclebench.model import OK, Result, Run
from cyclebench.report.site import MARK, Capture, Site, SiteError, Written
from cyclebench.report.site import pages as site_pages
from cyclebench.report.site.figures import Figure, Trace, scale_figure
from cyclebench.report.site.pages import Digest, Fleet, HostLine, Key, Lab, Regression, RunLine, SeriesLine, host_of
from cyclebench.stats import changepoint, scaling
from cyclebench.store import Store
from cyclebench.store.db import bench_regex

BATCH = 50  # runs whose rows are read in one query
HISTORY_BATCH = 8  # benchmarks a worker writes the history pages of at a time
DIGEST = 100  # the newest compare, variants and scale runs gathered on their pages (all have run pages)
KINDS = ("compare", "variants", "scale")  # the runs gathered on pages of their own

T = TypeVar("T")
U = TypeVar("U")


@dataclass(frozen=True)
class Filters:
    """Which runs the site shows (all filters in SQL, as `runs`: Store.list_runs's): a benchmark
    glob, a host name or id, labels that must all match, the first day (UTC)."""

    bench: str | None = None
    host: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    since: dt.date | None = None

    def __bool__(self) -> bool:
        return bool(self.bench or self.host or self.labels or self.since)

    def text(self) -> str:
        """The filters as the options that chose them (every page's footer says them)."""
        parts = ([f"--bench {self.bench}"] if self.bench else []) + ([f"--host {self.host}"] if self.host else [])
        parts += [f"--label {k}={v}" for k, v in self.labels.items()]
        parts += [f"--since {self.since.isoformat()}"] if self.since else []
        return " ".join(parts)


@dataclass(frozen=True)
class Show:
    """show's recipe and compare --by host's rows, handed in by the command (experiments/ imports
    no command): ``print_run(store, run, wide, console, notes)`` prints a stored run as `show`
    does (``store``: a :class:`Snapshot` standing in for Store's read side);
    ``is_comparison``/``is_variants`` say whether a run's summary holds compare's verdicts or
    variants' rankings; ``host_rows(store, {host: [runs]})`` is compare --by host's rows."""

    print_run: Callable[[Any, Run, bool, Capture, Capture], None]
    is_comparison: Callable[[Run], bool]
    is_variants: Callable[[Run], bool]
    host_rows: Callable[[Store, dict[str, list[Run]]], Sequence[Any]]


@dataclass(frozen=True, slots=True)
class LightResult(Mapping[str, Any]):
    """What the site keeps of a valid result row for the histories and of a replicate run's row
    for the run-to-run spread (experiments.history reads either as a mapping, as it reads a
    Result): its benchmark, status, unit, per-op estimate and 95% CI, and the same in cycles~.
    A few hundred thousand are kept: slots, not a Result's 53 columns."""

    bench: str
    param: int | None
    variant: str
    status: str
    unit: str | None
    per_op: float | None
    ci_low: float | None
    ci_high: float | None
    cycles_per_op: float | None
    cycles_ci_low: float | None
    cycles_ci_high: float | None

    @classmethod
    def of(cls, r: Result) -> LightResult:
        return cls(bench=str(r.bench), param=r.param, variant=str(r.variant or ""), status=r.status, unit=r.unit,
                   per_op=r.per_op, ci_low=r.ci_low, ci_high=r.ci_high, cycles_per_op=r.cycles_per_op,
                   cycles_ci_low=r.cycles_ci_low, cycles_ci_high=r.cycles_ci_high)

    @property
    def key(self) -> Key:
        return (self.bench, self.param, self.variant)

    def __getitem__(self, key: str) -> Any:
        if key not in _LIGHT:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(_LIGHT)

    def __len__(self) -> int:
        return len(_LIGHT)


_LIGHT = frozenset(LightResult.__dataclass_fields__)


@dataclass(frozen=True, slots=True)
class Gathered:
    """A valid result of a benchmark the site shows, for its history: the row, whether it is of
    a kind with a history (report.site.pages.HISTORY_KINDS), the host and run it came from."""

    row: LightResult
    timed: bool
    host: str
    run: int


@dataclass(frozen=True)
class Batch:
    """What a batch of runs gave: each run's number of results, the valid results gathered, the
    compare, variants and scale runs' digests, the pages written (path → bytes)."""

    counts: Mapping[int, int]
    gathered: tuple[Gathered, ...]
    digests: tuple[Digest, ...]
    pages: Mapping[str, int]


@dataclass(frozen=True)
class HistoryBatch:
    """What a batch of history pages gave: their lines on the benchmarks index, their open
    regressions, the pages written (path → bytes)."""

    series: tuple[SeriesLine, ...]
    regressions: tuple[Regression, ...]
    pages: Mapping[str, int]


@dataclass(frozen=True)
class Built:
    """A site written: its pages (report.site.Written), the runs shown, the benchmark histories."""

    written: Written
    runs: int
    histories: int


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


_FORKED: _Builder | None = None  # the builder a forked worker inherits (_Builder._forked)


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


class _Builder:
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
        rows_of = self.store.results_of(ids, raw=False)
        before = dict(self.site.written.pages)
        for rid in ids:
            run, rows = self.by_id[rid], rows_of[rid]
            counts[rid] = len(rows)
            self.snapshot.current = {rid: rows}
            if run.group_id is not None:
                self.snapshot.kept[rid] = [LightResult.of(r) for r in rows]
            host = host_of(run)
            gathered += [Gathered(LightResult.of(r), r.kind in site_pages.HISTORY_KINDS, host, rid) for r in rows
                         if r.status == OK and self.shown(r.bench)]
            digests += self.run_page(run, rows)
        self.snapshot.current = {}
        pages = {k: v for k, v in self.site.written.pages.items() if before.get(k) != v}
        return Batch(counts=counts, gathered=tuple(gathered), digests=tuple(digests), pages=pages)

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
        line, tables = site_pages.run_page(self.site, run, rows, cap, notes, site_pages.link_of(rows, self.shown),
                                           figure)
        digests = [Digest("scale", line, tables, figure)] if figure is not None else []
        if self.show.is_comparison(run):
            digests.append(Digest("compare", line, tables))
        elif self.show.is_variants(run):
            digests.append(Digest("variants", line, tables))
        return digests

    def merge(self, done: Batch) -> None:
        """Take in a batch: its runs slimmed (their pages are written), its results gathered by
        benchmark and host, its digests."""
        self.counts.update(done.counts)
        self.by_id.update({rid: _slim(self.by_id[rid]) for rid in done.counts})
        self.site.written.pages.update(done.pages)
        for g in done.gathered:
            if g.timed:
                self.timed.add(g.row.key)
            self.series.setdefault(g.row.key, {}).setdefault(g.host, []).append((self.by_id[g.run], g.row))
        for d in done.digests:
            self.n_kind[d.kind] += 1
            self.digests[d.kind].append(d)

    # ------------------------------------------------------------------ histories
    def spread_for(self, last: Run, exclude: set[int]) -> dict[tuple[Any, ...], tuple[float, int]]:
        """experiments.history.host_spread(store, last, exclude), from the runs in memory: the
        pooled spread of the same replicate runs is computed once."""
        reps = replicates_of(self.every_run(), last, exclude)  # type: ignore[arg-type]  # Runs read as rows
        ids = tuple(int(r["id"]) for r in reps)
        if ids not in self.spreads:
            self.spreads[ids] = pooled_by_bench(reps, self.snapshot.results_of(list(ids)))  # type: ignore[arg-type]
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
            self.site.written.pages.update(d.pages)

    def history_batch(self, keys: list[Key]) -> HistoryBatch:
        """The history pages of ``keys``: per host, `history`'s series, spread and change points."""
        lines: list[SeriesLine] = []
        regressions: list[Regression] = []
        before = dict(self.site.written.pages)
        for key in keys:
            bench, _, variant = key
            traces: list[Trace] = []
            for host, got in sorted(self.series[key].items(), key=lambda hg: hg[0]):
                pairs = sorted(got, key=lambda rv: (rv[0].started_at or "", int(rv[0].id or 0)))
                points, unit, runs, _rows = points_from(pairs)  # type: ignore[arg-type]  # records read as rows
                spread = self.spread_for(runs[-1], {int(r["id"]) for r in runs}).get(  # type: ignore[arg-type]
                    (bench, points[-1]["param"], variant))
                h, margin = analyse(points, spread, self.alpha)
                traces.append(Trace(host, unit, points, h, margin, runs))  # type: ignore[arg-type]
            line, found = site_pages.history_page(self.site, key, traces, self.window)
            lines.append(line)
            regressions += found
        pages = {k: v for k, v in self.site.written.pages.items() if before.get(k) != v}
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


def _fresh_dir(out: Path) -> Path:
    """A new empty directory beside ``out`` to build into (renamed over it at the end).
    ExperimentError when ``out`` is a file, a directory that is neither empty nor a site, or
    cannot be written."""
    if out.exists() and not out.is_dir():
        raise ExperimentError(f"-o {out}: not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / MARK).is_file():
        raise ExperimentError(f"-o {out}: the directory holds files that are not a cyclebench site; give a new or "
                              "empty directory (a site is replaced whole)")
    parent = out.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    except OSError as e:
        raise ExperimentError(f"cannot write the site to {out}: {e.strerror or e}") from None


def _swap(new: Path, out: Path) -> None:
    """Put the built site ``new`` at ``out``, the old one (a site, or empty) removed."""
    os.chmod(new, 0o755)  # mkdtemp makes it private; a site is published
    old = None
    if out.is_dir():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        out.rename(old)
    new.rename(out)
    if old is not None:
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
        b = _Builder(store, db, site, runs, every, filters, show, window, alpha)
        b.run_pages(jobs)
        b.histories(jobs)
        site_pages.lab_pages(site, b.lab())
        _swap(tmp, out)
    except OSError as e:
        raise ExperimentError(f"cannot write the site to {out}: {e.strerror or e}") from None
    finally:
        if collecting:
            gc.enable()
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return Built(written=site.written, runs=len(runs), histories=len(b.lines))
