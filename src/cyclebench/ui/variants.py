"""`cyclebench variants` around its design (experiments/variants.py): building with a spinner,
what did not build said in one line each, the measuring steps, the one-line errors, the
interrupt that keeps what was measured, the ranked tables and the exit status."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import click

from cyclebench.experiments.options import FIXED_MIN_TIME, BuildOptions, RunnerOptions
from cyclebench.experiments.run import Prepared, RunConfig, begin
from cyclebench.experiments.variants import BenchResult, Sweep, VariantError, build_all, measure, store_results, summary
from cyclebench.model import VARIANTS, BenchEntry, Result
from cyclebench.report import variants as variants_report
from cyclebench.runner.plan import MeasureOptions
from cyclebench.ui.common import err, out, spinner, write_text
from cyclebench.ui.finish import finishing
from cyclebench.ui.options import OutputOptions
from cyclebench.ui.progress import Steps

if TYPE_CHECKING:
    from cyclebench.build.allocators import Allocator
    from cyclebench.store import Store


def measure_and_store(sw: Sweep, build: BuildOptions, pin: RunnerOptions,
                      store: Store) -> tuple[int, list[BenchEntry], bool]:
    """Build every variant, measure them in alternation, store each benchmark as it completes.
    Returns (run id, summary entries, whether a variant did not build). Build, runner, store and
    variant errors become one UserError line; Ctrl-C says what is kept and exits 130."""
    from cyclebench.env import sysinfo

    cpu = pin.cpu if pin.cpu is not None else sysinfo.choose_cpu()
    pin = replace(pin, cpu=cpu)
    run_id: int | None = None
    stored: list[int] = []  # one entry per benchmark stored
    figures: dict[tuple[str, int | None, str], Result] = {}  # each variant's stored result (summary's per_op)
    def kept() -> str | None:
        return None if run_id is None else (f"{len(stored)} benchmark(s) measured on every variant are kept in "
                                            f"run #{run_id} ({store.url})")

    with finishing(kept):
        with spinner("building variants"):
            built, unbuilt, skipped = build_all(sw.variants, build, pin)
        for e in unbuilt:
            if e.output:
                err.print(e.output, markup=False, highlight=False)
            err.print(f"cyclebench: {e} (not measured; the other variants are)", style="red", highlight=False)
        for label, why in skipped.items():
            err.print(f"cyclebench: variant '{label}' skipped: {why}", style="yellow", highlight=False)
        if not built:
            if unbuilt:
                raise unbuilt[0]
            raise VariantError("no variant can be built here: " + "; ".join(skipped.values()))
        first = sw.variants[0]
        opts = MeasureOptions(min_time=sw.min_time, repeat=12, warmup=0.005)
        spec = replace(build.spec(cc=first.cc, target=first.target), cflags=(*build.cflags, *first.cflags))
        cfg = RunConfig(spec=spec, cpu=cpu, options=opts, command=["cyclebench", *sys.argv[1:]],
                        labels=sw.labels, purpose=VARIANTS)
        rid, rate = begin(cfg, Prepared(built[0].binary, built[0].runner, [], cpu), store)
        run_id = rid
        if sw.events:
            from cyclebench.experiments.run import check_events

            if warning := check_events(built[0].runner, sw.events):
                err.print(warning, style="yellow")

        def keep(r: BenchResult) -> None:  # stored as each benchmark completes: Ctrl-C keeps it
            figures.update(store_results(store, rid, rate, [r], built, sw.events, skipped))
            stored.append(1)

        with Steps(1, "measuring") as steps, store.finishing(rid):

            def plan_steps(n: int) -> None:
                steps.total = n

            results = measure(built, sw.globs, sw.params, sw.rounds, opts, on_step=steps.step,
                              simulate_counts=sw.simulate, on_result=keep, timeout=sw.timeout, on_plan=plan_steps,
                              events=sw.events)
        data = summary(built, results, sw.disasm, sw.events, skipped, figures)
        store.update_run(rid, summary={"variants": data, "display": {"sort": sw.sort}})
        store.finish_run(rid, "complete")
    return rid, data, bool(unbuilt)


def show(data: list[BenchEntry], run_id: int, unbuilt: bool, json_path: Path | None, wide: bool, sort: str = "cycles",
         disasm: bool = False, exit_on_failure: bool = True) -> None:
    """The ranked tables, the JSON, and (``exit_on_failure``) exit_if_failed."""
    variants_report.print_variants(data, out, run_id=run_id, disasm=disasm, wide=wide, sort=sort)
    if json_path is not None:
        write_text(json_path, json.dumps(data, indent=1) + "\n", f"run #{run_id}")
    if exit_on_failure:
        exit_if_failed(data, unbuilt)


def exit_if_failed(data: list[BenchEntry], unbuilt: bool) -> None:
    """Exit 1 when a variant did not build or did not measure (a skipped one is not a failure)."""
    if unbuilt or any(v["status"] != "ok" for d in data for v in d["variants"] if v["status"] != "skipped"):
        sys.exit(1)


class AllocatorArgs(Protocol):
    """What `compare --allocator` reads of compare's options."""

    targets: tuple[str, ...]
    params: tuple[str, ...]
    repeat: int | None
    min_time: float | None
    allocators: list[Allocator] | None
    fail_on: tuple[str, ...]
    json_path: Path | None
    wide: bool
    db: str | None
    plot_path: Path | None
    output: OutputOptions
    build: BuildOptions
    pin: RunnerOptions


def judge_allocators(a: AllocatorArgs, stored_runs: bool, labels: dict[str, str]) -> None:
    """`compare --allocator`: measured as variants are (experiments/variants.allocator_sweep),
    the ranked table, then exit 1 for a verdict --fail-on names or a failed benchmark.
    click.UsageError for stored runs, an export format or --plot (it writes --json alone)."""
    from cyclebench.experiments.variants import allocator_sweep, fail_on_hits
    from cyclebench.ui.common import open_store, parse_params

    if stored_runs or a.output.asked or a.plot_path is not None:
        raise click.UsageError("--allocator measures benchmarks (not stored runs), with --json for its output")
    min_time = FIXED_MIN_TIME if a.min_time is None else a.min_time
    sw = allocator_sweep(a.targets, parse_params(a.params), a.repeat, min_time, a.allocators or [], labels)
    fail_on, json_path, wide = a.fail_on, a.json_path, a.wide
    run_id, data, unbuilt = measure_and_store(sw, a.build, a.pin, open_store(a.db))
    show(data, run_id, unbuilt, json_path, wide, exit_on_failure=False)
    if hit := fail_on_hits(data, fail_on):
        err.print(f"cyclebench: --fail-on: {'; '.join(hit)}", highlight=False)
        sys.exit(1)
    exit_if_failed(data, unbuilt)
