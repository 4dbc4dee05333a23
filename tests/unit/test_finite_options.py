"""Every number option of every command refuses nan and ±inf at parse time (click.BadParameter:
one line, exit 2): nan passes a range's comparisons and inf an open end (IEEE 754)."""

from __future__ import annotations

import click
import pytest

from cyclebench.cli import all_commands

FLOAT_OPTIONS = [(name, p) for name, cmd in sorted(all_commands().items()) for p in cmd.params
                 if isinstance(p.type, click.types.FloatParamType)]


def test_there_are_float_options() -> None:
    assert len(FLOAT_OPTIONS) >= 10


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "1e999"])
@pytest.mark.parametrize(("name", "param"), FLOAT_OPTIONS, ids=[f"{n} {p.opts[0]}" for n, p in FLOAT_OPTIONS])
def test_a_float_option_refuses_what_is_not_finite(name: str, param: click.Parameter, value: str) -> None:
    with pytest.raises(click.BadParameter):
        param.type.convert(value, param, None)
