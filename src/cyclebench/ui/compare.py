"""`cyclebench compare` around its design (experiments/compare.py): building with a spinner,
the measuring steps, the one-line errors, the interrupt that keeps what was measured, the
title."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from cyclebench.model import COMPARE, FAILED_STATUSES, Result
from cyclebench.report.titles import compare_title as title
from cyclebench.store import StoreError
from cyclebench.ui.common import err, parse_params, spinner
from cyclebench.ui.options import OutputOptions

if TYPE_CHECKING:
    from cyclebench.experiments.comparison import Row
    from cyclebench.experiments.options import Budget, BuildOptions, RunnerOptions
    from cyclebench.runner.plan import MeasureOptions
    from cyclebench.store import Store


class Args(Protocol):
    """What `compare` gives its measuring (commands/compare.CompareArgs has these and more)."""

    targets: tuple[str, ...]
    params: tuple[str, ...]
    repeat: int | None
    budget: float
    equivalence: float
    fail_on: tuple[str, ...]
    min_time: float | None
    alpha: float
    processes: int
    include_disturbed: bool
    json_path: Path | None
    output: OutputOptions
    db: str | None
    wide: bool
    plot_path: Path | None
    pin: RunnerOptions
    build: BuildOptions


def measure_and_judge(a: Args, labels: dict[str, str],
                      store: Store) -> tuple[int, list[Row], list[Result], str]:
    """`compare A B …`: build, measure interleaved (sequential design within ``budget``, or the
    fixed design of ``repeat`` rounds) and judge. Returns (run id, rows, measured results, title).
    Build, runner and store errors become one UserError line; Ctrl-C exits 130, results kept."""
    from cyclebench.experiments.compare import describe, execute, keep_table, param_groups
    from cyclebench.experiments.options import Budget
    from cyclebench.experiments.run import RunConfig, prepare
    from cyclebench.runner import interleave
    from cyclebench.ui.common import UserError
    from cyclebench.ui.finish import finishing
    from cyclebench.ui.progress import Steps

    targets, params, repeat, processes, pin = a.targets, parse_params(a.params), a.repeat, a.processes, a.pin
    budget = Budget(a.budget, a.equivalence / 100)
    if len(targets) < 2:
        raise UserError("compare needs at least two benchmarks (or two run ids)")
    spec = a.build.spec()
    opts = measure_options(repeat, a.min_time, budget)
    plan = interleave.split(repeat or 60, processes)
    design = None if repeat is not None else budget
    if design is None and len(plan) > 1 and plan[0] < interleave.SAFE_ROUNDS:
        err.print(f"cyclebench: warning: {plan[0]} rounds per process; fewer than {interleave.SAFE_ROUNDS} make "
                  "the CI over processes too coarse (false positives seen): raise --repeat", highlight=False)
    cfg = RunConfig(spec=spec, globs=targets, cpu=pin.cpu, options=opts, command=["cyclebench", *sys.argv[1:]],
                    fifo=pin.fifo, max_rss=pin.max_rss, labels=labels, purpose=COMPARE)
    opened: list[int] = []
    processes_done: list[str] = []

    def kept() -> str:  # what is kept depends on whether the run opened
        if not opened and processes_done:  # measuring: the run opens once every set is measured
            return "nothing stored (compare stores its run once every set is measured)"
        if not opened:  # still building: no run row, no result
            return "nothing was measured, nothing stored"
        try:
            n = f"{len(store.results(opened[0]))} result(s) kept"
        except StoreError:
            n = "the results stored so far are kept"
        return f"{n} (run #{opened[0]}, {store.url})"

    with finishing(kept):
        with spinner("building"):
            prepared = prepare(cfg)
        n_sets = len(param_groups(prepared, targets, params))
        with Steps(n_sets * len(plan), "measuring (interleaved)") as steps:
            def step(label: str) -> None:
                processes_done.append(label)
                steps.step(label)

            run_id, rows, measured = execute(cfg, prepared, store, targets, params, a.alpha, processes=processes,
                                             on_process=step, include_disturbed=a.include_disturbed,
                                             budget=design, on_open=opened.append)
    how = describe(measured, prepared.cpu, design)
    try:
        keep_table(store, run_id, rows, how, a.alpha)
    except StoreError as e:
        raise UserError(str(e)) from None
    return run_id, rows, measured, title(run_id, how)


def measure_options(repeat: int | None, min_time: float | None, budget: Budget) -> MeasureOptions:
    """How compare sizes its rounds: the fixed design (``repeat`` rounds) over FIXED_MIN_TIME
    seconds a benchmark, the sequential one (``repeat`` None) as ``budget`` says (shorter rounds,
    less warm-up: its first look comes sooner); ``min_time`` (--min-time), when given, either way."""
    from cyclebench.experiments.options import FIXED_MIN_TIME
    from cyclebench.runner.plan import MeasureOptions

    if repeat is not None:
        return MeasureOptions(min_time=FIXED_MIN_TIME if min_time is None else min_time, repeat=repeat)
    return MeasureOptions(min_time=budget.min_time if min_time is None else min_time, repeat=60, warmup=budget.warmup)


def finish(a: Args, store: Store, rows: list[Row], measured: list[Result], title: str,
           run_id: int | None) -> None:
    """The table (not when stdout carries an export), --format/-o, --json, --plot; exit 1 when a
    measured benchmark failed or a verdict is one --fail-on names. ``run_id`` None: stored runs
    were compared (nothing stored)."""
    import json

    from cyclebench.experiments.comparison import fail_outcomes
    from cyclebench.report import console as console_report
    from cyclebench.ui.common import out, write_text, writing
    from cyclebench.ui.export import deliver, export_comparisons

    if not a.output.to_stdout:  # stdout carries only the export
        console_report.print_comparisons(rows, out, title=title, alpha=a.alpha, wide=a.wide)
    if a.output.asked:
        deliver(a.output, export_comparisons(store, rows, a.output.fmt, run_id, title, a.alpha),
                stored="" if run_id is None else f"run #{run_id}")
    if a.json_path is not None:
        write_text(a.json_path, json.dumps([r.to_dict() for r in rows], indent=1) + "\n")
    if a.plot_path is not None:
        from cyclebench.report import plots

        with writing(a.plot_path, f"run #{run_id}" if run_id is not None else ""):
            n = plots.plot_comparisons(rows, a.plot_path, title=title)
        err.print(f"plot of {n} comparison(s): {a.plot_path}", highlight=False)
    failed = sorted({r["bench"] for r in measured if r.get("status") in FAILED_STATUSES})
    if failed:  # a crash is never a pass: exit 1
        err.print(f"cyclebench: {', '.join(failed)} did not produce a valid result (see notes)", style="red")
        sys.exit(1)
    hit = fail_outcomes(rows, a.fail_on)
    if hit:
        err.print(f"cyclebench: --fail-on: {hit}", highlight=False)
        sys.exit(1)
