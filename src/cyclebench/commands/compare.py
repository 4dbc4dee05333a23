"""`cyclebench compare`: run benchmarks side by side and judge them, or judge two stored runs.

Benchmarks of one binary are measured together, alternating batch by batch
(engine/measure.c), their rounds spread over several runner processes with the order
reversed in every other one (interleave.py), once per parameter; every result is stored
like a `run` result (variant "compare"), and each benchmark after the first is compared
with the first (compare.paired, CI bootstrapped over processes), p-values Holm-adjusted
across all comparisons of the command.
Two stored runs: every (benchmark, parameter, variant) present in both is compared with
compare.unpaired over the per-round costs recomputed from the stored samples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cyclebench.commands.run import Prepared, RunConfig, begin, result_fields, sample_rows
from cyclebench.env import sysinfo
from cyclebench.model import OK, Comparison
from cyclebench.report.console import fmt
from cyclebench.runner import interleave
from cyclebench.runner.plan import SelectionError
from cyclebench.stats import clock
from cyclebench.stats.ab import ALPHA, holm, paired, unpaired, with_adjusted_p
from cyclebench.store import Store


class CompareError(Exception):
    """A comparison cannot be made (a side failed, too few rounds, nothing in common)."""


@dataclass
class Row:
    a: str
    b: str
    param: int | None
    unit: str
    cmp: Comparison | None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "param": self.param, "unit": self.unit,
                "comparison": self.cmp.to_dict() if self.cmp else None, "note": self.note}


def _groups(prepared: Prepared, names: Sequence[str], params: Sequence[int]) -> list[tuple[int | None, list[str]]]:
    """(param, benchmarks) sets to measure together: one per parameter."""
    info = {b.name: b for b in prepared.runner.list()}
    for n in names:
        if n not in info:
            raise SelectionError(f"unknown benchmark '{n}' (see cyclebench run --list)")
    takes = {bool(info[n].params) for n in names}
    if len(takes) > 1:
        raise SelectionError("cannot compare a benchmark that takes a parameter with one that does not")
    if takes == {False}:
        if params:
            raise SelectionError("these benchmarks take no parameter (-p)")
        return [(None, list(names))]
    if not params:
        common = set(info[names[0]].params or ())
        for n in names[1:]:
            common &= set(info[n].params or ())
        params = sorted(common)
        if not params:
            raise SelectionError("these benchmarks share no parameter: pass -p")
    return [(p, list(names)) for p in params]


def execute(
    cfg: RunConfig, prepared: Prepared, store: Store, names: Sequence[str], params: Sequence[int],
    alpha: float = ALPHA, on_done: Callable[[int | None], None] = lambda _p: None, processes: int = 4,
) -> tuple[int, list[Row], list[dict[str, Any]]]:
    """Measure and compare, the rounds of each set spread over ``processes`` runner
    processes. Returns (run id, comparison rows, stored result rows)."""
    groups = _groups(prepared, names, params)
    run_id, rate = begin(cfg, prepared, store)
    rows: list[Row] = []
    results: list[dict[str, Any]] = []
    with store.finishing(run_id):
        for param, benches in groups:
            outs, procs = interleave.measure(prepared.runner, [(b, param) for b in benches], cfg.options, processes)
            costs = []
            good = [o.result for o in outs if o.status == OK and o.result]
            shared = iter(clock.shared_round_ratio(good))  # one clock per round for all sides
            for o in outs:
                fields = result_fields(o, rate, "compare")
                fields["id"] = store.add_result(run_id, fields, sample_rows(o.result))
                results.append(fields)
                costs.append(clock.round_costs(o.result, next(shared)) if o.status == OK and o.result else None)
            base = costs[0]
            for b, o, c in zip(benches[1:], outs[1:], costs[1:], strict=True):
                if base is None or c is None:
                    bad = outs[0] if base is None else o
                    rows.append(Row(benches[0], b, param, "", None, f"{bad.bench}: {bad.status}: {bad.reason}"))
                    continue
                ok = [i for i in range(min(len(base[0]), len(c[0]))) if base[0][i] == base[0][i] and c[0][i] == c[0][i]]
                try:
                    g = procs[ok] if len(procs) == len(base[0]) else None
                    cmp = paired(base[0][ok], c[0][ok], alpha=alpha, groups=g)
                except ValueError as e:
                    rows.append(Row(benches[0], b, param, base[1], None, str(e)))
                    continue
                rows.append(Row(benches[0], b, param, base[1], cmp, process_note(base[0][ok], c[0][ok], g)))
            on_done(param)
    _adjust(rows, alpha)
    store.update_run(run_id, summary={"compare": [r.to_dict() for r in rows]})
    store.finish_run(run_id, "complete")
    return run_id, rows, results


PROCESS_SPREAD = 0.05  # per-process medians of A further apart than this (relative) are worth a note


def process_note(a: np.ndarray, b: np.ndarray, groups: np.ndarray | None) -> str:
    """A note when the processes disagree: A's per-process medians spread by more than 5%
    of its median, with the range of the per-process median differences; empty otherwise.
    On the AMD VM copy/rep_movsb at 4096 B cost 157 cycles~ in some processes and 220–300
    in others, with the buffers at the same virtual page offsets in every process: physical
    placement or the host's state, which a single process cannot average out."""
    if groups is None or len(np.unique(groups)) < 2:
        return ""
    ga = [float(np.median(a[groups == k])) for k in np.unique(groups)]
    gd = [float(np.median((b - a)[groups == k])) for k in np.unique(groups)]
    mid = float(np.median(a))
    if not mid or (max(ga) - min(ga)) / abs(mid) <= PROCESS_SPREAD:
        return ""
    return (f"A differs by process: {fmt(min(ga))}–{fmt(max(ga))}; Δ per process {min(gd):+.3g} to "
            f"{max(gd):+.3g} ({len(ga)} processes)")


