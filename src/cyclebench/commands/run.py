"""One `cyclebench run`: build → run → parse → stats → store, item by item.

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

import click
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from cyclebench import counters
from cyclebench.build import Binary, BuildError, BuildSpec, ToolMissing, allocators, build
from cyclebench.build.allocators import Allocator
from cyclebench.commands._common import (
    FAILED_STATUSES,
    UserError,
    err,
    null_context,
    open_run,
    open_store,
    out,
    parse_params,
)
from cyclebench.commands._export import deliver, export_runs
from cyclebench.commands._history import host_spread
from cyclebench.commands._options import (
    SEED,
    BuildOptions,
    OutputOptions,
    RunnerOptions,
    Seconds,
    allocator_option,
    build_options,
    db_option,
    format_option,
    json_option,
    label_option,
    parse_labels,
    plot_option,
    runner_options,
    wide_option,
)
from cyclebench.env import sysinfo
from cyclebench.model import OK, SKIPPED, Item, Outcome
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
from cyclebench.store import Store, StoreError
from cyclebench.store import runfile as json_report

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
    """Measure every item and store each result as it comes. Returns (run id, rows).
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


@click.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-b", "--bench", "globs", multiple=True, metavar="GLOB",
              help="Benchmarks to run: group/name glob or group (repeatable). Default: all.")
@click.option("-p", "--param", "params", multiple=True, metavar="N[,N...]",
              help="Only these parameters (sizes, counts); with an exact -b name, any value.")
@click.option("--repeat", type=click.IntRange(1, 100000), default=MeasureOptions.repeat, show_default=True,
              help="Rounds over the batch-size ladder (samples per batch size).")
@click.option("--min-time", type=Seconds(0, 3600), default=MeasureOptions.min_time, show_default=True,
              help="Seconds of timed samples per benchmark (sizes the batches).")
@click.option("--max-time", type=Seconds(0.001, 3600), default=MeasureOptions.max_time,
              show_default=True, help="Cap in seconds for slow operations (fewer rounds, at least 3).")
@click.option("--warmup", type=Seconds(0, 3600), default=MeasureOptions.warmup, show_default=True,
              help="Seconds of untimed warm-up batches.")
@click.option("--timeout", type=Seconds(0.1, 86400), default=None,
              help="Seconds before a benchmark is declared hung and killed (default from --max-time).")
@click.option("--runs", type=click.IntRange(1, 1000), default=1, show_default=True,
              help="Replicate runs, one after another, stored as one group that compare takes as one side (gN).")
@label_option
@click.option("--processes", type=click.IntRange(1, 64), default=DEFAULT_PROCESSES, show_default=True,
              help="Runner processes each benchmark's rounds are spread over, in passes over all benchmarks; "
                   "the CI is bootstrapped over them (1: one process, the within-process CI only).")
@click.option("--target-ci", "target_ci", type=click.FloatRange(0, 100), default=1.0, show_default=True,
              metavar="PCT", help="Measure each benchmark in passes of a quarter of --repeat rounds until its "
              "95% CI is within ± this % (at least --processes passes; more, up to twice the planned, while "
              "wider, within reach and under --max-time); 0: exactly --repeat rounds over --processes.")
@click.option("--seed", type=SEED, default=0, help="Seed of the ladder shuffling (0: random, recorded).")
@click.option("--list", "list_only", is_flag=True, help="List the benchmarks and exit.")
@json_option
@format_option
@db_option
@wide_option
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no table.")
@click.option("--net", is_flag=True, help="Show costs net of the loop's own cost (loop/empty, measured first).")
@click.option("-e", "--events", "events_spec", default=None, metavar="EVENTS",
              help="Counters read around every batch, perf syntax: 'task-clock,{cycles,instructions}'.")
@click.option("--backend", type=click.Choice(["timing", "callgrind"]), default="timing", show_default=True,
              help="callgrind: exact simulated counts per op (Ir, cache and branch misses) instead of timing.")
@click.option("--sim-iters", type=click.IntRange(1), default=10, show_default=True,
              help="callgrind: operations in the first collected batch (the second has twice as many).")
@click.option("--cache", "cache_spec", default=None, metavar="'I1=S,A,L;D1=...;LL=...'",
              help="callgrind cache geometry (bytes, ways, line); default I1=D1=32768,8,64 LL=8388608,16,64.")
