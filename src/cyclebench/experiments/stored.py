"""Stored runs compared, nothing measured: `compare RUN RUN...` (each run one observation, the
runs are the replicates: stats/runs.py, Kalibera & Jones 2013; N sides ranked per benchmark, the
ranked table of Molnar's alignment thread, docs/references.md#icache-alignment-linux-2015) and
`compare --by host` (the same benchmarks on different machines, one column per host, over the
database a fleet fills: docs/fleet.md). Records out (report.ranked.RankedSide,
report.hosts.HostRow); no printing."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cyclebench.experiments.comparison import CompareError, Row, adjust
from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.history import estimate_of, host_spread
from cyclebench.model import OK, Comparison, Result, Run, measurement_of, purpose_of
from cyclebench.report.hosts import HostCell, HostRow
from cyclebench.report.ranked import RankedSide
from cyclebench.stats.ab import ALPHA, MARGIN_ABS, MARGIN_REL
from cyclebench.stats.result import usable_for_verdict
from cyclebench.stats.runs import cross_run

if TYPE_CHECKING:
    from cyclebench.store import Store

TITLE = "stored runs: each run one observation, t on the run-to-run spread (Kalibera & Jones 2013), Holm"

Key = tuple[str, int | None, str]  # a result's (bench, param, variant)


@dataclass(frozen=True)
class Ranked:
    """One benchmark's ranked table: its ``label`` (bench [variant]), ``param`` and a line per
    side, the baseline first."""

    label: str
    param: int | None
    sides: tuple[RankedSide, ...]


@dataclass(frozen=True)
class StoredComparison:
    """`compare RUN RUN...`: ``sides`` (each a tuple of run ids, the baseline first), ``rows``
    each side against the first per benchmark (Holm-adjusted over all of them), ``ranked`` the
    ranked table per benchmark judged, ``title`` the table's."""

    sides: tuple[tuple[int, ...], ...]
    rows: tuple[Row, ...]
    ranked: tuple[Ranked, ...] = ()
    title: str = TITLE


def run_side(token: str, store: Store) -> list[int] | None:
    """A side of a stored-run comparison: ``12``, ``4,5,6`` (replicate runs) or ``g4`` (the
    group `run --runs N` made, named by its first run). None when ``token`` is not one.
    Raises CompareError for a group the store does not hold."""
    if token[:1] == "g" and token[1:].isdigit():
        members = [int(r.id or 0) for r in store.list_runs(None) if r.group_id == int(token[1:])]
        if not members:
            raise CompareError(f"no replicate group {token} in {store.url}")
        return sorted(members)
    parts = token.split(",")
    return [int(x) for x in parts] if all(x.isdigit() for x in parts) else None


def _side_name(run: Run, ids: Sequence[int], with_host: bool = False) -> str:
    """``[host ]labels #ids`` (``run`` the side's first): the host (its inventory name in a fleet)
    when the sides span hosts."""
    labels = run.labels or {}
    name = ",".join(f"{k}={v}" for k, v in labels.items()) if labels else ""
    host = f"{run.host} " if with_host and run.host else ""
    return host + (name + " " if name else "") + "#" + ",".join(map(str, ids))


def _side_summary(name: str, results: Sequence[Result], baseline: bool, row: Row | None) -> RankedSide:
    """One line of the ranked table: mean of the side's run estimates, their sd (or the one run's
    own CI half-width), the best per-sample cost, and the verdict of its row vs the baseline."""
    import numpy as np

    vals = [v for v, _ in map(estimate_of, results) if v is not None]
    mean = float(np.mean(vals)) if vals else float("nan")
    if len(vals) > 1:
        spread = float(np.std(vals, ddof=1))
    else:
        fig = results[0].best
        spread = fig.half if fig is not None and fig.half is not None else float("nan")
    mins = [r.cycles_min if r.cycles_per_op is not None else r.min for r in results]
    best = min((m for m in mins if m is not None), default=float("nan"))
    cmp = row.cmp if row is not None else None
    return RankedSide(name, mean, spread, best, baseline, cmp.rel if cmp else float("nan"),
                      cmp.verdict if cmp else ("" if baseline else "-"),
                      row.note if row is not None and cmp is None else "")


