"""The machinery of `cyclebench report`: the database read once, in batches of runs, into the
pages of the site (report.site; docs/site.md says what each page shows).

Every page says what a command says, through that command's own code:

- a run's page is what `show RUN --wide` prints (commands._show.print_run, into a
  report.site.Capture instead of a terminal), with its environment and calibration lines;
- a benchmark's history is `history BENCH -p P --variant V --host H` for each host: the same
  series (experiments.history.points_from), run-to-run spread (experiments.history) and change
  points (experiments.history.analyse, stats.changepoint);
- the comparisons, variants and scale pages gather the tables of those runs' pages;
- the fleet page is `compare --by host` (commands.compare_hosts.host_rows) over each host's
  newest complete run.

A lab's database holds thousands of runs of a hundred results and more (bench/report_site.py
measures 2,000 × 150): runs are read BATCH at a time, their rows without the calibration
chains' raw readings (Store.results_of(raw=False)), and show's recipe reads the run being
shown and the replicate runs from memory (:class:`_Snapshot`), not once more from the database.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import gc
import json
import multiprocessing
import os
import re
import shutil
import signal
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cyclebench.commands._common import UserError
from cyclebench.commands.show import print_run
from cyclebench.experiments.history import analyse, points_from, pooled_by_bench, replicates_of
from cyclebench.experiments.show import comparison_rows, variants_data
from cyclebench.experiments.stored import host_rows
from cyclebench.lifetime import die_with_parent
from cyclebench.model import OK, SIMULATED, TIMING
from cyclebench.report import console as console_report
from cyclebench.report import history as history_report
from cyclebench.report import hosts as hosts_report
from cyclebench.report.site import MARK, Capture, Site, SiteError, argv_text, blocks_of, history_slug, labels_text
from cyclebench.report.site.figures import Trace, change_text, history_figure, scale_figure
from cyclebench.report.site.tables import html_table
from cyclebench.report.text import visible
from cyclebench.stats import changepoint, scaling
from cyclebench.store import Store
from cyclebench.store.db import bench_regex

BATCH = 50  # runs whose rows are read in one query
HISTORY_BATCH = 8  # benchmarks a worker writes the history pages of at a time
DIGEST = 100  # the newest compare, variants and scale runs gathered on their pages (all have run pages)
NEWEST = 25  # runs listed on the index
TABLE_RUNS = 30  # a history page's table per host: its last runs (the plot has them all)
ESTIMATE = ("param", "unit", "per_op", "ci_low", "ci_high", "cycles_per_op", "cycles_ci_low", "cycles_ci_high")
SPREAD = ("bench", "param", "variant", "status", "unit", "per_op", "cycles_per_op")  # what host_spread reads
HISTORY_KINDS = (TIMING, SIMULATED)  # a benchmark has a history page when it has results of these kinds

Key = tuple[str, "int | None", str]  # bench, param, variant


@dataclass
class Filters:
    """Which runs the site shows (all filters in SQL, as `runs`): Store.list_runs's."""

    bench: str | None = None
    host: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    since: dt.date | None = None

    def __bool__(self) -> bool:
        return bool(self.bench or self.host or self.labels or self.since)

    def text(self) -> str:
        parts = ([f"--bench {self.bench}"] if self.bench else []) + ([f"--host {self.host}"] if self.host else [])
        parts += [f"--label {k}={v}" for k, v in self.labels.items()]
        parts += [f"--since {self.since.isoformat()}"] if self.since else []
        return " ".join(parts)