@plot_option("each result's per op with its CI")
@allocator_option
@runner_options
@build_options(positional=True)
def run(build: BuildOptions, pin: RunnerOptions, globs: tuple[str, ...], params: tuple[str, ...], repeat: int,
        min_time: float, max_time: float, warmup: float, timeout: float | None, seed: int, list_only: bool,
        json_path: Path | None, db: str | None, wide: bool, quiet: bool, net: bool, events_spec: str | None,
        backend: str, sim_iters: int, cache_spec: str | None, processes: int, runs: int,
        label_args: tuple[str, ...], target_ci: float, output: OutputOptions, plot_path: Path | None,
        allocators: list[Allocator] | None) -> None:
    """Run the built-in suite, or the benchmarks in FILES (C files using cyclebench.h)."""
    if min_time > max_time:
        raise click.BadParameter(f"--min-time {min_time:g} is above --max-time {max_time:g}", param_hint="--min-time")
    if _run_wis(build, pin, globs, params, min_time, warmup, processes, json_path, db, wide, quiet, list_only, net,
                events_spec, backend, runs, label_args, allocators):
        return
    spec = build.spec()
    labels = parse_labels(label_args)
    opts = MeasureOptions(min_time=min_time, repeat=repeat, max_time=max_time, warmup=warmup, seed=seed)
    groups, cache = _events_and_cache(events_spec, cache_spec, backend)
    cfg = RunConfig(spec=spec, globs=globs, params=parse_params(params), cpu=pin.cpu, options=opts, timeout=timeout,
                    command=["cyclebench", *sys.argv[1:]], fifo=pin.fifo, backend=backend, sim_iters=sim_iters,
                    cache=cache, events=groups, max_rss=pin.max_rss, processes=processes,
                    target_ci=target_ci / 100 if target_ci and processes > 1 else None, labels=labels,
                    allocators=tuple(allocators or ()))
    try:
        with err.status("building", spinner="dots") if not quiet else null_context():
            prepared = prepare(cfg)
    except BuildError as e:
        if e.output:
            err.print(e.output, markup=False, highlight=False)
        raise UserError(str(e) if isinstance(e, ToolMissing) else f"{e} (compiler output above)") from None
    except (FileNotFoundError, RunnerError, SelectionError) as e:
        raise UserError(str(e)) from None

    if list_only:
        _print_list(prepared.runner.list())
        return
    if groups:
        _check_events(prepared.runner, groups)

    store = open_store(db)
    all_rows: list[dict[str, Any]] = []
    ids: list[int] = []
    for _ in range(runs):  # replicate runs, one after the other, stored as one group (g<first id>)
        run_id, rows = _measure_one(cfg, prepared, store, quiet, net, wide, ids, grouped=runs > 1,
                                    table=not output.to_stdout)
        ids.append(run_id)
        all_rows += rows
        spreads = _run_to_run(store, run_id, rows)
        if not quiet:  # with an export on stdout, only the lines on stderr
            _report(store, run_id, rows, prepared, backend, net, wide, bool(groups), table=not output.to_stdout)
        if json_path is not None:
            try:
                data = json_report.run_to_dict(store, run_id)
                for r in data.get("results") or []:
                    if (sd := spreads.get((r.get("bench"), r.get("param"), r.get("variant") or ""))) is not None:
                        r["run_to_run"] = {"sd": sd[0], "df": sd[1]}
                json_report.dump(data, json_path)
            except OSError as e:  # after the run is stored: say so (audit D9)
                raise UserError(f"cannot write {json_path}: {e.strerror or e}; the results are stored "
                                f"(run #{run_id})") from None
        if not quiet:
            err.print(f"run #{run_id}: {len(rows)} result(s) stored in {store.url}", highlight=False)
    if output.asked:  # every replicate run's rows (json: the last run)
        deliver(output, export_runs(store, ids, output.fmt), stored=f"run #{ids[-1]}")
    if plot_path is not None and ids:
        from cyclebench.report import plots

        try:
            n = plots.plot_results(all_rows, plot_path, title=f"run{'s' if len(ids) > 1 else ''} #"
                                   + ", #".join(map(str, ids)))
        except OSError as e:
            raise UserError(f"cannot write {plot_path}: {e.strerror or e} (the results are stored)") from None
        err.print(f"plot of {n} result(s): {plot_path}", highlight=False)
    if len(ids) > 1:
        err.print(f"replicate group g{ids[0]}: runs {','.join(map(str, ids))} (compare g{ids[0]} g…)", highlight=False)
    rows = all_rows
    bad = [r for r in rows if r.get("status") in FAILED_STATUSES]
    if bad:
        err.print(f"cyclebench: {len(bad)} benchmark(s) did not produce a valid result (see notes)", style="red")
        sys.exit(1)


