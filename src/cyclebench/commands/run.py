"""`cyclebench run`: the built-in suite or the user's benchmarks, measured and stored
(the design: experiments/run.py; will-it-scale test cases: experiments/wis.py, commands/_wis.py).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from cyclebench.build.allocators import Allocator
from cyclebench.commands._common import (
    UserError,
    err,
    null_context,
    open_store,
    parse_params,
)
from cyclebench.commands._export import deliver, export_runs
from cyclebench.commands._finish import exit_status, finishing
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
from cyclebench.commands._predict import after_run, predict_options
from cyclebench.commands._run import check_events, events_and_cache, measure_one, print_list, report
from cyclebench.experiments.predict import PredictOptions
from cyclebench.experiments.run import DEFAULT_PROCESSES, RunConfig, prepare, run_to_run
from cyclebench.runner.plan import MeasureOptions, SelectionError, plan
from cyclebench.store import runfile as json_report


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
@predict_options
@runner_options
@build_options(positional=True)
def run(build: BuildOptions, pin: RunnerOptions, globs: tuple[str, ...], params: tuple[str, ...], repeat: int,
        min_time: float, max_time: float, warmup: float, timeout: float | None, seed: int, list_only: bool,
        json_path: Path | None, db: str | None, wide: bool, quiet: bool, net: bool, events_spec: str | None,
        backend: str, sim_iters: int, cache_spec: str | None, processes: int, runs: int,
        label_args: tuple[str, ...], target_ci: float, output: OutputOptions, plot_path: Path | None,
        allocators: list[Allocator] | None, predict: PredictOptions | None = None) -> None:
    """Run the built-in suite, or the benchmarks in FILES (C files using cyclebench.h)."""
    if min_time > max_time:
        raise click.BadParameter(f"--min-time {min_time:g} is above --max-time {max_time:g}", param_hint="--min-time")
    if _run_wis(build, pin, globs, params, min_time, warmup, processes, json_path, db, wide, quiet, list_only, net,
                events_spec, backend, runs, label_args, allocators):
        return
    spec = build.spec()
    labels = parse_labels(label_args)
    opts = MeasureOptions(min_time=min_time, repeat=repeat, max_time=max_time, warmup=warmup, seed=seed)
    groups, cache = events_and_cache(events_spec, cache_spec, backend)
    cfg = RunConfig(spec=spec, globs=globs, params=parse_params(params), cpu=pin.cpu, options=opts, timeout=timeout,
                    command=["cyclebench", *sys.argv[1:]], fifo=pin.fifo, backend=backend, sim_iters=sim_iters,
                    cache=cache, events=groups, max_rss=pin.max_rss, processes=processes,
                    target_ci=target_ci / 100 if target_ci and processes > 1 else None, labels=labels,
                    allocators=tuple(allocators or ()))
    with finishing(), err.status("building", spinner="dots") if not quiet else null_context():
        prepared = prepare(cfg)

    if list_only:  # what -b (and -p) select, in the suite's order
        benches = prepared.runner.list()
        chosen = {i.bench for i in plan(benches, globs)}  # loop/empty only when asked for
        print_list([b for b in benches if b.name in chosen], wide=wide)
        return
    if groups:
        check_events(prepared.runner, groups)

    store = open_store(db)
    all_rows: list[dict[str, Any]] = []
    ids: list[int] = []
    for _ in range(runs):  # replicate runs, one after the other, stored as one group (g<first id>)
        run_id, rows = measure_one(cfg, prepared, store, quiet, net, wide, ids, grouped=runs > 1,
                                    table=not output.to_stdout)
        ids.append(run_id)
        all_rows += rows
        spreads = run_to_run(store, run_id, rows)
        if not quiet:  # with an export on stdout, only the lines on stderr
            report(store, run_id, rows, prepared, backend, net, wide, table=not output.to_stdout)
        after_run(predict, store, run_id, {"": prepared.binary.path}, wide, quiet or output.to_stdout)
        if json_path is not None:
            try:
                data = json_report.run_to_dict(store, run_id)
                for r in data.get("results") or []:
                    if (sd := spreads.get((r.get("bench"), r.get("param"), r.get("variant") or ""))) is not None:
                        r["run_to_run"] = {"sd": sd[0], "df": sd[1]}
                json_report.dump(data, json_path)
            except OSError as e:  # after the run is stored: say so, one line
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
    exit_status(all_rows)


def _run_wis(build: BuildOptions, pin: RunnerOptions, globs: tuple[str, ...], params: tuple[str, ...],
             min_time: float, warmup: float, processes: int, json_path: Path | None, db: str | None, wide: bool,
             quiet: bool, list_only: bool, net: bool, events_spec: str | None, backend: str, runs: int,
             label_args: tuple[str, ...], allocators: list[Allocator] | None) -> bool:
    """will-it-scale test cases among FILES: measured by commands._wis (their cost per operation
    at one task, from intervals). Returns False when there are none (run goes on as usual)."""
    from cyclebench.commands import _wis
    from cyclebench.experiments.wis import split_files

    try:
        cases, others = split_files(build.files)
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
