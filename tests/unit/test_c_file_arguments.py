"""A FILE.c argument where benchmarks go is a file (ui/options.build_options): the fleet
sends it to the hosts like an -f file, globs expanded (tests/unit/test_cli_grammar.py checks
that every building command takes one)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from cyclebench.cli import main
from cyclebench.commands.fleet import job_plan
from cyclebench.ui.options import take_c_files


@pytest.fixture(autouse=True)
def _in_the_cli() -> object:
    """job_plan() finds the command to run through click's context, as under `cyclebench fleet run`."""
    with click.Context(main):
        yield


def test_take_c_files_keeps_the_order_and_the_rest() -> None:
    assert take_c_files(["a.c", "x/y", "t/*.c", "3", "b.h"]) == (["a.c", "t/*.c"], ["x/y", "3", "b.h"])


def test_the_fleet_maps_c_file_arguments_into_the_job(tmp_path: Path) -> None:
    for n in ("one.c", "two.c"):
        (tmp_path / n).write_text("x")
    _, p = job_plan(["scale", str(tmp_path / "*.c"), "--tasks", "1,2"])
    assert p.args == ("scale", "one.c", "two.c", "--tasks", "1,2")
    assert {d: s for s, d in p.files} == {"one.c": tmp_path / "one.c", "two.c": tmp_path / "two.c"}
    _, p = job_plan(["compare", str(tmp_path / "one.c"), "a/b", "c/d"])
    assert p.args[:4] == ("compare", "one.c", "a/b", "c/d") and [d for _, d in p.files] == ["one.c"]
