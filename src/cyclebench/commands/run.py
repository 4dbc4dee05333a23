"""`cyclebench run`: the built-in suite or the user's benchmarks, measured and stored
(the design: experiments/run.py; will-it-scale test cases: experiments/wis.py, ui/wis.py).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cyclebench.experiments.options import DEFAULT_PROCESSES
from cyclebench.runner.plan import MeasureOptions
from cyclebench.ui import options as o
from cyclebench.ui.options import FloatRange
from cyclebench.ui.predict import predict_options
from cyclebench.ui.record import argument, group, option, takes

if TYPE_CHECKING:  # the design is imported where the command runs (docs/architecture.md, "Imports where used")
    from cyclebench.build.allocators import Allocator
    from cyclebench.experiments.options import BuildOptions, PredictOptions, RunnerOptions
    from cyclebench.experiments.run import RunConfig


@dataclass(frozen=True, kw_only=True)
class RunArgs:
    """`run`'s options (--help gives each one's meaning)."""

    files: tuple[Path, ...] = argument(nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
    globs: tuple[str, ...] = option("-b", "--bench", multiple=True, metavar="GLOB",
                                    help="Benchmarks to run: group/name glob or group (repeatable). Default: all.")
    params: tuple[str, ...] = option("-p", "--param", multiple=True, metavar="N[,N...]",
                                     help="Only these parameters (sizes, counts); with an exact -b name, any value.")
    repeat: int = option("--repeat", type=click.IntRange(1, 100000), default=MeasureOptions.repeat,
                         show_default=True, help="Rounds over the batch-size ladder (samples per batch size).")
    min_time: float = option("--min-time", type=o.Seconds(0, 3600), default=MeasureOptions.min_time,
                             show_default=True, help="Seconds of timed samples per benchmark (sizes the batches).")
    max_time: float = option("--max-time", type=o.Seconds(0.001, 3600), default=MeasureOptions.max_time,
                             show_default=True, help="Cap in seconds for slow operations (fewer rounds, at least 3).")
    warmup: float = option("--warmup", type=o.Seconds(0, 3600), default=MeasureOptions.warmup, show_default=True,
                           help="Seconds of untimed warm-up batches.")
    timeout: float | None = option("--timeout", type=o.Seconds(0.1, 86400), help="Seconds before a benchmark is "
                                   "declared hung and killed (default from --max-time).")
    runs: int = option("--runs", type=click.IntRange(1, 1000), default=1, show_default=True, help="Replicate runs, "
                       "one after another, stored as one group that compare takes as one side (gN).")
    label_args: tuple[str, ...] = group(o.label_option)
    processes: int = option("--processes", type=click.IntRange(1, 64), default=DEFAULT_PROCESSES, show_default=True,
                            help="Runner processes each benchmark's rounds are spread over, in passes over all "
                                 "benchmarks; the CI is bootstrapped over them (1: one process, the within-process "
                                 "CI only).")
    target_ci: float = option("--target-ci", type=FloatRange(0, 100), default=1.0, show_default=True,
                              metavar="PCT", help="Measure each benchmark in passes of a quarter of --repeat rounds "
                              "until its 95% CI is within ± this % (at least --processes passes; more, up to twice "
                              "the planned, while wider, within reach and under --max-time); 0: exactly --repeat "
                              "rounds over --processes.")
    seed: int = option("--seed", type=o.SEED, default=0, help="Seed of the ladder shuffling (0: random, recorded).")
    list_only: bool = option("--list", is_flag=True, help="List the benchmarks and exit.")
    json_path: Path | None = group(o.json_option)
    output: o.OutputOptions = group(o.format_option)
    db: str | None = group(o.db_option)
    wide: bool = group(o.wide_option)
    quiet: bool = option("-q", "--quiet", is_flag=True, help="No progress bar and no table.")
    net: bool = option("--net", is_flag=True, help="Show costs net of the loop's own cost (loop/empty, measured "
                       "first).")
    events_spec: str | None = option("-e", "--events", metavar="EVENTS", help="Counters read around every batch, "
                                     "perf syntax: 'task-clock,{cycles,instructions}'.")
    backend: str = option("--backend", type=click.Choice(["timing", "callgrind"]), default="timing",
                          show_default=True, help="callgrind: exact simulated counts per op (Ir, cache and branch "
                          "misses) instead of timing.")
    sim_iters: int = option("--sim-iters", type=click.IntRange(1), default=10, show_default=True,
                            help="callgrind: operations in the first collected batch (the second has twice as many).")
    cache_spec: str | None = option("--cache", metavar="'I1=S,A,L;D1=...;LL=...'", help="callgrind cache geometry "
                                    "(bytes, ways, line); default I1=D1=32768,8,64 LL=8388608,16,64.")
    plot_path: Path | None = group(o.plot_option("each result's per op with its CI"))
    allocators: list[Allocator] | None = group(o.allocator_option)
    predict: PredictOptions | None = group(predict_options)
    gbench: bool = option("--gbench", is_flag=True, help="FILES is one Google Benchmark executable: store its "
                          "benchmarks' ns per iteration (and cycles~) as this run's results, each the median of "
                          "--processes invocations (default 10 here) of --min-time seconds.")
    gbench_filter: str | None = option("--filter", metavar="REGEX", help="With --gbench: the benchmarks to run, "
                                       "Google Benchmark's own --benchmark_filter regex.")
    pin: RunnerOptions = group(o.runner_options)
    build: BuildOptions = group(o.build_options(positional=True))

    def config(self) -> RunConfig:
        """The design's record (experiments/run.py) of these options."""
        from cyclebench.experiments.run import RunConfig, counting
        from cyclebench.ui.common import parse_params

        opts = MeasureOptions(min_time=self.min_time, repeat=self.repeat, max_time=self.max_time,
                              warmup=self.warmup, seed=self.seed)
        groups, cache = counting(self.events_spec, self.cache_spec, self.backend)
        return RunConfig(spec=self.build.spec(), globs=self.globs, params=parse_params(self.params), cpu=self.pin.cpu,
                         options=opts, timeout=self.timeout, command=["cyclebench", *sys.argv[1:]],
                         fifo=self.pin.fifo, backend=self.backend, sim_iters=self.sim_iters, cache=cache,
                         events=groups, max_rss=self.pin.max_rss, processes=self.processes,
                         target_ci=self.target_ci / 100 if self.target_ci and self.processes > 1 else None,
                         labels=o.parse_labels(self.label_args), allocators=tuple(self.allocators or ()))


