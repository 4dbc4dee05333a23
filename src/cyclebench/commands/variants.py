"""`cyclebench variants`: the same benchmarks built several ways, measured side by side.

A variant is one (compiler, flag set, target, allocator) build of the user's files or of the
built-in suite (docs/method.md §5b); experiments/variants.py builds, measures and judges them (and
serves `compare --allocator` too). This file is the recipe: options in, one ranked table per
benchmark out (report/variants.py), the run stored as each benchmark completes.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from cyclebench.build.allocators import Allocator
from cyclebench.commands._common import UserError, open_store, parse_params
from cyclebench.commands._options import (
    BuildOptions,
    RunnerOptions,
    Seconds,
    allocator_option,
    build_options,
    db_option,
    json_option,
    label_option,
    parse_labels,
    runner_options,
    wide_option,
)
from cyclebench.commands._predict import after_run, predict_options, variant_binaries
from cyclebench.commands._variants import exit_if_failed, measure_and_store, show
from cyclebench.experiments.predict import PredictOptions
from cyclebench.experiments.variants import Sweep, VariantError, make_variants


@click.command("variants")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--flags", "flag_sets", multiple=True, metavar='"FLAGS"',
              help="One variant's compiler flags (repeatable; split like a shell would). Default: -O2.")
@click.option("--cc", "ccs", multiple=True, help="Compiler (repeatable: every compiler × every flag set).")
@click.option("--target", type=click.Choice(["aarch64"]), default=None,
              help="Cross-build for this target and run under qemu-user: correctness only (emulated), no times.")
@click.option("-b", "--bench", "globs", multiple=True, metavar="GLOB", help="Benchmarks to run (default: all).")
@click.option("-p", "--param", "params", multiple=True, metavar="N[,N...]", help="Only these parameters.")
@click.option("--disasm", is_flag=True, help="Show each variant's body disassembly, instruction classes and diff.")
@click.option("--backend", type=click.Choice(["timing", "callgrind"]), default="timing", show_default=True,
              help="callgrind: also count each variant under callgrind (exact Ir, I1/D1/LL and branch misses per op).")
@click.option("--callgrind", "callgrind_flag", is_flag=True, hidden=True)  # the old spelling of --backend callgrind
@click.option("--sort", default="cycles", show_default=True,
              metavar="cycles|Ir|I1mr|D1mr|DLmr|Bcm|text|dec|body|EVENT",
              help="Rank the variants by this (callgrind events need --backend callgrind; EVENT one given with -e).")
@click.option("-e", "--events", "events_spec", default=None, metavar="EVENTS",
              help="Counters per op for every variant, perf syntax ('task-clock,{instructions,cycles}'), in the table.")
@click.option("--baseline", default=None, metavar="FLAGS",
              help="The variant the others are judged against, by its label (its --flags); default: the first.")
@click.option("--rounds", type=click.IntRange(6, 1000), default=None,
              help="Invocations per variant and benchmark, alternated in shuffled order (pairs for the verdict). "
                   "Default: the fewest with which every comparison can reach a verdict after Holm (11 for one).")
@click.option("--min-time", type=Seconds(0, 3600), default=0.03, show_default=True,
              help="Seconds of timed samples per invocation.")
@click.option("--timeout", type=click.FloatRange(min=0.1, max=86400), default=None,
              help="Seconds before an invocation is declared hung (default from the timing; 600 under callgrind).")
@allocator_option
@json_option
@db_option
@wide_option
@label_option
@predict_options
@runner_options
@build_options(positional=True, cc=False, cflags_default="",
               cflags_help="Flags every variant shares, before its own --flags.")
def variants_cmd(build: BuildOptions, pin: RunnerOptions, flag_sets: tuple[str, ...], ccs: tuple[str, ...],
                 target: str | None, globs: tuple[str, ...], params: tuple[str, ...], disasm: bool, backend: str,
                 callgrind_flag: bool, rounds: int | None, min_time: float, timeout: float | None,
                 json_path: Path | None, db: str | None, wide: bool, sort: str, baseline: str | None,
                 label_args: tuple[str, ...], events_spec: str | None, allocators: list[Allocator] | None,
                 predict: PredictOptions | None = None) -> None:
    """Build FILES (default: the built-in suite, pick with -b) once per flag set / compiler /
    target / allocator and measure the builds side by side."""
    from cyclebench import counters

    try:
        sets = [tuple(shlex.split(f)) for f in flag_sets]
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--flags") from None
    if not build.files and not globs:
        raise click.UsageError("variants needs C files (FILE... or -f FILE) or built-in benchmarks (-b GLOB)")
    if allocators and target:
        raise click.UsageError("--allocator measures native builds: it cannot go with --target")
    sim = backend == "callgrind" or callgrind_flag
    try:
        events = counters.parse_events(events_spec) if events_spec else None
        vs = make_variants(ccs, sets, target, allocators)
    except (counters.EventError, VariantError) as e:
        raise UserError(str(e)) from None
    known = {"cycles", "text", "data", "bss", "dec", "body", *(("Ir", "I1mr", "D1mr", "DLmr", "Bcm") if sim else ()),
             *(ev.name for g in events or [] for ev in g)}
    if sort not in known:
        raise click.BadParameter(f"'{sort}' is not one of {', '.join(sorted(known))}"
                                 + ("" if sim else " (callgrind events need --backend callgrind)"),
                                 param_hint="--sort")
    if baseline is not None:  # the baseline goes first: every comparison is against the first
        pick = [v for v in vs if v.label == baseline]
        if not pick:
            raise UserError(f"--baseline '{baseline}' is not a variant here ({', '.join(v.label for v in vs)})")
        vs = [pick[0], *[v for v in vs if v is not pick[0]]]
    sweep = Sweep(vs, globs, parse_params(params), rounds, min_time, timeout, sim, events, disasm,
                  parse_labels(label_args), sort)
    store = open_store(db)
    run_id, data, unbuilt = measure_and_store(sweep, build, pin, store)
    show(data, run_id, unbuilt, json_path, wide, sort, disasm, exit_on_failure=predict is None)
    if predict is not None:
        after_run(predict, store, run_id, variant_binaries(sweep, build, pin), wide)
        exit_if_failed(data, unbuilt)
