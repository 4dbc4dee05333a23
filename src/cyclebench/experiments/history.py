"""What a host has shown before: the run-to-run spread of each benchmark in earlier replicate
groups (`run --runs N`) of the same build on the same host (stats/runs.py pools it), and one
benchmark's history: its valid results in time order as a series (``points_of``) and the runs
where it stepped (``analyse``: stats/changepoint.py) — `history` and `report` read them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from cyclebench.experiments.errors import ExperimentError
from cyclebench.model import (
    DISTURBED,
    OK,
    ORDINARY,
    REVISION,
    TIMING,
    Point,
    Result,
    Run,
    SeriesKey,
    measurement_of,
    purpose_of,
    series_key,
)
from cyclebench.stats.runs import pooled_spread

if TYPE_CHECKING:
    from cyclebench.store import Store

RunT = TypeVar("RunT", bound=Mapping[str, Any])  # a run: model.Run, or a run file's run
ResultT = TypeVar("ResultT", bound=Mapping[str, Any])  # a result row: model.Result, or a run file's

if TYPE_CHECKING:  # numpy comes with it: imported where a history is analysed (bench/startup.py)
    from cyclebench.stats.changepoint import History


def estimate_of(row: Result) -> tuple[float | None, str]:
    """A run's figure for a benchmark: cycles~ per op when it has one, else per op in its unit."""
    if row.get("cycles_per_op") is not None:
        return row["cycles_per_op"], "cycles~"
    return row.get("per_op"), row.get("unit") or ""


def host_spread(store: Store, run: Mapping[str, Any], exclude: set[int],
                before: int | None = None) -> dict[tuple[Any, ...], tuple[float, int]]:
    """(sd, df) of every benchmark's run estimates pooled over the earlier replicate groups
    (`run --runs N`) of ``run``'s build on ``run``'s host, the runs in ``exclude`` left out
    (and, with ``before``, every run from that id on: what was known when it ran): the
    run-to-run spread that benchmark has shown here."""
    replicates = replicates_of(store.list_runs(None), run, exclude, before)
    return pooled_by_bench(replicates, store.results_of([r["id"] for r in replicates]))  # one query


def with_spread(rows: Iterable[Mapping[str, Any]], spreads: Mapping[tuple[Any, ...], tuple[float, int]]
                ) -> list[Result]:
    """The rows as records, each with its host's run-to-run (sd, df) in its ``run_to_run``
    where ``spreads`` (host_spread's) has its benchmark: new records, the given ones unchanged."""
    out = []
    for row in rows:
        r = row if isinstance(row, Result) else Result.of(row)
        sd = spreads.get((r.bench, r.param, r.variant or ""))
        out.append(r if sd is None else replace(r, run_to_run={"sd": sd[0], "df": sd[1]}))
    return out


def replicates_of(runs: Iterable[RunT], run: Mapping[str, Any], exclude: set[int],
                  before: int | None = None) -> list[RunT]:
    """Among ``runs``, the replicate runs (of a group) host_spread pools for ``run``: its
    build on its host, complete or interrupted, not in ``exclude``, and (with ``before``)
    older than that run id."""
    build_key = (run.get("build") or {}).get("key")
    return [r for r in runs
            if r.get("group_id") is not None and r["id"] not in exclude and r.get("host_id") == run.get("host_id")
            and (before is None or r["id"] < before)
            and (r.get("build") or {}).get("key") == build_key and r.get("status") in ("complete", "interrupted")]


def pooled_by_bench(replicates: Sequence[Mapping[str, Any]], rows: Mapping[int, Sequence[Mapping[str, Any]]],
                    ) -> dict[tuple[Any, ...], tuple[float, int]]:
    """(bench, param, variant) → (sd, df) of the replicates' estimates (estimate_of), pooled
    over their groups (stats.runs.pooled_spread); ``rows``: each replicate's result rows."""
    groups: dict[tuple[Any, ...], dict[int, list[float]]] = {}
    for r in replicates:
        for x in rows[r["id"]]:
            v, _ = estimate_of(x)
            if x["status"] == OK and v is not None:
                groups.setdefault((x["bench"], x["param"], x["variant"]), {}).setdefault(r["group_id"], []).append(v)
    out = {}
    for key, by_group in groups.items():
        spread = pooled_spread(list(by_group.values()))
        if spread is not None:
            out[key] = spread
    return out