def _adjust(rows: list[Row], alpha: float) -> None:
    judged = [r for r in rows if r.cmp is not None]
    for r, p in zip(judged, holm([r.cmp.p for r in judged if r.cmp]), strict=True):
        if r.cmp is not None:
            r.cmp = with_adjusted_p(r.cmp, p, alpha)


def _stored_result(store: Store, row: dict[str, Any]) -> dict[str, Any]:
    s = store.samples(row["id"])
    extra = row.get("extra") or {}
    return {**extra, "unit": row.get("unit"), "n": [x[0] for x in s], "ticks": [x[1] for x in s],
            "cal": [x[2] for x in s] if s and s[0][2] is not None else None, "disturbed": [x[3] for x in s]}


def compare_runs(store: Store, run_a: int, run_b: int, alpha: float = ALPHA) -> list[Row]:
    """Every ok result present in both stored runs, A = run_a, compared unpaired."""
    for rid in (run_a, run_b):
        if store.get_run(rid) is None:
            raise CompareError(f"no run {rid} in {store.url}")

    def index(rid: int) -> dict[tuple[str, Any, str], dict[str, Any]]:
        return {(r["bench"], r["param"], r["variant"]): r for r in store.results(rid) if r["status"] == OK}

    ia, ib = index(run_a), index(run_b)
    keys = [k for k in ia if k in ib]
    if not keys:
        raise CompareError(f"runs {run_a} and {run_b} have no valid result in common")
    rows = []
    for key in keys:
        ca, ua = clock.round_costs(_stored_result(store, ia[key]))
        cb, ub = clock.round_costs(_stored_result(store, ib[key]))
        label = key[0] + (f" [{key[2]}]" if key[2] else "")
        if ua != ub:
            rows.append(Row(f"#{run_a}", f"#{run_b}", key[1], ua, None, f"{label}: units differ ({ua} vs {ub})"))
            continue
        try:
            rows.append(Row(f"{label} #{run_a}", f"#{run_b}", key[1], ua, unpaired(ca, cb, alpha=alpha)))
        except ValueError as e:
            rows.append(Row(f"{label} #{run_a}", f"#{run_b}", key[1], ua, None, str(e)))
    _adjust(rows, alpha)
    return rows


def default_cpu() -> int:
    return sysinfo.choose_cpu()
