"""`compare --gbench OLD NEW`: two builds of a Google Benchmark executable judged as `compare --rev`
judges two revisions (experiments/revpair.py, docs/revisions.md): per benchmark they share,
rounds of one invocation of each build in a freshly shuffled order, each invocation pinned and
selecting exactly that benchmark for a short minimum time (runner/gbench.py), its figure the
library's time per iteration (ns: a one-thread benchmark's cpu time, the time its thread ran;
real time where it asked for it, ran threads or sleeps: Side.run); the per-round ratios judged with the sequential rule,
its repeated CI and alpha spending within ``--budget``, α split over the benchmarks (Bonferroni),
the margin 0.5% of A (two builds differ in code layout: revcompare.margin_of).

google/benchmark's compare.py tests repetitions measured one binary after the other
(Mann–Whitney U); here the builds alternate, so the host's drift falls on both alike."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.progress import SILENT, Progress
from cyclebench.experiments.revcompare import compare_rule, margin_of
from cyclebench.experiments.revpair import Design, Sitting, measure, relative_row
from cyclebench.model import OK, TIMING, ComparisonRow, GbenchCost, Item, Outcome, Result
from cyclebench.runner.gbench import Gbench, GbenchError, GbenchRun
from cyclebench.runner.plan import MeasureOptions

MIN_TIME = 0.01  # seconds a benchmark runs per invocation (~10 ms: 3 invocations a second with its start)
SLEEPS = 0.5  # a benchmark whose invocations ran less of their real time than this on the CPU sleeps by design


def run_of(o: Outcome) -> GbenchRun | None:
    """The GbenchRun an invocation's Outcome carries (runner/gbench.py), None without one."""
    got = o.lines[0].get("gbench") if o.lines else None  # type: ignore[union-attr]
    return got if isinstance(got, GbenchRun) else None


def figures(name: str, runs: Sequence[GbenchRun]) -> tuple[list[float], str]:
    """The figure of each invocation of benchmark ``name`` (ns per iteration, in order) and which
    of the library's times it is. A one-thread benchmark's cpu time — the time its thread ran, so
    another program's time on the CPU never enters it —, unless it asked for real or manual time
    (its name ends /real_time, /manual_time), or sleeps (its invocations ran, by the median, under
    SLEEPS of their real time on the CPU): then, as for ->Threads(n), its real time. Beside
    bench/ci_gate.py's neighbour (5 ms bursts in every 50 ms on the measured CPU, overlapping every
    10 ms invocation) real time found a +3% build 0 times in 5 at 3 s a benchmark, and leaving out
    the invocations a burst had hit 0 in 5; the cpu time 4 in 5 (AMD EPYC Zen 3 guest)."""
    real = [r.real_ns for r in runs]
    if not runs or runs[0].threads != 1:
        return real, "real time (several threads)"
    if name.endswith(("/real_time", "/manual_time")):
        return real, f"real time (the benchmark asked for {name.rsplit('/', 1)[1].replace('_', ' ')})"
    share = [r.cpu_ns / r.real_ns for r in runs if r.real_ns > 0]
    if share and float(np.median(share)) < SLEEPS:
        return real, f"real time (it sleeps: {float(np.median(share)):.0%} of it on the CPU)"
    return [r.cpu_ns for r in runs], "cpu time (its thread's time on the CPU)"


def cost(o: Outcome) -> tuple[float, str]:
    """An invocation's figure for revpair.measure: ns per iteration, the time ``figures`` takes
    (Side.run puts it in the outcome's line)."""
    r = run_of(o)
    if o.status != OK or r is None:
        return float("nan"), ""
    got = o.lines[0].get("figure")
    return (float(got) if isinstance(got, (int, float)) else r.real_ns), "ns"


