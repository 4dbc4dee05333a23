from __future__ import annotations

import pytest

from cyclebench.model import BenchInfo, Item
from cyclebench.runner.plan import SelectionError, plan


def b(name: str, params: tuple[int, ...] | None = None) -> BenchInfo:
    return BenchInfo(name, name.split("/")[0], params, None, "x.c", 1, False)


BENCHES = [b("copy/memcpy", (48, 4096)), b("copy/rep_movsb", (48, 4096)), b("syscall/getpid")]


def test_all_by_default() -> None:
    items = plan(BENCHES)
    assert [i.label for i in items] == [
        "copy/memcpy[48]", "copy/memcpy[4096]", "copy/rep_movsb[48]", "copy/rep_movsb[4096]", "syscall/getpid"]


def test_glob_group_and_params() -> None:
    assert plan(BENCHES, ["copy"], [4096]) == [Item("copy/memcpy", 4096), Item("copy/rep_movsb", 4096)]
    assert plan(BENCHES, ["copy/*"], [48]) == [Item("copy/memcpy", 48), Item("copy/rep_movsb", 48)]


def test_exact_name_accepts_unlisted_param() -> None:
    assert plan(BENCHES, ["copy/memcpy"], [100]) == [Item("copy/memcpy", 100)]


def test_unknown_benchmark_is_an_error() -> None:
    with pytest.raises(SelectionError, match="no benchmark matches 'nosuch'"):
        plan(BENCHES, ["nosuch"])


def test_param_nobody_offers() -> None:
    with pytest.raises(SelectionError):
        plan(BENCHES, ["copy/*"], [7])
