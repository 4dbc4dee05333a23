"""A command's options as one frozen record (ui/record.py): declared once, parsed by
click, handed over whole; and no command function takes a long list of parameters."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cyclebench.ui.options import OutputOptions, format_option
from cyclebench.ui.record import argument, group, option, takes

COMMANDS = Path(__file__).parents[2] / "src" / "cyclebench" / "commands"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Args:
    names: tuple[str, ...] = argument(nargs=-1)
    count: int = option("-n", "--count", type=int, default=3, help="How many.")
    loud: bool = option("--loud", is_flag=True, help="Say it loudly.")
    output: OutputOptions = group(format_option)


def _command(seen: list[Args]) -> click.Command:
    @click.command()
    @takes(Args)
    def cmd(a: Args) -> None:
        seen.append(a)

    return cmd


def test_the_command_gets_one_frozen_record_of_what_click_parsed() -> None:
    seen: list[Args] = []
    r = CliRunner().invoke(_command(seen), ["x", "y", "-n", "5", "--loud", "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert seen == [Args(names=("x", "y"), count=5, loud=True, output=OutputOptions("csv", None))]
    with pytest.raises(dataclasses.FrozenInstanceError):
        seen[0].count = 1  # type: ignore[misc]


def test_defaults_and_help_order_are_the_records() -> None:
    seen: list[Args] = []
    cmd = _command(seen)
    CliRunner().invoke(cmd, [])
    assert seen[0].count == 3 and seen[0].loud is False and seen[0].names == ()
    assert [p.name for p in cmd.params] == ["names", "count", "loud", "export_format", "output_path"]
    assert "--count" in CliRunner().invoke(cmd, ["--help"]).output


def test_a_field_declared_no_way_is_refused_at_import() -> None:
    @dataclasses.dataclass(frozen=True)
    class Bad:
        count: int = 1

    with pytest.raises(TypeError, match=r"Bad\.count"):
        takes(Bad)(lambda a: None)


def _command_functions() -> list[tuple[str, int]]:
    found = []
    for path in sorted(COMMANDS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any("command" in ast.unparse(d) for d in node.decorator_list):
                found.append((f"{path.name}:{node.name}", len(node.args.args) + len(node.args.kwonlyargs)))
    return found


def test_no_command_function_takes_more_than_six_parameters() -> None:
    """Options arrive as one record, not as a signature of 20."""
    found = _command_functions()
    assert len(found) >= 20  # every subcommand was seen
    assert [(name, n) for name, n in found if n > 6] == []
