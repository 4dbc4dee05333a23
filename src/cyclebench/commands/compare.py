"""`cyclebench compare`: run benchmarks side by side and judge them, or judge stored runs, or
set hosts side by side (the designs: experiments/compare.py, experiments/comparison.py,
experiments/stored.py; what is shown around them: ui/compare.py, ui/stored.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cyclebench.experiments.options import FIXED_MIN_TIME, Budget
from cyclebench.ui import options as o
from cyclebench.ui.options import FloatRange
from cyclebench.ui.predict import predict_options
from cyclebench.ui.record import argument, group, option, takes
from cyclebench.ui.revisions import repo_options

if TYPE_CHECKING:  # the designs are imported where the command runs (docs/architecture.md, "Imports where used")
    from cyclebench.build.allocators import Allocator
    from cyclebench.experiments.options import BuildOptions, PredictOptions, RunnerOptions
    from cyclebench.model import Result
    from cyclebench.ui.revisions import RepoOptions

VERDICTS = ["slower", "faster", "different", "inconclusive"]


@dataclass(frozen=True, kw_only=True)
class CompareArgs:
    """`compare`'s options (--help gives each one's meaning)."""

    targets: tuple[str, ...] = argument(nargs=-1, metavar="[FILE.c...] A B [C...] | RUN RUN...")
    by: str | None = option("--by", type=click.Choice(["host"]), help="Stored runs side by side, one column per "
                            "host (given run ids, or each host's newest run).")
    params: tuple[str, ...] = option("-p", "--param", multiple=True, metavar="N[,N...]", help="Parameters to "
                                     "compare at (default: every parameter the benchmarks share).")
    repeat: int | None = option("--repeat", type=click.IntRange(6, 100000), help="Fixed design: this many rounds "
                                "(pairs) per comparison, spread over --processes, Holm. Default: the sequential "
                                "design (--budget).")
    budget: float = option("--budget", type=o.Seconds(0.05, 3600), default=Budget.seconds, show_default=True,
                           help="Sequential design: seconds of measuring per compared pair and parameter; processes "
                           "of 10 rounds are looked at one by one until each pair is slower/faster, equivalent, or "
                           "this ends (inconclusive). Error rate held at --alpha by alpha spending (Lan & DeMets "
                           "1983).")
    equivalence: float = option("--equivalence", type=FloatRange(0, 100, min_open=True),
                                default=100 * Budget.equivalence, show_default=True, metavar="PCT",
                                help="Sequential design: 'equivalent' when the difference is shown to lie within ± "
                                "this % of A.")
    fail_on: tuple[str, ...] = option("--fail-on", type=click.Choice(VERDICTS), multiple=True, help="Exit 1 when a "
                                      "comparison ends so (repeatable; different = slower or faster). Default: exit "
                                      "0 whatever the verdicts.")
    min_time: float | None = option("--min-time", type=o.Seconds(0, 3600), default=None, help="Seconds of "
                                    "timed samples per benchmark over 60 rounds (or --repeat): sizes the batches. "
                                    f"Default: {FIXED_MIN_TIME:g} with --repeat or --allocator, {Budget.min_time:g} "
                                    "in the sequential design (shorter rounds, looked at sooner).")
    alpha: float = option("--alpha", type=FloatRange(0, 1, min_open=True), default=0.002, show_default=True,
                          help="Significance level (after Holm correction).")
    processes: int = option("--processes", type=click.IntRange(1, 64), default=4, show_default=True,
                            help="Runner processes the rounds are spread over (order reversed in every other one; "
                            "the CI is bootstrapped over them); sequential design: processes before the first look.")
    include_disturbed: bool = option("--include-disturbed", is_flag=True, help="Let results whose batches were "
                                     "mostly preempted or migrated into the verdicts (default: not).")
    gbench: bool = option("--gbench", is_flag=True, help="A B are two Google Benchmark executables (say base and "
                          "head builds): each benchmark they share judged with paired, shuffled invocations and "
                          "the sequential rule of --rev (docs/revisions.md).")
    gbench_filter: str | None = option("--filter", metavar="REGEX", help="With --gbench: the benchmarks to judge, "
                                       "as Google Benchmark's own --benchmark_filter takes them.")
    timeout: float = option("--timeout", type=FloatRange(1, 86400), default=120, show_default=True,
                            help="With --gbench: seconds one invocation may run before it is killed.")
    baseline: str | None = option("--baseline", metavar="RUN", help="Stored runs: the side the others are judged "
                                  "against and ranked beside (one of the sides given; default: the first).")
    json_path: Path | None = group(o.json_option)
    output: o.OutputOptions = group(o.format_option)
    db: str | None = group(o.db_option)
    wide: bool = group(o.wide_option)
    label_args: tuple[str, ...] = group(o.label_option)
    plot_path: Path | None = group(o.plot_option("each comparison's Δ with its CI"))
    allocators: list[Allocator] | None = group(o.allocator_option)
    repo: RepoOptions = group(repo_options(revs=True, counts="with --rev, B is slower or faster when its Ir per "
                                           "op differs from A's by more than PCT %, else equivalent."))
    predict: PredictOptions | None = group(predict_options)
    pin: RunnerOptions = group(o.runner_options)
    build: BuildOptions = group(o.build_options(files_in="targets"))

    @property
    def stored_runs(self) -> bool:
        """The targets are stored runs (ids, id,id,… or a replicate group gN), not benchmarks."""
        return all((t[:1] == "g" and t[1:].isdigit()) or all(x.isdigit() for x in t.split(",")) for t in self.targets)


@click.command("compare")
@takes(CompareArgs)
def compare_cmd(a: CompareArgs) -> None:
    """Compare benchmarks A B [C...] (paired, interleaved batch by batch, rounds spread over
    several processes; each against A), or N stored runs RUN RUN [RUN...] (unpaired; each against
    the first, or --baseline; more than two ranked per benchmark), with a verdict only for real
    differences.

    A stored side: a run id, replicate runs 4,5,6 or a group gN, each run in one side only; what
    of a side cannot be compared (no valid result, no kind of measurement shared) is named.

    With --allocator, the benchmarks given are measured under each allocator, each its own
    binary, as `variants --allocator` does."""
    if a.gbench:
        from cyclebench.ui.gbench import compare_gbench

        return compare_gbench(a)
    if a.gbench_filter is not None:
        raise click.UsageError("--filter selects benchmarks of Google Benchmark executables: give --gbench")
    if a.by == "host":
        from cyclebench.ui.stored import compare_by_host

        return compare_by_host(a)
    if a.repo.revs or a.repo.build or a.repo.benches or a.repo.counts:  # revisions of a repository (ui/revisions.py)
        from cyclebench.ui.revisions import compare_revs

        return compare_revs(a, a.output.asked or a.plot_path is not None or bool(a.allocators) or a.repeat is not None)
    if not a.targets:
        raise click.UsageError("compare needs benchmarks A B [C...] or stored runs RUN RUN [...]")
    labels = o.parse_labels(a.label_args)
    if a.stored_runs and labels:
        raise click.UsageError("--label names the run a compare measures; comparing stored runs stores none")
    if not a.stored_runs:  # bad input is said before the database is opened
        for t in a.targets:
            o.not_a_file(t, "compare")
    from cyclebench.ui.export import check_compare_format

    check_compare_format(a.output, a.stored_runs)
    if a.predict is not None and (a.stored_runs or a.allocators):
        raise click.UsageError("--predict predicts what compare measures: not stored runs, nor --allocator builds")
    if a.allocators:
        from cyclebench.ui.variants import judge_allocators

        return judge_allocators(a, a.stored_runs, labels)
    from cyclebench.ui.common import open_store
    from cyclebench.ui.compare import finish, measure_and_judge
    from cyclebench.ui.predict import finish_then_predict

    store = open_store(a.db, create=not a.stored_runs)
    run_id: int | None = None
    measured: list[Result] = []
    if a.stored_runs:
        from cyclebench.ui.stored import judge_stored  # 28 ms of imports a measuring compare does without

        rows, title = judge_stored(a.targets, store, a.baseline, a.alpha, a.include_disturbed, a.wide,
                                   a.output.to_stdout)
    else:
        run_id, rows, measured, title = measure_and_judge(a, labels, store)
    finish_then_predict(lambda: finish(a, store, rows, measured, title, run_id), a.predict, store, run_id, a.build,
                        a.wide, a.output.to_stdout)
