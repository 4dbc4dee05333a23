"""`cyclebench explain`: one benchmark's hot loop as the static models see it (docs/method.md §12)."""

from __future__ import annotations

from dataclasses import replace

import click

from cyclebench.build import BuildError
from cyclebench.build import build as build_binary
from cyclebench.experiments.options import BuildOptions
from cyclebench.report.fit import Heading
from cyclebench.runner import RunnerError
from cyclebench.ui.common import UserError, err, open_store, out
from cyclebench.ui.options import build_options, db_option, not_a_file, wide_option
from cyclebench.ui.predict import mcpu_option


@click.command("explain")
@click.argument("bench", nargs=-1, metavar="[FILE.c...] BENCH")
@click.option("-p", "--param", type=int, default=None, help="Parameter of the benchmark (default: its first).")
@mcpu_option
@db_option
@wide_option
@build_options(files_in="bench", one="BENCH")
def explain_cmd(bench: str, build: BuildOptions, param: int | None, mcpu: str | None, db: str | None,
                wide: bool) -> None:
    """Why a benchmark costs what it does, as static models see its hot loop: llvm-mca's and OSACA's
    port pressure per instruction, the critical chain, and what they do not model."""
    from cyclebench.experiments.errors import ExperimentError
    from cyclebench.experiments.predict import PredictOptions, explain
    from cyclebench.report.predict import explain_group
    from cyclebench.runner import Runner
    from cyclebench.store import StoreError
    from cyclebench.store.predictions import newest_measured

    not_a_file(bench, "explain")
    try:
        binary = build_binary(build.spec())
        names = {b.name: b for b in Runner(binary.path).list()}
        if bench not in names:
            raise UserError(f"unknown benchmark '{bench}' (see cyclebench run --list)")
        if names[bench].params and param is None:
            param = names[bench].params[0]
        # the same build with -g names the blocks' source lines (GCC's -g leaves the code as it is);
        # DWARF 4: binutils 2.40's addr2line names the main file for a line of an #included .c in
        # DWARF 5's file table (lz4_bench.c:1347 for lz4.c:1347)
        spec = build.spec()
        debug = build_binary(replace(spec, cflags=(*spec.cflags, "-g", "-gdwarf-4"))).path
        with err.status(f"finding {bench}'s hot loop", spinner="dots"):
            tgt, pred = explain(binary.path, bench, param, PredictOptions(mcpu=mcpu), debug)
    except (BuildError, RunnerError, ExperimentError) as e:
        raise UserError(str(e)) from None
    other = None
    try:
        row, other = newest_measured(open_store(db), bench, param, binary.key)
    except StoreError:
        row = None
    label = bench + ("" if param is None else f" [{param}]")
    meas = None if row is None else row.get("cycles_per_op")
    out.print(Heading(label))
    out.print(explain_group(pred, meas, tgt.line(), wide=wide))
    if row is None:
        why = ("none stored" if other is None else
               f"not measured in this build (run #{other} measured another build: other flags, sources or libraries)")
        err.print(f"measured: {why} (cyclebench run -b '{bench}' --predict measures it beside the models)",
                  highlight=False)
    else:
        err.print(f"measured: {meas:.4g} cycles~ (run #{row['run_id']})", highlight=False)
