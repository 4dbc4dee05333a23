"""`cyclebench scale`: throughput of 1..N tasks at once (the design: experiments/scale.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from cyclebench.build.allocators import Allocator
from cyclebench.commands._common import FAILED_STATUSES, UserError, err, open_store, write_text
from cyclebench.commands._finish import finishing
from cyclebench.commands._options import (
    BuildOptions,
    Seconds,
    allocator_option,
    build_options,
    db_option,
    json_option,
    label_option,
    not_a_file,
    parse_labels,
    wide_option,
)
from cyclebench.commands._progress import Steps
from cyclebench.commands._scale import check_wis_csv, print_series, write_wis_csv
from cyclebench.env.cpus import parse_cpus
from cyclebench.experiments import wis as _wis
from cyclebench.experiments.scale import ScaleConfig, execute, prepare
from cyclebench.report.text import safe_text
from cyclebench.runner.plan import SelectionError
from cyclebench.runner.scaling import default_tasks, parse_modes, parse_tasks
from cyclebench.stats import scaling
from cyclebench.store import runfile as json_report


@click.command("scale")
@click.argument("benches", nargs=-1, metavar="[FILE.c...] [BENCH...]")
@click.option("--tasks", "tasks_text", metavar="1..N|1,2,4",
              help="Task counts to sweep (N alone: 1..N; 1 is always added). Default: powers of two up to the "
                   "CPU count, the CPU count and one more.")
@click.option("--mode", type=click.Choice(["threads", "processes", "both"]), default="threads", show_default=True)
@click.option("--duration", type=Seconds(0.01, 86400), default=2.0, show_default=True,
              help="Seconds sampled per task count, after the warm-ups (split over the passes).")
@click.option("--passes", type=click.IntRange(1, 50), default=3, show_default=True,
              help="Alternating passes over the task counts (1..N, N..1, ...); speed-up = median of the passes' "
                   "own ratios, so clock drift between task counts cancels.")
@click.option("--interval", type=Seconds(0.001, 3600), default=0.1, show_default=True,
              help="Seconds between two reads of the counters.")
@click.option("--warmup", type=Seconds(0, 3600), default=0.5, show_default=True,
              help="Seconds of intervals dropped at the start.")
@click.option("--cpus", "cpus_text", metavar="LIST",
              help="CPUs for the tasks, in order (task i → i-th, wrapping). Default: distinct cores first, then "
                   "SMT siblings, CPU 0's core last.")
@click.option("--retries", type=click.IntRange(0, 20), default=2, show_default=True,
              help="Measure a task count again while other programs kept its tasks waiting for their CPUs.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write throughput and efficiency vs tasks to FILE.png|svg|pdf.")
@json_option
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write one CSV row per benchmark × mode × task count.")
@click.option("--csv-format", "csv_format", type=click.Choice(["cyclebench", "wis"]), default="cyclebench",
              show_default=True, help="wis: will-it-scale's own CSV (tasks,processes,processes_idle,threads,"
              "threads_idle,linear), one file per benchmark: put {name} in the --csv path for several.")
@db_option
@wide_option
@label_option
@allocator_option
@build_options(files_in="benches")
def scale_cmd(benches: tuple[str, ...], build: BuildOptions, tasks_text: str | None, mode: str,
              duration: float, passes: int, interval: float, warmup: float, cpus_text: str | None, retries: int,
              plot_path: Path | None, json_path: Path | None, csv_path: Path | None, csv_format: str,
              db: str | None, wide: bool, label_args: tuple[str, ...], allocators: list[Allocator] | None) -> None:
    """Throughput of BENCH (globs; several allowed) run by 1..N tasks at once: speed-up,
    efficiency, per-task fairness (will-it-scale done right). will-it-scale test cases given
    as FILE.c or with -f run unmodified, as wis/<file stem> (BENCH then optional)."""
    import csv
    import io

    from cyclebench.report import plots

    for b in benches:
        not_a_file(b, "scale")
    labels = parse_labels(label_args)
    try:
        cases, others = _wis.split_files(build.files)
    except SelectionError as e:
        raise UserError(str(e)) from None
    if not benches and not cases:
        raise click.UsageError("Missing argument 'BENCH...' (or will-it-scale test cases: FILE.c or -f FILE.c).")
    if cases and allocators:
        raise click.UsageError("--allocator links cyclebench benchmarks; will-it-scale test cases are built as "
                               "they are")
    if plot_path is not None and plot_path.suffix.lower() not in plots.FORMATS:
        raise UserError(f"--plot: the file must end in {', '.join(plots.FORMATS)}")
    try:
        cpus = parse_cpus(cpus_text) if cpus_text else None
        modes = parse_modes(mode)
        ncpus = len(cpus) if cpus else len(os.sched_getaffinity(0))
        tasks = parse_tasks(tasks_text) if tasks_text else default_tasks(ncpus)
        spec = build.spec(sources=others) if cases and others else build.spec()
    except ValueError as e:  # ScaleError, a bad --cpus
        raise UserError(str(e)) from None
    cfg = ScaleConfig(spec=spec, globs=benches, tasks=tasks, modes=modes, duration=duration, interval=interval,
                      warmup=warmup, cpus=cpus, retries=retries, passes=passes, command=["cyclebench", *sys.argv[1:]],
                      labels=labels, cases=cases, allocators=tuple(allocators or ()))
    unselected = [c.name for c in cases if not _wis.matches(c.name, benches)]
    if unselected:  # a file given is not measured: say so rather than drop it silently
        err.print(safe_text(f"cyclebench: {', '.join(unselected)} (given as files) not selected by "
                            f"{', '.join(benches)}: not measured"), highlight=False)
    store = open_store(db)
    with finishing(kept=lambda: f"task counts measured so far are kept ({store.url})"):
        with err.status("building", spinner="dots") as status:
            prepared = prepare(cfg, lambda what: status.update(f"building {what}"))
        if csv_path is not None and csv_format == "wis":
            check_wis_csv(csv_path, len(prepared.items))
        runs = (len(prepared.items) * len(cfg.modes) * len(cfg.tasks) * cfg.passes  # retries add more
                * max(1, len(cfg.allocators)))
        with Steps(runs, "scaling") as steps:
            run_id, series = execute(cfg, prepared, store, steps.step)
    used = len(set(prepared.cpus))
    print_series(series, prepared.descriptions, cfg.modes[0], wide)
    pct = scaling.sampler_cpu_pct(series)
    err.print(f"run #{run_id} · tasks on CPUs {','.join(map(str, prepared.cpus))} ({used} CPUs) · sampler used "
              f"{'-' if pct is None else f'{pct:.3f}'}% of one CPU at most · stored in {store.url}", highlight=False)
    if plot_path is not None:
        w, h = plots.plot_scaling(series, plot_path, ncpus=used, title=f"cyclebench scale · run #{run_id}")
        err.print(f"plot written to {plot_path} ({w}×{h} px)", highlight=False)
    if json_path is not None:
        json_report.dump(json_report.run_to_dict(store, run_id), json_path)
    if csv_path is not None and csv_format == "wis":
        write_wis_csv(series, csv_path, f"run #{run_id}")
    elif csv_path is not None:
        rows, buf = scaling.csv_rows(series), io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["bench"])
        writer.writeheader()
        writer.writerows(rows)
        write_text(csv_path, buf.getvalue(), f"run #{run_id}")
    bad = [(s.label, p) for s in series for p in s.points if p.get("status") in FAILED_STATUSES]
    for label, p in bad:
        err.print(f"cyclebench: {label} with {p['tasks']} task(s): {p.get('reason')}", style="red", highlight=False,
                  soft_wrap=True)  # the whole reason: an assert's errno comes last
    if bad:
        sys.exit(1)
