"""Exact counts between revisions: a benchmark's instructions per op (callgrind's Ir) in each
build, read twice (docs/revisions.md, docs/ci.md). Shared by `ci --gate counts|both`,
`compare --rev … --backend callgrind` and `bisect --backend callgrind`.

Under callgrind the runner's ``--sim`` mode counts two batches, of N and 2N operations, and the
per-op count is their difference over N (runner/callgrind.py), so fixed costs cancel and the
figure is the same on every machine and every run: a shared CI runner's speed never enters it.
Each side is read twice all the same: a count that differs between its readings (a benchmark
whose work depends on time, addresses or the environment) is "not exact" and decides nothing.
No timing runs: the verdict is the relative change of Ir per op against a threshold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.revcompare import RevCompare, Workspace, must_build
from cyclebench.experiments.revisions import Built
from cyclebench.experiments.revpair import Sides, open_sitting
from cyclebench.model import OK, Comparison, ComparisonRow, Item, Outcome

__all__ = ["NOT_EXACT", "READINGS", "UNIT", "Count", "compare_counts", "comparison", "count", "counts_row",
           "need_valgrind", "store_counts"]

READINGS = 2  # per side: two readings that agree are what "exact" means here
UNIT = "Ir"  # the unit of run --backend callgrind's rows: instructions (per op)
NOT_EXACT = "not exact"  # the verdict of a pair whose readings differ: none


@dataclass(frozen=True)
class Count:
    """A benchmark's Ir per op in one build: ``readings`` (Ir/op, in the order read; fewer than
    READINGS when one failed), ``reason`` why there is no count (the failed reading's status and
    reason) or why it is not exact, and the first reading's ``outcome`` (every event per op: the
    cache and branch simulation's too; what is stored)."""

    readings: tuple[float, ...]
    reason: str | None = None
    outcome: Outcome | None = None

    @property
    def ir(self) -> float | None:
        """Ir per op (the first reading), None when a reading failed."""
        return self.readings[0] if len(self.readings) == READINGS else None

    @property
    def exact(self) -> bool:
        """Every reading gave the same count."""
        return len(self.readings) == READINGS and len(set(self.readings)) == 1


def need_valgrind() -> None:
    """ExperimentError (one line, exit 2) when valgrind is missing: said before anything is built."""
    from cyclebench.runner.callgrind import DEFAULT_CACHE, SimulationError, valgrind_argv

    try:
        valgrind_argv(Path("x"), DEFAULT_CACHE)
    except SimulationError as e:
        raise ExperimentError(str(e)) from None


def count(ws: Workspace, b: Built, item: Item, cpu: int) -> Count:
    """Ir per op of ``item`` in ``b``, read READINGS times under callgrind, confined as the
    revision's runner is (its sandbox; callgrind's output written in its checkout). Raises
    runner.callgrind.SimulationError when valgrind is missing."""
    from cyclebench.runner.callgrind import simulate

    assert b.binary is not None
    launcher = ws.recipe.confine.sandbox([b.directory], [b.binary.path.parent])
    readings: list[float] = []
    first: Outcome | None = None
    for _ in range(READINGS):
        o = simulate(b.binary.path, item.bench, item.param, cpu=cpu, launcher=launcher or None,
                     workdir=b.directory if launcher else None)
        first = first or o
        if o.status != OK or not o.result:
            return Count(tuple(readings), f"{o.status}: {o.reason}", first)
        readings.append(float((o.result.get("events") or {}).get(UNIT, 0.0)))
    differ = None if len(set(readings)) == 1 else (
        f"two readings differ: {' and '.join(f'{x:g}' for x in readings)} Ir/op")
    return Count(tuple(readings), differ, first)


def comparison(a: Count, b: Count, threshold: float) -> Comparison | None:
    """B against A in Ir per op: Δ and Δ% of the first readings, the margin ``threshold``
    (relative) of A's. Exact on both sides: slower or faster when |Δ%| exceeds the threshold,
    else equivalent, the interval Δ itself (the tables print "exact"). A side not exact: the
    verdict NOT_EXACT, the interval the range of Δ over the readings. None when a side has no
    count."""
    if a.ir is None or b.ir is None:
        return None
    diff = b.ir - a.ir
    rel = diff / a.ir if a.ir else math.nan
    margin = threshold * abs(a.ir)
    if not (a.exact and b.exact):
        return Comparison(a.ir, b.ir, diff, min(b.readings) - max(a.readings), max(b.readings) - min(a.readings),
                          rel, 1.0, READINGS, margin, NOT_EXACT)
    verdict = "slower" if diff > margin else "faster" if diff < -margin else "equivalent"
    # p is no probability here (no spread to test): 0 where the counts differ beyond the margin, as
    # experiments/stored.exact_comparison has it for stored callgrind runs
    return Comparison(a.ir, b.ir, diff, diff, diff, rel, 0.0 if verdict != "equivalent" else 1.0, READINGS, margin,
                      verdict)


