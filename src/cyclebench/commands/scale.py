"""`cyclebench scale`: how throughput grows with the number of tasks (DESIGN.md §6).

The recipe: build the runner, then for each benchmark and mode sweep the task counts in
``passes`` alternating passes (1, 2, …, N, then N, …, 1, …), each task count measured again
while other programs kept its tasks waiting (``retries``), and store one result row per task
count as it comes. Starting the runner and reading its lines: runner.scaling; where the
tasks go: env.cpus; the statistics (why passes, what is disturbed): stats.scaling.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from cyclebench.build import Binary, BuildError, BuildSpec, build
from cyclebench.commands._common import FAILED_STATUSES, UserError, err, open_run, open_store, out, write_text
from cyclebench.commands._options import (
    BuildOptions,
    Seconds,
    build_options,
    db_option,
    json_option,
    label_option,
    not_a_file,
    parse_labels,
    wide_option,
)
from cyclebench.commands._progress import Steps
from cyclebench.env.cpus import cpu_order, parse_cpus
from cyclebench.model import OK, Item, ScaleRun, Series
from cyclebench.runner import Runner, RunnerError
from cyclebench.runner.plan import SelectionError, plan
from cyclebench.runner.scaling import ScaleOptions, default_tasks, parse_modes, parse_tasks, run_one
from cyclebench.stats import scaling
from cyclebench.store import Store, StoreError
from cyclebench.store import runfile as json_report


@dataclass(kw_only=True)
class ScaleConfig(ScaleOptions):
    """Everything `cyclebench scale` was asked to do (the runner's own options: ScaleOptions)."""

    spec: BuildSpec
    globs: Sequence[str] = ()
    tasks: Sequence[int] = (1, 2)
    modes: Sequence[str] = ("threads",)
    cpus: Sequence[int] | None = None  # None: cpu_order()
    retries: int = 2  # a disturbed task count is measured again up to this many times
    passes: int = 3  # alternating passes over the task counts, each lasting duration / passes
    command: Sequence[str] = ()
    labels: dict[str, str] | None = None  # --label KEY=VALUE: stored with the run


# ----------------------------------------------------------------------------- the sweep

Point = tuple[ScaleRun, scaling.Summary]


def measure(binary: Path, bench: str, param: int | None, mode: str, n: int, cfg: ScaleConfig,
            cpus: Sequence[int]) -> Point:
    """One task count, measured again (up to cfg.retries times) while disturbed; the attempt
    with the least waiting for CPUs is kept, and ``attempts`` says how many were made."""
    ncpus = scaling.cpus_used(cpus, n)
    best: Point | None = None
    for attempt in range(1, cfg.retries + 2):
        run = run_one(binary, bench, param, mode, n, cfg, cpus)
        s = scaling.summarize(run, ncpus)
        s["attempts"] = attempt
        if best is None or (run.status == OK and (s.get("wait_pct") or 0) < (best[1].get("wait_pct") or 0)):
            best = (run, s)
        if run.status != OK or not scaling.disturbed(s):
            break
    assert best is not None
    best[1]["attempts"] = attempt
    return best


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep; ``done`` holds what sweep() would have returned for the passes
    finished so far (task counts with no finished pass are absent)."""

    def __init__(self, done: list[Point]) -> None:
        super().__init__()
        self.done = done


def sweep(binary: Path, bench: str, param: int | None, mode: str, cfg: ScaleConfig, cpus: Sequence[int],
          on_start: Callable[[str], None] = lambda _l: None) -> list[Point]:
    """Every task count of one benchmark and mode, in cfg.passes alternating passes (see
    stats.scaling). Returns (merged run, summary) per task count measured, in task order;
    a run that does not end OK ends the sweep (its intervals are kept). Ctrl-C raises
    SweepInterrupted carrying the summaries of the runs finished before it."""
    counts = sorted(cfg.tasks)
    passes = max(1, cfg.passes)
    sub = dataclasses.replace(cfg, duration=cfg.duration / passes)
    got: dict[int, list[Point]] = {n: [] for n in counts}
    stop = interrupted = False
    try:
        for p in range(passes):
            for n in counts if p % 2 == 0 else counts[::-1]:
                on_start(f"{bench} {mode} ×{n}" + (f" (pass {p + 1}/{passes})" if passes > 1 else ""))
                run, s = measure(binary, bench, param, mode, n, sub, cpus)
                got[n].append((run, s))
                if run.status != OK:
                    stop = True
                    break
            if stop:
                break
    except KeyboardInterrupt:
        interrupted = True
    done = scaling.combine(got, counts, cpus)
    if interrupted:
        raise SweepInterrupted(done)
    return done


# ----------------------------------------------------------------------------- recipe


@dataclass
class Prepared:
    binary: Binary
    runner: Runner
    items: list[Item]
    cpus: list[int]


def prepare(cfg: ScaleConfig) -> Prepared:
    """Build the runner and expand the selection. Raises BuildError, ToolMissing,
    FileNotFoundError, RunnerError, SelectionError."""
    binary = build(cfg.spec)
    runner = Runner(binary.path)
    items = plan(runner.list(), cfg.globs or ["contend"])
    cpus = list(cfg.cpus) if cfg.cpus else cpu_order()
    if not cpus:
        raise SelectionError("no CPU to run tasks on")
    return Prepared(binary, runner, items, cpus)


def execute(cfg: ScaleConfig, prepared: Prepared, store: Store,
            on_start: Callable[[str], None] = lambda _l: None) -> tuple[int, list[Series]]:
    """Run the sweep; each task count is stored as it comes. Returns (run id, series).
    KeyboardInterrupt marks the run interrupted and propagates (stored rows stay)."""

    cpus, b = prepared.cpus, prepared.binary
    settings = {"tasks": list(cfg.tasks), "modes": list(cfg.modes), "duration": cfg.duration, "interval": cfg.interval,
                "warmup": cfg.warmup, "cpus": cpus, "batch_ns": cfg.batch_ns, "wait_limit": scaling.WAIT_LIMIT,
                "retries": cfg.retries, "passes": cfg.passes}
    # one environment capture for every command (stat and scale runs stored no topology or
    # frequency before): the first task CPU's, no timer calibration (throughput needs none)
    run_id, _ = open_run(store, cfg.command, cpus[0], cfg.spec.sources, b, None, env_extra={"scale": settings},
                         pinned=False, labels=cfg.labels)
    series: list[Series] = []
    with store.finishing(run_id):
        for item in prepared.items:
            for mode in cfg.modes:
                ser = Series(item.bench, item.param, mode)
                series.append(ser)
                try:
                    done = sweep(b.path, item.bench, item.param, mode, cfg, cpus, on_start)
                except SweepInterrupted as e:  # keep the passes finished before Ctrl-C
                    _store_points(store, run_id, ser, e.done, interrupted=True)
                    raise
                _store_points(store, run_id, ser, done)
    store.update_run(run_id, summary={"scale": [
        {"bench": s.bench, "param": s.param, "mode": s.mode,
         "speedup": {str(p["tasks"]): p.get("speedup") for p in s.points}} for s in series]})
    store.finish_run(run_id, "complete")
    return run_id, series


def _store_points(store: Store, run_id: int, ser: Series, done: list[Point], interrupted: bool = False) -> None:
    for run, s in done:
        fields = scaling.row_fields(run, s)
        if interrupted:
            fields["extra"]["notes"] = [*fields["extra"]["notes"], f"interrupted after {s.get('passes')} pass(es)"]
        fields["id"] = store.add_result(run_id, fields)
        ser.points.append({**s, "status": run.status, "reason": run.reason, "notes": fields["extra"]["notes"]})


@click.command("scale")
@click.argument("benches", nargs=-1, required=True)
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
@db_option
@wide_option
@label_option
@build_options()
def scale_cmd(benches: tuple[str, ...], build: BuildOptions, tasks_text: str | None, mode: str,
              duration: float, passes: int, interval: float, warmup: float, cpus_text: str | None, retries: int,
              plot_path: Path | None, json_path: Path | None, csv_path: Path | None, db: str | None,
              wide: bool, label_args: tuple[str, ...]) -> None:
    """Throughput of BENCH (globs; several allowed) run by 1..N tasks at once: speed-up,
    efficiency, per-task fairness (will-it-scale done right)."""
    import csv
    import io

    from cyclebench.report import plots

    for b in benches:
        not_a_file(b, "scale")
    labels = parse_labels(label_args)
    if plot_path is not None and plot_path.suffix.lower() not in plots.FORMATS:
        raise UserError(f"--plot: the file must end in {', '.join(plots.FORMATS)}")
    try:
        cpus = parse_cpus(cpus_text) if cpus_text else None
        modes = parse_modes(mode)
        ncpus = len(cpus) if cpus else len(os.sched_getaffinity(0))
        tasks = parse_tasks(tasks_text) if tasks_text else default_tasks(ncpus)
        spec = build.spec()
    except ValueError as e:  # ScaleError, a bad --cpus
        raise UserError(str(e)) from None
    cfg = ScaleConfig(spec=spec, globs=benches, tasks=tasks, modes=modes, duration=duration, interval=interval,
                      warmup=warmup, cpus=cpus, retries=retries, passes=passes, command=["cyclebench", *sys.argv[1:]],
                      labels=labels)
    store = open_store(db)
    try:
        with err.status("building", spinner="dots"):
            prepared = prepare(cfg)
        runs = len(prepared.items) * len(cfg.modes) * len(cfg.tasks) * cfg.passes  # retries add more
        with Steps(runs, "scaling") as steps:
            run_id, series = execute(cfg, prepared, store, steps.step)
    except BuildError as e:
        if e.output:
            err.print(e.output, markup=False, highlight=False)
        raise UserError(str(e)) from None
    except (FileNotFoundError, RunnerError, SelectionError, StoreError) as e:
        raise UserError(str(e)) from None
    except KeyboardInterrupt:
        err.print(f"cyclebench: interrupted: task counts measured so far are kept ({store.url})")
        sys.exit(130)
    used = len(set(prepared.cpus))
    for s in series:
        out.print(plots.scale_table(s, wide=wide))
    chart = plots.text_chart(series)
    if chart:
        out.print("\n".join(chart), highlight=False, markup=False)
    pct = scaling.sampler_cpu_pct(series)
    err.print(f"run #{run_id} · tasks on CPUs {','.join(map(str, prepared.cpus))} ({used} CPUs) · sampler used "
              f"{'-' if pct is None else f'{pct:.3f}'}% of one CPU at most · stored in {store.url}", highlight=False)
    if plot_path is not None:
        w, h = plots.plot_scaling(series, plot_path, ncpus=used, title=f"cyclebench scale · run #{run_id}")
        err.print(f"plot written to {plot_path} ({w}×{h} px)", highlight=False)
    if json_path is not None:
        json_report.dump(json_report.run_to_dict(store, run_id), json_path)
    if csv_path is not None:
        rows, buf = scaling.csv_rows(series), io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["bench"])
        writer.writeheader()
        writer.writerows(rows)
        write_text(csv_path, buf.getvalue(), f"run #{run_id}")
    bad = [(s.label, p) for s in series for p in s.points if p.get("status") in FAILED_STATUSES]
    for label, p in bad:
        err.print(f"cyclebench: {label} with {p['tasks']} task(s): {p.get('reason')}", style="red", highlight=False)
    if bad:
        sys.exit(1)
