"""`cyclebench selftest`: the tool checks its own precision on this machine with known effects
(the checks, their tolerances and the rule that tells a busy host from a broken tool:
experiments/selftest.py, docs/method.md §11). One table of PASS/FAIL/INCONCLUSIVE with the expected
and measured figures; exit 0 PASS, 1 FAIL (the tool is wrong here), 3 INCONCLUSIVE (the host was
too busy to tell).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.text import Text

from cyclebench.build import BuildError
from cyclebench.experiments.options import RunnerOptions
from cyclebench.experiments.selftest import (
    ADVICE,
    EXIT,
    FAIL,
    GROUPS,
    INCONCLUSIVE,
    PASS,
    REPLICATES,
    run_selftest,
    to_dict,
)
from cyclebench.report.fit import Column, FitTable
from cyclebench.runner import RunnerError
from cyclebench.ui.common import UserError, err, out, write_text
from cyclebench.ui.options import json_option, runner_options
from cyclebench.ui.progress import Steps


@click.command("selftest")
@click.option("--quick", is_flag=True, help="Fewer rounds (what the test suite runs).")
@click.option("--aa-reps", type=click.IntRange(min=20), default=None,
              help="Repetitions of the A/A test (default 40; 20 with --quick).")
@click.option("--check", "only", multiple=True, type=click.Choice(GROUPS),
              help="Only these checks (repeatable; chains: the cycles~ coverage and the A/A across runs). "
                   "Default: all.")
@json_option
@runner_options
def selftest_cmd(quick: bool, pin: RunnerOptions, aa_reps: int | None, only: tuple[str, ...],
                 json_path: Path | None) -> None:
    """Check cyclebench's own precision here with known effects (A/A, +1 cycle, linearity, timer)."""
    import json

    chosen = frozenset(only or GROUPS)
    try:
        reps = aa_reps or (20 if quick else 40)
        # the A/A repetitions, +1 blocks (1 to 6), the runs across runs
        total = reps * ("aa" in chosen) + ("plus-one" in chosen) + 2 * REPLICATES * ("chains" in chosen)
        with Steps(max(total, 1), "self-test") as steps:

            def step(label: str) -> None:
                steps.total = max(steps.total, steps.done + 1)  # a repeated check adds steps
                steps.step(label)

            report = run_selftest(quick=quick, cpu=pin.cpu, aa_reps=aa_reps, fifo=pin.fifo, max_rss=pin.max_rss,
                                  on_step=step, only=chosen)
    except (BuildError, RunnerError, RuntimeError) as e:
        raise UserError(str(e)) from None
    fault = f" · injected fault: {report.fault}" if report.fault else ""
    # the check and its result stay at any width; what was expected and measured, the why,
    # wraps under its row when it does not fit beside
    table = FitTable([Column("check", justify="left", fold=16), Column("result", justify="left"),
                      Column("expected", justify="left", priority=1),
                      Column("measured", justify="left", notes=True)],
                     title=f"cyclebench selftest · CPU {report.cpu} · {report.seconds:.1f} s{fault}")
    for c in report.checks:
        style = {PASS: "green", FAIL: "red", INCONCLUSIVE: "yellow"}.get(c.status, "dim")
        table.add_row(Text(c.name), Text(c.status, style), Text(c.expected),
                      Text(c.measured + (f" ({c.detail})" if c.detail else "")))
    out.print(table)
    if json_path is not None:
        write_text(json_path, json.dumps(to_dict(report), indent=1) + "\n")
    if report.status == FAIL:
        err.print(Text("cyclebench: selftest FAILED: a check failed where the host's disturbance cannot explain "
                       "it; numbers from this machine are not to be trusted as they are", "red"))
    elif report.status == INCONCLUSIVE:
        busy = [c.name for c in report.checks if c.status == INCONCLUSIVE]
        err.print(Text(f"cyclebench: selftest INCONCLUSIVE: the host was busy whenever {', '.join(busy)} failed, "
                       f"so it cannot tell the tool's error from the host's noise; {ADVICE}", "yellow"))
    sys.exit(EXIT[report.status])
