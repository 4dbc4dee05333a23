"""Benchmarks measured together, their rounds spread over several runner processes.

Why several processes: on the project's AMD EPYC VM an A/A comparison (a 300-cycle add
chain against itself) measured in one process was biased by up to ±3 cycles~ for the
whole process (all six 10-round segments of a 60-round run on one side), so a test over
its rounds, which takes them as independent, called 3 of 40 identical pairs different at
α = 0.002. Process-level effects (memory layout, the host's phase relative to the
batches) are what Mytkowicz et al., "Producing wrong data without doing anything
obviously wrong!" (ASPLOS 2009), describe and why pyperf spawns many worker processes.

So the rounds are split over ``processes`` runner processes (``runner.run_many`` each:
batches alternate ABBA within a process), the benchmark order is reversed in every other
process (counterbalanced), and each round keeps the index of its process so that
compare.paired can bootstrap over processes. The outcomes of one benchmark are merged into
one (samples concatenated in process order, so rounds stay whole and in step across the
benchmarks).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from cyclebench.model import OK, Outcome, RunnerResult
from cyclebench.runner import Runner
from cyclebench.runner.plan import MeasureOptions

MIN_ROUNDS = 5  # rounds per process at least: fewer processes when the rounds are few
SAFE_ROUNDS = 10  # below this per process, A/A false positives were seen (docs/method.md §5)
SUMMED = ("rounds", "measured_ns", "total_iters", "warmup_ns", "sizing_ns", "irqs")


def split(repeat: int, processes: int) -> list[int]:
    """Rounds per process: ``repeat`` rounds over at most ``processes`` processes of at
    least MIN_ROUNDS rounds each (all of them in one process when too few). E.g.
    split(60, 4) == [15, 15, 15, 15], split(8, 4) == [8]."""
    p = max(1, min(processes, repeat // MIN_ROUNDS))
    each = math.ceil(repeat / p)
    return [each] * p


def merge(results: Sequence[RunnerResult]) -> RunnerResult:
    """One runner result from several of the same benchmark: per-sample lists and counter
    reads concatenated, counts summed, the timer overhead the median of the processes'.
    ``processes`` and ``process_rounds`` say how it was made."""
    if len(results) == 1:
        return {**results[0], "processes": 1, "process_rounds": [results[0].get("rounds")]}
    out = dict(results[0])
    for key in ("n", "ticks", "disturbed"):
        out[key] = [x for r in results for x in (r.get(key) or [])]
    for key in ("cal", "cal_imul"):
        cals = [r.get(key) for r in results]
        out[key] = None if any(c is None for c in cals) else [x for c in cals for x in c]
    pmu = [r.get("pmu_cycles") for r in results]
    out["pmu_cycles"] = None if any(p is None for p in pmu) else [x for p in pmu for x in p]
    if all(r.get("counters") for r in results):
        out["counters"] = {**results[0]["counters"],
                           "reads": [x for r in results for x in r["counters"].get("reads") or []]}
        if all("series" in r["counters"] for r in results):  # decoded per process: join them
            series = [r["counters"]["series"] for r in results]
            out["counters"]["series"] = [None if any(s[e] is None for s in series) else
                                         [x for s in series for x in s[e]] for e in range(len(series[0]))]
    for key in SUMMED:
        if all(isinstance(r.get(key), int) for r in results):
            out[key] = sum(r[key] for r in results)
    tos = [r.get("timer_overhead") or {} for r in results]
    if all(tos):
        out["timer_overhead"] = {k: int(np.median([t[k] for t in tos])) for k in tos[0]}
    out["chains"] = [r.get("chain") for r in results]  # each process's calibration (stats.clock)
    out["processes"] = len(results)
    out["process_rounds"] = [r.get("rounds") for r in results]
    return out


def combine(outs: list[Outcome]) -> Outcome:
    """One benchmark's Outcomes from several processes as one: the first that failed (its
    status and reason), else the merged result with the wall times summed."""
    bad = next((o for o in outs if o.status != OK or o.result is None), None)
    if bad is not None:
        return bad
    results = [o.result for o in outs if o.result is not None]
    return replace(outs[0], result=merge(results), stderr="".join(o.stderr for o in outs),
                   wall_s=sum(o.wall_s for o in outs), lines=[x for o in outs for x in o.lines])


def measure(runner: Runner, items: list[tuple[str, int | None]], opts: MeasureOptions,
            processes: int = 4, on_process: Callable[[int], None] = lambda _i: None,
            ) -> tuple[list[Outcome], np.ndarray]:
    """Measure ``items`` together (see the module docstring). The batches are sized as one
    process would size them (each process gets its share of ``opts.min_time``); each
    process adds its own warm-up and calibration (tens of milliseconds).

    Returns one Outcome per item, in the order given, and the process index of each round
    (1-D int array, one entry per round of the merged results). An item that fails in any
    process gets that process's failing Outcome; the others are still merged. A crash or
    timeout ends the measurement: later processes are not started. KeyboardInterrupt
    propagates (the runner process is killed by run_many).
    """
    plan = split(opts.repeat, processes)
    merged: tuple[list[Outcome], np.ndarray] = ([], np.empty(0, dtype=int))
    for i, got in enumerate(stages(runner, items, opts, plan)):
        merged = got
        on_process(i)
    return merged


def stages(runner: Runner, items: list[tuple[str, int | None]], opts: MeasureOptions,
           plan: Iterable[int]) -> Iterator[tuple[list[Outcome], np.ndarray]]:
    """measure() one process at a time: after each process of ``plan`` (rounds per process,
    any iterable, so a caller may stop or go on as it likes), the merged Outcomes so far and
    the process index of each round. Batches are sized for ``opts.min_time`` over
    ``opts.repeat`` rounds, whatever a process's share. Stops after a process where an item
    failed (its failing Outcome is in what is yielded)."""
    per_item: list[list[Outcome]] = [[] for _ in items]
    rounds_done: list[int] = []
    for i, rounds in enumerate(plan):
        order = list(range(len(items)))[:: -1 if i % 2 else 1]
        sub = replace(opts, repeat=rounds, min_time=opts.min_time * rounds / opts.repeat)  # same batch sizes
        outs = runner.run_many([items[k] for k in order], sub, sub.timeout())
        for k, o in zip(order, outs, strict=True):
            per_item[k].append(o)
        rounds_done.append(rounds)
        merged = [combine(outs) for outs in per_item]
        groups = np.repeat(np.arange(len(rounds_done)), rounds_done)
        ok = [o for o in merged if o.status == OK and o.result]
        if ok:  # a runner may stop a benchmark's rounds early (max_time): count what each process gave
            got = ok[0].result.get("process_rounds") or []
            if len(got) == len(rounds_done) and all(isinstance(r, int) for r in got):
                groups = np.repeat(np.arange(len(rounds_done)), got)
        yield merged, groups
        if any(o.status != OK for o in outs):
            return


@dataclass(frozen=True)
class Precision:
    """Passes until a target precision (``run --target-ci``): passes of ``rounds`` rounds; an
    item may stop after ``min_passes`` when ``needs_more(i, outcomes)`` says it is precise
    enough, and gets more than the planned ones (up to ``max_passes``) while it is not, as
    long as its processes' wall time stays under ``opts.max_time``."""

    needs_more: Callable[[int, list[Outcome]], bool]
    rounds: int = 10
    min_passes: int = 3
    max_passes: int = 12


