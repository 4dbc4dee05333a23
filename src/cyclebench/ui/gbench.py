"""`compare --gbench OLD NEW` and `run --gbench BIN`: the commands' side of experiments/gbench.py —
compare's table, the benchmarks only one executable has, --json and --fail-on; run's table of the
stored rows and the lines under it; exit 2 for bad input, 1 when a benchmark gave no figure."""

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


def run_gbench(a: Any) -> None:
    """``a``: commands.run.RunArgs with --gbench: one executable, its benchmarks (--filter) stored
    as a run's rows. Ctrl-C keeps the rows measured (exit 130)."""
    from cyclebench.experiments.gbench import PROCESSES, GbenchRunConfig, measure_binary
    from cyclebench.model import suite_order
    from cyclebench.report import console as console_report
    from cyclebench.report.text import safe_text
    from cyclebench.report.titles import gbench_cost_lines, gbench_run_title
    from cyclebench.ui.common import err, open_store, out, write_text
    from cyclebench.ui.export import run_json
    from cyclebench.ui.finish import exit_status, finishing
    from cyclebench.ui.options import parse_labels
    from cyclebench.ui.progress import Steps

    if len(a.build.files) != 1:
        raise click.UsageError("--gbench takes one Google Benchmark executable: run --gbench BIN")
    refused = {"-b/--bench": bool(a.globs), "-p/--param": bool(a.params), "--net": a.net,
               "-e/--events": bool(a.events_spec), "--backend callgrind": a.backend != "timing",
               "--runs": a.runs > 1, "--allocator": bool(a.allocators), "--list": a.list_only,
               "--plot": a.plot_path is not None, "--predict": a.predict is not None}
    given = [opt for opt, on in refused.items() if on]
    if given:
        raise click.UsageError(f"{given[0]} does not apply to --gbench (select benchmarks with --filter REGEX)")
    processes = a.processes if click.get_current_context().get_parameter_source("processes") \
        != click.core.ParameterSource.DEFAULT else PROCESSES
    cfg = GbenchRunConfig(path=Path(a.build.files[0]).absolute(), pattern=a.gbench_filter, cpu=a.pin.cpu,
                          processes=processes, min_time=a.min_time, timeout=a.timeout or 120.0,
                          command=["cyclebench", *sys.argv[1:]], labels=parse_labels(a.label_args))
    store = open_store(a.db)
    with (finishing(kept=lambda: f"benchmarks measured so far are kept ({store.url})"),
          Steps(0, "measuring", quiet=a.quiet) as steps):
        run_id, rows = measure_binary(cfg, store, steps.step, lambda n: setattr(steps, "total", n))
    rows = suite_order(rows)
    if not a.quiet:
        console_report.print_results(rows, out, title=gbench_run_title(
            run_id, (rows[0].gbench or {}).get("cpu") if rows else None, cfg.path.name,
            (rows[0].gbench or {}).get("library_version") if rows else None), wide=a.wide)
        for line in gbench_cost_lines(rows):
            out.print(safe_text(line), highlight=False)
        err.print(f"run #{run_id}: {len(rows)} result(s) stored in {store.url}", highlight=False)
    if a.json_path is not None:
        write_text(a.json_path, run_json(store, run_id), stored=f"run #{run_id}")
    exit_status(rows, "benchmark(s)")