def exact_comparison(a: Sequence[float], b: Sequence[float]) -> Comparison:
    """Two sides of exact counts (callgrind's): Δ of their means with no CI (low = high = Δ, which
    the tables print as "exact"), judged against compare's margin alone (stats.ab: 0.25 unit or
    0.5%, the smaller): slower or faster beyond it, else ``~``."""
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    diff = mb - ma
    margin = min(MARGIN_ABS, MARGIN_REL * abs(ma))
    verdict = "slower" if diff > margin else "faster" if diff < -margin else "~"
    return Comparison(ma, mb, diff, diff, diff, diff / ma if ma else float("nan"), 0.0 if verdict != "~" else 1.0,
                      len(a) + len(b), margin, verdict)


def _differences(runs: Sequence[Run]) -> str:
    """What the compared runs do not share (it may be the point, as with two kernels, but is said)."""
    what = {"build (source, flags, compiler)": lambda r: (r.build or {}).get("key"),
            "host": lambda r: r.host_id or r.host, "CPU model": lambda r: r.cpu_model}
    differ = [name for name, f in what.items() if len({f(r) for r in runs}) > 1]
    if len(purposes := list(dict.fromkeys(purpose_of(r) for r in runs))) > 1:  # model.series_key's purpose
        differ.append(f"purpose ({', '.join(purposes)})")
    return f"runs differ in {', '.join(differ)}" if differ else ""


def compare_runs(store: Store, sides: Sequence[Sequence[int]], alpha: float = ALPHA,
                 include_disturbed: bool = False) -> StoredComparison:
    """Every valid result present in all sides, each side against the first, across runs
    (stats.runs: runs are the replicates; Holm over the table), with the ranked table's lines
    per benchmark. Raises CompareError for a run the store does not hold or no result in common."""
    runs: dict[int, Run] = {}
    for rid in dict.fromkeys(r for side in sides for r in side):  # in the order given
        run = store.get_run(rid)
        if run is None:
            raise CompareError(f"no run {rid} in {store.url}")
        runs[rid] = run

    def index(rid: int) -> dict[Key, Result]:
        return {(r.bench, r.param, r.variant): r for r in store.results(rid)
                if usable_for_verdict(r, include_disturbed)}

    idx = {rid: index(rid) for rid in runs}
    keys = [k for k in idx[sides[0][0]] if all(k in idx[r] for side in sides for r in side)]
    if not keys:
        raise CompareError("the runs have no valid result in common")
    spans = len({r.host for r in runs.values()}) > 1
    names = [_side_name(runs[side[0]], side, spans) for side in sides]
    spreads = host_spread(store, dict(runs[sides[0][0]]), set(runs))
    prov = _differences(list(runs.values()))
    rows: list[Row] = []
    pending: list[tuple[str, Key, int]] = []  # ranked entries, made once Holm has adjusted the rows
    for key in keys:
        label = key[0] + (f" [{key[2]}]" if key[2] else "")
        # a run's figure stored as NaN reads back as NULL (SQLite) or NaN (PostgreSQL): no number,
        # which is what to say — not "units differ" against the unit it fell back to
        est = [[(v, u) for v, u in (estimate_of(idx[r][key]) for r in side) if v is not None and math.isfinite(v)]
               for side in sides]
        empty = ["#" + ",".join(map(str, side)) for side, got in zip(sides, est, strict=True) if not got]
        if empty:
            rows.append(Row(label, names[1], key[1], "", None,
                            f"no number: run {', '.join(empty)} stored no finite per-op figure for it (NaN)"))
            continue
        kinds = list(dict.fromkeys(measurement_of(idx[r][key]) for side in sides for r in side))
        if len(kinds) > 1:  # timing beside counters or callgrind: not one series (model.series_key)
            rows.append(Row(label, names[1], key[1], "", None, f"kinds of measurement differ ({', '.join(kinds)})"))
            continue
        units = {u for side in est for _, u in side}
        if len(units) > 1:
            rows.append(Row(label, names[1], key[1], "", None, f"units differ ({', '.join(sorted(units))})"))
            continue
        unit = units.pop()
        if kinds == ["callgrind"]:  # simulated counts are exact: the difference is the answer, no spread to test
            for name, side in zip(names[1:], est[1:], strict=True):
                rows.append(Row(f"{label} {names[0]}", name, key[1], unit,
                                exact_comparison([v for v, _ in est[0]], [v for v, _ in side]),
                                "; ".join(x for x in ("simulated counts (callgrind): exact", prov) if x)))
            continue
        prior = spreads.get(key)
        base = [v for v, _ in est[0]]
        first = len(rows)
        for name, side in zip(names[1:], est[1:], strict=True):
            try:
                cmp, note = cross_run(base, [v for v, _ in side], prior, alpha)
            except ValueError as e:
                rows.append(Row(f"{label} {names[0]}", name, key[1], unit, None, str(e)))
                continue
            rows.append(Row(f"{label} {names[0]}", name, key[1], unit, cmp, "; ".join(x for x in (note, prov) if x)))
        pending.append((label, key, first))
    rows = adjust(rows, alpha)
    ranked = tuple(Ranked(label, key[1], tuple(_side_summary(names[i], [idx[r][key] for r in side], i == 0,
                                                             rows[first + i - 1] if i else None)
                                               for i, side in enumerate(sides)))
                   for label, key, first in pending)  # the verdicts adjusted over the table
    return StoredComparison(tuple(tuple(s) for s in sides), tuple(rows), ranked)


