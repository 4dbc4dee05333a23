"""`cyclebench compare`: run benchmarks side by side and judge them, or judge stored runs, or
set hosts side by side (the designs: experiments/compare.py, experiments/comparison.py; around
them: commands/_compare.py, compare_runs.py, compare_hosts.py).
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
    open_store,
    out,
    parse_params,
    write_text,
)
from cyclebench.commands._compare import compare_allocators, measure_and_judge
from cyclebench.commands._export import check_compare_format, deliver, export_comparisons
from cyclebench.commands._options import (
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
    not_a_file,
    parse_labels,
    plot_option,
    runner_options,
    wide_option,
)
from cyclebench.commands._predict import after_run, predict_options
from cyclebench.commands.compare_runs import judge_stored
from cyclebench.experiments.compare import Budget
from cyclebench.experiments.comparison import fail_outcomes
from cyclebench.experiments.predict import PredictOptions
from cyclebench.model import FAILED_STATUSES
from cyclebench.report import console as console_report


@click.command("compare")
@click.argument("targets", nargs=-1, metavar="[FILE.c...] A B [C...] | RUN RUN...")
@click.option("--by", type=click.Choice(["host"]), default=None,
              help="Stored runs side by side, one column per host (given run ids, or each host's newest run).")
@click.option("-p", "--param", "params", multiple=True, metavar="N[,N...]",
              help="Parameters to compare at (default: every parameter the benchmarks share).")
@click.option("--repeat", type=click.IntRange(6, 100000), default=None,
              help="Fixed design: this many rounds (pairs) per comparison, spread over --processes, Holm. "
                   "Default: the sequential design (--budget).")
@click.option("--budget", type=Seconds(0.05, 3600), default=Budget.seconds, show_default=True,
              help="Sequential design: seconds of measuring per compared pair and parameter; processes of 10 "
                   "rounds are looked at one by one until each pair is slower/faster, equivalent, or this ends "
                   "(inconclusive). Error rate held at --alpha by alpha spending (Lan & DeMets 1983).")
@click.option("--equivalence", type=click.FloatRange(0, 100, min_open=True), default=100 * Budget.equivalence,
              show_default=True, metavar="PCT",
              help="Sequential design: 'equivalent' when the difference is shown to lie within ± this % of A.")
@click.option("--fail-on", "fail_on", type=click.Choice(["slower", "faster", "different", "inconclusive"]),
              multiple=True, help="Exit 1 when a comparison ends so (repeatable; different = slower or faster). "
                                  "Default: exit 0 whatever the verdicts.")
@click.option("--min-time", type=Seconds(0, 3600), default=0.2, show_default=True,
              help="Seconds of timed samples per benchmark over 60 rounds (or --repeat): sizes the batches.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True), default=0.002, show_default=True,
              help="Significance level (after Holm correction).")
@click.option("--processes", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Runner processes the rounds are spread over (order reversed in every other one; "
                   "the CI is bootstrapped over them); sequential design: processes before the first look.")
@click.option("--include-disturbed", is_flag=True,
              help="Let results whose batches were mostly preempted or migrated into the verdicts (default: not).")
@click.option("--baseline", metavar="RUN", help="Stored runs: the side the others are judged against (default: "
              "the first).")
@json_option
@format_option
@db_option
@wide_option
@label_option
@plot_option("each comparison's Δ with its CI")
@allocator_option
@predict_options
@runner_options
@build_options(files_in="targets")
def compare_cmd(targets: tuple[str, ...], params: tuple[str, ...], build: BuildOptions, pin: RunnerOptions,
                repeat: int | None, budget: float, equivalence: float, fail_on: tuple[str, ...],
                min_time: float, alpha: float, processes: int, include_disturbed: bool, baseline: str | None,
                by: str | None, json_path: Path | None, db: str | None, wide: bool, label_args: tuple[str, ...],
                output: OutputOptions, plot_path: Path | None, allocators: list[Allocator] | None,
                predict: PredictOptions | None = None) -> None:
    """Compare benchmarks A B [C...] (paired, interleaved batch by batch, rounds spread over
    several processes; each against A), or two stored runs RUN_A RUN_B (unpaired), with a
    verdict only for real differences. With --allocator, the benchmarks given are measured
    under each allocator, each its own binary, as `variants --allocator` does."""
    import json

    if by == "host":
        from cyclebench.commands.compare_hosts import compare_by_host

        if not all(t.isdigit() for t in targets):
            raise click.UsageError("compare --by host takes stored run ids (or none: each host's newest run)")
        if output.asked or label_args:
            raise click.UsageError("compare --by host measures nothing and exports no format: use --json FILE")
        return compare_by_host(open_store(db, create=False), [int(t) for t in targets], wide, json_path)
    if not targets:
        raise click.UsageError("compare needs benchmarks A B [C...] or stored runs RUN RUN [...]")
    stored_runs = all((t[:1] == "g" and t[1:].isdigit()) or all(x.isdigit() for x in t.split(",")) for t in targets)
    labels = parse_labels(label_args)
    if stored_runs and labels:
        raise click.UsageError("--label names the run a compare measures; comparing stored runs stores none")
    if not stored_runs:  # bad input is said before the database is opened
        for t in targets:
            not_a_file(t, "compare")
    check_compare_format(output, stored_runs)
    if predict is not None and (stored_runs or allocators):
        raise click.UsageError("--predict predicts what compare measures: not stored runs, nor --allocator builds")
    if allocators:
        if stored_runs or output.asked or plot_path is not None:
            raise click.UsageError("--allocator measures benchmarks (not stored runs), with --json for its output")
        compare_allocators(allocators, targets, params, build, pin, repeat, min_time, labels, db, json_path, wide,
                            fail_on)
        return
    store = open_store(db, create=not stored_runs)
    if stored_runs:
        rows, title = judge_stored(targets, store, baseline, alpha, include_disturbed, wide, output.to_stdout)
        measured: list[dict[str, Any]] = []
    else:
        run_id, rows, measured, title = measure_and_judge(
            targets, parse_params(params), build, pin, repeat, Budget(budget, equivalence / 100), min_time, alpha,
            processes, include_disturbed, labels, store)
    if not output.to_stdout:  # stdout carries only the export
        console_report.print_comparisons(rows, out, title=title, alpha=alpha, wide=wide)
    if predict is not None and not stored_runs:
        from cyclebench.build import build as build_binary

        after_run(predict, store, run_id, {"": build_binary(build.spec()).path}, wide, output.to_stdout)
    if output.asked:
        measured_run = None if stored_runs else run_id
        deliver(output, export_comparisons(store, rows, output.fmt, measured_run, title, alpha),
                stored="" if stored_runs else f"run #{run_id}")
    if json_path is not None:
        write_text(json_path, json.dumps([r.to_dict() for r in rows], indent=1) + "\n")
    if plot_path is not None:
        from cyclebench.report import plots

        try:
            n = plots.plot_comparisons(rows, plot_path, title=title)
        except OSError as e:
            raise UserError(f"cannot write {plot_path}: {e.strerror or e}") from None
        err.print(f"plot of {n} comparison(s): {plot_path}", highlight=False)
    failed = sorted({r["bench"] for r in measured if r.get("status") in FAILED_STATUSES})
    if failed:  # a crash is never a pass: exit 1
        err.print(f"cyclebench: {', '.join(failed)} did not produce a valid result (see notes)", style="red")
        sys.exit(1)
    hit = fail_outcomes(rows, fail_on)
    if hit:
        err.print(f"cyclebench: --fail-on: {hit}", highlight=False)
        sys.exit(1)
