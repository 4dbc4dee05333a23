"""`cyclebench bisect`: which commit made a benchmark slower (the design: experiments/bisect.py;
the printing: report/bisect.py; docs/revisions.md)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from cyclebench.experiments.options import BuildOptions, RunnerOptions
from cyclebench.ui.common import err, open_store, out, parse_params, write_text
from cyclebench.ui.options import (
    FloatRange,
    Seconds,
    build_options,
    db_option,
    json_option,
    label_option,
    parse_labels,
    runner_options,
    wide_option,
)
from cyclebench.ui.progress import progress
from cyclebench.ui.record import group, option, takes
from cyclebench.ui.revisions import RepoOptions, repo_options


@dataclass(frozen=True, kw_only=True)
class BisectArgs:
    """`bisect`'s options (--help gives each one's meaning)."""

    good: str = option("--good", required=True, metavar="REV", help="A revision known to be fast.")
    bad: str = option("--bad", required=True, metavar="REV", help="A later revision known (or thought) to be slower.")
    params: tuple[str, ...] = option("-p", "--param", multiple=True, metavar="N[,N...]",
                                     help="Parameters to measure at.")
    threshold: float = option("--threshold", type=FloatRange(0, 100, min_open=True), default=2.0,
                              show_default=True, metavar="PCT", help="A revision is bad when shown slower than GOOD "
                              "by more than PCT %, good when shown not to be; bisect a slowdown of at least twice "
                              "this.")
    budget: float = option("--budget", type=Seconds(0.2, 3600), default=5.0, show_default=True, help="Seconds of "
                           "measuring per step and benchmark (an unclear step gets one more sitting of twice this, "
                           "then is skipped).")
    alpha: float = option("--alpha", type=FloatRange(0, 1, min_open=True), default=0.002, show_default=True,
                          help="False-verdict rate of each step's verdict.")
    all_parents: bool = option("--all-parents", is_flag=True, help="Walk every parent (git's own bisection over the "
                               "DAG), not only BAD's first-parent line.")
    json_path: Path | None = group(json_option)
    db: str | None = group(db_option)
    wide: bool = group(wide_option)
    label_args: tuple[str, ...] = group(label_option)
    repo: RepoOptions = group(repo_options(counts="a revision is bad when its Ir per op exceeds GOOD's by "
                                           "more than PCT % (in place of --threshold; no --budget, no --alpha)."))
    pin: RunnerOptions = group(runner_options)
    build: BuildOptions = group(build_options())


@click.command("bisect")
@takes(BisectArgs)
def bisect_cmd(a: BisectArgs) -> None:
    """Find the commit that made benchmarks slower: each step builds a revision in a private
    checkout and measures it paired with GOOD in one sitting, a verdict per benchmark.

    With --backend callgrind each revision's instructions per op are counted instead (exact:
    a step is bad when they rose by more than --counts-threshold), so the same history gives
    the same answer on any machine."""
    from cyclebench.experiments.bisect import Bisection, Plan, run_bisect
    from cyclebench.experiments.revpair import Design
    from cyclebench.report.bisect import step_line
    from cyclebench.ui.finish import finishing

    labels = parse_labels(a.label_args)
    store = open_store(a.db)
    states = [Bisection()]  # run_bisect hands on each new one: the last is what Ctrl-C prints
    threshold = a.repo.counts_threshold if a.repo.counts else a.threshold
    plan = Plan(a.good, a.bad, threshold / 100, Design(budget=a.budget, alpha=a.alpha), a.all_parents,
                a.repo.backend)
    try:
        with finishing(interrupt=False), progress() as prog:
            ws = a.repo.workspace(a.build, a.pin, parse_params(a.params), prog, store)
            run_bisect(ws, plan, store, labels, ["cyclebench", *sys.argv[1:]], states[0], on_state=states.append,
                       on_step=lambda s: out.print(step_line(s), highlight=False, markup=False, soft_wrap=True))
    except KeyboardInterrupt:
        _interrupted(states[-1], store.url)
        sys.exit(130)
    sys.exit(_finish(states[-1], plan, ws.repo, a.wide, a.json_path))


def _interrupted(state: Any, url: str) -> None:
    """Ctrl-C: the steps decided are stored; each search's open range."""
    n = sum(1 for s in state.searches.values() for x in s.steps if x.measured)
    err.print(f"cyclebench: interrupted: {n} measured step(s) kept (label bisect={state.id}, {url})", highlight=False)
    for s in state.searches.values():
        if s.status == "running":
            err.print(f"cyclebench: {s.bench}: still open: first bad after {s.good.short} (good) up to "
                      f"{s.bad.short} (bad)", highlight=False)


def _finish(state: Any, plan: Any, repo: Any, wide: bool, json_path: Path | None) -> int:
    """The table, each benchmark's answer (report.bisect), --json; the exit status
    (experiments.bisect.exit_status)."""
    from cyclebench.experiments.bisect import exit_status
    from cyclebench.report.bisect import answer_lines, steps_table, title

    searches = list(state.searches.values())
    steps = [x for s in searches for x in s.steps]
    out.print(steps_table(steps, title(state.id, state.good.short, state.bad.short, plan.threshold, plan.counts),
                          len(searches) > 1, wide))  # the title `show --bisect ID` prints again
    for line in answer_lines(searches, state.good, state.bad, plan.threshold, repo.message):
        out.print(line, highlight=False, markup=False)
    if json_path is not None:
        doc = {**state.to_dict(), "threshold": plan.threshold, "budget": plan.design.budget,
               "alpha": plan.design.alpha, "all_parents": plan.all_parents, "backend": plan.backend}
        write_text(json_path, json.dumps(doc, indent=1) + "\n")
    return exit_status(searches)
