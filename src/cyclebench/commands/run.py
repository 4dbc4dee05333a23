"""One `cyclebench run`: build → run → parse → stats → store, item by item.

Each item's result is stored the moment it is analysed; the caller gets callbacks for its
progress display. KeyboardInterrupt marks the run 'interrupted' and propagates: every
finished result is already committed.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import numpy as np
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from scipy import stats as sps

from cyclebench import __version__, counters
from cyclebench.build import DEFAULT_CFLAGS, Binary, BuildError, BuildSpec, ToolMissing, build, suite_sources
from cyclebench.commands._common import (
    FAILED_STATUSES,
    UserError,
    err,
    null_context,
    open_store,
    out,
    parse_params,
)
from cyclebench.env import check, sysinfo
from cyclebench.model import OK, Item, Outcome
from cyclebench.report import console as console_report
from cyclebench.runner import Runner, RunnerError, callgrind
from cyclebench.runner.plan import MeasureOptions, SelectionError, plan
from cyclebench.stats import NotEnoughSamples, clock, combine_difference, estimate, slow_side
from cyclebench.store import Store, StoreError
from cyclebench.store import runfile as json_report

LOOP_REFERENCE = "loop/empty"


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


@dataclass
class Prepared:
    binary: Binary
    runner: Runner
    items: list[Item]
    cpu: int


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
    return Prepared(binary, runner, items, cpu)


def code_revision(sources: Sequence[Path]) -> str | None:
    """``git describe --always --dirty`` of the first source's repository, or None."""
    if not sources:
        return None
    try:
        proc = subprocess.run(
            ["git", "-C", str(Path(sources[0]).resolve().parent), "describe", "--always", "--dirty"],
            capture_output=True, text=True, timeout=5, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def counter_fields(res: dict[str, Any], events: list[list[Any]], n: np.ndarray, group: int | None,
                   keep: np.ndarray, seed: int) -> dict[str, Any]:
    """Per-op slope of every requested event (counters.py parses the runner's raw group
    reads), its status, and derived metrics (IPC, MPKI, branch-miss rate)."""
    c = res.get("counters") or {}
    names = [e.name for g in events for e in g]
    series, status = counters.per_sample_counts(c.get("reads") or [], c.get("nevents") or [],
                                                c.get("open_errors") or [None] * len(events))
    out: dict[str, Any] = {}
    per_op: dict[str, float] = {}
    for name, vals, st in zip(names, series, status, strict=True):
        entry: dict[str, Any] = {"status": st}
        if vals is not None and len(vals) == len(n):
            try:
                est = estimate(n, np.asarray(vals), seed=seed, group=group, keep=keep)
                entry.update(per_op=est.per_op, ci_low=est.ci_low, ci_high=est.ci_high)
                per_op[name] = est.per_op
            except NotEnoughSamples as e:
                entry["status"] = f"not counted: {e}"
        out[name] = entry
    return {"events": out, "derived": counters.derived(per_op)}


def result_fields(outcome: Outcome, rate_hz: float, variant: str = "",
                  events: list[list[Any]] | None = None) -> dict[str, Any]:
    """The results-table row for one outcome: estimators in the timer's unit and in
    cycles~ (when the runner timed its calibration chain), disturbed samples dropped."""
    fields: dict[str, Any] = {
        "bench": outcome.bench, "param": outcome.param, "variant": variant, "status": outcome.status,
        "reason": outcome.reason, "wall_s": outcome.wall_s,
    }
    res = outcome.result
    if res is None:
        return fields
    unit = res.get("unit", "ticks")
    fields["unit"] = unit
    fields["timer_overhead"] = (res.get("timer_overhead") or {}).get("median")
    fields["extra"] = {k: v for k, v in res.items()
                       if k not in ("n", "ticks", "cal", "disturbed", "pmu_cycles", "counters")}
    n = np.asarray(res["n"], dtype=float)
    t = np.asarray(res["ticks"], dtype=float)
    keep = np.asarray(res.get("disturbed") or np.zeros(len(n)), dtype=int) == 0
    ratio = clock.core_ratio(res)
    if ratio is not None:
        keep &= np.isfinite(ratio)
    if keep.sum() < max(3, len(keep) // 2):  # a storm of disturbances: keep all rather than nothing
        fields["extra"]["disturbed_ignored"] = True
        keep = np.ones(len(n), dtype=bool) if ratio is None else np.isfinite(ratio)
    fields["n_disturbed"] = int(len(n) - keep.sum())
    seed = int(res.get("seed", 0)) & 0xFFFFFFFF
    group = res.get("ladder")
    if not fields["extra"].get("disturbed_ignored"):  # a benchmark that disturbs itself varies by nature
        hit = slow_side(n, t, group, keep, float(fields["timer_overhead"] or 0))
        fields["n_trimmed"] = int(hit.sum())
        keep &= ~hit
    try:
        est = estimate(n, t, seed=seed, group=group, keep=keep)
    except NotEnoughSamples as e:
        if fields["status"] == OK:
            fields["status"], fields["reason"] = "error", str(e)
        return fields
    fields.update(est.to_dict())
    fields["ns_per_op"] = est.per_op * 1e9 / rate_hz if unit != "ns" else est.per_op
    if ratio is not None:
        smooth = clock.round_ratio(np.where(keep, ratio, np.nan), group)
        cyc = estimate(n, np.where(keep, t * np.nan_to_num(smooth), 0.0), seed=seed, group=group, keep=keep)
        r = ratio[keep]
        fields.update(
            cycles_per_op=cyc.per_op, cycles_ci_low=cyc.ci_low, cycles_ci_high=cyc.ci_high, cycles_min=cyc.min,
            cycles_rcv=cyc.rcv, core_ghz=float(np.median(r)) * rate_hz / 1e9,
            ratio_rcv=float(sps.median_abs_deviation(r, scale="normal") / np.median(r)),
            chain_agreement=clock.chain_agreement(res),
        )
    if events:
        fields["extra"]["counters"] = counter_fields(res, events, n, group, keep, seed)
    if res.get("pmu_cycles"):  # a real PMU: the cycles event per op, and how well cycles~ agrees
        pmu = estimate(n, np.asarray(res["pmu_cycles"], dtype=float), seed=seed, group=group, keep=keep)
        fields.update(pmu_cycles_per_op=pmu.per_op, pmu_ci_low=pmu.ci_low, pmu_ci_high=pmu.ci_high)
        if fields.get("cycles_per_op") and pmu.per_op > 0:
            fields["pmu_agreement"] = fields["cycles_per_op"] / pmu.per_op
    return fields


def sample_rows(res: dict[str, Any] | None) -> list[tuple[int, int, int | None, int | None, int | None]]:
    if not res:
        return []
    n = len(res["n"])
    cal = res.get("cal") or [None] * n
    dist = res.get("disturbed") or [None] * n
    pmu = res.get("pmu_cycles") or [None] * n
    return list(zip(res["n"], res["ticks"], cal, dist, pmu, strict=True))


def add_net(fields: dict[str, Any], loop: dict[str, Any] | None) -> None:
    """Fill the net-of-loop columns of ``fields`` from the loop/empty row of the same run."""
    if not loop or fields.get("per_op") is None or loop.get("per_op") is None:
        return
    if fields.get("unit") == loop.get("unit"):
        d = combine_difference(
            (fields["per_op"], fields["ci_low"], fields["ci_high"]), (loop["per_op"], loop["ci_low"], loop["ci_high"]))
        fields["net_per_op"], fields["net_ci_low"], fields["net_ci_high"] = d
    if fields.get("cycles_per_op") is not None and loop.get("cycles_per_op") is not None:
        d = combine_difference((fields["cycles_per_op"], fields["cycles_ci_low"], fields["cycles_ci_high"]),
                               (loop["cycles_per_op"], loop["cycles_ci_low"], loop["cycles_ci_high"]))
        fields["cycles_net"], fields["cycles_net_ci_low"], fields["cycles_net_ci_high"] = d


def begin(cfg: RunConfig, prepared: Prepared, store: Store) -> tuple[int, float]:
    """Calibrate, capture the environment and open a run row. Returns (run id, timer Hz)."""
    calib = prepared.runner.calibrate()
    rate, source = clock.timer_rate(calib, sysinfo.kernel_tsc_hz())
    calib = {**calib, "rate_hz": rate, "rate_source": source}
    env = sysinfo.capture(prepared.cpu, cc=cfg.spec.cc)
    env["check"] = [f.to_dict() for f in check.run_checks(prepared.cpu)]  # what `cyclebench check` says now
    b = prepared.binary
    run_id = store.begin_run(
        command=list(cfg.command) or sys.argv, host=env.get("hostname"),
        cpu_model=(env.get("cpu_info") or {}).get("model_name"), cpu=prepared.cpu, tool_version=__version__,
        code_rev=code_revision(cfg.spec.sources), calibration=calib, env=env,
        build={"cc": b.cc, "cc_version": b.cc_version, "cflags": list(b.cflags), "sources": list(b.sources),
               "key": b.key},
    )
    return run_id, rate


def execute(
    cfg: RunConfig,
    prepared: Prepared,
    store: Store,
    on_start: Callable[[Item], None] = lambda _i: None,
    on_done: Callable[[Item, dict[str, Any]], None] = lambda _i, _r: None,
) -> tuple[int, list[dict[str, Any]]]:
    """Measure every item and store each result as it comes. Returns (run id, rows)."""
    run_id, rate = begin(cfg, prepared, store)
    rows: list[dict[str, Any]] = []
    loop: dict[str, Any] | None = None
    timeout = cfg.timeout or cfg.options.timeout()
    with store.finishing(run_id):
        for item in prepared.items:
            on_start(item)
            if cfg.backend == "callgrind":
                outcome = callgrind.simulate(prepared.binary.path, item.bench, item.param, cfg.sim_iters, cfg.cache,
                                            timeout=max(600.0, timeout), cpu=prepared.cpu)
                fields = callgrind.result_fields(outcome, cfg.variant)
                fields["id"] = store.add_result(run_id, fields)
                rows.append(fields)
                on_done(item, fields)
                continue
            outcome = prepared.runner.run(item.bench, item.param, cfg.options, timeout, cfg.events)
            fields = result_fields(outcome, rate, cfg.variant, cfg.events)
            res = outcome.result
            if item.bench == LOOP_REFERENCE and outcome.status == OK:
                loop = fields
            add_net(fields, loop)
            fields["id"] = store.add_result(run_id, fields, sample_rows(res))
            rows.append(fields)
            on_done(item, fields)
    store.finish_run(run_id, "complete")
    return run_id, rows


@click.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-b", "--bench", "globs", multiple=True, metavar="GLOB",
              help="Benchmarks to run: group/name glob or group (repeatable). Default: all.")
@click.option("-p", "--param", "params", multiple=True, metavar="N[,N...]",
              help="Only these parameters (sizes, counts); with an exact -b name, any value.")
@click.option("--cpu", type=click.IntRange(min=0), help="CPU to pin the runner to (default: not CPU 0).")
@click.option("--repeat", type=click.IntRange(1, 100000), default=MeasureOptions.repeat, show_default=True,
              help="Rounds over the batch-size ladder (samples per batch size).")
@click.option("--min-time", type=click.FloatRange(min=0), default=MeasureOptions.min_time, show_default=True,
              help="Seconds of timed samples per benchmark (sizes the batches).")
@click.option("--max-time", type=click.FloatRange(min=0.001), default=MeasureOptions.max_time,
              show_default=True, help="Cap in seconds for slow operations (fewer rounds, at least 3).")
@click.option("--warmup", type=click.FloatRange(min=0), default=MeasureOptions.warmup, show_default=True,
              help="Seconds of untimed warm-up batches.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=None,
              help="Seconds before a benchmark is declared hung and killed (default from --max-time).")
@click.option("--seed", type=int, default=0, help="Seed of the ladder shuffling (0: random, recorded).")
@click.option("--list", "list_only", is_flag=True, help="List the benchmarks and exit.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the run as lossless JSON to this file.")
@click.option("--db", metavar="URL", help="Database URL (default: $CYCLEBENCH_DB or the user data dir).")
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
@click.option("--fifo", "fifo", type=click.IntRange(1, 99), default=None, metavar="PRIO",
              help="Run the runner under SCHED_FIFO at PRIO (root/CAP_SYS_NICE), bounded by RLIMIT_RTTIME.")
@click.option("--max-rss", type=click.IntRange(1, 1 << 30), default=None, metavar="MiB",
              help="Kill a runner whose resident memory (with what it forked) passes this; its row says so.")
@click.option("--cc", default="cc", show_default=True, help="C compiler.")
@click.option("--cflags", default=" ".join(DEFAULT_CFLAGS), show_default=True,
              help="Flags for the benchmark sources (split like a shell would, passed as argv).")
@click.option("-I", "include_dirs", multiple=True, type=click.Path(file_okay=False, path_type=Path),
              help="Include directory for the benchmark sources.")
@click.option("-D", "defines", multiple=True, metavar="NAME[=VALUE]", help="Preprocessor definition.")
@click.option("--ldflags", default="", help="Extra link flags/libraries (e.g. '-ljemalloc').")
def run(files: tuple[Path, ...], globs: tuple[str, ...], params: tuple[str, ...], cpu: int | None, repeat: int,
        min_time: float, max_time: float, warmup: float, timeout: float | None, seed: int, list_only: bool,
        json_path: Path | None, db: str | None, quiet: bool, net: bool, events_spec: str | None, backend: str,
        sim_iters: int,
        cache_spec: str | None, fifo: int | None, max_rss: int | None, cc: str, cflags: str,
        include_dirs: tuple[Path, ...], defines: tuple[str, ...], ldflags: str) -> None:
    """Run the built-in suite, or the benchmarks in FILES (C files using cyclebench.h)."""
    try:
        split_cflags, split_ldflags = tuple(shlex.split(cflags)), tuple(shlex.split(ldflags))
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--cflags/--ldflags") from None
    sources = tuple(f.resolve() for f in files) if files else tuple(suite_sources())
    spec = BuildSpec(sources=sources, cc=cc, cflags=split_cflags, include_dirs=tuple(d.resolve() for d in include_dirs),
                     defines=defines, ldflags=split_ldflags, werror=not files)
    opts = MeasureOptions(min_time=min_time, repeat=repeat, max_time=max_time, warmup=warmup, seed=seed)
    from cyclebench import counters
    from cyclebench.runner import callgrind

    try:
        groups = counters.parse_events(events_spec) if events_spec else None
    except counters.EventError as e:
        raise UserError(str(e)) from None
    try:
        cache = callgrind.parse_cache(cache_spec)
        if backend == "callgrind":
            callgrind.valgrind_argv(Path("x"), cache)  # fails early, in one line, without valgrind
    except callgrind.SimulationError as e:
        raise UserError(str(e)) from None
    cfg = RunConfig(spec=spec, globs=globs, params=parse_params(params), cpu=cpu, options=opts, timeout=timeout,
                    command=["cyclebench", *sys.argv[1:]], fifo=fifo, backend=backend, sim_iters=sim_iters,
                    cache=cache, events=groups, max_rss=max_rss << 20 if max_rss else None)
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
    rows: list[dict[str, Any]] = []
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("ETA"), TimeRemainingColumn(), console=err, transient=True, disable=quiet)
    run_id: int | None = None
    try:
        with progress:
            task = progress.add_task("measuring", total=len(prepared.items))

            def on_start(item: Item) -> None:
                progress.update(task, description=f"{item.label:<32.32}")

            def on_done(_item: Item, row: dict[str, Any]) -> None:
                rows.append(row)
                progress.advance(task)

            run_id, _ = execute(cfg, prepared, store, on_start, on_done)
    except KeyboardInterrupt:
        if not quiet and rows:
            console_report.print_results(rows, out, net=net)
        last = store.last_run_id()
        err.print(f"cyclebench: interrupted: {len(rows)} result(s) kept in run #{last} ({store.url})")
        sys.exit(130)
    except RunnerError as e:
        raise UserError(str(e)) from None
    except StoreError as e:
        raise UserError(f"{e} ({len(rows)} result(s) stored before it are kept)") from None

    if not quiet:
        title = f"run #{run_id} · CPU {prepared.cpu} · {prepared.binary.cc_version}"
        if backend == "callgrind":
            console_report.print_simulated(rows, out, title=title + " · simulated (callgrind)")
        else:
            console_report.print_results(rows, out, title=title, net=net)
            if groups:
                console_report.print_counters(rows, out)
        run_row = store.get_run(run_id) or {}
        if backend == "timing":
            err.print(console_report.calibration_line(run_row.get("calibration")), highlight=False)
        for line in console_report.environment_lines(rows):
            err.print(line, highlight=False)
    if json_path is not None:
        json_report.dump(json_report.run_to_dict(store, run_id), json_path)
    bad = [r for r in rows if r.get("status") in FAILED_STATUSES]
    if not quiet:
        err.print(f"run #{run_id}: {len(rows)} result(s) stored in {store.url}", highlight=False)
    if bad:
        err.print(f"cyclebench: {len(bad)} benchmark(s) did not produce a valid result (see notes)", style="red")
        sys.exit(1)


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
    err.print(f"[yellow]cyclebench: not countable here, left out of the table: {names} ({failed[0][1]})[/]")


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