def _measure_one(cfg: RunConfig, prepared: Prepared, store: Store, quiet: bool, net: bool, wide: bool,
                 earlier: list[int], grouped: bool, table: bool = True) -> tuple[int, list[dict[str, Any]]]:
    """One run with its progress bar; Ctrl-C keeps what was measured (exit 130) and shows it
    (unless not ``table``). The run gets cfg.labels as it opens and, with ``grouped``, the group
    of the first of the replicate runs."""
    rows: list[dict[str, Any]] = []
    opened: list[int] = []
    progress = Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=err, transient=True,
                        disable=quiet)

    def on_open(rid: int) -> None:
        opened.append(rid)
        if grouped:
            store.update_run(rid, group_id=(earlier or [rid])[0])

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
            console_report.print_results(rows, out, net=net, wide=wide)
        where = f"run #{opened[0]}" if opened else "no run was opened"  # ours, not the DB's newest (D17)
        err.print(f"cyclebench: interrupted: {len(rows)} result(s) kept ({where}, {store.url})")
        sys.exit(130)
    except RunnerError as e:
        raise UserError(str(e)) from None
    except StoreError as e:
        raise UserError(f"{e} ({len(rows)} result(s) stored before it are kept)") from None
    return run_id, rows


def _run_wis(build: BuildOptions, pin: RunnerOptions, globs: tuple[str, ...], params: tuple[str, ...],
             min_time: float, warmup: float, processes: int, json_path: Path | None, db: str | None, wide: bool,
             quiet: bool, list_only: bool, net: bool, events_spec: str | None, backend: str, runs: int,
             label_args: tuple[str, ...], allocators: list[Allocator] | None) -> bool:
    """will-it-scale test cases among FILES: measured by commands._wis (their cost per operation
    at one task, from intervals). Returns False when there are none (run goes on as usual)."""
    from cyclebench.commands import _wis

    try:
        cases, others = _wis.split_files(build.files)
    except SelectionError as e:
        raise UserError(str(e)) from None
    if not cases:
        return False
    _wis.run_cases(cases, others, build, pin, globs=globs, min_time=min_time, warmup=warmup, processes=processes,
                   json_path=json_path, db=db, wide=wide, quiet=quiet, list_only=list_only,
                   labels=parse_labels(label_args),
                   refused={"-p/--param": bool(params), "--net": net, "-e/--events": bool(events_spec),
                            "--backend callgrind": backend != "timing", "--runs": runs > 1,
                            "--allocator": bool(allocators)})
    return True


def _events_and_cache(events_spec: str | None, cache_spec: str | None,
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


def _run_to_run(store: Store, run_id: int, rows: list[dict[str, Any]]) -> dict[tuple[Any, ...], tuple[float, int]]:
    """This host's run-to-run (sd, df) per benchmark from earlier replicate groups of the same
    build (commands._history), put on each row as ``extra["run_to_run"]`` for the table."""
    spreads = host_spread(store, store.get_run(run_id) or {}, {run_id})
    for r in rows:
        sd = spreads.get((r.get("bench"), r.get("param"), r.get("variant") or ""))
        if sd is not None:
            r["extra"] = {**(r.get("extra") or {}), "run_to_run": {"sd": sd[0], "df": sd[1]}}
    return spreads


def _report(store: Store, run_id: int, rows: list[dict[str, Any]], prepared: Prepared, backend: str, net: bool,
            wide: bool, counted: bool, table: bool = True) -> None:
    """The run's table (simulated counts under callgrind), counters (not without ``table``),
    and the calibration and environment lines on stderr."""
    title = f"run #{run_id} · CPU {prepared.cpu} · {prepared.binary.cc_version}"
    run_row = store.get_run(run_id) or {}
    if not table:
        pass
    elif backend == "callgrind":
        console_report.print_simulated(rows, out, title=title + " · simulated (callgrind)")
    else:
        console_report.print_results(rows, out, title=title, net=net, wide=wide)
        if counted:
            console_report.print_counters(rows, out)
    if backend == "timing":
        err.print(console_report.calibration_line(run_row.get("calibration")), highlight=False)
    for line in console_report.environment_lines(rows):
        err.print(line, highlight=False)


def _check_events(runner: Any, groups: list[list[Any]]) -> None:
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


def _print_list(benches: list[Any]) -> None:
    from cyclebench.report.text import safe_text  # names and requirements are data, never markup

    table = Table(header_style="bold")
    for col in ("benchmark", "params", "requires", "verify", "source"):
        table.add_column(col)
    for b in benches:
        table.add_row(*(safe_text(x, multiline=False) for x in (
            b.name, ",".join(map(str, b.params)) if b.params else "", b.require or "",
            "yes" if b.has_verify else "", f"{Path(b.file).name}:{b.line}")))
    out.print(table)
