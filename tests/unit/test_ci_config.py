"""experiments.ci.config_of: cyclebench.toml's [ci] table, its Google Benchmark targets among it
(docs/ci.md): what each key becomes, and one line naming what is wrong."""

from __future__ import annotations

import pytest

from cyclebench.experiments.ci import Config, GbenchTarget, config_of
from cyclebench.experiments.errors import ExperimentError


def test_no_file_and_an_empty_table_are_the_defaults() -> None:
    assert config_of(None) == Config() == config_of("[ci]\n")


def test_a_target_table_and_an_array_of_them() -> None:
    one = config_of('[ci.gbench]\nbuild = "make bench"\nbinary = "bench"\n')
    assert one.gbench == (GbenchTarget((("make", "bench"),), "bench"),)
    two = config_of('[[ci.gbench]]\nbuild = ["cmake -S . -B b -DX=\'a b\'", "cmake --build b"]\nbinary = "b/x"\n'
                    'filter = "BM_.*"\n[[ci.gbench]]\nbinary = "prebuilt"\n')
    assert two.gbench == (GbenchTarget((("cmake", "-S", ".", "-B", "b", "-DX=a b"), ("cmake", "--build", "b")),
                                       "b/x", "BM_.*"), GbenchTarget((), "prebuilt"))


@pytest.mark.parametrize(("text", "said"), [
    ("[ci]\ngbench = 3\n", "ci.gbench must be a table"),
    ('[ci.gbench]\nbuild = "make"\n', "ci.gbench.binary must be the executable's path"),
    ('[ci.gbench]\nbinary = "b"\nbuild = [1]\n', "ci.gbench.build must be a command, or a list of commands"),
    ('[ci.gbench]\nbinary = "b"\nbuild = [""]\n', "ci.gbench.build must be a command"),
    ('[ci.gbench]\nbinary = "b"\nfilter = 2\n', "ci.gbench.filter must be a regex"),
])
def test_what_is_wrong_is_named(text: str, said: str) -> None:
    with pytest.raises(ExperimentError, match=said):
        config_of(text)
