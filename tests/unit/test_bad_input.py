"""Bad input is one line and exit 2, before anything is built or measured (out-of-range
numbers, unbalanced quotes, CPUs that do not exist)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cyclebench.cli import main
from cyclebench.ui.outputs import OUTPUTS

CASES = [
    (["run", "-b", "timer/rdtsc", "--min-time", "nan"], "nan is not in"),
    (["run", "-b", "timer/rdtsc", "--max-time", "inf"], "inf is not in"),
    (["run", "-b", "timer/rdtsc", "--min-time", "1e308"], "is not in"),
    (["run", "-b", "timer/rdtsc", "--min-time", "20", "--max-time", "10"], "is above --max-time"),
    (["run", "-b", "copy/memcpy", "-p", "99999999999999999999999"], "is not a size or count"),
    (["run", "-b", "copy/memcpy", "-p", "-5"], "is not a size or count"),
    (["run", "-b", "timer/rdtsc", "--seed", "99999999999999999999"], "--seed"),
    (["run", "-b", "timer/rdtsc", "--timeout", "inf"], "inf is not in"),
    (["run", "-b", "timer/rdtsc", "--backend", "callgrind", "--cache", "I1=0,0,0;D1=0,0,0;LL=0,0,0"],
     "size must be a multiple"),
    (["run", "-b", "timer/rdtsc", "--cflags", '"-O2'], "No closing quotation"),
    (["compare", "a/b", "c/d", "--cflags", '"-O2'], "No closing quotation"),
    (["compare", "a/b", "c/d", "--min-time", "nan"], "nan is not in"),
    (["show", "99999999999999999999999"], "is not in the range"),
    (["export", "99999999999999999999999", "--json", "x.json"], "is not in the range"),
    (["selftest", "--quick", "--cpu", "999"], "CPU 999 is not available here"),
    (["check", "--cpu", "999"], "CPU 999 is not available here"),
    (["run", "-f", "/nonexistent/*.c"], "matches no file"),
]


@pytest.mark.parametrize(("argv", "says"), CASES, ids=[" ".join(a)[:50] for a, _ in CASES])
def test_one_line_exit_2(argv: list[str], says: str, tmp_path: Path) -> None:
    r = CliRunner().invoke(main, [*argv, "--db", f"sqlite:///{tmp_path}/x.db"] if argv[0] in ("show", "export")
                           else argv)
    assert r.exit_code == 2, r.output
    assert says in r.output and "Traceback" not in r.output


def test_output_file_in_a_missing_directory(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["gen", "icache", "--funcs", "4", "-o", str(tmp_path / "no" / "such" / "x.c")])
    assert r.exit_code == 2
    assert "cannot write" in r.output and "No such file or directory" in r.output


def _leaves(group: click.Group) -> list[click.Command]:
    from cyclebench.cli import all_commands

    return [c for c in all_commands(group).values() if not isinstance(c, click.Group)]


def test_every_option_that_writes_a_file_goes_through_the_one_check() -> None:
    """A command with --json, -o, --plot or --csv (now or added later) is checked against its
    inputs (ui/outputs.py) before it runs."""
    writing = [c for c in _leaves(main) if any(p.name in OUTPUTS and isinstance(p.type, click.Path) for p in c.params)]
    assert len(writing) >= 10
    assert [c.name for c in writing if not hasattr(c.callback, "__cyclebench_guarded__")] == []


def test_every_output_written_says_what_is_stored(tmp_path: Path) -> None:
    """--json, --csv, -o and --plot all end through ui.common.writing: one line naming the file,
    why, and the run that holds what was measured."""
    from cyclebench.ui.common import UserError, writing

    with pytest.raises(UserError) as e, writing(tmp_path / "p.png", "run #3"):
        raise FileNotFoundError(2, "No such file or directory")
    assert e.value.message == f"cannot write {tmp_path / 'p.png'}: No such file or directory; the results are " \
                              "stored (run #3)"
    with writing(tmp_path / "ok.txt"):  # nothing raised: nothing said
        (tmp_path / "ok.txt").write_text("x")
