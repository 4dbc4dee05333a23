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
from cyclebench.model import OK, TIMING, Comparison, Result, Run, measurement_of, purpose_of
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
    """One benchmark's ranked table: its ``label`` (bench [variant]), ``param``, a line per side
    compared on it (the baseline first; a side not compared on it is named in
    StoredComparison.left_out) and the ``unit`` of its figures (cycles~, ref-cycles, Ir…)."""

    label: str
    param: int | None
    sides: tuple[RankedSide, ...]
    unit: str = ""


@dataclass(frozen=True)
class StoredComparison:
    """`compare RUN RUN...`: ``sides`` (each a tuple of run ids, the baseline first), ``rows``
    each side against the first per benchmark (Holm-adjusted over all of them), ``ranked`` the
    ranked table per benchmark judged, ``title`` the table's, ``left_out`` one line per side
    that was not compared on every benchmark of the baseline, naming what and why (no valid
    result of it, no kind of measurement shared): nothing is dropped unsaid."""

    sides: tuple[tuple[int, ...], ...]
    rows: tuple[Row, ...]
    ranked: tuple[Ranked, ...] = ()
    title: str = TITLE
    left_out: tuple[str, ...] = ()


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


def _side_summary(name: str, results: Sequence[Result], baseline: bool, row: Row | None,
                  note: str = "") -> RankedSide:
    """One line of the ranked table: mean of the side's run estimates, their sd (or, one run, its
    own 95% CI), the best per-sample cost, and Δ% with its CI and the verdict of its row vs the
    baseline; ``note`` added to the row's (why there is no verdict)."""
    import numpy as np

    vals = [v for v, _ in map(estimate_of, results) if v is not None]
    mean = float(np.mean(vals)) if vals else float("nan")
    low = high = float("nan")
    if len(vals) > 1:
        spread = float(np.std(vals, ddof=1))
    else:
        fig = results[0].best  # the figure estimate_of reads: cycles~ where calibrated
        spread = fig.half if fig is not None and fig.half is not None else float("nan")
        if fig is not None and fig.ci_low is not None and fig.ci_high is not None:
            low, high = fig.ci_low, fig.ci_high
    mins = [r.cycles_min if r.cycles_per_op is not None else r.min for r in results]
    best = min((m for m in mins if m is not None), default=float("nan"))
    cmp = row.cmp if row is not None else None
    rel_low = rel_high = float("nan")
    if cmp is not None and cmp.median_a and math.isfinite(cmp.ci_low) and math.isfinite(cmp.ci_high):
        rel_low, rel_high = cmp.ci_low / cmp.median_a, cmp.ci_high / cmp.median_a  # Δ's CI relative to A, as Δ% is
    why = row.note if row is not None and cmp is None else ""
    return RankedSide(name, mean, spread, best, baseline, cmp.rel if cmp else float("nan"),
                      cmp.verdict if cmp else ("" if baseline else "-"), "; ".join(x for x in (why, note) if x),
                      rel_low=rel_low, rel_high=rel_high, low=low, high=high)


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


def _provides(kind: str) -> frozenset[str]:
    """The kinds of measurement a result of ``kind`` (model.measurement_of) can be compared as: a
    result timed with counters read around its batches is a timing result too (its time is the
    figure estimate_of reads), so it is comparable with a plain timed one on its timing."""
    return frozenset((TIMING, "counters")) if kind == "counters" else frozenset((kind,))


def _distinct(sides: Sequence[Sequence[int]]) -> None:
    """Each run in one side, once: a run is one observation (the replicates are runs), so a run
    given twice would be counted twice, or judged against itself. Raises CompareError."""
    seen: dict[int, int] = {}
    for i, side in enumerate(sides):
        for rid in side:
            if rid in seen:
                where = "twice in one side" if seen[rid] == i else "in two sides"
                raise CompareError(f"run #{rid} is given {where}: each run is one observation, of one side")
            seen[rid] = i


def _events(results: Sequence[Result]) -> str:
    """The counters the results read (-e), by name, in the order first read."""
    return ", ".join(dict.fromkeys(e for r in results for e in ((r.counters or {}).get("events") or {})))