def judge_stored(targets: Sequence[str], store: Store, baseline: str | None = None, alpha: float = ALPHA,
                 include_disturbed: bool = False) -> StoredComparison:
    """`compare RUN RUN …` / `gN gM`: every side's stored results judged against the first (or
    ``baseline``, one of the sides). Raises ExperimentError for fewer than two sides, CompareError
    for a baseline not among them, a run or group not stored, no result in common."""
    if len(targets) < 2:
        raise ExperimentError("compare of stored runs takes at least two sides: RUN[,RUN...] or gGROUP each")
    sides = [run_side(t, store) or [] for t in targets]
    if baseline is not None:
        pick = run_side(baseline, store) or []
        if pick not in sides:
            raise CompareError(f"--baseline {baseline} is not one of the sides compared")
        sides.insert(0, sides.pop(sides.index(pick)))
    return compare_runs(store, sides, alpha, include_disturbed)


# ---------------------------------------------------------------- compare --by host
def host_name(run: Run) -> str:
    """The host a run is a side of: its name (its inventory name in a fleet), else its host id."""
    return str(run.host or run.host_id or "?")


def host_sides(store: Store, run_ids: Sequence[int]) -> dict[str, list[Run]]:
    """Host name → its runs, in the order they were made: those given, or each host's newest
    complete run. Raises ExperimentError for a run not stored, or runs of fewer than two hosts."""
    if run_ids:
        runs = []
        for rid in run_ids:
            run = store.get_run(rid)
            if run is None:
                raise ExperimentError(f"no run {rid} in {store.url}")
            runs.append(run)
    else:
        seen: set[str] = set()
        runs = []
        for run in store.list_runs(None):  # newest first
            name = host_name(run)
            if run.status == "complete" and name not in seen:
                seen.add(name)
                runs.append(run)
    sides: dict[str, list[Run]] = {}
    for run in sorted(runs, key=lambda r: r.id or 0):
        sides.setdefault(host_name(run), []).append(run)
    if len(sides) < 2:
        raise ExperimentError(f"compare --by host needs runs of two hosts or more; {store.url} has "
                              f"{len(sides)} among the runs chosen ({', '.join(sides) or 'none'})")
    return sides


def host_rows(store: Store, sides: dict[str, list[Run]]) -> list[HostRow]:
    """One row per (benchmark, param, variant) measured validly on any host: per host its mean
    estimate, ± (sd over its runs, or the run's own 95% CI half-width), unit; absent hosts have
    no cell. ``sides``: host_sides'."""
    import numpy as np

    results = store.results_of([int(r["id"]) for side in sides.values() for r in side])
    cells: dict[tuple[Any, ...], dict[str, list[tuple[float, float | None, str]]]] = {}
    for host, side in sides.items():
        for run in side:
            for row in results[int(run["id"])]:
                fig = row.best  # as estimate_of reads it: cycles~ when there
                if row.status != OK or fig is None:
                    continue
                key = (row.bench, row.param, row.variant or "")
                cells.setdefault(key, {}).setdefault(host, []).append((float(fig.value), fig.half, fig.unit))
    rows = []
    for (bench, param, variant), by_host in cells.items():
        hosts = {}
        for host, vals in by_host.items():
            xs = [v for v, _, _ in vals]
            spread = float(np.std(xs, ddof=1)) if len(xs) > 1 else vals[0][1]
            hosts[host] = HostCell(float(np.mean(xs)), spread, vals[0][2], len(xs))
        rows.append(HostRow(bench, param, variant, hosts))
    return rows