ALL = "all"  # --purpose all: every purpose in one series


@dataclass(frozen=True)
class LeftOut:
    """Runs of a benchmark that a series left out, by the first field of their series key
    (model.SeriesKey.differs) that differs from the series' and its value there."""

    field: str  # host | measurement | unit | digest | build | purpose, or copy: a run imported again, status: disturbed
    value: str
    runs: int

    def text(self) -> str:
        """What they are: "3 revision runs", "1 callgrind run", "2 runs on lab2"…"""
        runs = f"run{'s' if self.runs != 1 else ''}"
        if self.field in ("purpose", "measurement", "status"):
            return f"{self.runs} {self.value} {runs}"
        if self.field == "copy":
            return f"{self.runs} {runs} imported again (the same measurement as a run in it)"
        where = {"host": f"on {self.value}", "unit": f"in {self.value}",
                 "digest": f"of another version of the benchmark's file ({self.value[:8]})",
                 "build": f"built with {self.value or 'no flags'}"}.get(self.field, f"of another {self.field}")
        return f"{self.runs} {runs} {where}"

    def option(self) -> str | None:
        """The option that shows them instead (None: none does)."""
        value = f"'{self.value}'" if " " in self.value else self.value
        return {"host": f"--host {value}", "measurement": f"--kind {value}", "build": f"--build {value}",
                "purpose": f"--purpose {value}"}.get(self.field)


@dataclass(frozen=True)
class Chosen(Generic[RunT, ResultT]):
    """A benchmark's series among its stored results (choose): its key, its (run, row) pairs
    oldest first, and what was left out."""

    key: SeriesKey
    pairs: list[tuple[RunT, ResultT]]
    left_out: tuple[LeftOut, ...]
    order: str = "time"  # or "commit": a revision series by its commits (commit_order)

    def note(self, name: str) -> str | None:
        """The one line naming what was left out and the options that widen the series; None: nothing."""
        if not self.left_out:
            return None
        parts = [lo.text() for lo in self.left_out]
        said = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
        options = sorted({o for lo in self.left_out if (o := lo.option())})
        return f"{said} of {name} not in this series" + (f": {', '.join(options)}" if options else "")


def _preference(run: Mapping[str, Any], row: Mapping[str, Any]) -> tuple[bool, bool]:
    """The series a reader follows unless told: ordinary runs before revisions, variants and
    compares; timing before callgrind, counters and the rest."""
    return purpose_of(run) in ORDINARY, measurement_of(row) == TIMING


def choose(got: Sequence[tuple[RunT, ResultT]], purpose: str | None = None,
           measurement: str | None = None, build: str | None = None) -> Chosen[RunT, ResultT]:
    """The series among ``got`` (a benchmark's valid (run, row) pairs, oldest first, of one
    parameter and variant): the series (model.series_key) of the newest pair of the ``purpose``
    (ALL: any, one series across purposes), ``measurement`` and ``build`` (model.build_of) asked, or, unasked, of the
    newest ordinary timing pair (else the newest of the most preferred: _preference); every pair
    of that series, the others counted by why (LeftOut). ExperimentError when none is of the
    purpose or measurement asked."""
    keyed = [(run, row, series_key(run, row)) for run, row in got]
    cand = [(run, row, k) for run, row, k in keyed if (purpose in (None, ALL) or k.purpose == purpose)
            and (measurement is None or k.measurement == measurement) and (build is None or k.build == build)]
    if not cand:
        asked = " and ".join(x for x in (f"purpose {purpose}" if purpose not in (None, ALL) else "",
                                         f"kind {measurement}" if measurement else "",
                                         f"build '{build}'" if build is not None else "") if x)
        builds = sorted({k.build for *_, k in keyed if k.build is not None})
        raise ExperimentError(f"no run of {asked} among those that match (purposes there: "
                              f"{', '.join(sorted({k.purpose for *_, k in keyed}))}; kinds: "
                              f"{', '.join(sorted({k.measurement for *_, k in keyed}))}"
                              + (f"; builds: {', '.join(repr(b) for b in builds)})" if builds else ")"))
    best = max(_preference(run, row) for run, row, _ in cand)
    newest = [k for run, row, k in cand if _preference(run, row) == best][-1]
    if newest.digest is None:  # stored before digests were kept: the series' newest known version
        known = [k.digest for *_, k in keyed if k.digest is not None and replace(k, digest=None).matches(newest)]
        newest = replace(newest, digest=known[-1] if known else None)
    if purpose == ALL:
        keyed = [(run, row, replace(k, purpose=newest.purpose)) for run, row, k in keyed]
    pairs: list[tuple[RunT, ResultT]] = []
    counts: dict[tuple[str, str], int] = {}
    seen: set[tuple[Any, ...]] = set()
    copies = 0
    for run, row, k in keyed:
        why = newest.differs(k)
        # `import` of a run file already in the database: one measurement, one point
        same = (run.get("started_at"), run.get("host_id"), run.get("pid"), row.get("param"), row.get("per_op"))
        if why is None and same in seen:
            copies += 1
        elif why is None:
            seen.add(same)
            pairs.append((run, row))
        else:
            value = str(getattr(k, why))
            counts[(why, value)] = counts.get((why, value), 0) + 1
    if copies:
        counts[("copy", "")] = copies
    left = tuple(LeftOut(f, v, n) for (f, v), n in sorted(counts.items(), key=lambda fv: (-fv[1], fv[0])))
    return Chosen(newest, pairs, left)