class _Snapshot:
    """The read side of Store that show's recipe (commands._show.print_run) and host_spread
    call, served from what the report has read: ``results`` of the run being shown,
    ``list_runs(None)`` of every run in the database, ``results_of`` of replicate runs (read
    once, kept); any other call goes to the store itself."""

    def __init__(self, store: Store, every_run: list[dict[str, Any]]) -> None:
        self._store = store
        self._every = every_run
        self.current: dict[int, list[dict[str, Any]]] = {}
        self.kept: dict[int, list[dict[str, Any]]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def results(self, run_id: int) -> list[dict[str, Any]]:
        if run_id in self.current:
            return self.current[run_id]
        return self._store.results(run_id)

    def list_runs(self, limit: int | None = 20, **filters: Any) -> list[dict[str, Any]]:
        if filters or (limit is not None and limit >= 0):
            return self._store.list_runs(limit, **filters)
        return list(self._every)

    def results_of(self, run_ids: Sequence[int], *, raw: bool = True) -> dict[int, list[dict[str, Any]]]:
        """The rows of replicate runs with the fields host_spread reads (SPREAD), the run being
        shown whole."""
        missing = [int(i) for i in run_ids if int(i) not in self.kept and int(i) not in self.current]
        if missing:
            got = self._store.results_of(missing, raw=False)
            self.kept.update({i: [{k: r.get(k) for k in SPREAD} for r in rows] for i, rows in got.items()})
        return {int(i): self.current.get(int(i)) or self.kept.get(int(i), []) for i in run_ids}


def host_of(run: Mapping[str, Any]) -> str:
    """The host a run is shown under (compare --by host's): its name, else its host id."""
    return str(run.get("host") or run.get("host_id") or "?")


def short_time(iso: Any) -> str:
    return str(iso or "")[:16].replace("T", " ")


def command_name(run: Mapping[str, Any]) -> str:
    """The subcommand that made a run (``run``, ``compare``, ...), from its stored argv."""
    argv = run.get("command")
    if isinstance(argv, list):
        words = [str(a) for a in argv[1:] if not str(a).startswith("-")]
        return words[0] if words else "?"
    return "?"


def run_summary(run: Mapping[str, Any], n_results: int | None = None) -> dict[str, Any]:
    return {"id": run["id"], "started": short_time(run.get("started_at")), "host": visible(host_of(run)),
            "kind": visible(command_name(run)), "status": str(run.get("status")),
            "labels": visible(labels_text(run.get("labels")), multiline=False),
            "results": "" if n_results is None else n_results}


def _dump(x: Any) -> str:
    return visible(json.dumps(x, indent=1, sort_keys=True, default=str)) if x else "(none stored)"


@dataclass
class _Series:
    """What a benchmark's history needs, gathered run by run: per host its (run, row) pairs."""

    by_host: dict[str, list[tuple[dict[str, Any], tuple[Any, ...]]]] = field(default_factory=dict)  # ESTIMATE's
    timed: bool = False


@dataclass
class _Batch:
    """What a batch of runs gave: their results counted, the valid results (key, of a kind with
    a history, host, run id, ESTIMATE's values), the tables of compare, variants and scale runs
    (kind, item) and the pages written (path → bytes)."""

    counts: dict[int, int] = field(default_factory=dict)
    gathered: list[tuple[Key, bool, str, int, tuple[Any, ...]]] = field(default_factory=list)
    digests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    pages: dict[str, int] = field(default_factory=dict)


_FORKED: _Builder | None = None  # the builder a forked worker inherits (run_pages)


def _child_start(die: Any) -> None:
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
    b.snapshot = _Snapshot(b.store, b.every)


def _child_batch(ids: list[int]) -> _Batch:
    assert _FORKED is not None
    return _FORKED.batch(ids)


def _child_histories(keys: list[Key]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
    assert _FORKED is not None
    return _FORKED.history_batch(keys)


class _Builder:
    def __init__(self, store: Store, db: str | None, site: Site, runs: list[dict[str, Any]],
                 every: list[dict[str, Any]], filters: Filters, window: int, alpha: float) -> None:
        self.store, self.db, self.site, self.runs, self.filters = store, db, site, runs, filters
        self.by_id = {int(r["id"]): r for r in runs}
        self.window, self.alpha = window, alpha
        self.snapshot = _Snapshot(store, every)
        self.every = every
        self.rx = re.compile(bench_regex(filters.bench)) if filters.bench else None
        self.series: dict[Key, _Series] = {}
        self.counts: dict[int, int] = {}
        self.compares: collections.deque[dict[str, Any]] = collections.deque(maxlen=DIGEST)  # the newest
        self.variants: collections.deque[dict[str, Any]] = collections.deque(maxlen=DIGEST)
        self.scales: collections.deque[dict[str, Any]] = collections.deque(maxlen=DIGEST)
        self.n_kind = {"compare": 0, "variants": 0, "scale": 0}
        self.spreads: dict[tuple[int, ...], dict[tuple[Any, ...], tuple[float, int]]] = {}
        self.regressions: list[dict[str, Any]] = []  # of the history batch being written
        self.index_rows: list[dict[str, Any]] = []
        self.all_regressions: list[dict[str, Any]] = []  # of every batch
        self.all_index_rows: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ runs
    def run_pages(self, jobs: int) -> None:
        """Every run's page, BATCH runs at a time, in ``jobs`` processes (forked: each reads its
        batches through a connection of its own and writes their pages); what the histories and
        the other pages need comes back to this one."""
        ordered = sorted(int(r["id"]) for r in self.runs)
        batches = [ordered[i:i + BATCH] for i in range(0, len(ordered), BATCH)]
        if jobs <= 1 or len(batches) <= 1:
            for ids in batches:
                self.merge(self.batch(ids))
            return
        for done in self._forked(jobs, _child_batch, batches):
            self.merge(done)
        for run in self.runs:
            _slim(run)

    def batch(self, ids: list[int]) -> _Batch:
        """The pages of the runs ``ids`` and what the rest of the site needs of them."""
        done = _Batch()
        rows_of = self.store.results_of(ids, raw=False)
        before = dict(self.site.written.pages)
        for rid in ids:
            run, rows = self.by_id[rid], rows_of[rid]
            done.counts[rid] = len(rows)
            self.snapshot.current = {rid: rows}
            if run.get("group_id") is not None:
                self.snapshot.kept[rid] = [{k: r.get(k) for k in SPREAD} for r in rows]
            host = host_of(run)
            for row in rows:
                if row.get("status") == OK and (self.rx is None or self.rx.match(str(row["bench"]))):
                    done.gathered.append(((str(row["bench"]), row.get("param"), str(row.get("variant") or "")),
                                          row.get("kind") in HISTORY_KINDS, host, rid,
                                          tuple(row.get(k) for k in ESTIMATE)))
            self.run_page(run, rows, done.digests)
            _slim(run)
        self.snapshot.current = {}
        done.pages = {k: v for k, v in self.site.written.pages.items() if before.get(k) != v}
        return done

    def merge(self, done: _Batch) -> None:
        self.counts.update(done.counts)
        self.site.written.pages.update(done.pages)
        for key, timed, host, rid, values in done.gathered:
            s = self.series.get(key)
            if s is None:
                s = self.series[key] = _Series()
            s.timed = s.timed or timed
            s.by_host.setdefault(host, []).append((self.by_id[rid], values))
        for kind, item in done.digests:
            self.n_kind[kind] += 1
            {"compare": self.compares, "variants": self.variants, "scale": self.scales}[kind].append(item)

    def link(self, rows: list[dict[str, Any]]) -> Any:
        """The results table's names → their history pages: a valid result of a kind that has a
        history (HISTORY_KINDS), of a benchmark the site shows."""
        names: dict[tuple[str, str], str] = {}
        for r in rows:
            if (r.get("status") == OK and r.get("kind") in HISTORY_KINDS
                    and (self.rx is None or self.rx.match(str(r["bench"])))):
                variant = str(r.get("variant") or "")
                shown = visible(str(r["bench"]) + (f" [{variant}]" if variant else ""), multiline=False)
                names[(shown, "" if r.get("param") is None else str(r["param"]))] = history_slug(
                    str(r["bench"]), r.get("param"), variant)

        def href(cells: list[str]) -> str | None:
            slug = names.get((cells[0], cells[1] if len(cells) > 1 else ""))
            return f"../history/{slug}" if slug else None

        return href

    def run_page(self, run: dict[str, Any], rows: list[dict[str, Any]], digests: list[tuple[str, Any]]) -> None:
        """The page of ``run`` (show's tables, its environment); a compare, variants or scale
        run's tables also into ``digests`` (kind, item) for their own pages."""
        rid = int(run["id"])
        cap, notes = Capture(), Capture()
        print_run(self.snapshot, run, True, cap, notes)  # type: ignore[arg-type]  # Store's read side
        blocks = blocks_of(cap.items, self.link(rows))
        summary = run_summary(run, len(rows))
        tables = [b.table for b in blocks if b.table is not None]
        scale_rows = [r for r in rows if scaling.is_scale_row(r)]
        figure = None
        if scale_rows:
            series = scaling.series_from_rows(scale_rows)
            cpus = ((run.get("env") or {}).get("scale") or {}).get("cpus") if isinstance(run.get("env"), dict) else None
            figure = scale_figure(f"cyclebench scale · run #{rid}", series, len(set(cpus)) if cpus else None)
            digests.append(("scale", {"run": summary, "tables": tables, "figure": figure}))
        if comparison_rows(run) is not None:
            digests.append(("compare", {"run": summary, "tables": tables}))
        elif variants_data(run) is not None:
            digests.append(("variants", {"run": summary, "tables": tables}))
        cal = run.get("calibration")
        self.site.page(f"runs/{rid}.html", "run.html", title=f"run #{rid} · {visible(host_of(run))}",
                       plots=figure is not None, figure=figure,
                       run={**summary, "started_at": run.get("started_at"), "finished_at": run.get("finished_at"),
                            "command": visible(argv_text(run.get("command"))), "group_id": run.get("group_id")},
                       notes=[b.text for b in blocks_of(notes.items)], blocks=blocks,
                       environment=console_report.environment_lines(rows),
                       calibration=visible(console_report.calibration_line(cal)) if isinstance(cal, dict) else "",
                       build=_dump(run.get("build")), calibration_json=_dump(cal), env=_dump(run.get("env")))

    # ------------------------------------------------------------------ histories
    def spread_for(self, last: dict[str, Any], exclude: set[int]) -> dict[tuple[Any, ...], tuple[float, int]]:
        """experiments.history.host_spread(store, last, exclude), from the runs in memory: the
        pooled spread of the same replicate runs is computed once."""
        reps = replicates_of(self.every, last, exclude)
        ids = tuple(r["id"] for r in reps)
        if ids not in self.spreads:
            self.spreads[ids] = pooled_by_bench(reps, self.snapshot.results_of(list(ids)))
        return self.spreads[ids]

    def histories(self, jobs: int) -> None:
        """Every benchmark's history page, in ``jobs`` forked processes as the run pages."""
        keys = sorted((k for k, s in self.series.items() if s.timed),
                      key=lambda k: (k[0], k[1] is not None, k[1] or 0, k[2]))
        chunks = [keys[i:i + HISTORY_BATCH] for i in range(0, len(keys), HISTORY_BATCH)]
        if jobs <= 1 or len(chunks) <= 1:
            for chunk in chunks:
                self.merge_histories(self.history_batch(chunk))
            return
        for done in self._forked(jobs, _child_histories, chunks):
            self.merge_histories(done)

    def history_batch(self, keys: list[Key]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
        """The pages of ``keys``: (open regressions, the benchmarks index's rows, pages written)."""
        self.regressions, self.index_rows = [], []
        before = dict(self.site.written.pages)
        for key in keys:
            bench, _, variant = key
            traces: list[Trace] = []
            for host, got in sorted(self.series[key].by_host.items()):
                pairs = [(run, dict(zip(ESTIMATE, values, strict=True)))
                         for run, values in sorted(got, key=lambda rv: (rv[0].get("started_at") or "", rv[0]["id"]))]
                points, unit, runs, _rows = points_from(pairs)
                spread = self.spread_for(runs[-1], {r["id"] for r in runs}).get((bench, points[-1]["param"], variant))
                h, margin = analyse(points, spread, self.alpha)
                traces.append(Trace(host, unit, points, h, margin, runs))
            self.history_page(key, traces)
        pages = {k: v for k, v in self.site.written.pages.items() if before.get(k) != v}
        return self.regressions, self.index_rows, pages

    def merge_histories(self, done: tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]) -> None:
        regressions, rows, pages = done
        self.all_regressions += regressions
        self.all_index_rows += rows
        self.site.written.pages.update(pages)

    def _forked(self, jobs: int, work: Any, chunks: list[Any]) -> Iterator[Any]:
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

    def history_page(self, key: Key, traces: list[Trace]) -> None:
        bench, param, variant = key
        name = visible(bench + ("" if param is None else f" [{param}]") + (f" [{variant}]" if variant else ""),
                       multiline=False)
        slug = history_slug(bench, param, variant)
        argv = " ".join([bench] + ([f"-p {param}"] if param is not None else []) +
                        ([f"--variant '{variant}'"] if variant else []))
        rows = []
        recent_n = 0
        for t in traces:
            n = len(t.points)
            changes = []
            for c in t.history.changes:
                run = t.points[c.index]
                changes.append({"run": run["run"], "text": change_text(c), "slower": c.diff > 0})
                if c.index >= n - self.window:
                    recent_n += 1
                    self.regressions.append({"name": name, "slug": slug, "host": visible(t.host), "run": run["run"],
                                             "started": short_time(run.get("started_at")), "at": run.get("started_at"),
                                             "text": change_text(c), "regression": c.regression,
                                             "slower": c.diff > 0})
            first = max(0, n - TABLE_RUNS)
            title = (f"history of {name} on {visible(t.host)} · {n} runs · {t.unit}"
                     + (f" · the last {n - first} (all are in the plot)" if first else ""))
            table = html_table(history_report.history_table(title, t.points[first:], _tail(t.history, first), t.unit,
                                                            wide=True),
                               lambda cells: f"../runs/{cells[0]}.html")
            rows.append({"host": visible(t.host), "unit": t.unit, "n": n, "latest": console_report.fmt(
                t.points[-1]["estimate"]), "sigma": f"{console_report.fmt(t.history.sigma)} "
                f"({'replicates' if t.history.sigma_source == 'host' else 'series'})", "changes": changes,
                "table": table})
        figure = history_figure(f"{name} · per op, by host", traces)
        self.site.page(f"history/{slug}", "history.html", title=f"history of {name}", plots=True, figure=figure,
                       traces=rows, argv=visible(argv, multiline=False))
        self.index_rows.append({"bench": visible(bench, multiline=False), "param": "" if param is None else param,
                                "variant": visible(variant, multiline=False), "slug": slug, "hosts": len(traces),
                                "runs": sum(len(t.points) for t in traces),
                                "changes": sum(len(t.history.changes) for t in traces), "recent": recent_n})

    # ------------------------------------------------------------------ the rest
    def fleet(self) -> dict[str, Any]:
        """compare --by host over each host's newest complete run among those shown."""
        sides: dict[str, list[dict[str, Any]]] = {}
        for run in self.runs:  # newest first
            if run.get("status") == "complete" and host_of(run) not in sides:
                sides[host_of(run)] = [run]
        if len(sides) < 2:
            return {"table": None, "sides": [], "message": f"{len(sides)} host(s) with a complete run among the runs "
                    "shown: the fleet table sets two or more side by side."}
        rows = host_rows(self.store, sides)
        cpu = {h: next((r.get("cpu_model") for r in side if r.get("cpu_model")), None) for h, side in sides.items()}
        table = hosts_report.hosts_table(list(sides), rows, cpu, wide=True)
        return {"table": html_table(table), "message": "",
                "sides": [(visible(h), [r["id"] for r in side]) for h, side in sides.items()]}

    def finish(self) -> None:
        runs = self.runs  # newest first
        summaries = [run_summary(r, self.counts.get(int(r["id"]))) for r in runs]
        self.site.page("runs.html", "runs.html", title=f"runs ({len(runs)})", runs=summaries)
        self.site.page("history/index.html", "histories.html", title=f"benchmarks ({len(self.all_index_rows)})",
                       series=self.all_index_rows)
        self.site.page("comparisons.html", "comparisons.html", title="comparisons", items=list(self.compares)[::-1],
                       omitted=self.n_kind["compare"] - len(self.compares))
        self.site.page("variants.html", "variants.html", title="variant rankings", items=list(self.variants)[::-1],
                       omitted=self.n_kind["variants"] - len(self.variants))
        self.site.page("scale.html", "scale.html", title="scale", items=list(self.scales)[::-1],
                       plots=bool(self.scales), omitted=self.n_kind["scale"] - len(self.scales))
        self.site.page("fleet.html", "fleet.html", title="fleet: per op, by host", **self.fleet())
        hosts: dict[str, dict[str, Any]] = {}
        for r in runs:
            h = hosts.setdefault(host_of(r), {"name": visible(host_of(r)), "cpu": visible(r.get("cpu_model") or "-"),
                                               "kernel": visible(r.get("kernel_release") or "-"), "runs": 0,
                                               "last": r["id"], "last_at": short_time(r.get("started_at"))})
            h["runs"] += 1
        regressions = sorted(self.all_regressions, key=lambda g: (g["at"] or "", g["run"]), reverse=True)
        self.site.page("index.html", "index.html", title="cyclebench lab", regressions=regressions,
                       hosts=sorted(hosts.values(), key=lambda h: h["name"]), newest=summaries[:NEWEST],
                       window=self.window,
                       counts={"runs": len(runs), "hosts": len(hosts), "series": len(self.all_index_rows),
                               "comparisons": self.n_kind["compare"], "variants": self.n_kind["variants"],
                               "scale": self.n_kind["scale"]})


def _slim(run: dict[str, Any]) -> None:
    """A run whose page is written keeps what the other pages show (host, CPU, kernel, labels,
    its build's key for host_spread): its machine, calibration and summary go."""
    for key in ("env", "calibration", "summary"):
        run.pop(key, None)


def _tail(h: changepoint.History, first: int) -> changepoint.History:
    """``h`` for the runs from position ``first`` on (outliers and change points there, renumbered)."""
    return dataclasses.replace(h, outliers=[i - first for i in h.outliers if i >= first],
                               changes=[dataclasses.replace(c, index=c.index - first) for c in h.changes
                                        if c.index >= first])


def _fresh_dir(out: Path) -> Path:
    """A new empty directory beside ``out`` to build into (renamed over it at the end). UserError
    when ``out`` is a file, a directory that is neither empty nor a site, or cannot be written."""
    if out.exists() and not out.is_dir():
        raise UserError(f"-o {out}: not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / MARK).is_file():
        raise UserError(f"-o {out}: the directory holds files that are not a cyclebench site; give a new or empty "
                        "directory (a site is replaced whole)")
    parent = out.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    except OSError as e:
        raise UserError(f"cannot write the site to {out}: {e.strerror or e}") from None


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


def build(store: Store, db: str | None, out: Path, filters: Filters, window: int = 10,
          alpha: float = changepoint.ALPHA, jobs: int = 1) -> tuple[Any, int, int]:
    """Write the site of the runs ``filters`` choose in ``store`` (opened from ``db``: workers
    open their own) into ``out``, replacing the site there, the run pages in ``jobs`` processes.
    Returns (report.site.Written, runs shown, benchmark histories). UserError (exit 2) for no
    run, a bad ``out``, or Jinja2/plotly missing."""
    # the builder's own copies: a run whose page is written is slimmed (_slim) to what other pages need
    runs = [dict(r) for r in store.list_runs(None, host=filters.host, since=filters.since,
                                             labels=filters.labels or None, bench=filters.bench)]
    if not runs:
        raise UserError(f"no runs in {store.url}" if not filters else
                        f"no run in {store.url} matches {filters.text()}")
    every = store.list_runs(None) if filters else runs
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
            raise UserError(str(e)) from None
        b = _Builder(store, db, site, runs, every, filters, window, alpha)
        b.run_pages(jobs)
        b.histories(jobs)
        b.finish()
        _swap(tmp, out)
    except OSError as e:
        raise UserError(f"cannot write the site to {out}: {e.strerror or e}") from None
    finally:
        if collecting:
            gc.enable()
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return site.written, len(runs), len(b.all_index_rows)
