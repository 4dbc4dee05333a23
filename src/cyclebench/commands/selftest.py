"""`cyclebench selftest`: the tool checks its own precision on this machine with known effects
(the checks and their tolerances: commands/_selftest.py). One table of PASS/FAIL with the expected
and measured figures; exit 1 when a check fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from cyclebench.build import BuildError
from cyclebench.commands._common import UserError, err, out, write_text
from cyclebench.commands._options import RunnerOptions, json_option, runner_options
from cyclebench.commands._progress import Steps
from cyclebench.commands._selftest import REPLICATES, run_selftest, to_dict
from cyclebench.runner import RunnerError


@click.command("selftest")
@click.option("--quick", is_flag=True, help="Fewer rounds (what the test suite runs).")
@click.option("--aa-reps", type=click.IntRange(min=20), default=None,
              help="Repetitions of the A/A test (default 40; 20 with --quick).")
@json_option
@runner_options
def selftest_cmd(quick: bool, pin: RunnerOptions, aa_reps: int | None, json_path: Path | None) -> None:
    """Check cyclebench's own precision here with known effects (A/A, +1 cycle, linearity, timer)."""
    import json

    try:
        reps = aa_reps or (20 if quick else 40)
        # the A/A repetitions, +1 blocks (1 to 6), the runs across runs
        with Steps(reps + 1 + 2 * REPLICATES, "self-test") as steps:
            report = run_selftest(quick=quick, cpu=pin.cpu, aa_reps=aa_reps, fifo=pin.fifo, max_rss=pin.max_rss,
                                  on_step=steps.step)
    except (BuildError, RunnerError, RuntimeError) as e:
        raise UserError(str(e)) from None
    table = Table(title=f"cyclebench selftest · CPU {report.cpu} · {report.seconds:.1f} s", header_style="bold")
    for col in ("check", "expected", "measured", "result"):
        table.add_column(col)
    for c in report.checks:
        verdict = Text("PASS", "green") if c.passed else Text("n/a", "dim") if c.passed is None else Text("FAIL", "red")
        table.add_row(c.name, c.expected, c.measured + (f" ({c.detail})" if c.detail else ""), verdict)
    out.print(table)
    if json_path is not None:
        write_text(json_path, json.dumps(to_dict(report), indent=1) + "\n")
    if not report.passed:
        err.print("cyclebench: selftest FAILED: numbers from this machine are not to be trusted as they are",
                  style="red")
        sys.exit(1)