def points_of(store: Store, bench: str, param: int | None, variant: str, host: str | None,
              labels: dict[str, str], since: dt.date | None, purpose: str | None = None,
              measurement: str | None = None, build: str | None = None,
              ) -> tuple[list[Point], str, list[Run], list[Result], Chosen[Run, Result]]:
    """The valid results of ``bench`` (at ``param``, of ``variant``) in the runs that match,
    oldest first, of one series (choose: ``purpose``, ``measurement``, ``build`` or, unasked, the newest
    ordinary timing series), in one unit (cycles~ when all have it, else the timer's): (points,
    unit, their runs, their result rows, the series chosen and what it left out). Raises
    ExperimentError when the benchmark has several parameters and none was chosen, or nothing
    matches."""
    got: list[tuple[Run, Result]] = []
    disturbed: list[Result] = []  # figures kept but never a point (docs/method.md): named, not followed
    found = store.list_runs(None, host=host, since=since, labels=labels)  # filtered in SQL
    rows = store.results_of([r["id"] for r in found])  # one query
    for run in time_order(found):
        for row in rows[run["id"]]:
            if row["bench"] != bench or (row.get("variant") or "") != variant:
                continue
            if row["status"] == OK:
                got.append((run, row))
            elif row["status"] == DISTURBED:
                disturbed.append(row)
    params = sorted({row["param"] for _, row in got}, key=lambda p: (p is None, p))
    if param is None and len(params) > 1:
        raise ExperimentError(f"{bench} was measured at several parameters ({', '.join(map(str, params))}): pass -p")
    got = [(run, row) for run, row in got if param is None or row["param"] == param]
    disturbed = [row for row in disturbed if param is None or row["param"] == param]
    if not got:
        why = f"; {len(disturbed)} disturbed, never a point" if disturbed else ""
        raise ExperimentError(f"no valid result of {bench}{'' if param is None else f' [{param}]'} in the runs "
                              f"that match ({store.url}{why})")
    kinds = sorted({str(row.get("kind") or "") for _, row in got})
    got = [(run, row) for run, row in got if estimate_of(row)[0] is not None]
    if not got:  # emulated (qemu: no time) or scaling (a throughput, not a cost per op: `scale` shows it)
        raise ExperimentError(f"{bench}{'' if param is None else f' [{param}]'} has no per-op figure to follow "
                              f"(it has {', '.join(kinds)} results only): history follows timed and simulated results")
    chosen = choose(got, purpose, measurement, build)
    if chosen.key.purpose == REVISION and (by_commit := commit_order(chosen.pairs)) is not None:
        chosen = replace(chosen, pairs=by_commit, order="commit")
    if disturbed:
        chosen = replace(chosen, left_out=(*chosen.left_out, LeftOut("status", DISTURBED, len(disturbed))))
    return (*points_from(chosen.pairs), chosen)


