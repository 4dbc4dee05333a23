"""`cyclebench compare` around its design (experiments/compare.py): building with a spinner,
the measuring steps, the one-line errors, the interrupt that keeps what was measured, the
title; allocators compared as `variants` measures them."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from cyclebench.build.allocators import Allocator
from cyclebench.commands._common import (
    err,
    open_store,
    parse_params,
)
from cyclebench.commands._options import BuildOptions, OutputOptions, RunnerOptions, not_a_file
from cyclebench.experiments.compare import Budget, execute, param_groups
from cyclebench.experiments.comparison import Row
from cyclebench.experiments.run import RunConfig, prepare
from cyclebench.model import FAILED_STATUSES, Result
from cyclebench.report.titles import compare_title as title
from cyclebench.runner import interleave
from cyclebench.runner.plan import MeasureOptions
from cyclebench.store import Store, StoreError


class Args(Protocol):
    """What `compare` gives its measuring (commands/compare.CompareArgs has these and more)."""

    targets: tuple[str, ...]
    params: tuple[str, ...]
    repeat: int | None
    budget: float
    equivalence: float
    fail_on: tuple[str, ...]
    min_time: float
    alpha: float
    processes: int
    include_disturbed: bool
    json_path: Path | None
    output: OutputOptions
    db: str | None
    wide: bool
    plot_path: Path | None
    allocators: list[Allocator] | None
    pin: RunnerOptions
    build: BuildOptions


def compare_allocators(a: Args, labels: dict[str, str]) -> None:
    """Each allocator is its own binary, so its rounds cannot be interleaved batch by batch with
    another's: the benchmarks are measured as `variants` measures (rounds of one invocation per
    allocator in shuffled order, paired by round, signed-rank + Holm against the first). --repeat
    gives the rounds; --min-time is shared out over them as over compare's 60 rounds."""
    from cyclebench.commands import _variants as variants
    from cyclebench.experiments.variants import Sweep, make_variants

    for t in a.targets:
        not_a_file(t, "compare")
    sweep = Sweep(make_variants((), (), None, a.allocators or []), a.targets, parse_params(a.params), a.repeat,
                  a.min_time * 12 / (a.repeat or 60), labels=labels)
    run_id, data, unbuilt = variants.measure_and_store(sweep, a.build, a.pin, open_store(a.db))
    hit = sorted(f"{d['bench']} {v['label']}: {_verdict(v)}" for d in data for v in d["variants"]
                 if not v.get("baseline") and v.get("status") == "ok" and _fails(_verdict(v), a.fail_on))
    variants.show(data, run_id, unbuilt, a.json_path, a.wide, exit_on_failure=False)
    if hit:
        err.print(f"cyclebench: --fail-on: {'; '.join(hit)}", highlight=False)
        sys.exit(1)
    variants.exit_if_failed(data, unbuilt)


def _verdict(v: dict[str, Any]) -> str:
    """A measured variant's verdict against the baseline: slower, faster, ~, or inconclusive
    when none could be reached (too few pairs left once disturbed rounds were dropped: its note
    says how many)."""
    c = v.get("comparison")
    return str(c["verdict"]) if c else "inconclusive" + (f" ({v['note']})" if v.get("note") else "")


def _fails(verdict: str, fail_on: Sequence[str]) -> bool:
    """Whether a variants verdict (slower, faster, ~ or inconclusive) is one --fail-on names:
    slower/faster (or different: either), inconclusive (~ or no verdict at all)."""
    if verdict in ("slower", "faster"):
        return verdict in fail_on or "different" in fail_on
    return "inconclusive" in fail_on