def _left_out(name: str, base: str, compared: bool, missing: Sequence[str], every: int,
              unshared: Sequence[tuple[str, tuple[str, ...], tuple[str, ...]]]) -> str:
    """The line that names what of side ``name`` was not compared with the baseline ``base`` and
    why: ``missing`` the baseline's benchmarks it has no valid result of (of ``every``),
    ``unshared`` (benchmark, its kinds, the baseline's kinds) where no kind is shared; empty when
    nothing was left out. ``compared``: it was compared on some benchmark."""
    if not compared and len(missing) == every:
        return f"{name} not compared: no valid result of any benchmark {base} has"
    by_kinds: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for label, mine, theirs in unshared:
        by_kinds.setdefault((mine, theirs), []).append(label)
    parts = [f"{', '.join(labels)} ({', '.join(mine)} beside {base}'s {', '.join(theirs)}: no kind of "
             "measurement shared)" for (mine, theirs), labels in by_kinds.items()]
    if missing:
        parts.append(f"{', '.join(missing)} (no valid result in {name})")
    if not parts:
        return ""
    return f"{name} not compared on {'' if compared else 'anything: '}" + "; ".join(parts)


def compare_runs(store: Store, sides: Sequence[Sequence[int]], alpha: float = ALPHA,
                 include_disturbed: bool = False) -> StoredComparison:
    """Every valid result of the baseline (the first side), each other side that has it against
    it, across runs (stats.runs: runs are the replicates; Holm over the table), with the ranked
    table's lines per benchmark. Results are compared on the kind of measurement they share
    (timing with counters beside timing: the timing, the counters said not compared); a side left
    out of a benchmark (no valid result of it, no kind shared) is named in ``left_out``. Raises
    CompareError for a run the store does not hold, a run given twice, a baseline with no valid
    result, or no side comparable with it."""
    _distinct(sides)
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
    # the baseline's benchmarks: each other side is judged on those it has too (not only on those
    # every side has: one side without a benchmark would take it from all the others)
    keys = [k for k in idx[sides[0][0]] if all(k in idx[r] for r in sides[0])]
    spans = len({r.host for r in runs.values()}) > 1
    names = [_side_name(runs[side[0]], side, spans) for side in sides]
    if not keys:
        raise CompareError(f"the baseline {names[0]} has no valid result to compare")
    spreads = host_spread(store, dict(runs[sides[0][0]]), set(runs))
    prov = _differences(list(runs.values()))
    others = range(1, len(sides))
    missing: dict[int, list[str]] = {i: [] for i in others}
    unshared: dict[int, list[tuple[str, tuple[str, ...], tuple[str, ...]]]] = {i: [] for i in others}
    shown: set[int] = set()  # the sides some row names
    rows: list[Row] = []
    pending: list[tuple[str, Key, str, list[tuple[int, int | None, str]]]] = []  # ranked, made once Holm adjusted
    for key in keys:
        label = key[0] + (f" [{key[2]}]" if key[2] else "")
        said = label + ("" if key[1] is None else f" [{key[1]}]")
        results = {i: [idx[r][key] for r in side] for i, side in enumerate(sides) if all(key in idx[r] for r in side)}
        for i in others:
            if i not in results:
                missing[i].append(said)
        kinds = {i: tuple(dict.fromkeys(measurement_of(x) for x in rs)) for i, rs in results.items()}
        shared = {i: frozenset.intersection(*map(_provides, k)) for i, k in kinds.items()}
        comp = [i for i in results if i and shared[0] & shared[i]]  # not one series otherwise (model.series_key)
        for i in results:
            if i and i not in comp:
                unshared[i].append((said, kinds[i], kinds[0]))
        if not comp:
            continue
        # a run's figure stored as NaN reads back as NULL (SQLite) or NaN (PostgreSQL): no number,
        # which is what to say — not "units differ" against the unit it fell back to
        est = {i: [(v, u) for v, u in map(estimate_of, results[i]) if v is not None and math.isfinite(v)]
               for i in [0, *comp]}

        def no_number(i: int) -> str:
            return f"no number: run #{','.join(map(str, sides[i]))} stored no finite per-op figure for it (NaN)"

        if not est[0]:
            rows.append(Row(label, names[comp[0]], key[1], "", None, no_number(0)))
            shown.update(comp)
            continue
        units = {u for _, u in est[0]}
        if len(units) > 1:
            rows.append(Row(label, names[comp[0]], key[1], "", None, f"units differ ({', '.join(sorted(units))})"))
            shown.update(comp)
            continue
        unit = next(iter(units))
        judged = []
        for i in comp:
            theirs = {u for _, u in est[i]}
            if not est[i] or theirs != units:
                rows.append(Row(label, names[i], key[1], "", None, no_number(i) if not est[i] else
                                f"units differ ({', '.join(sorted(units | theirs))})"))
                shown.add(i)
            else:
                judged.append(i)
        if not judged:
            continue
        base = [v for v, _ in est[0]]
        prior = spreads.get(key)
        exact = "callgrind" in shared[0]  # simulated counts are exact: the difference is the answer, no spread
        parts: list[tuple[int, int | None, str]] = [(0, None, "")]
        for i in judged:
            side = [v for v, _ in est[i]]
            # timing beside timing with counters: compared on the timing they share, and said
            readers = [j for j in (0, i) if "counters" in kinds[j]] if set(kinds[0]) != set(kinds[i]) else []
            counters = (f"timing compared; {' and '.join(names[j] for j in readers)} also read counters "
                        f"({_events([x for j in readers for x in results[j]])}): not compared, and reading them "
                        "around each batch may add to the time" if readers else "")
            if exact:
                cmp: Comparison | None = exact_comparison(base, side)
                note = "simulated counts (callgrind): exact"
            else:
                try:
                    cmp, note = cross_run(base, side, prior, alpha)
                except ValueError as e:
                    cmp, note = None, str(e)
            parts.append((i, len(rows), "counters not compared" if i in readers else ""))
            if 0 in readers:
                parts[0] = (0, None, "counters not compared")
            rows.append(Row(f"{label} {names[0]}", names[i], key[1], unit, cmp,
                            "; ".join(x for x in (note, counters, prov) if x)))
            shown.add(i)
        pending.append((label, key, unit, parts))
    left = [x for i in others if (x := _left_out(names[i], names[0], i in shown, missing[i], len(keys),
                                                 unshared[i]))]
    if not shown:
        raise CompareError("; ".join(left))
    rows = adjust(rows, alpha)
    ranked = tuple(Ranked(label, key[1], tuple(_side_summary(names[i], [idx[r][key] for r in sides[i]], i == 0,
                                                             None if j is None else rows[j], note)
                                               for i, j, note in parts), unit)
                   for label, key, unit, parts in pending)  # the verdicts adjusted over the table
    return StoredComparison(tuple(tuple(s) for s in sides), tuple(rows), ranked, left_out=tuple(left))


def judge_stored(targets: Sequence[str], store: Store, baseline: str | None = None, alpha: float = ALPHA,
                 include_disturbed: bool = False) -> StoredComparison:
    """`compare RUN RUN …` / `gN gM`: every side's stored results judged against the first (or
    ``baseline``, one of the sides), however many sides. Raises ExperimentError for fewer than
    two sides, CompareError for a baseline not among them, a run or group not stored, a run given
    twice, nothing comparable (compare_runs)."""
    if len(targets) < 2:
        raise ExperimentError("compare of stored runs takes at least two sides: RUN[,RUN...] or gGROUP each")
    sides = [run_side(t, store) or [] for t in targets]
    _distinct(sides)  # before the baseline is looked for: `1 1 --baseline 1` is the repeat, not the baseline
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
        raise ExperimentError(f"compare --by host needs runs of two hosts or more; the runs chosen in {store.url} "
                              f"are of {len(sides)} host{'s' * (len(sides) != 1)} ({', '.join(sides) or 'none'})")
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