def commit_order(pairs: Sequence[tuple[RunT, ResultT]]) -> list[tuple[RunT, ResultT]] | None:
    """A revision series's pairs by their commit (its depth, as the sitting stored it:
    experiments.revcompare.Workspace.revisions), then by start time: the runs of one commit side
    by side and a commit's step a step, where time order put a bisect's good revision between
    two of a regression's; None when a pair's commit or its depth was not stored."""
    keyed = []
    for run, row in pairs:
        env = run.get("env")
        depths = ((env or {}).get("revisions") or {}).get("depths") if isinstance(env, Mapping) else None
        sha = row.get("revision")
        if not isinstance(depths, Mapping) or not sha or not isinstance(depths.get(sha), int):
            return None
        keyed.append((depths[sha], run.get("started_at") or "", run["id"], (run, row)))
    return [p for *_, p in sorted(keyed, key=lambda k: k[:3])]


def time_order(runs: Sequence[RunT]) -> list[RunT]:
    """Runs oldest first: by start time, then id."""
    return sorted(runs, key=lambda r: (r.get("started_at") or "", r["id"]))


def points_from(got: Sequence[tuple[RunT, ResultT]]) -> tuple[list[Point], str, list[RunT], list[ResultT]]:
    """A series from its (run, valid result row) pairs of one benchmark, parameter and variant,
    oldest first (non-empty): (points, unit, their runs, their rows), the unit cycles~ when every
    row has it, else the most common timer unit, rows in another unit left out. A point: run,
    started_at, labels, estimate, ci_low, ci_high, param (model.Point)."""
    units = [estimate_of(row)[1] for _, row in got]
    unit = "cycles~" if all(u == "cycles~" for u in units) else max(set(units), key=units.count)
    points, kept = [], []
    for run, row in got:
        est, u = estimate_of(row)
        if u != unit or est is None:  # another unit (a simulated row among timed ones), or no figure
            continue
        if unit == "cycles~":
            lo, hi = row.get("cycles_ci_low"), row.get("cycles_ci_high")
        else:
            lo, hi = row.get("ci_low"), row.get("ci_high")
        points.append(Point(run["id"], run.get("started_at"), dict(run.get("labels") or {}), est, lo, hi, row["param"],
                            run.get("compiler"), row.get("revision")))
        kept.append((run, row))
    return points, unit, [run for run, _ in kept], [row for _, row in kept]


def series_spread(spreads: Mapping[tuple[Any, ...], tuple[float, int]], key: SeriesKey
                  ) -> tuple[float, int] | None:
    """The host's run-to-run (sd, df) of the series ``key`` (host_spread's, pooled from replicate
    groups, `run --runs N`, which are timed): for a timing series; None for another kind's (a
    callgrind count has no run-to-run spread; counters' runs are their own series)."""
    return spreads.get((key.bench, key.param, key.variant)) if key.measurement == TIMING else None


def analyse(points: Sequence[Point], spread: tuple[float, int] | None,
            alpha: float | None = None) -> tuple[History, float]:
    # a series with revisions is in commit order (points_of: commit_order) or says it is not: a
    # run unlike its neighbours there is its commit's level, not an outlier (the lab's bisect GOOD
    # read 298.7 among 311s and was left out as one)
    """The change points of a series (points_from's points, oldest first) and the practical
    margin of a regression in its unit (compare's: MARGIN_ABS or MARGIN_REL of the median run,
    the smaller): each run's standard error from its 95% CI (normal), ``spread`` the host's
    run-to-run (sd, df) from earlier replicate groups (experiments.history.host_spread; None: the
    series' own, stats.changepoint); ``alpha`` None: changepoint.ALPHA."""
    from cyclebench.stats import changepoint
    from cyclebench.stats.ab import MARGIN_ABS, MARGIN_REL

    est = [p["estimate"] for p in points]
    se = [((p["ci_high"] - p["ci_low"]) / (2 * 1.96)) if p["ci_low"] is not None else 0.0 for p in points]
    base = float(sorted(est)[len(est) // 2])
    margin = min(MARGIN_ABS, MARGIN_REL * abs(base))
    return changepoint.detect(est, se, *(spread or (None, None)), alpha=changepoint.ALPHA if alpha is None else alpha,
                              margin=margin, outliers=not any(p.get("revision") for p in points)), margin