@dataclass(frozen=True)
class Side:
    """One build as revpair.measure's runner: Runner.run's signature over a Gbench; ``seen`` keeps
    every invocation's GbenchRun per benchmark (the cycles~ beside the ns)."""

    binary: Gbench
    min_time: float = MIN_TIME
    seen: dict[str, list[GbenchRun]] = field(default_factory=dict)

    def run(self, bench: str, param: int | None, opts: MeasureOptions, timeout: float) -> Outcome:
        """One invocation, its figure (``figures`` over this benchmark's invocations so far) in the
        outcome's line for ``cost``."""
        o = self.binary.run(bench, self.min_time)
        r = run_of(o)
        if r is None:
            return o
        runs = self.seen.setdefault(bench, [])
        runs.append(r)
        if o.status != OK:
            return o
        return replace(o, lines=[{**o.lines[0], "figure": figures(bench, runs)[0][-1]}])  # type: ignore[list-item, dict-item]


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
           f"equivalent within ±{100 * equivalence:g}%) · time per iteration as the library measured it (a "
           f"one-thread benchmark's cpu time, else real time), {MIN_TIME:g} s an invocation")
    return GbenchCompare(rows, removed, added, cpu, how)


# ----------------------------------------------------------------------------- run --gbench BIN
PROCESSES = 10  # invocations a benchmark when --processes is not given: the median's CI needs ≥ 6 (median_ci)


@dataclass(frozen=True, kw_only=True)
class GbenchRunConfig:
    """`run --gbench BIN`: the executable, the library's --benchmark_filter regex (None: all), the
    CPU (None: sysinfo.choose_cpu()), invocations a benchmark, seconds each, seconds before one
    is killed, the argv stored, the user's labels."""

    path: Path
    pattern: str | None = None
    cpu: int | None = None
    processes: int = PROCESSES
    min_time: float = MIN_TIME
    timeout: float = 120.0
    command: Sequence[str] = ()
    labels: dict[str, str] = field(default_factory=dict)


def gbench_names(path: Path, pattern: str | None, cpu: int | None, timeout: float) -> tuple[Gbench, list[str]]:
    """The executable and the benchmarks ``pattern`` selects. ExperimentError (one line): not a
    Google Benchmark executable, another architecture's, one that cannot list, a filter that
    matches nothing."""
    try:
        binary = Gbench(path, cpu, timeout)
        names = binary.names(pattern)
    except GbenchError as e:
        raise ExperimentError(str(e)) from None
    if not names:
        raise ExperimentError(f"--filter {pattern!r} matches no benchmark of {path.name}" if pattern
                              else f"{path}: lists no benchmark")
    return binary, names


def measure_binary(cfg: GbenchRunConfig, store: Any, on_step: Callable[[str], None] = lambda _l: None,
                   on_plan: Callable[[int], None] = lambda _n: None) -> tuple[int, list[Result]]:
    """Open a run and store one timing row per benchmark of ``cfg.path`` (unit ns): its
    ``cfg.processes`` invocations one after another, each pinned and selecting that benchmark
    alone for ``cfg.min_time`` s (runner/gbench.py), their figures over invocations
    (stats.invocations.invocation_fields: the median invocation, its order-statistic CI, cycles~
    from each invocation's own core clock) and what the library reported (model.GbenchCost).
    A benchmark's first invocation that does not end OK (a crash, a hang past ``cfg.timeout``,
    the library's own error) ends its measurement and gives its row the status and reason;
    the others go on. Each row is stored as soon as it is measured (Ctrl-C keeps them: the run
    is marked interrupted). ``on_plan`` gets the invocations planned once the benchmarks are
    listed, ``on_step`` each one's label. ExperimentError as gbench_names. Returns (run id, rows)."""
    from cyclebench.env import sysinfo
    from cyclebench.experiments.session import open_run

    cpu = cfg.cpu if cfg.cpu is not None else sysinfo.choose_cpu()
    binary, names = gbench_names(cfg.path, cfg.pattern, cpu, cfg.timeout)
    version = ".".join(map(str, binary.version()))
    on_plan(len(names) * cfg.processes)
    run_id, _rate = open_run(store, cfg.command, cpu, [cfg.path], None, None, env_extra={"gbench": {
        "executable": str(cfg.path), "library_version": version, "filter": cfg.pattern,
        "processes": cfg.processes, "min_time": cfg.min_time}}, labels=cfg.labels)
    rows: list[Result] = []
    with store.finishing(run_id):
        for name in names:
            got: list[GbenchRun] = []
            bad: Outcome | None = None
            wall = 0.0
            for p in range(cfg.processes):
                on_step(f"{name} (invocation {p + 1}/{cfg.processes})")
                o = binary.run(name, cfg.min_time)
                wall += o.wall_s
                r = run_of(o)
                if o.status != OK or r is None:
                    bad = o
                    break
                got.append(r)
            row = stored_row(name, got, bad, str(cfg.path), version, cpu, cfg.min_time, wall)
            rows.append(store.record(run_id, row))
    store.finish_run(run_id, "complete")
    return run_id, rows


