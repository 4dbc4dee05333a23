"""The machinery of `cyclebench run` (also used by compare and variants): the run's
configuration, building and planning (prepare, with one runner per allocator), measuring in
passes over processes with an optional precision target (execute), and the run's progress,
interrupt, report and listing.

Each item's result is stored the moment it is analysed; the caller gets callbacks for its
progress display. KeyboardInterrupt marks the run 'interrupted' and propagates: every
finished result is already committed.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from cyclebench import counters
from cyclebench.build import Binary, BuildError, BuildSpec, allocators, build
from cyclebench.build.allocators import Allocator
from cyclebench.commands._common import (
    UserError,
    err,
    out,
)
from cyclebench.env import sysinfo
from cyclebench.experiments.history import host_spread
from cyclebench.experiments.session import open_run
from cyclebench.model import OK, SIMULATED, SKIPPED, Item, Outcome, suite_order
from cyclebench.report import console as console_report
from cyclebench.runner import Runner, RunnerError, callgrind, interleave
from cyclebench.runner.plan import MeasureOptions, SelectionError, plan
from cyclebench.stats.result import (
    add_net,
    disturbed_note,
    relative_halfwidth,
    result_fields,
    sample_rows,
    worth_more,
)
from cyclebench.store import RunGone, Store, StoreError

LOOP_REFERENCE = "loop/empty"


# 3 processes: within-process bias of ±3 cycles~ seen on a 300-add chain (docs/method.md §5) needs
# more than one process to show in the CI; the extra start-ups cost ~30 ms a benchmark.
DEFAULT_PROCESSES = 3


@dataclass
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


@dataclass
class Prepared:
    binary: Binary
    runner: Runner
    items: list[Item]
    cpu: int
    # with --allocator, per item: the runner it runs on and its variant (the allocator's name)
    runners: list[Runner] = field(default_factory=list)
    variants: list[str] = field(default_factory=list)
    allocator: dict[str, dict[str, Any]] = field(default_factory=dict)  # name → allocators.describe
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
    if cfg.allocators:
        _per_allocator(cfg, prepared)
    return prepared


def _per_allocator(cfg: RunConfig, p: Prepared) -> None:
    """Every item but the loop reference once per installed allocator, each on its own runner
    (the same sources linked with it, its malloc checked at run time: allocators)."""
    from dataclasses import replace

    built: list[tuple[str, Runner]] = []
    for alloc in cfg.allocators:
        if why := allocators.missing(alloc, cfg.spec.cc):
            p.skipped[alloc.name] = why
            continue
        b = build(replace(cfg.spec, ldflags=(*cfg.spec.ldflags, *alloc.ldflags())))
        r = Runner(b.path, p.cpu, fifo=cfg.fifo, max_rss=cfg.max_rss)
        where = r.malloc_file()
        if why := allocators.check_resolved(alloc, where):
            raise BuildError(why)
        p.allocator[alloc.name] = allocators.describe(alloc, where)
        built.append((alloc.name, r))
    items: list[Item] = []
    for it in p.items:
        pairs = [("", p.runner)] if it.bench == LOOP_REFERENCE else built
        for name, r in pairs:
            items.append(it)
            p.runners.append(r)
            p.variants.append(name)
    p.items = items


def begin(cfg: RunConfig, prepared: Prepared, store: Store) -> tuple[int, float]:
    """Open the run of `run`, `compare` and `variants` (see open_run), with ``cfg.labels``.
    Returns (run id, timer Hz)."""
    return open_run(store, cfg.command, prepared.cpu, cfg.spec.sources, prepared.binary, prepared.runner,
                    labels=cfg.labels)


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
    on_done: Callable[[Item, dict[str, Any]], None] = lambda _i, _r: None,
    on_open: Callable[[int], None] = lambda _r: None,
) -> tuple[int, list[dict[str, Any]]]:
    """Measure every item and store each result as it comes (its ``plan_index``: the item's
    place in ``prepared.items``). Returns (run id, rows in the order they were stored).
    ``on_open`` gets the run id as soon as the run row exists (for an interrupt message).

    Each benchmark's rounds are spread over ``cfg.processes`` runner processes, taken in
    passes over all benchmarks, so one benchmark's processes span the run (a bias that holds
    for a whole process, or for a minute of the host, then widens its CI instead of hiding in
    it). A benchmark is stored when its last process ends; on Ctrl-C, those with some
    processes done are stored too, marked partial (k of P)."""
    run_id, rate = begin(cfg, prepared, store)
    on_open(run_id)
    rows: list[dict[str, Any]] = []
    if cfg.backend == "callgrind":
        with store.finishing(run_id):
            for i, item in enumerate(prepared.items):
                on_start(item)
                binary = prepared.runners[i].binary if prepared.runners else prepared.binary.path
                outcome = callgrind.simulate(binary, item.bench, item.param, cfg.sim_iters, cfg.cache,
                                            timeout=cfg.timeout or 600.0, cpu=prepared.cpu)
                variant = prepared.variants[i] if prepared.variants else cfg.variant
                fields = callgrind.result_fields(outcome, variant)
                fields["plan_index"] = i
                fields["id"] = store.add_result(run_id, fields)
                rows.append(fields)
                on_done(item, fields)
        store.finish_run(run_id, "complete")
        return run_id, rows
    loop: dict[str, Any] | None = None
    items = prepared.items
    for it in dict.fromkeys(i for i in items if i.bench != LOOP_REFERENCE):  # allocators not installed
        for name, why in prepared.skipped.items():
            fields = {"bench": it.bench, "param": it.param, "variant": name, "status": SKIPPED, "reason": why}
            fields["id"] = store.add_result(run_id, fields)
            rows.append(fields)

    def keep(i: int, outs: list[Outcome], partial: bool) -> None:
        nonlocal loop
        combined = interleave.combine(outs)
        variant = prepared.variants[i] if prepared.variants else cfg.variant
        fields = result_fields(combined, rate, variant, cfg.events)
        if variant in prepared.allocator:
            fields["extra"] = {**(fields.get("extra") or {}), "allocator": prepared.allocator[variant]}
        if partial:
            fields["extra"] = {**(fields.get("extra") or {}),
                               "partial": f"{len(outs)} of {pass_plan(cfg)[1]} processes"}
        if items[i].bench == LOOP_REFERENCE and fields["status"] == OK:
            loop = fields
        add_net(fields, loop)
        fields["plan_index"] = i  # stored when its last pass ends: the plan's order kept (model.suite_order)
        fields["id"] = store.add_result(run_id, fields, sample_rows(combined.result))
        rows.append(fields)
        on_done(items[i], fields)

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


def measure_one(cfg: RunConfig, prepared: Prepared, store: Store, quiet: bool, net: bool, wide: bool,
                 earlier: list[int], grouped: bool, table: bool = True) -> tuple[int, list[dict[str, Any]]]:
    """One run with its progress bar; Ctrl-C keeps what was measured (exit 130) and shows it
    (unless not ``table``). The run gets cfg.labels as it opens, ``summary.display`` (--net, for
    `show`) and, with ``grouped``, the group of the first of the replicate runs. Returns (run id,
    its rows in the suite's order: model.suite_order, as the store reads them back)."""
    rows: list[dict[str, Any]] = []
    opened: list[int] = []
    progress = Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=err, transient=True,
                        disable=quiet)

    def on_open(rid: int) -> None:
        opened.append(rid)
        # how its table was asked for, so `show` prints it so (commands/_show.py)
        store.update_run(rid, summary={"display": {"net": net}},
                         **({"group_id": (earlier or [rid])[0]} if grouped else {}))

    try:
        with progress:
            steps = len(prepared.items) * pass_plan(cfg)[1]  # planned; --target-ci may change it
            task = progress.add_task("measuring", total=steps)

            def on_start(item: Item) -> None:
                progress.update(task, description=f"{item.label:<32.32}")
                progress.advance(task)
                if progress.tasks[0].completed > (progress.tasks[0].total or 0):  # a pass beyond the planned
                    progress.update(task, total=progress.tasks[0].completed)

            run_id, _ = execute(cfg, prepared, store, on_start, lambda _i, row: rows.append(row), on_open=on_open)
    except KeyboardInterrupt:
        if not quiet and rows and table:
            console_report.print_results(suite_order(rows), out, net=net, wide=wide)
        # ours, not the DB's newest: another command may have opened a run since
        where = f"run #{opened[0]}" if opened else "no run was opened"
        err.print(f"cyclebench: interrupted: {len(rows)} result(s) kept ({where}, {store.url})")
        sys.exit(130)
    except RunnerError as e:
        raise UserError(str(e)) from None
    except RunGone as e:  # its results went with it: none is kept
        raise UserError(str(e)) from None
    except StoreError as e:
        raise UserError(f"{e} ({len(rows)} result(s) stored before it are kept)") from None
    return run_id, suite_order(rows)


