"""`compare --gbench OLD NEW`: the command's side of experiments/gbench.py — its table (compare's),
the benchmarks only one executable has, --json and --fail-on; exit 2 for bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click


def compare_gbench(a: Any) -> None:
    """``a``: commands.compare.CompareArgs."""
    from cyclebench.env import sysinfo
    from cyclebench.experiments.comparison import fail_outcomes
    from cyclebench.experiments.gbench import compare_binaries
    from cyclebench.experiments.revpair import Design
    from cyclebench.report import console as console_report
    from cyclebench.ui.common import err, out, write_text
    from cyclebench.ui.finish import finishing
    from cyclebench.ui.progress import progress

    if len(a.targets) != 2:
        raise click.UsageError("--gbench takes two Google Benchmark executables: compare --gbench OLD NEW")
    if a.repo.revs or a.by or a.allocators or a.repeat is not None or a.output.asked or a.plot_path is not None:
        raise click.UsageError("--gbench compares two executables: --rev, --by, --allocator, --repeat, --format "
                               "and --plot are not for it")
    old, new = (Path(t).absolute() for t in a.targets)
    cpu = a.pin.cpu if a.pin.cpu is not None else sysinfo.choose_cpu()
    with finishing(lambda: "nothing was stored"), progress() as prog:
        got = compare_binaries(old, new, a.gbench_filter, Design(budget=a.budget, alpha=a.alpha),
                               a.equivalence / 100, cpu, a.timeout, prog)
    console_report.print_comparisons(got.rows, out, title=got.design, alpha=a.alpha, wide=a.wide)
    for what, names in (("only in " + old.name + " (removed)", got.removed), ("only in " + new.name + " (new)",
                                                                             got.new)):
        if names:
            err.print(f"{what}: {', '.join(names)}", highlight=False)
    if a.json_path is not None:
        write_text(a.json_path, json.dumps({"format": "cyclebench-gbench-compare", "design": got.design,
                                            "removed": got.removed, "new": got.new,
                                            "rows": [r.to_dict() for r in got.rows]}, indent=1) + "\n")
    failed = [r for r in got.rows if r.cmp is None]
    if failed:
        err.print(f"cyclebench: {len(failed)} benchmark(s) did not produce a verdict (see notes)", style="red")
        sys.exit(1)
    hit = fail_outcomes(got.rows, a.fail_on)
    if hit:
        err.print(f"cyclebench: --fail-on: {hit}", highlight=False)
        sys.exit(1)