def counts_row(a_name: str, b_name: str, item: Item, a: Count, b: Count, threshold: float) -> ComparisonRow:
    """compare's row (model.ComparisonRow, unit Ir, per op) of two counts of ``item``; no
    comparison (None) when a side did not run, its note saying which and why."""
    cmp = comparison(a, b, threshold)
    if cmp is None:
        why = "; ".join(f"{side}: {c.reason}" for side, c in (("A", a), ("B", b)) if c.ir is None)
        return ComparisonRow(a_name, b_name, item.param, UNIT, None, f"not counted: {why}")
    note = ("exact: callgrind, each side read twice alike" if cmp.verdict != NOT_EXACT else
            "; ".join(f"{side}: {c.reason}" for side, c in (("A", a), ("B", b)) if c.reason))
    return ComparisonRow(a_name, b_name, item.param, UNIT, cmp,
                         f"{note}; threshold {100 * threshold:g}% of A's Ir/op")


def store_counts(store: Any, run_id: int, counts: Sequence[Count], sides: Sides) -> None:
    """One result row per side (runner.callgrind.result_fields: kind simulated, per op = Ir,
    every event in ``simulated``), each with its revision; a count not exact says so in its
    reason."""
    from cyclebench.runner.callgrind import result_fields

    for s, c in enumerate(counts):
        if c.outcome is None:
            continue
        fields = replace(result_fields(c.outcome, sides.variants[s]), revision=sides.built[s].revision.sha)
        if c.outcome.status == OK and not c.exact and c.reason:
            fields = replace(fields, reason=f"{NOT_EXACT}: {c.reason}")
        store.add_result(run_id, fields)


def compare_counts(ws: Workspace, revs: Sequence[str], threshold: float, store: Any, labels: dict[str, str],
                   command: Sequence[str]) -> RevCompare:
    """`compare --rev A --rev B --backend callgrind`: build both revisions, count every selected
    benchmark in each (``count``), one row per benchmark judged against ``threshold`` (relative:
    0.005 = 0.5% of A's Ir/op). Stored as `compare --rev` stores a sitting (purpose revision,
    labelled rev=B, base=A; A's rows variant ``base``), its rows of kind simulated. Raises
    ExperimentError (a revision that does not resolve or build, a selection that matches
    nothing), runner.callgrind.SimulationError (no valgrind)."""
    need_valgrind()
    a, b = (ws.repo.resolve(r) for r in revs)
    built = [must_build(ws, a, "A"), must_build(ws, b, "B")]
    cpu = ws.cpu()
    sides = Sides(built, [ws.runner(x, cpu) for x in built], ["base", ""], cpu)
    items = ws.items(built[0], cpu)
    run_id, _ = open_sitting(store, sides, 1, command, {**labels, "rev": b.sha, "base": a.sha},
                             ws.revisions(a=a.sha, b=b.sha), timed=False)
    rows: list[ComparisonRow] = []
    with store.finishing(run_id):
        for item in items:
            got = []
            for side, bt in zip("AB", built, strict=True):
                ws.progress.step(f"{item.label}: counting {side} under callgrind")
                got.append(count(ws, bt, item, cpu))
            store_counts(store, run_id, got, sides)
            rows.append(counts_row(f"{item.bench} @ {a.short}", f"{item.bench} @ {b.short}", item, got[0], got[1],
                                   threshold))
    how = (f"revisions {a.short} → {b.short}, instructions per op counted under callgrind, each side read "
           f"{READINGS}× · slower/faster beyond ±{100 * threshold:g}% of A")
    store.update_run(run_id, summary={"compare": [r.to_dict() for r in rows],
                                      "display": {"design": how}, "counts": {"threshold": threshold}})
    store.finish_run(run_id, "complete")
    return RevCompare(run_id, a, b, rows, cpu, how)