def in_passes(runner: Runner | Sequence[Runner], items: list[tuple[str, int | None]], opts: MeasureOptions,
              processes: int,
              on_done: Callable[[int, list[Outcome], bool], None], timeout: float | None = None,
              events: Any = None, on_start: Callable[[int], None] = lambda _i: None,
              precision: Precision | None = None) -> None:
    """Measure each item alone, its rounds spread over ``processes`` runner processes taken in
    passes over all items, so one item's processes span the whole measurement (a bias that
    holds for a process, or for a minute of the host, widens its CI instead of hiding in it).

    Each process gets its share of the rounds, of ``min_time``/``max_time`` (the batch sizes
    one process of all rounds would use) and of the warm-up (at least half: 10 ms a process
    was a third of a small benchmark's time at 3 processes). ``on_done(i, outcomes, partial)``
    is called once per item index: when its last process ends or one fails (later passes skip
    it), or, on KeyboardInterrupt, for every item with some processes done (partial=True)
    before the interrupt propagates. ``on_start(i)`` before each process of item i. With
    ``precision``, passes of ``precision.rounds`` rounds, as many as each item needs (Precision).
    ``runner``: one for all items, or one per item (each allocator of `run --allocator` is its
    own binary).
    """
    runners = list(runner) if isinstance(runner, (list, tuple)) else [runner] * len(items)
    if precision is None:
        passes = split(opts.repeat, processes)
        planned, last = len(passes), len(passes)
    else:
        planned = math.ceil(opts.repeat / precision.rounds)
        passes = [precision.rounds] * max(planned, precision.max_passes)
        last = len(passes)
    got: list[list[Outcome]] = [[] for _ in items]
    done: set[int] = set()

    def finish(i: int, partial: bool = False) -> None:
        done.add(i)
        on_done(i, got[i], partial)

    def enough(i: int, k: int) -> bool:
        """After pass k (0-based) of a healthy item: is it finished?"""
        if k + 1 >= last:
            return True
        if precision is None:
            return False
        wall = sum(o.wall_s for o in got[i])
        if k + 1 >= planned and wall + wall / (k + 1) > opts.max_time:
            return True  # another pass would take it past its time cap
        return k + 1 >= precision.min_passes and not precision.needs_more(i, got[i])

    try:
        for k, rounds in enumerate(passes):
            if len(done) == len(items):
                break
            share = rounds / opts.repeat
            sub = replace(opts, repeat=rounds, min_time=opts.min_time * share, max_time=opts.max_time * share,
                          warmup=opts.warmup * max(share, 0.5))
            for i, (bench, param) in enumerate(items):
                if i in done:
                    continue
                on_start(i)
                o = runners[i].run(bench, param, sub, timeout or sub.timeout(), events)
                got[i].append(o)
                if o.status != OK or enough(i, k):
                    finish(i)
    except KeyboardInterrupt:
        for i in range(len(items)):
            if i not in done and got[i]:
                finish(i, partial=True)
        raise
