"""One way to call every command: the shared options exist wherever they apply (issue 12)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from cyclebench.cli import main

BUILDING = {"run", "compare", "variants", "annotate", "counters sweep", "scale"}
PINNING = {"run", "compare", "variants", "selftest", "annotate", "counters sweep", "stat"}
BUILD_OPTS = {"-f", "-I", "-D", "--cflags", "--ldflags"}
PIN_OPTS = {"--cpu", "--fifo"}


def commands(group: click.Group = main, prefix: str = "") -> dict[str, click.Command]:
    out: dict[str, click.Command] = {}
    for name, cmd in group.commands.items():
        path = f"{prefix}{name}"
        if isinstance(cmd, click.Group):
            out.update(commands(cmd, path + " "))
        else:
            out[path] = cmd
    return out


def opts(cmd: click.Command) -> set[str]:
    return {o for p in cmd.params if isinstance(p, click.Option) for o in p.opts}


def test_every_named_command_exists() -> None:
    assert set(commands()) >= BUILDING | PINNING


@pytest.mark.parametrize("name", sorted(BUILDING))
def test_building_commands_share_the_build_options(name: str) -> None:
    assert opts(commands()[name]) >= BUILD_OPTS, BUILD_OPTS - opts(commands()[name])


@pytest.mark.parametrize("name", sorted(PINNING))
def test_pinning_commands_share_cpu_and_fifo(name: str) -> None:
    assert opts(commands()[name]) >= PIN_OPTS, PIN_OPTS - opts(commands()[name])


def test_storing_and_exporting_options_mean_the_same() -> None:
    for name, cmd in commands().items():
        for p in cmd.params:
            if "--db" in getattr(p, "opts", ()):
                assert p.metavar == "URL", name
            if "--json" in getattr(p, "opts", ()):
                assert isinstance(p.type, click.Path), name


@pytest.mark.parametrize("argv", [["compare", "x.c", "a/b", "c/d"], ["annotate", "bench.c"],
                                  ["counters", "sweep", "mine.c"], ["scale", "contend.c"]])
def test_a_c_file_where_a_benchmark_belongs_says_use_f(argv: list[str]) -> None:
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 2
    assert "give files with -f" in r.output and "Traceback" not in r.output


def test_variants_old_callgrind_spelling_still_parses() -> None:
    cmd = commands()["variants"]
    assert "--backend" in opts(cmd) and "--callgrind" in opts(cmd)
    assert next(p for p in cmd.params if "--callgrind" in p.opts).hidden


@pytest.mark.parametrize("argv", [["selftest", "--cpu", "999"], ["check", "--cpu", "999"], ["run", "--cpu", "999"]])
def test_a_cpu_that_does_not_exist_is_refused(argv: list[str]) -> None:
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 2 and "CPU 999 is not available here" in r.output


STORING = {"run", "compare", "variants", "scale", "stat"}  # the commands that open a run (open_run / run.begin)


def test_every_command_that_stores_a_run_takes_labels() -> None:
    import importlib
    import inspect
    import re

    def source(cmd: object) -> str:  # the command's module and its machinery (commands/_<module>.py)
        mod = inspect.getmodule(cmd.callback)  # type: ignore[attr-defined]
        text = inspect.getsource(mod)
        pkg, _, leaf = mod.__name__.rpartition(".")  # type: ignore[union-attr]
        try:
            return text + inspect.getsource(importlib.import_module(f"{pkg}._{leaf}"))
        except ImportError:
            return text

    opening = {name for name, cmd in commands().items()
               if cmd.callback is not None and re.search(r"\b(open_run|begin|begin_run)\(", source(cmd))}
    assert opening == STORING
    for name in sorted(STORING):
        assert "--label" in opts(commands()[name]), name


@pytest.mark.parametrize("argv", [["run", "--label", "nokey"], ["stat", "--label", "=v", "--", "true"],
                                  ["scale", "--label", "x", "contend"], ["compare", "--label", "k", "a", "b"]])
def test_a_label_that_is_not_key_value_is_refused(argv: list[str]) -> None:
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 2 and "is not KEY=VALUE" in r.output and "Traceback" not in r.output


def test_labels_are_refused_where_no_run_is_stored() -> None:
    r = CliRunner().invoke(main, ["compare", "1", "2", "--label", "k=v", "--db", "sqlite:////nonexistent/x.db"])
    assert r.exit_code == 2 and "comparing stored runs stores none" in r.output


def test_the_fleet_commands_take_an_inventory_and_a_database() -> None:
    assert opts(commands()["fleet run"]) >= {"-i", "--inventory", "--limit", "--direct", "--db", "--json", "--forks"}
    assert opts(commands()["fleet status"]) >= {"-i", "--inventory", "--db"}
    assert "--by" in opts(commands()["compare"]) and "--host" in opts(commands()["history"])
