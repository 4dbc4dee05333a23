"""`cyclebench scale`: throughput of 1..N tasks at once (the design: experiments/scale.py).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cyclebench.experiments import wis as _wis
from cyclebench.experiments.options import BuildOptions
from cyclebench.experiments.scale import ScaleConfig, execute, prepare
from cyclebench.report.text import safe_text
from cyclebench.ui import options as o
from cyclebench.ui.common import UserError, err, open_store, parse_params
from cyclebench.ui.finish import finishing
from cyclebench.ui.progress import Steps
from cyclebench.ui.record import argument, group, option, takes
from cyclebench.ui.scale import check_wis_csv, finish

if TYPE_CHECKING:
    from cyclebench.build.allocators import Allocator


@dataclass(frozen=True, kw_only=True)
class ScaleArgs:
    """`scale`'s options (--help gives each one's meaning)."""

    benches: tuple[str, ...] = argument(nargs=-1, metavar="[FILE.c...] [BENCH...]")
    tasks_text: str | None = option("--tasks", metavar="1..N|1,2,4", help="Task counts to sweep (N alone: 1..N; 1 "
                                    "is always added). Default: powers of two up to the CPU count, the CPU count and "
                                    "one more.")
    params: tuple[str, ...] = option("-p", "--param", multiple=True, metavar="N[,N...]",
                                     help="Only these parameters (sizes, counts); with an exact BENCH name, any value.")
    mode: str = option("--mode", type=click.Choice(["threads", "processes", "both"]), default="threads",
                       show_default=True, help="Tasks as threads of one process, as processes, or both "
                       "(will-it-scale's two modes).")
    duration: float = option("--duration", type=o.Seconds(0.01, 86400), default=2.0, show_default=True,
                             help="Seconds sampled per task count, after the warm-ups (split over the passes).")
    passes: int = option("--passes", type=click.IntRange(1, 50), default=3, show_default=True, help="Alternating "
                         "passes over the task counts (1..N, N..1, ...); speed-up = median of the passes' own "
                         "ratios, so clock drift between task counts cancels.")
    interval: float = option("--interval", type=o.Seconds(0.001, 3600), default=0.1, show_default=True,
                             help="Seconds between two reads of the counters.")
    warmup: float = option("--warmup", type=o.Seconds(0, 3600), default=0.5, show_default=True,
                           help="Seconds of intervals dropped at the start (and on, up to 1 s "
                           "more, while a task has not counted an operation).")
    cpus_text: str | None = option("--cpus", metavar="LIST", help="CPUs for the tasks, in order (task i → i-th, "
                                   "wrapping). Default: distinct cores first, then SMT siblings, CPU 0's core last.")
    retries: int = option("--retries", type=click.IntRange(0, 20), default=2, show_default=True, help="Measure a "
                          "task count again while other programs kept its tasks waiting for their CPUs.")
    plot_path: Path | None = option("--plot", type=click.Path(dir_okay=False, path_type=Path),
                                    help="Write throughput and efficiency vs tasks to FILE.png|svg|pdf.")
    json_path: Path | None = group(o.json_option)
    csv_path: Path | None = option("--csv", type=click.Path(dir_okay=False, path_type=Path),
                                   help="Also write one CSV row per benchmark × mode × task count.")
    csv_format: str = option("--csv-format", type=click.Choice(["cyclebench", "wis"]), default="cyclebench",
                             show_default=True, help="wis: will-it-scale's own CSV (columns tasks, processes, "
                             "processes_idle, threads, threads_idle, linear), one file per benchmark: put {name} "
                             "in the --csv path for several.")
    db: str | None = group(o.db_option)
    wide: bool = group(o.wide_option)
    label_args: tuple[str, ...] = group(o.label_option)
    allocators: list[Allocator] | None = group(o.allocator_option)
    build: BuildOptions = group(o.build_options(files_in="benches"))

    def config(self) -> ScaleConfig:
        """The design's record (experiments/scale.py); click.UsageError or UserError for options
        that cannot go together or do not parse."""
        from cyclebench.env.cpus import parse_cpus
        from cyclebench.report import plots
        from cyclebench.runner.plan import SelectionError
        from cyclebench.runner.scaling import default_tasks, parse_modes, parse_tasks

        for b in self.benches:
            o.not_a_file(b, "scale")
        labels = o.parse_labels(self.label_args)
        try:
            cases, others = _wis.split_files(self.build.files)
        except SelectionError as e:
            raise UserError(str(e)) from None
        if not self.benches and not cases:
            raise click.UsageError("Missing argument 'BENCH...' (or will-it-scale test cases: FILE.c or -f FILE.c).")
        if cases and self.params and not others:
            raise click.UsageError("-p/--param selects a benchmark's parameters; will-it-scale test cases have none")
        if cases and self.allocators:
            raise click.UsageError("--allocator links cyclebench benchmarks; will-it-scale test cases are built as "
                                   "they are")
        if self.plot_path is not None and self.plot_path.suffix.lower() not in plots.FORMATS:
            raise UserError(f"--plot: the file must end in {', '.join(plots.FORMATS)}")
        try:
            cpus = parse_cpus(self.cpus_text) if self.cpus_text else None
            ncpus = len(cpus) if cpus else len(os.sched_getaffinity(0))
            return ScaleConfig(
                spec=self.build.spec(sources=others) if cases and others else self.build.spec(), globs=self.benches,
                params=parse_params(self.params),
                tasks=parse_tasks(self.tasks_text) if self.tasks_text else default_tasks(ncpus),
                modes=parse_modes(self.mode), duration=self.duration, interval=self.interval, warmup=self.warmup,
                cpus=cpus, retries=self.retries, passes=self.passes, command=["cyclebench", *sys.argv[1:]],
                labels=labels, cases=cases, allocators=tuple(self.allocators or ()))
        except ValueError as e:  # ScaleError, a bad --cpus
            raise UserError(str(e)) from None


@click.command("scale")
@takes(ScaleArgs)
def scale_cmd(a: ScaleArgs) -> None:
    """Throughput of BENCH (globs; several allowed) run by 1..N tasks at once: speed-up,
    efficiency, per-task fairness (will-it-scale done right). will-it-scale test cases given
    as FILE.c or with -f run unmodified, as wis/<file stem> (BENCH then optional)."""
    cfg = a.config()
    unselected = [c.name for c in cfg.cases if not _wis.matches(c.name, a.benches)]
    if unselected:  # a file given is not measured: say so rather than drop it silently
        err.print(safe_text(f"cyclebench: {', '.join(unselected)} (given as files) not selected by "
                            f"{', '.join(a.benches)}: not measured"), highlight=False)
    store = open_store(a.db)
    with finishing(kept=lambda: f"task counts measured so far are kept ({store.url})"):
        with err.status("building", spinner="dots") as status:
            prepared = prepare(cfg, lambda what: status.update(f"building {what}"))
        if a.csv_path is not None and a.csv_format == "wis":
            check_wis_csv(a.csv_path, len(prepared.items))
        runs = (len(prepared.items) * len(cfg.modes) * len(cfg.tasks) * cfg.passes  # retries add more
                * max(1, len(cfg.allocators)))
        with Steps(runs, "scaling") as steps:
            run_id, series = execute(cfg, prepared, store, steps.step)
    finish(a, store, run_id, series, prepared.cpus, prepared.descriptions, cfg.modes[0])
