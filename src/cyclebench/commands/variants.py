"""`cyclebench variants`: the same benchmarks built several ways, measured side by side.

A variant is one (compiler, flag set, target, allocator) build of the user's files or of the
built-in suite (docs/method.md §5b); experiments/variants.py builds, measures and judges them (and
serves `compare --allocator` too). This file is the recipe: options in, one ranked table per
benchmark out (report/variants.py), the run stored as each benchmark completes.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cyclebench.experiments.options import BuildOptions, PredictOptions, RunnerOptions
from cyclebench.experiments.variants import Sweep, VariantError, make_variants
from cyclebench.ui import options as o
from cyclebench.ui.common import UserError, open_store, parse_params
from cyclebench.ui.options import FloatRange
from cyclebench.ui.predict import after_run, predict_options, variant_binaries
from cyclebench.ui.record import argument, group, option, takes
from cyclebench.ui.variants import exit_if_failed, measure_and_store, show

if TYPE_CHECKING:
    from cyclebench.build.allocators import Allocator

SORTS = "cycles|Ir|I1mr|D1mr|DLmr|Bcm|text|dec|body|EVENT"


@dataclass(frozen=True, kw_only=True)
class VariantsArgs:
    """`variants`' options (--help gives each one's meaning)."""

    files: tuple[Path, ...] = argument(nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
    flag_sets: tuple[str, ...] = option("--flags", multiple=True, metavar='"FLAGS"', help="One variant's compiler "
                                        "flags (repeatable; split like a shell would). Default: -O2.")
    ccs: tuple[str, ...] = option("--cc", multiple=True, help="Compiler (repeatable: every compiler × every flag "
                                  "set).")
    target: str | None = option("--target", type=click.Choice(["aarch64"]), help="Cross-build for this target and "
                                "run under qemu-user: correctness only (emulated), no times.")
    globs: tuple[str, ...] = option("-b", "--bench", multiple=True, metavar="GLOB", help="Benchmarks to run "
                                    "(default: all).")
    params: tuple[str, ...] = option("-p", "--param", multiple=True, metavar="N[,N...]", help="Only these parameters.")
    disasm: bool = option("--disasm", is_flag=True, help="Show each variant's body disassembly, instruction classes "
                          "and diff.")
    backend: str = option("--backend", type=click.Choice(["timing", "callgrind"]), default="timing",
                          show_default=True, help="callgrind: also count each variant under callgrind (exact Ir, "
                          "I1/D1/LL and branch misses per op).")
    callgrind_flag: bool = option("--callgrind", is_flag=True, hidden=True)  # the old spelling of --backend callgrind
    sort: str = option("--sort", default="cycles", show_default=True, metavar=SORTS, help="Rank the variants by this "
                       "(callgrind events need --backend callgrind; EVENT one given with -e).")
    events_spec: str | None = option("-e", "--events", metavar="EVENTS", help="Counters per op for every variant, "
                                     "perf syntax ('task-clock,{instructions,cycles}'), in the table.")
    baseline: str | None = option("--baseline", metavar="FLAGS", help="The variant the others are judged against, by "
                                  "its label (its --flags); default: the first.")
    rounds: int | None = option("--rounds", type=click.IntRange(6, 1000), help="Invocations per variant and "
                                "benchmark, alternated in shuffled order (pairs for the verdict). Default: the fewest "
                                "with which every comparison can reach a verdict after Holm (11 for one).")
    min_time: float = option("--min-time", type=o.Seconds(0, 3600), default=0.03, show_default=True,
                             help="Seconds of timed samples per invocation.")
    timeout: float | None = option("--timeout", type=FloatRange(min=0.1, max=86400), help="Seconds before an "
                                   "invocation is declared hung (default from the timing; 600 under callgrind).")
    allocators: list[Allocator] | None = group(o.allocator_option)
    json_path: Path | None = group(o.json_option)
    db: str | None = group(o.db_option)
    wide: bool = group(o.wide_option)
    label_args: tuple[str, ...] = group(o.label_option)
    predict: PredictOptions | None = group(predict_options)
    pin: RunnerOptions = group(o.runner_options)
    build: BuildOptions = group(o.build_options(positional=True, cc=False, cflags_default="",
                                                  cflags_help="Flags every variant shares, before its own --flags."))

    def sweep(self) -> Sweep:
        """The design's record (experiments/variants.py); click.UsageError, click.BadParameter or
        UserError for options that cannot go together."""
        from cyclebench import counters

        try:
            sets = [tuple(shlex.split(f)) for f in self.flag_sets]
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--flags") from None
        if not self.build.files and not self.globs:
            raise click.UsageError("variants needs C files (FILE... or -f FILE) or built-in benchmarks (-b GLOB)")
        if self.allocators and self.target:
            raise click.UsageError("--allocator measures native builds: it cannot go with --target")
        sim = self.backend == "callgrind" or self.callgrind_flag
        try:
            events = counters.parse_events(self.events_spec) if self.events_spec else None
            vs = make_variants(self.ccs, sets, self.target, self.allocators)
        except (counters.EventError, VariantError) as e:
            raise UserError(str(e)) from None
        known = {"cycles", "text", "data", "bss", "dec", "body", *(ev.name for g in events or [] for ev in g),
                 *(("Ir", "I1mr", "D1mr", "DLmr", "Bcm") if sim else ())}
        if self.sort not in known:
            raise click.BadParameter(f"'{self.sort}' is not one of {', '.join(sorted(known))}"
                                     + ("" if sim else " (callgrind events need --backend callgrind)"),
                                     param_hint="--sort")
        if self.baseline is not None:  # the baseline goes first: every comparison is against the first
            pick = [v for v in vs if v.label == self.baseline]
            if not pick:
                raise UserError(f"--baseline '{self.baseline}' is not a variant here "
                                f"({', '.join(v.label for v in vs)})")
            vs = [pick[0], *[v for v in vs if v is not pick[0]]]
        return Sweep(vs, self.globs, parse_params(self.params), self.rounds, self.min_time, self.timeout, sim, events,
                     self.disasm, o.parse_labels(self.label_args), self.sort)


@click.command("variants")
@takes(VariantsArgs)
def variants_cmd(a: VariantsArgs) -> None:
    """Build FILES (default: the built-in suite, pick with -b) once per flag set / compiler /
    target / allocator and measure the builds side by side."""
    sweep = a.sweep()
    store = open_store(a.db)
    run_id, data, unbuilt = measure_and_store(sweep, a.build, a.pin, store)
    show(data, run_id, unbuilt, a.json_path, a.wide, a.sort, a.disasm, exit_on_failure=a.predict is None)
    if a.predict is not None:
        after_run(a.predict, store, run_id, variant_binaries(sweep, a.build, a.pin), a.wide)
        exit_if_failed(data, unbuilt)
