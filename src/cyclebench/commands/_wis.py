"""`run FILE.c` of will-it-scale test cases: the design (experiments/wis.py) run, its table and
lines printed, its one-line errors (docs/will-it-scale.md)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cyclebench.build.wis import TestCase
from cyclebench.commands._common import UserError, err, null_context, open_store, out
from cyclebench.commands._finish import exit_status, finishing
from cyclebench.commands._options import BuildOptions, RunnerOptions
from cyclebench.commands._progress import Steps
from cyclebench.experiments.wis import (
    RUN_MIN_DURATION,
    RUN_MIN_WARMUP,
    RUN_MODE,
    OpCostConfig,
    build_cases,
    matches,
    measure_cases,
)
from cyclebench.report import console as console_report
from cyclebench.report.text import safe_text
from cyclebench.store import runfile as json_report


def _print_list(cases: Sequence[TestCase]) -> None:
    from cyclebench.report.listing import cases_table

    out.print(cases_table(cases))


def run_title(run_id: int) -> str:
    """The table's title of `run` on test cases (and of `show` of its run)."""
    return f"run #{run_id} · 1 task, {RUN_MODE} mode · interval ticks / operations"


def cost_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Under the table, per row: its description, the 1-task throughput and where cycles~ come
    from (the add chain before and after the run, not during it), and when they are doubtful."""
    lines = []
    for r in rows:
        e = r.get("extra") or {}
        parts = [f"{r['bench']}: {e.get('description') or '(no description)'}"]
        if e.get("ops_per_s"):
            parts.append(f"{e['ops_per_s']:.4g} ops/s at 1 task")
        if e.get("cycles_source"):
            parts.append(f"cycles~ from the {e['cycles_source']}")
        lines.append(" · ".join(parts))
        if e.get("cycles_doubtful"):
            lines.append(f"  {r['bench']}: {e['cycles_doubtful']}")
    return lines


def run_cases(cases: Sequence[TestCase], others: Sequence[Path], build_opts: BuildOptions, pin: RunnerOptions, *,
              globs: Sequence[str], min_time: float, warmup: float, processes: int, json_path: Path | None,
              db: str | None, wide: bool, quiet: bool, list_only: bool, labels: dict[str, str],
              refused: dict[str, bool]) -> None:
    """`cyclebench run -f FILE.c...` where the files are will-it-scale test cases: build each
    (processes mode), measure and store its cost per operation at one task, print the table.
    Exits 1 when a test case crashed, hung, failed or never bumped its counter (its row says
    why); UserError (exit 2) for what cannot apply to a test case or does not compile."""
    if others:
        raise UserError(f"will-it-scale test cases ({cases[0].path.name}) and cyclebench files "
                        f"({others[0].name}) in one run: run them separately")
    given = [opt for opt, on in refused.items() if on]
    if given:
        raise UserError(f"{given[0]} does not apply to will-it-scale test cases (run measures them by intervals)")
    cases = [c for c in cases if matches(c.name, globs)]
    if not cases:
        raise UserError(f"no will-it-scale test case matches {', '.join(globs)}")
    if list_only:
        _print_list(cases)
        return
    cfg = OpCostConfig(cases=cases, spec=build_opts.spec(), cpu=pin.cpu, processes=processes,
                       duration=max(min_time, RUN_MIN_DURATION), warmup=max(warmup, RUN_MIN_WARMUP),
                       command=["cyclebench", *sys.argv[1:]], labels=labels)
    # each test case on its own: one that does not compile or link costs its row (no compiler: one line)
    with finishing(), err.status("building", spinner="dots") if not quiet else null_context():
        built = build_cases(cfg.spec, cases, [RUN_MODE])
    binaries = {name: b for (name, _mode), b in built.binaries.items()}
    broken = {name: why for (name, _mode), why in built.broken.items()}
    if not binaries:
        raise UserError(f"no test case builds: {cases[0].name}: {broken[cases[0].name]}")
    store = open_store(db)
    with (finishing(kept=lambda: f"test cases measured so far are kept ({store.url})"),
          Steps(len(cases) * processes, "measuring", quiet=quiet) as steps):
        run_id, rows = measure_cases(cfg, binaries, store, steps.step, broken)
    if not quiet:
        console_report.print_results(rows, out, title=run_title(run_id), wide=wide)
        for line in cost_lines(rows):
            out.print(safe_text(line), highlight=False)
        err.print(f"run #{run_id}: {len(rows)} result(s) stored in {store.url}", highlight=False)
    if json_path is not None:
        try:
            json_report.dump(json_report.run_to_dict(store, run_id), json_path)
        except OSError as e:
            raise UserError(f"cannot write {json_path}: {e.strerror or e}; the results are stored "
                            f"(run #{run_id})") from None
    exit_status(rows, "test case(s)")

