"""`run FILE.c` of will-it-scale test cases: the design (experiments/wis.py) run, its table and
lines printed, its one-line errors (docs/will-it-scale.md)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from cyclebench.build.wis import TestCase
from cyclebench.experiments.options import BuildOptions, RunnerOptions
from cyclebench.experiments.wis import (
    RUN_MIN_DURATION,
    RUN_MIN_WARMUP,
    RUN_MODE,
    OpCostConfig,
    build_cases,
    matches,
    measure_cases,
    split_files,
)
from cyclebench.report import console as console_report
from cyclebench.report.text import safe_text
from cyclebench.report.titles import wis_cost_lines, wis_run_title
from cyclebench.runner.plan import SelectionError
from cyclebench.ui.common import UserError, err, open_store, out, spinner, write_text
from cyclebench.ui.export import run_json
from cyclebench.ui.finish import exit_status, finishing
from cyclebench.ui.options import parse_labels
from cyclebench.ui.progress import Steps


def _print_list(cases: Sequence[TestCase]) -> None:
    from cyclebench.report.listing import cases_table

    out.print(cases_table(cases))


class CaseArgs(Protocol):
    """What `run` gives for test cases (commands/run.RunArgs has these and more)."""

    build: BuildOptions
    pin: RunnerOptions
    globs: tuple[str, ...]
    min_time: float
    warmup: float
    processes: int
    json_path: Path | None
    db: str | None
    wide: bool
    quiet: bool
    list_only: bool
    label_args: tuple[str, ...]


def run_cases(a: CaseArgs, refused: dict[str, bool]) -> bool:
    """`cyclebench run -f FILE.c...` where the files are will-it-scale test cases: build each
    (processes mode), measure and store its cost per operation at one task, print the table.
    Returns False when none of the files is a test case (run goes on as usual). Exits 1 when a
    test case crashed, hung, failed or never bumped its counter (its row says why); UserError
    (exit 2) for an option in ``refused`` given (``{"--net": True, …}``), a mix with cyclebench
    files, or what does not compile."""
    try:
        cases, others = split_files(a.build.files)
    except SelectionError as e:
        raise UserError(str(e)) from None
    if not cases:
        return False
    globs, quiet = a.globs, a.quiet
    if others:
        raise UserError(f"will-it-scale test cases ({cases[0].path.name}) and cyclebench files "
                        f"({others[0].name}) in one run: run them separately")
    given = [opt for opt, on in refused.items() if on]
    if given:
        raise UserError(f"{given[0]} does not apply to will-it-scale test cases (run measures them by intervals)")
    cases = [c for c in cases if matches(c.name, globs)]
    if not cases:
        raise UserError(f"no will-it-scale test case matches {', '.join(globs)}")
    if a.list_only:
        _print_list(cases)
        return True
    cfg = OpCostConfig(cases=cases, spec=a.build.spec(), cpu=a.pin.cpu, processes=a.processes,
                       duration=max(a.min_time, RUN_MIN_DURATION), warmup=max(a.warmup, RUN_MIN_WARMUP),
                       command=["cyclebench", *sys.argv[1:]], labels=parse_labels(a.label_args))
    # each test case on its own: one that does not compile or link costs its row (no compiler: one line)
    with finishing(), spinner("building", quiet):
        built = build_cases(cfg.spec, cases, [RUN_MODE])
    binaries = {name: b for (name, _mode), b in built.binaries.items()}
    broken = {name: why for (name, _mode), why in built.broken.items()}
    if not binaries:
        raise UserError(f"no test case builds: {cases[0].name}: {broken[cases[0].name]}")
    store = open_store(a.db)
    with (finishing(kept=lambda: f"test cases measured so far are kept ({store.url})"),
          Steps(len(cases) * a.processes, "measuring", quiet=quiet) as steps):
        run_id, rows = measure_cases(cfg, binaries, store, steps.step, broken)
    if not quiet:
        console_report.print_results(rows, out, title=wis_run_title(run_id, RUN_MODE), wide=a.wide)
        for line in wis_cost_lines(rows):
            out.print(safe_text(line), highlight=False)
        err.print(f"run #{run_id}: {len(rows)} result(s) stored in {store.url}", highlight=False)
    if a.json_path is not None:
        write_text(a.json_path, run_json(store, run_id), stored=f"run #{run_id}")
    exit_status(rows, "test case(s)")
    return True