def gate_sitting(sides: Sequence[Gbench], name: str, design: Design, rule: Any, progress: Progress, timeout: float,
                 min_time: float = MIN_TIME) -> tuple[Sitting, list[list[GbenchRun]]]:
    """One benchmark of two executables (base, head) measured as `compare --gbench` measures it,
    judged by ``rule`` (the `ci` gate's): the sitting and each side's invocations."""
    runners = [Side(s, min_time) for s in sides]
    sit = measure(runners, [Item(name, None)], [(0, 1)], design, rule, progress, timeout=timeout, cost=cost)[0]
    return sit, [r.seen.get(name, []) for r in runners]


def stored_row(name: str, got: Sequence[GbenchRun], bad: Outcome | None, executable: str, version: str, cpu: int,
               min_time: float, wall_s: float, variant: str = "") -> Result:
    """One benchmark's timing row (unit ns) from the invocations that ended OK (``got``, in order)
    and the first that did not (``bad``: its status and reason are the row's): the figures over
    invocations (stats.invocations) and what the library reported (model.GbenchCost)."""
    from cyclebench.stats.invocations import invocation_fields

    threads = got[0].threads if got else 1
    ns, which = figures(name, got)  # by its name's end: the gate's EXECUTABLE/NAME reads as NAME
    row = Result(kind=TIMING, bench=name, variant=variant, status=bad.status if bad else OK,
                 reason=bad.reason if bad else None, wall_s=wall_s)
    row = invocation_fields(row, ns, [r.ghz for r in got])
    counters = sorted({k for r in got for k in r.counters})
    cost: GbenchCost = {
        "executable": executable, "library_version": version, "processes": len(got), "cpu": cpu,
        "min_time": min_time, "iterations": [r.iterations for r in got], "real_ns": [r.real_ns for r in got],
        "cpu_ns": [r.cpu_ns for r in got], "threads": threads, "figure": which,
        "user_counters": {k: float(np.median([r.counters[k] for r in got if k in r.counters])) for k in counters},
        "core_ghz": [r.ghz for r in got]}
    if row.cycles_per_op is not None:
        cost["cycles_source"] = (f"the ns × the core clock timed by add chains before and after main in each "
                                 f"invocation's own process, on CPU {cpu}")
    elif got:
        cost["no_clock"] = next((r.no_clock for r in got if r.no_clock), None) or \
            "the core clock was not measured in every invocation"
    return replace(row, gbench=cost)


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
    from cyclebench.report.titles import plain

    def said(x: float | None) -> str:
        return "-" if x is None else plain(x)

    text = "; ".join(f"{k} {said(got[0].get(k))} → {said(got[1].get(k))}" for k in names)
    return replace(row, note=f"{row.note}; counters: {text}" if row.note else f"counters: {text}")


def _with_cycles(row: ComparisonRow, seen: list[list[GbenchRun]]) -> ComparisonRow:
    """The row with each side's median cycles~ per iteration in its note — the library's ns × the
    core clock measured around that invocation, in its own process (runner/gbench.py) — or why
    there is none; the verdict stays the ns's."""
    cycles = [[f * r.ghz for f, r in zip(figures(row.a.split(" @ ")[0], runs)[0], runs, strict=True)
               if r.ghz is not None] for runs in seen]
    if all(cycles):
        text = (f"cycles~ (ns × the core clock around each invocation): {np.median(cycles[0]):.4g} → "
                f"{np.median(cycles[1]):.4g}")
    else:
        why = next((r.no_clock for runs in seen for r in runs if r.no_clock), "no invocation")
        text = f"no cycles~: {why}; ns only"
    return replace(row, note=f"{row.note}; {text}" if row.note else text)
