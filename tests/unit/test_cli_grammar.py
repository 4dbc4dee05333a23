"""One way to call every command: the shared options exist wherever they apply."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cyclebench.cli import COMMANDS, all_commands, main

BUILDING = {"run", "compare", "variants", "annotate", "counters sweep", "scale"}
PINNING = {"run", "compare", "variants", "selftest", "annotate", "counters sweep", "stat"}
BUILD_OPTS = {"-f", "-I", "-D", "--cflags", "--ldflags"}
PIN_OPTS = {"--cpu", "--fifo"}


def commands() -> dict[str, click.Command]:
    """Every command that is not a group, by its full name ("fleet run"), loaded."""
    return {name: cmd for name, cmd in all_commands().items() if not isinstance(cmd, click.Group)}


def test_the_help_lists_every_command_with_its_own_summary() -> None:
    """--help shows COMMANDS' summaries without loading a command: each is its command's own."""
    for name, (_, _, summary) in COMMANDS.items():
        cmd = all_commands()[name]
        assert cmd.get_short_help_str(1000) == click.Command(name, help=summary).get_short_help_str(1000), name
    assert set(COMMANDS) == {n for n in all_commands() if " " not in n}


def test_help_loads_no_command() -> None:
    code = ("import sys\nfrom cyclebench.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('cyclebench.commands', 'numpy', 'sqlalchemy', "
            "'scipy'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stdout
    assert "run " in r.stdout and "variants " in r.stdout


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


@pytest.mark.parametrize("argv", [["compare", "x.h", "a/b", "c/d"], ["annotate", "bench.h"],
                                  ["counters", "sweep", "mine.h"], ["scale", "contend.h"]])
def test_a_header_where_a_benchmark_belongs_says_use_f(argv: list[str]) -> None:
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 2
    assert "give files with -f" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("name", sorted(BUILDING | {"profile"}))
def test_every_building_command_takes_a_c_argument_as_a_file(name: str, tmp_path: Path) -> None:
    """`run FILE.c` took a file where `compare`, `scale`... wanted -f: a FILE.c argument is a
    file (a pattern, as -f takes it) for every command that builds, so a missing one is said
    to be missing, not taken for a benchmark's name."""
    missing = str(tmp_path / "nothere.c")
    argv = {"compare": ["compare", missing, "a/b", "c/d"], "annotate": ["annotate", missing, "a/b"],
            "counters sweep": ["counters", "sweep", missing, "a/b"], "profile": ["profile", missing, "a/b"],
            "scale": ["scale", missing], "run": ["run", missing], "variants": ["variants", missing]}[name]
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 2, r.output
    assert "nothere.c" in r.output and ("matches no file" in r.output or "does not exist" in r.output), r.output
    assert "give files with -f" not in r.output and "Traceback" not in r.output


@pytest.mark.parametrize(("argv", "said"), [(["annotate", "X"], "Missing argument 'BENCH'"),
                                            (["annotate", "X", "a/b", "c/d"], "one BENCH at a time (got a/b, c/d)"),
                                            (["counters", "sweep", "X"], "Missing argument 'BENCH'")])
def test_one_bench_beside_c_files(argv: list[str], said: str, tmp_path: Path) -> None:
    (tmp_path / "x.c").write_text("int x;\n")
    r = CliRunner().invoke(main, [str(tmp_path / "x.c") if a == "X" else a for a in argv])
    assert r.exit_code == 2 and said in r.output and "Traceback" not in r.output


def test_variants_old_callgrind_spelling_still_parses() -> None:
    cmd = commands()["variants"]
    assert "--backend" in opts(cmd) and "--callgrind" in opts(cmd)
    assert next(p for p in cmd.params if "--callgrind" in p.opts).hidden


@pytest.mark.parametrize("argv", [["selftest", "--cpu", "999"], ["check", "--cpu", "999"], ["run", "--cpu", "999"]])
def test_a_cpu_that_does_not_exist_is_refused(argv: list[str]) -> None:
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 2 and "CPU 999 is not available here" in r.output


# the commands that open a run (open_run / run.begin)
STORING = {"run", "compare", "variants", "scale", "stat", "profile", "ci"}


def test_every_command_that_stores_a_run_takes_labels() -> None:
    import importlib
    import inspect
    import re

    def source(cmd: object) -> str:  # the command's module, its ui/ part and its design (experiments/)
        mod = inspect.getmodule(cmd.callback)  # type: ignore[attr-defined]
        text = inspect.getsource(mod)
        _, _, leaf = mod.__name__.rpartition(".")  # type: ignore[union-attr]
        for design in (f"cyclebench.ui.{leaf}", f"cyclebench.experiments.{leaf}"):
            with contextlib.suppress(ImportError):
                text += inspect.getsource(importlib.import_module(design))
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