def events_and_cache(events_spec: str | None, cache_spec: str | None,
                      backend: str) -> tuple[list[list[Any]] | None, dict[str, tuple[int, int, int]]]:
    """-e and --cache parsed, and valgrind's presence checked, before anything is built."""
    from cyclebench.runner import callgrind

    try:
        groups = counters.parse_events(events_spec) if events_spec else None
        cache = callgrind.parse_cache(cache_spec)
        if backend == "callgrind":
            callgrind.valgrind_argv(Path("x"), cache)  # fails early, in one line, without valgrind
    except (counters.EventError, callgrind.SimulationError) as e:
        raise UserError(str(e)) from None
    return groups, cache


def run_to_run(store: Store, run_id: int, rows: list[dict[str, Any]]) -> dict[tuple[Any, ...], tuple[float, int]]:
    """This host's run-to-run (sd, df) per benchmark from earlier replicate groups of the same
    build (experiments.history), put on each row as ``extra["run_to_run"]`` for the table."""
    spreads = host_spread(store, store.get_run(run_id) or {}, {run_id})
    for r in rows:
        sd = spreads.get((r.get("bench"), r.get("param"), r.get("variant") or ""))
        if sd is not None:
            r["extra"] = {**(r.get("extra") or {}), "run_to_run": {"sd": sd[0], "df": sd[1]}}
    return spreads


