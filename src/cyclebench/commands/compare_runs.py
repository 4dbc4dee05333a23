"""`cyclebench compare RUN RUN...`: stored runs compared, each run one observation (the runs
are the replicates: stats/runs.py), N sides ranked per benchmark (the ranked
table of Molnar's alignment thread, docs/references.md#icache-alignment-linux-2015)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from cyclebench.experiments.comparison import CompareError, Row, adjust
from cyclebench.experiments.history import estimate_of, host_spread
from cyclebench.model import Result
from cyclebench.stats.ab import ALPHA
from cyclebench.stats.result import usable_for_verdict
from cyclebench.stats.runs import cross_run
from cyclebench.store import Store


def run_side(token: str, store: Store) -> list[int] | None:
    """A side of a stored-run comparison: ``12``, ``4,5,6`` (replicate runs) or ``g4`` (the
    group `run --runs N` made, named by its first run). None when ``token`` is not one."""
    if token[:1] == "g" and token[1:].isdigit():
        members = [r["id"] for r in store.list_runs(None) if r.get("group_id") == int(token[1:])]
        if not members:
            raise CompareError(f"no replicate group {token} in {store.url}")
        return sorted(members)
    parts = token.split(",")
    return [int(x) for x in parts] if all(x.isdigit() for x in parts) else None


def _side_name(store: Store, ids: list[int], with_host: bool = False) -> str:
    """``[host ]labels #ids``: the host (its inventory name in a fleet) when the sides span hosts."""
    run = store.get_run(ids[0]) or {}
    labels = run.get("labels") or {}
    name = ",".join(f"{k}={v}" for k, v in labels.items()) if labels else ""
    host = f"{run.get('host')} " if with_host and run.get("host") else ""
    return host + (name + " " if name else "") + "#" + ",".join(map(str, ids))


def _side_summary(name: str, results: list[Result], baseline: bool, row: Row | None) -> dict[str, Any]:
    """One line of the ranked table: mean of the side's run estimates, their sd (or the one run's
    own CI half-width), the best per-sample cost, and the verdict of its row vs the baseline."""
    vals = [v for v, _ in map(estimate_of, results) if v is not None]
    mean = float(np.mean(vals)) if vals else float("nan")
    if len(vals) > 1:
        spread = float(np.std(vals, ddof=1))
    else:
        r = results[0]
        lo, hi = (r.get("cycles_ci_low"), r.get("cycles_ci_high")) if r.get("cycles_per_op") is not None else (
            r.get("ci_low"), r.get("ci_high"))
        spread = (hi - lo) / 2 if lo is not None and hi is not None else float("nan")
    mins = [r.get("cycles_min") if r.get("cycles_per_op") is not None else r.get("min") for r in results]
    best = min((m for m in mins if m is not None), default=float("nan"))
    cmp = row.cmp if row is not None else None
    return {"name": name, "mean": mean, "spread": spread, "best": best, "baseline": baseline,
            "rel": cmp.rel if cmp else float("nan"), "verdict": cmp.verdict if cmp else ("" if baseline else "-"),
            "note": row.note if row is not None and cmp is None else ""}


def _differences(runs: list[dict[str, Any]]) -> str:
    """What the compared runs do not share (it may be the point, as with two kernels, but is said)."""
    what = {"build (source, flags, compiler)": lambda r: (r.get("build") or {}).get("key"),
            "host": lambda r: r.get("host_id") or r.get("host"), "CPU model": lambda r: r.get("cpu_model")}
    differ = [name for name, f in what.items() if len({f(r) for r in runs}) > 1]
    return f"runs differ in {', '.join(differ)}" if differ else ""


def compare_runs(store: Store, sides: list[list[int]], alpha: float = ALPHA,
                 ranked: dict[tuple[str, Any], list[dict[str, Any]]] | None = None,
                 include_disturbed: bool = False) -> list[Row]:
    """Every valid result present in all sides, each side against the first, across runs
    (stats.runs: runs are the replicates; Holm over the table). ``ranked``, when given, gets
    per benchmark one summary per side for report.ranked (the ranked table)."""
    runs = {}
    for rid in dict.fromkeys(r for side in sides for r in side):  # in the order given
        run = store.get_run(rid)
        if run is None:
            raise CompareError(f"no run {rid} in {store.url}")
        runs[rid] = run

    def index(rid: int) -> dict[tuple[Any, ...], dict[str, Any]]:
        return {(r["bench"], r["param"], r["variant"]): r for r in store.results(rid)
                if usable_for_verdict(r, include_disturbed)}

    idx = {rid: index(rid) for rid in runs}
    keys = [k for k in idx[sides[0][0]] if all(k in idx[r] for side in sides for r in side)]
    if not keys:
        raise CompareError("the runs have no valid result in common")
    spans = len({r.get("host") for r in runs.values()}) > 1
    names = [_side_name(store, side, spans) for side in sides]
    spreads = host_spread(store, runs[sides[0][0]], set(runs))
    prov = _differences(list(runs.values()))
    rows: list[Row] = []
    pending: list[tuple[str, tuple[Any, ...], int]] = []  # ranked entries, made once Holm has adjusted the rows
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
        units = {u for side in est for _, u in side}
        if len(units) > 1:
            rows.append(Row(label, names[1], key[1], "", None, f"units differ ({', '.join(sorted(units))})"))
            continue
        unit = units.pop()
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
    for label, key, first in pending if ranked is not None else ():  # the verdicts adjusted over the table
        ranked[(label, key[1])] = [_side_summary(names[i], [idx[r][key] for r in side], i == 0,  # type: ignore[index]
                                                 rows[first + i - 1] if i else None)
                                   for i, side in enumerate(sides)]
    return rows


def judge_stored(targets: Sequence[str], store: Store, baseline: str | None, alpha: float, include_disturbed: bool,
                 wide: bool, quiet_table: bool) -> tuple[list[Row], str]:
    """`compare RUN RUN …` / `gN gM`: every side's stored results judged against the first (or
    ``baseline``); with more than two sides, the ranked table (report.ranked) per benchmark (not when
    stdout carries an export: ``quiet_table``). Returns (rows, the table's title)."""
    from cyclebench.commands._common import UserError, out
    from cyclebench.report.ranked import ranked_table

    if len(targets) < 2:
        raise UserError("compare of stored runs takes at least two sides: RUN[,RUN...] or gGROUP each")
    try:
        sides = [run_side(t, store) or [] for t in targets]
        if baseline is not None:
            pick = run_side(baseline, store) or []
            if pick not in sides:
                raise CompareError(f"--baseline {baseline} is not one of the sides compared")
            sides.insert(0, sides.pop(sides.index(pick)))
        ranked: dict[tuple[str, Any], list[dict[str, Any]]] = {}
        rows = compare_runs(store, sides, alpha, ranked, include_disturbed)
    except CompareError as e:
        raise UserError(str(e)) from None
    title = "stored runs: each run one observation, t on the run-to-run spread (Kalibera & Jones 2013), Holm"
    if len(sides) > 2 and not quiet_table:  # every side on one line per benchmark, ranked
        for (label, param), entries in ranked.items():
            out.print(ranked_table(label + ("" if param is None else f" [{param}]"), rows[0].unit if rows else "",
                                   entries, wide=wide))
    return rows, title