@click.command()
@takes(RunArgs)
def run(a: RunArgs) -> None:
    """Run the built-in suite, or the benchmarks in FILES (C files using cyclebench.h)."""
    if a.min_time > a.max_time:
        raise click.BadParameter(f"--min-time {a.min_time:g} is above --max-time {a.max_time:g}",
                                 param_hint="--min-time")
    from cyclebench.experiments.run import check_events, prepare
    from cyclebench.runner.plan import plan
    from cyclebench.ui import wis as wis_ui  # test cases among FILES: measured by intervals
    from cyclebench.ui.common import err, spinner
    from cyclebench.ui.finish import exit_status, finishing
    from cyclebench.ui.run import measure_replicates, print_list

    if a.gbench:
        from cyclebench.ui.gbench import run_gbench

        return run_gbench(a)
    if a.gbench_filter is not None:
        raise click.UsageError("--filter selects benchmarks of a Google Benchmark executable: give --gbench")
    if wis_ui.run_cases(a, refused={"-p/--param": bool(a.params), "--net": a.net, "-e/--events": bool(a.events_spec),
                                  "--backend callgrind": a.backend != "timing", "--runs": a.runs > 1,
                                  "--allocator": bool(a.allocators)}):
        return
    cfg = a.config()
    with finishing(), spinner("building", a.quiet):
        prepared = prepare(cfg)
    if a.list_only:  # what -b (and -p) select, in the suite's order
        benches = prepared.runner.list()
        chosen = {i.bench for i in plan(benches, a.globs)}  # loop/empty only when asked for
        print_list([b for b in benches if b.name in chosen], wide=a.wide)
        return
    if cfg.events and (warning := check_events(prepared.runner, cfg.events)):
        err.print(warning, style="yellow")
    exit_status(measure_replicates(a, cfg, prepared))
