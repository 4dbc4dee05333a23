"""`cyclebench run`'s design (also compare's and variants'): the run's configuration, building
and planning (prepare, with one runner per allocator), measuring in passes over processes with
an optional precision target (execute: Theil–Sen slopes over rounds of ≥ 3 processes,
docs/method.md §5), and the host's run-to-run spread beside each row.

Each item's result is stored the moment it is analysed; the caller gets callbacks for its
progress display. KeyboardInterrupt marks the run 'interrupted' and propagates: every
finished result is already committed.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cyclebench.build import Binary, BuildError, BuildSpec, build
from cyclebench.counters.event import Event
from cyclebench.env import sysinfo
from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.history import host_spread, with_spread
from cyclebench.experiments.session import open_run
from cyclebench.model import OK, RUN, SKIPPED, Item, Outcome, Result
from cyclebench.runner import Runner, callgrind, interleave
from cyclebench.runner.plan import MeasureOptions, SelectionError, plan
from cyclebench.stats.result import (
    add_net,
    disturbed_note,
    relative_halfwidth,
    result_fields,
    sample_rows,
    worth_more,
)

if TYPE_CHECKING:
    from cyclebench.build.allocators import Allocator
    from cyclebench.store import Store

LOOP_REFERENCE = "loop/empty"


@dataclass(frozen=True)
class RunConfig:
    """Everything `cyclebench run` was asked to do."""

    spec: BuildSpec
    globs: Sequence[str] = ()
    params: Sequence[int] = ()
    cpu: int | None = None  # None: sysinfo.choose_cpu()
    options: MeasureOptions = field(default_factory=MeasureOptions)
    timeout: float | None = None  # per item; None: options.timeout()
    variant: str = ""
    command: Sequence[str] = ()
    fifo: int | None = None  # SCHED_FIFO priority for the runner
    backend: str = "timing"  # or "callgrind": simulated counts (callgrind.py), no timing
    sim_iters: int = 10  # callgrind: batches of sim_iters and 2·sim_iters operations
    cache: dict[str, tuple[int, int, int]] | None = None  # callgrind cache geometry
    events: list[list[Any]] | None = None  # counter groups (counters.Event) read around every batch
    max_rss: int | None = None  # bytes: a runner whose session's RSS passes this is killed (row 'failed')
    processes: int = 1  # runner processes each benchmark's rounds are spread over (two-level CI when > 1)
    target_ci: float | None = None  # relative half-width of the CI to reach (passes of 10 rounds), None: fixed
    labels: dict[str, str] | None = None  # --label KEY=VALUE: stored with the run (open_run)
    allocators: Sequence[Allocator] = ()  # --allocator: one runner each, every item measured on each
    purpose: str = RUN  # why the run is measured (model.PURPOSES): compare and variants say theirs


@dataclass(frozen=True)
class Prepared:
    binary: Binary
    runner: Runner
    items: list[Item]
    cpu: int
    # with --allocator, per item: the runner it runs on and its variant (the allocator's name)
    runners: tuple[Runner, ...] = ()
    variants: tuple[str, ...] = ()
    allocator: dict[str, dict[str, str | None]] = field(default_factory=dict)  # name → allocators.describe
    skipped: dict[str, str] = field(default_factory=dict)  # allocator not installed → why (the package)


def prepare(cfg: RunConfig) -> Prepared:
    """Build the runner and expand the selection. Raises BuildError, ToolMissing,
    FileNotFoundError, RunnerError, SelectionError — all user-facing, one line each."""
    if cfg.cpu is not None and cfg.cpu not in (allowed := sorted(os.sched_getaffinity(0))):
        raise SelectionError(f"CPU {cfg.cpu} is not available here (allowed: {','.join(map(str, allowed))})")
    binary = build(cfg.spec)
    cpu = cfg.cpu if cfg.cpu is not None else sysinfo.choose_cpu()
    runner = Runner(binary.path, cpu, fifo=cfg.fifo, max_rss=cfg.max_rss)
    benches = runner.list()
    items = plan(benches, cfg.globs, cfg.params)
    # The loop's own cost is measured first in every run, so every result has a net figure.
    ref = Item(LOOP_REFERENCE, None)
    if any(b.name == LOOP_REFERENCE for b in benches):
        items = [ref] + [i for i in items if i != ref]
    prepared = Prepared(binary, runner, items, cpu)
    return _per_allocator(cfg, prepared) if cfg.allocators else prepared


def _per_allocator(cfg: RunConfig, p: Prepared) -> Prepared:
    """``p`` with every item but the loop reference once per installed allocator, each on its own
    runner (the same sources linked with it, its malloc checked at run time: allocators)."""
    from cyclebench.build import allocators  # here: only --allocator needs it

    built: list[tuple[str, Runner]] = []
    skipped: dict[str, str] = {}
    described: dict[str, dict[str, str | None]] = {}
    for alloc in cfg.allocators:
        if why := allocators.missing(alloc, cfg.spec.cc):
            skipped[alloc.name] = why
            continue
        b = build(replace(cfg.spec, ldflags=(*cfg.spec.ldflags, *alloc.ldflags())))
        r = Runner(b.path, p.cpu, fifo=cfg.fifo, max_rss=cfg.max_rss)
        where = r.malloc_file()
        if why := allocators.check_resolved(alloc, where):
            raise BuildError(why)
        described[alloc.name] = allocators.describe(alloc, where)
        built.append((alloc.name, r))
    items: list[Item] = []
    runners: list[Runner] = []
    variants: list[str] = []
    for it in p.items:
        pairs = [("", p.runner)] if it.bench == LOOP_REFERENCE else built
        for name, r in pairs:
            items.append(it)
            runners.append(r)
            variants.append(name)
    return replace(p, items=items, runners=tuple(runners), variants=tuple(variants),
                   allocator={**p.allocator, **described}, skipped={**p.skipped, **skipped})


def begin(cfg: RunConfig, prepared: Prepared, store: Store) -> tuple[int, float]:
    """Open the run of `run`, `compare` and `variants` (see open_run), with ``cfg.labels``.
    Returns (run id, timer Hz)."""
    return open_run(store, cfg.command, prepared.cpu, cfg.spec.sources, prepared.binary, prepared.runner,
                    labels=cfg.labels, purpose=cfg.purpose)


def pass_plan(cfg: RunConfig) -> tuple[int, int]:
    """(rounds per pass, passes planned): with --target-ci, passes of a quarter of --repeat
    (10 of the default 40, at least interleave.MIN_ROUNDS); else --repeat split over --processes."""
    if cfg.target_ci:
        rounds = max(interleave.MIN_ROUNDS, math.ceil(cfg.options.repeat / 4))
        return rounds, math.ceil(cfg.options.repeat / rounds)
    plan = interleave.split(cfg.options.repeat, cfg.processes)
    return plan[0], len(plan)


def execute(
    cfg: RunConfig,
    prepared: Prepared,
    store: Store,
    on_start: Callable[[Item], None] = lambda _i: None,
    on_done: Callable[[Item, Result], None] = lambda _i, _r: None,
    on_open: Callable[[int], None] = lambda _r: None,
) -> tuple[int, list[Result]]:
    """Measure every item and store each result as it comes (its ``plan_index``: the item's
    place in ``prepared.items``). Returns (run id, the records in the order they were stored).
    ``on_open`` gets the run id as soon as the run row exists (for an interrupt message).

    Each benchmark's rounds are spread over ``cfg.processes`` runner processes, taken in
    passes over all benchmarks, so one benchmark's processes span the run (a bias that holds
    for a whole process, or for a minute of the host, then widens its CI instead of hiding in
    it). A benchmark is stored when its last process ends; on Ctrl-C, those with some
    processes done are stored too, marked partial (k of P)."""
    run_id, rate = begin(cfg, prepared, store)
    on_open(run_id)
    rows: list[Result] = []

    def stored(fields: Mapping[str, Any], samples: Any = ()) -> Result:
        rows.append(store.record(run_id, fields, samples))
        return rows[-1]

    if cfg.backend == "callgrind":
        with store.finishing(run_id):
            for i, item in enumerate(prepared.items):
                on_start(item)
                binary = prepared.runners[i].binary if prepared.runners else prepared.binary.path
                outcome = callgrind.simulate(binary, item.bench, item.param, cfg.sim_iters, cfg.cache,
                                            timeout=cfg.timeout or 600.0, cpu=prepared.cpu)
                variant = prepared.variants[i] if prepared.variants else cfg.variant
                on_done(item, stored(replace(callgrind.result_fields(outcome, variant), plan_index=i)))
        store.finish_run(run_id, "complete")
        return run_id, rows
    loop: Result | None = None
    items = prepared.items
    for it in dict.fromkeys(i for i in items if i.bench != LOOP_REFERENCE):  # allocators not installed
        for name, why in prepared.skipped.items():
            stored(Result(bench=it.bench, param=it.param, variant=name, status=SKIPPED, reason=why))

    def keep(i: int, outs: list[Outcome], partial: bool) -> None:
        nonlocal loop
        combined = interleave.combine(outs)
        variant = prepared.variants[i] if prepared.variants else cfg.variant
        fields = result_fields(combined, rate, variant, cfg.events)
        if variant in prepared.allocator:
            fields = replace(fields, allocator=prepared.allocator[variant])
        if partial:
            fields = replace(fields, partial=f"{len(outs)} of {pass_plan(cfg)[1]} processes")
        if items[i].bench == LOOP_REFERENCE and fields.status == OK:
            loop = fields
        # stored when its last pass ends: the plan's order kept (model.suite_order)
        fields = replace(add_net(fields, loop), plan_index=i)
        on_done(items[i], stored(fields, sample_rows(combined.result)))

    precision = None
    if cfg.target_ci:
        target = cfg.target_ci
        rounds, planned = pass_plan(cfg)
        most = 2 * max(cfg.processes, planned)

        def needs_more(i: int, outs: list[Outcome]) -> bool:
            if items[i].bench == LOOP_REFERENCE:  # done first (it is first and never extended): net needs it
                return False
            res = interleave.combine(outs).result
            return disturbed_note(res) is None and worth_more(relative_halfwidth(res), target, len(outs), most)

        # at least --processes passes, but no more rounds than --repeat asked for when it is small
        precision = interleave.Precision(needs_more, rounds=rounds, min_passes=min(cfg.processes, planned),
                                         max_passes=most)
    with store.finishing(run_id):
        interleave.in_passes(prepared.runners or prepared.runner, [(it.bench, it.param) for it in items],
                             cfg.options, cfg.processes, keep, cfg.timeout, cfg.events,
                             on_start=lambda i: on_start(items[i]), precision=precision)
    store.finish_run(run_id, "complete")
    return run_id, rows


def run_to_run(store: Store, run_id: int, rows: Sequence[Result]) -> list[Result]:
    """The records with this host's run-to-run (sd, df) per benchmark, from earlier replicate
    groups of the same build (experiments.history), in their ``run_to_run`` for the table
    (new records; the stored ones keep none: it is the host's, not the run's)."""
    return with_spread(rows, host_spread(store, store.get_run(run_id) or {}, {run_id}))


def counting(events_spec: str | None, cache_spec: str | None,
             backend: str) -> tuple[list[list[Event]] | None, dict[str, tuple[int, int, int]]]:
    """-e's event groups (perf syntax, counters/events.py) and --cache's geometry parsed, and
    valgrind's presence checked under ``backend`` callgrind, before anything is built. Raises
    ExperimentError with the one line that says what is wrong."""
    from cyclebench import counters

    try:
        groups = counters.parse_events(events_spec) if events_spec else None
        cache = callgrind.parse_cache(cache_spec)
        if backend == "callgrind":
            callgrind.valgrind_argv(Path("x"), cache)  # fails early, in one line, without valgrind
    except (counters.EventError, callgrind.SimulationError) as e:
        raise ExperimentError(str(e)) from None
    return groups, cache


def check_events(runner: Runner, groups: Sequence[Sequence[Event]]) -> str | None:
    """Open the requested groups once before measuring: a machine that cannot count them gets
    one line now (ExperimentError when no group opens and hardware events were asked for: no
    PMU exposed, as in most VMs), not a table of holes later. Returns the warning to print when
    only some groups cannot be counted, else None."""
    errors = runner.probe([list(g) for g in groups])
    failed = [(g, e) for g, e in zip(groups, errors, strict=True) if e]
    if not failed:
        return None
    hw = [g for g, _ in failed if any(ev.is_hardware for ev in g)]
    names = ", ".join(ev.name for g, _ in failed for ev in g)
    if len(failed) == len(groups) and hw:
        raise ExperimentError(f"hardware events are not available here ({names}: {failed[0][1]}; no PMU exposed, "
                              "as in most VMs): use --backend callgrind for simulated counts, or software events "
                              "(task-clock, context-switches, page-faults)")
    return f"cyclebench: not countable here, left out of the table: {names} ({failed[0][1]})"
