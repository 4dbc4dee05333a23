"""`cyclebench annotate`: hot symbols and instructions of one benchmark (perf record, cpu-clock)."""

from __future__ import annotations

import click

from cyclebench.build import BuildError
from cyclebench.build import build as build_binary
from cyclebench.experiments.options import BuildOptions, RunnerOptions
from cyclebench.report.fit import Heading
from cyclebench.report.text import safe_text
from cyclebench.runner import RunnerError
from cyclebench.ui.common import (
    UserError,
    err,
    out,
)
from cyclebench.ui.options import FloatRange, build_options, not_a_file, runner_options


def _rules_fit(listing: str, width: int) -> str:
    """perf annotate's listing with its rules (lines of '-' only: 103 wide under its header) cut to
    the console's width, so a rule does not wrap onto a second line of dashes; text is left whole."""
    return "\n".join(ln[:width] if len(ln) > width and set(ln) == {"-"} else ln for ln in listing.split("\n"))


@click.command("annotate")
@click.argument("bench", nargs=-1, metavar="[FILE.c...] BENCH")
@click.option("-p", "--param", type=int, default=None, help="Parameter of the benchmark.")
@click.option("--seconds", type=FloatRange(0.05, 60), default=1.0, show_default=True,
              help="About how long to sample.")
@click.option("--top", type=click.IntRange(1, 10), default=3, show_default=True,
              help="Annotate at most this many of the hottest symbols the body reaches (each ≥ 1 % of its samples).")
@runner_options
@build_options(files_in="bench", one="BENCH")
def annotate_cmd(bench: str, build: BuildOptions, pin: RunnerOptions, param: int | None, seconds: float,
                 top: int) -> None:
    """Hot symbols, and the hot instructions of the hottest symbols the benchmark's body reaches: the body,
    what it calls, the kernel under its system calls (perf record -e cpu-clock --call-graph dwarf + perf annotate)."""
    from cyclebench.env import sysinfo
    from cyclebench.runner import Runner
    from cyclebench.runner import perf_record as annotate

    not_a_file(bench, "annotate")
    try:
        binary = build_binary(build.spec())
        runner = Runner(binary.path)
        names = {b.name: b for b in runner.list()}
        if bench not in names:
            raise UserError(f"unknown benchmark '{bench}' (see cyclebench run --list)")
        if names[bench].params and param is None:
            param = names[bench].params[0]
        cpu = pin.cpu if pin.cpu is not None else sysinfo.choose_cpu()
        with err.status(safe_text(f"sampling {bench} for ~{seconds:g} s"), spinner="dots"):
            a = annotate.annotate(binary.path, bench, param, cpu, seconds, fifo=pin.fifo, top=top)
    except (BuildError, RunnerError, RuntimeError) as e:
        raise UserError(str(e)) from None
    label = bench + ("" if param is None else f" [{param}]")
    out.print(Heading(f"{label}: hottest symbols ({a.samples} cpu-clock samples; kernel included)"))
    out.print(a.top, markup=False, highlight=False)
    if not a.under_body:
        err.print(safe_text(f"cyclebench: no sample of {a.samples} has {a.body} on its call chain (perf without DWARF "
                            "unwinding, or too short a --seconds): the body alone, not what it calls"),
                  highlight=False, style="yellow")
        out.print(Heading(f"{label}: body, share of its samples per instruction (skid: charged to the next one)"))
        out.print(_rules_fit(a.hot[0].listing, out.width), markup=False, highlight=False)
        return
    shown = ", ".join(f"{h.symbol} {100 * h.share:.1f}%" for h in a.hot)
    out.print(Heading(f"{label}: {a.under_body} samples ({100 * a.under_body / max(a.samples, 1):.0f}%) have {a.body} "
                       f"on their call chain; annotated, by share of those: {shown}"))
    for h in a.hot:
        name = h.dso.rsplit("/", 1)[-1]
        where = "" if not h.dso else f" {name}" if name.startswith("[") else f" [{name}]"
        out.print(Heading(f"{h.symbol}{where}: {100 * h.share:.1f}% of the body's samples; share of its own per "
                           "instruction (skid: charged to the next one)"))
        out.print(_rules_fit(h.listing, out.width), markup=False, highlight=False)