SIMULATED_TITLE = " · simulated (callgrind)"  # after the run's title, over callgrind's table


def title(run_id: int, cpu: int | None, cc_version: str | None) -> str:
    """The run's table title (printed by `run`, and by `show` of it: the run row's cpu and
    build's cc_version)."""
    return " · ".join([f"run #{run_id}", *([f"CPU {cpu}"] if cpu is not None else []),
                       *([cc_version] if cc_version else [])])


def print_tables(rows: list[dict[str, Any]], run_title: str, net: bool, wide: bool, console: Any = out) -> None:
    """The tables of a run's rows as `run` prints them: callgrind's events when they were
    simulated, else the results (net of the loop with ``net``) and, when -e counted events,
    the counters per op."""
    if any(r.get("kind") == SIMULATED for r in rows):  # a callgrind run: all its rows are
        console_report.print_simulated(rows, console, title=run_title + SIMULATED_TITLE, wide=wide)
        return
    console_report.print_results(rows, console, title=run_title, net=net, wide=wide)
    console_report.print_counters(rows, console, wide=wide)  # nothing without counters


def report(store: Store, run_id: int, rows: list[dict[str, Any]], prepared: Prepared, backend: str, net: bool,
            wide: bool, table: bool = True) -> None:
    """The run's table (simulated counts under callgrind), counters when -e counted some (not
    without ``table``), and the calibration and environment lines on stderr."""
    run_row = store.get_run(run_id) or {}
    if not table:
        pass
    elif backend == "callgrind":
        console_report.print_simulated(rows, out, title=title(run_id, prepared.cpu, prepared.binary.cc_version)
                                       + SIMULATED_TITLE, wide=wide)
    else:
        print_tables(rows, title(run_id, prepared.cpu, prepared.binary.cc_version), net, wide)
    if backend == "timing":
        err.print(console_report.calibration_line(run_row.get("calibration")), highlight=False)
    for line in console_report.environment_lines(rows):
        err.print(line, highlight=False)


def check_events(runner: Any, groups: list[list[Any]]) -> None:
    """Open the requested groups once before measuring: a machine that cannot count them
    gets one line now, not a table of holes later."""
    errors = runner.probe(groups)
    failed = [(g, e) for g, e in zip(groups, errors, strict=True) if e]
    if not failed:
        return
    hw = [g for g, _ in failed if any(ev.is_hardware for ev in g)]
    names = ", ".join(ev.name for g, _ in failed for ev in g)
    if len(failed) == len(groups) and hw:
        raise UserError(f"hardware events are not available here ({names}: {failed[0][1]}; no PMU exposed, "
                        "as in most VMs): use --backend callgrind for simulated counts, or software events "
                        "(task-clock, context-switches, page-faults)")
    err.print(f"cyclebench: not countable here, left out of the table: {names} ({failed[0][1]})", style="yellow")


def print_list(benches: list[Any], wide: bool = False) -> None:
    from cyclebench.report.listing import bench_list_table

    out.print(bench_list_table(benches, wide))
