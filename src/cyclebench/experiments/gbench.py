"""`compare --gbench OLD NEW`: two builds of a Google Benchmark executable judged as `compare --rev`
judges two revisions (experiments/revpair.py, docs/revisions.md): per benchmark they share,
rounds of one invocation of each build in a freshly shuffled order, each invocation pinned and
selecting exactly that benchmark for a short minimum time (runner/gbench.py), its figure the
library's real time per iteration (ns); the per-round ratios judged with the sequential rule,
its repeated CI and alpha spending within ``--budget``, α split over the benchmarks (Bonferroni),
the margin 0.5% of A (two builds differ in code layout: revcompare.margin_of).

google/benchmark's compare.py tests repetitions measured one binary after the other
(Mann–Whitney U); here the builds alternate, so the host's drift falls on both alike."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.progress import SILENT, Progress
from cyclebench.experiments.revcompare import compare_rule, margin_of
from cyclebench.experiments.revpair import Design, Sitting, measure, relative_row
from cyclebench.model import OK, ComparisonRow, Item, Outcome
from cyclebench.runner.gbench import Gbench, GbenchError, GbenchRun
from cyclebench.runner.plan import MeasureOptions

MIN_TIME = 0.01  # seconds a benchmark runs per invocation (~10 ms: 3 invocations a second with its start)


def run_of(o: Outcome) -> GbenchRun | None:
    """The GbenchRun an invocation's Outcome carries (runner/gbench.py), None without one."""
    got = o.lines[0].get("gbench") if o.lines else None  # type: ignore[union-attr]
    return got if isinstance(got, GbenchRun) else None


def cost(o: Outcome) -> tuple[float, str]:
    """An invocation's figure for revpair.measure: real ns per iteration."""
    r = run_of(o)
    return (r.real_ns, "ns") if o.status == OK and r is not None else (float("nan"), "")


@dataclass(frozen=True)
class Side:
    """One build as revpair.measure's runner: Runner.run's signature over a Gbench; ``seen`` keeps
    every invocation's GbenchRun per benchmark (the cycles~ beside the ns)."""

    binary: Gbench
    min_time: float = MIN_TIME
    seen: dict[str, list[GbenchRun]] = field(default_factory=dict)

    def run(self, bench: str, param: int | None, opts: MeasureOptions, timeout: float) -> Outcome:
        o = self.binary.run(bench, self.min_time)
        r = run_of(o)
        if r is not None:
            self.seen.setdefault(bench, []).append(r)
        return o


@dataclass(frozen=True)
class GbenchCompare:
    """What `compare --gbench` measured: one row per shared benchmark, those only in OLD
    (``removed``) or only in NEW (``new``), the CPU, and the design in words."""

    rows: list[ComparisonRow]
    removed: list[str]
    new: list[str]
    cpu: int
    design: str


def compare_binaries(old: Path, new: Path, pattern: str | None, design: Design, equivalence: float, cpu: int,
                     timeout: float, progress: Progress = SILENT) -> GbenchCompare:
    """Judge NEW against OLD per shared benchmark (module doc). ExperimentError (one line): not a
    Google Benchmark executable, another architecture's, a filter that matches nothing in
    either."""
    try:
        sides = [Gbench(p, cpu, timeout) for p in (old, new)]
        listed = [s.names(pattern) for s in sides]
    except GbenchError as e:
        raise ExperimentError(str(e)) from None
    shared = [n for n in listed[0] if n in set(listed[1])]
    removed = [n for n in listed[0] if n not in set(listed[1])]
    added = [n for n in listed[1] if n not in set(listed[0])]
    if not shared:
        what = f"--filter {pattern!r} " if pattern else ""
        raise ExperimentError(f"{what}matches no benchmark the two executables share"
                              + (f" (only in {old.name}: {len(removed)}, only in {new.name}: {len(added)})"
                                 if removed or added else ""))
    design = replace(design, alpha=design.alpha / len(shared))
    runners = [Side(s) for s in sides]
    rule = compare_rule(equivalence)
    rows: list[ComparisonRow] = []

    def keep(sit: Sitting) -> None:
        lk = sit.last((0, 1))
        row = relative_row(sit, (0, 1), f"{sit.item.bench} @ {old.name}", f"{sit.item.bench} @ {new.name}",
                           sit.verdict, design.alpha, margin_of(lk) if lk else 0.0,
                           {"equivalence": equivalence, "margin_rule": "0.5% of A"})
        rows.append(_with_cycles(_with_counters(row, sit), [r.seen.get(sit.item.bench, []) for r in runners]))

    items = [Item(n, None) for n in shared]
    measure(runners, items, [(0, 1)], design, rule, progress, keep, timeout=timeout, cost=cost)
    how = (f"Google Benchmark executables {old.name} → {new.name}, paired invocations · CPU {cpu} · sequential "
           f"(budget {design.budget:g} s a benchmark, O'Brien–Fleming alpha spending, repeated CI, margin 0.5% of A, "
           f"equivalent within ±{100 * equivalence:g}%) · real time per iteration as the library measured it, "
           f"{MIN_TIME:g} s an invocation")
    return GbenchCompare(rows, removed, added, cpu, how)


def _with_counters(row: ComparisonRow, sit: Sitting) -> ComparisonRow:
    """The row with the last invocation's user counters of each side in its note (items/s and
    bytes/s among them: what the library computed, carried through)."""
    got: list[dict[str, Any]] = []
    for o in sit.outcomes:
        r = run_of(o)
        got.append(r.counters if r is not None else {})
    names = sorted(set(got[0]) | set(got[1])) if len(got) == 2 else []
    if not names:
        return row
    text = "; ".join(f"{k} {got[0].get(k, float('nan')):.4g} → {got[1].get(k, float('nan')):.4g}" for k in names)
    return replace(row, note=f"{row.note}; counters: {text}" if row.note else f"counters: {text}")


def _with_cycles(row: ComparisonRow, seen: list[list[GbenchRun]]) -> ComparisonRow:
    """The row with each side's median cycles~ per iteration in its note — the library's ns × the
    core clock measured around that invocation, in its own process (runner/gbench.py) — or why
    there is none; the verdict stays the ns's."""
    import numpy as np

    cycles = [[c for r in runs if (c := r.cycles) is not None] for runs in seen]
    if all(cycles):
        text = (f"cycles~ (ns × the core clock around each invocation): {np.median(cycles[0]):.4g} → "
                f"{np.median(cycles[1]):.4g}")
    else:
        why = next((r.no_clock for runs in seen for r in runs if r.no_clock), "no invocation")
        text = f"no cycles~: {why}; ns only"
    return replace(row, note=f"{row.note}; {text}" if row.note else text)
