"""`cyclebench gen`: generated benchmark sources (an -falign-functions I-cache workload)."""

from __future__ import annotations

from pathlib import Path

import click

from cyclebench.ui.common import (
    err,
    write_text,
)


@click.group("gen")
def gen_group() -> None:
    """Generate benchmark sources."""


@gen_group.command("icache")
@click.option("--funcs", type=click.IntRange(2, 100000), default=1024, show_default=True,
              help="Number of small functions.")
@click.option("--size", type=click.IntRange(1, 1000), default=8, show_default=True,
              help="Operations per function (about that many instructions).")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=1, show_default=True, help="Seed of the call order.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
def gen_icache(funcs: int, size: int, seed: int, output: Path) -> None:
    """An I-cache workload (Molnar's alignment study): many small functions called in a fixed shuffled order.

    Then: cyclebench variants FILE --backend callgrind --flags "-O2 -falign-functions=1" ...
    """
    from cyclebench.build import icache

    write_text(output, icache.generate(funcs, size, seed))
    err.print(f"wrote {output} (icache/calls{funcs}x{size})")
