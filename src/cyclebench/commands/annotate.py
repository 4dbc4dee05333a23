"""`cyclebench annotate`: hot symbols and instructions of one benchmark (perf record, cpu-clock)."""

from __future__ import annotations

import click

from cyclebench.build import BuildError
from cyclebench.build import build as build_binary
from cyclebench.commands._common import (
    UserError,
    err,
    out,
)
from cyclebench.commands._options import (
    BuildOptions,
    RunnerOptions,
    build_options,
    not_a_file,
    runner_options,
)
from cyclebench.report.text import safe_text
from cyclebench.runner import RunnerError


@click.command("annotate")
@click.argument("bench", nargs=-1, metavar="[FILE.c...] BENCH")
@click.option("-p", "--param", type=int, default=None, help="Parameter of the benchmark.")
@click.option("--seconds", type=click.FloatRange(0.05, 60), default=1.0, show_default=True,
              help="About how long to sample.")
@runner_options
@build_options(files_in="bench", one="BENCH")
def annotate_cmd(bench: str, build: BuildOptions, pin: RunnerOptions, param: int | None, seconds: float) -> None:
    """Hot symbols and the benchmark body's hot instructions (perf record -e cpu-clock + perf annotate)."""
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
            a = annotate.annotate(binary.path, bench, param, cpu, seconds, fifo=pin.fifo)
    except (BuildError, RunnerError, RuntimeError) as e:
        raise UserError(str(e)) from None
    label = bench + ("" if param is None else f" [{param}]")
    out.rule(safe_text(f"{label}: hottest symbols ({a.samples} cpu-clock samples; kernel included)"))
    out.print(a.top, markup=False, highlight=False)
    out.rule(safe_text(f"{label}: body, share of its samples per instruction (skid: charged to the next one)"))
    out.print(a.body, markup=False, highlight=False)