def measure_and_judge(a: Args, labels: dict[str, str],
                      store: Store) -> tuple[int, list[Row], list[dict[str, Any]], str]:
    """`compare A B …`: build, measure interleaved (sequential design within ``budget``, or the
    fixed design of ``repeat`` rounds) and judge. Returns (run id, rows, measured results, title).
    Build, runner and store errors become one UserError line; Ctrl-C exits 130, results kept."""
    from cyclebench.commands._common import UserError, err
    from cyclebench.commands._finish import finishing
    from cyclebench.commands._progress import Steps

    targets, params, repeat, processes, pin = a.targets, parse_params(a.params), a.repeat, a.processes, a.pin
    budget, equivalence = Budget(a.budget, a.equivalence / 100), a.equivalence
    if len(targets) < 2:
        raise UserError("compare needs at least two benchmarks (or two run ids)")
    spec = a.build.spec()
    opts = MeasureOptions(min_time=a.min_time, repeat=repeat or 60)
    plan = interleave.split(repeat or 60, processes)
    design = None if repeat is not None else budget
    if design is None and len(plan) > 1 and plan[0] < interleave.SAFE_ROUNDS:
        err.print(f"cyclebench: warning: {plan[0]} rounds per process; fewer than {interleave.SAFE_ROUNDS} make "
                  "the CI over processes too coarse (false positives seen): raise --repeat", highlight=False)
    cfg = RunConfig(spec=spec, globs=targets, cpu=pin.cpu, options=opts, command=["cyclebench", *sys.argv[1:]],
                    fifo=pin.fifo, max_rss=pin.max_rss, labels=labels)
    opened: list[int] = []
    try:
        with finishing(interrupt=False):
            with err.status("building", spinner="dots"):
                prepared = prepare(cfg)
            n_sets = len(param_groups(prepared, targets, params))
            with Steps(n_sets * len(plan), "measuring (interleaved)") as steps:
                run_id, rows, measured = execute(cfg, prepared, store, targets, params, a.alpha,
                                                 processes=processes, on_process=steps.step,
                                                 include_disturbed=a.include_disturbed, budget=design,
                                                 on_open=opened.append)
    except KeyboardInterrupt:  # before finishing's: what is kept depends on whether the run opened
        if not opened:  # still building or calibrating: no run row, no result
            err.print("cyclebench: interrupted before anything was measured: nothing stored", highlight=False)
        else:
            try:
                kept = f"{len(store.results(opened[0]))} result(s) kept"
            except StoreError:
                kept = "the results stored so far are kept"
            err.print(f"cyclebench: interrupted: {kept} (run #{opened[0]}, {store.url})", highlight=False)
        sys.exit(130)
    procs = max(((r.get("extra") or {}).get("processes") or 1 for r in measured), default=1)
    how = ("Wilcoxon signed-rank, Holm, CI bootstrapped over processes" if design is None else
           f"sequential (budget {budget.seconds:g} s a pair, O'Brien–Fleming alpha spending, repeated CI, "
           f"equivalent within ±{equivalence:g}%)")
    design = (f"paired, interleaved, rounds over {procs} process{'es' if procs > 1 else ''} · CPU {prepared.cpu} · "
              f"{how}")
    try:  # the table's title (but the run id: an import renumbers) and α, so `show` prints the same table
        store.update_run(run_id, summary={"compare": [r.to_dict() for r in rows],
                                          "display": {"design": design, "alpha": a.alpha}})
    except StoreError as e:
        raise UserError(str(e)) from None
    return run_id, rows, measured, title(run_id, design)


def finish(a: Args, store: Store, rows: list[Row], measured: list[Result], title: str,
           run_id: int | None) -> None:
    """The table (not when stdout carries an export), --format/-o, --json, --plot; exit 1 when a
    measured benchmark failed or a verdict is one --fail-on names. ``run_id`` None: stored runs
    were compared (nothing stored)."""
    import json

    from cyclebench.commands._common import UserError, err, out, write_text
    from cyclebench.commands._export import deliver, export_comparisons
    from cyclebench.experiments.comparison import fail_outcomes
    from cyclebench.report import console as console_report

    if not a.output.to_stdout:  # stdout carries only the export
        console_report.print_comparisons(rows, out, title=title, alpha=a.alpha, wide=a.wide)
    if a.output.asked:
        deliver(a.output, export_comparisons(store, rows, a.output.fmt, run_id, title, a.alpha),
                stored="" if run_id is None else f"run #{run_id}")
    if a.json_path is not None:
        write_text(a.json_path, json.dumps([r.to_dict() for r in rows], indent=1) + "\n")
    if a.plot_path is not None:
        from cyclebench.report import plots

        try:
            n = plots.plot_comparisons(rows, a.plot_path, title=title)
        except OSError as e:
            raise UserError(f"cannot write {a.plot_path}: {e.strerror or e}") from None
        err.print(f"plot of {n} comparison(s): {a.plot_path}", highlight=False)
    failed = sorted({r["bench"] for r in measured if r.get("status") in FAILED_STATUSES})
    if failed:  # a crash is never a pass: exit 1
        err.print(f"cyclebench: {', '.join(failed)} did not produce a valid result (see notes)", style="red")
        sys.exit(1)
    hit = fail_outcomes(rows, a.fail_on)
    if hit:
        err.print(f"cyclebench: --fail-on: {hit}", highlight=False)
        sys.exit(1)
