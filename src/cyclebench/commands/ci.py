"""`cyclebench ci`: a pull request's gate — base and head measured paired in one sitting, exact
counts beside time, a summary a reviewer reads (the design: experiments/ci.py; the formats:
report/gate/; docs/ci.md)."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cyclebench.experiments.options import BuildOptions, RunnerOptions
from cyclebench.ui.common import UserError, err, open_store, out, write_text
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

if TYPE_CHECKING:
    from cyclebench.experiments.ci import Config

EXIT = {"pass": 0, "fail": 1, "undecided": 3}  # 2: bad input, a base or head that does not build


@dataclass(frozen=True, kw_only=True)
class CiArgs:
    """`ci`'s options (--help gives each one's meaning)."""

    base: str | None = option("--base", metavar="REV", help="The revision to compare with (default: the merge "
                              "base of HEAD with $GITHUB_BASE_REF or $CI_MERGE_REQUEST_TARGET_BRANCH_NAME, else "
                              "origin/HEAD, else main or master).")
    head: str = option("--head", metavar="REV", default="HEAD", show_default=True, help="The revision under review.")
    threshold: float | None = option("--threshold", type=FloatRange(0, 100, min_open=True), metavar="PCT",
                                     help="A benchmark fails when shown slower than base by more than PCT % (the "
                                          "lower bound of Δ%'s CI above it) [default: 2, or cyclebench.toml's].")
    counts_threshold: float | None = option("--counts-threshold", type=FloatRange(0, 100), metavar="PCT",
                                            help="Under --gate counts|both, a benchmark fails when its instructions "
                                                 "per op (callgrind, exact) grow by more than PCT % [default: 0.5].")
    gate: str | None = option("--gate", type=click.Choice(["time", "counts", "both"]),
                              help="What fails the gate: time (measured, paired), counts (callgrind's exact "
                                   "instructions per op), or both [default: time, or cyclebench.toml's].")
    budget: float = option("--budget", type=Seconds(0.2, 3600), default=5.0, show_default=True,
                           help="Seconds of measuring per benchmark.")
    alpha: float = option("--alpha", type=FloatRange(0, 1, min_open=True), default=0.01, show_default=True,
                          help="False-alarm rate of the whole gate (split over the benchmarks: Bonferroni).")
    summary: Path | None = option("--summary", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
                                  help="Write the Markdown summary to FILE (it is also appended to "
                                       "$GITHUB_STEP_SUMMARY when set).")
    junit: Path | None = option("--junit", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
                                help="Write JUnit XML to FILE: a failed benchmark is a failed test.")
    json_path: Path | None = group(json_option)
    db: str | None = group(db_option)
    wide: bool = group(wide_option)
    label_args: tuple[str, ...] = group(label_option)
    repo: RepoOptions = group(repo_options())
    pin: RunnerOptions = group(runner_options)
    build: BuildOptions = group(build_options())


@click.command("ci")
@takes(CiArgs)
def ci_cmd(a: CiArgs) -> None:
    """Gate a pull request: build its base and head, measure every benchmark paired in one sitting
    (and count instructions under callgrind), fail when one is slower beyond its threshold."""
    from cyclebench.experiments.ci import CONFIG, GatePlan, base_of, config_of, run_gate
    from cyclebench.experiments.errors import ExperimentError
    from cyclebench.experiments.revisions import Repo
    from cyclebench.experiments.revpair import Design
    from cyclebench.report.gate.console import gate_table
    from cyclebench.report.gate.junit import junit
    from cyclebench.report.gate.summary import summary
    from cyclebench.ui.finish import finishing

    try:
        repo = Repo(a.repo.repo)
        head = repo.resolve(a.head)
        cfg = config_of(repo.show(head.sha, CONFIG))
        base, how = base_of(repo, a.base, head)
    except ExperimentError as e:
        raise UserError(str(e)) from None
    build, recipe = _with_config(a.build, a.repo, cfg, repo.root)
    if not build.files and not cfg.gbench:
        raise UserError(f"no benchmark files: give -f FILE, or files = [...] under [ci] in {CONFIG}, or a "
                        "Google Benchmark target under [[ci.gbench]]")
    threshold = a.threshold if a.threshold is not None else cfg.threshold if cfg.threshold is not None else 2.0
    counts_t = (a.counts_threshold if a.counts_threshold is not None else
                cfg.counts_threshold if cfg.counts_threshold is not None else 0.5)
    plan = GatePlan(threshold / 100, counts_t / 100, a.gate or cfg.gate or "time",
                    tuple((g, t / 100) for g, t in cfg.thresholds), Design(budget=a.budget, alpha=a.alpha))
    store = open_store(a.db)
    with finishing(lambda: f"the benchmarks measured so far are kept ({store.url})"), progress() as prog:
        try:
            ws = recipe.workspace(build, a.pin, [], prog, store, files_needed=not cfg.gbench)
            got = run_gate(ws, base, head, how, plan, store, parse_labels(a.label_args),
                           ["cyclebench", *sys.argv[1:]], cfg.gbench)
        except ExperimentError as e:
            raise UserError(str(e)) from None
    out.print(gate_table(got, a.wide))
    text = summary(got)
    if a.summary is not None:
        write_text(a.summary, text)
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    if step:
        try:
            with open(step, "a", encoding="utf-8") as f:
                f.write(text + "\n")
        except OSError as e:
            err.print(f"cyclebench: cannot append to $GITHUB_STEP_SUMMARY ({step}): {e.strerror}", highlight=False)
    if a.junit is not None:
        write_text(a.junit, junit(got))
    if a.json_path is not None:
        write_text(a.json_path, json.dumps({"status": got.status, "base": got.base.sha, "head": got.head.sha,
                                            "base_how": got.base_how, "run_id": got.run_id,
                                            "rows": [r.to_dict() for r in got.ranked()]}, indent=1) + "\n")
    sys.exit(EXIT[got.status])


def _with_config(build: BuildOptions, repo: RepoOptions, cfg: Config, root: Path) -> tuple[BuildOptions, RepoOptions]:
    """The options, with cyclebench.toml's [ci] filling what was not given (files, include
    directories and relative ldflags taken from the repository's root)."""
    files = build.files or tuple(root / f for f in cfg.files)
    include = build.include_dirs or tuple(root / d for d in cfg.include)
    ldflags = build.ldflags or cfg.ldflags
    benches = repo.benches or cfg.benchmarks
    command = repo.build or cfg.build
    return (replace(build, files=files, include_dirs=include, ldflags=ldflags),
            replace(repo, benches=benches, build=command))
