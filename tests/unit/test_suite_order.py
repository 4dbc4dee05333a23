"""model.suite_order: result rows in the suite's order whatever order they were stored in
(docs/exports.md "Order"), and the store reading a run's rows back in it."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from cyclebench.model import SCALING, Result, suite_order
from cyclebench.store import Store


def _row(bench: str, param: int | None = None, variant: str = "", at: int | None = None, alloc: str | None = None,
         **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"bench": bench, "param": param, "variant": variant, "plan_index": at, **kw}
    if alloc:
        row["allocator"] = {"name": alloc, "library": f"lib{alloc}.so", "version": None}
    return row


def _names(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for r in rows:
        alloc = (r.get("allocator") or {}).get("name")
        out.append(f"{r['bench']}[{r['param']}]{r['variant']}" + (f"+{alloc}" if alloc else ""))
    return out


# The plan of `run -b 'copy/*' -b alu -p 4096,64,65536 --allocator jemalloc,glibc` (copy before alu: the
# selection's order, not the alphabet): loop/empty first, each item once per installed allocator, the
# parameters in the order given; tcmalloc is not installed (its rows stored first, with no plan index).
PLAN = [
    _row("loop/empty", at=0),
    *(_row("copy/memcpy", p, a, at=1 + 2 * k + j, alloc=a) for k, p in enumerate((4096, 64, 65536))
      for j, a in enumerate(("jemalloc", "glibc"))),
    _row("copy/memmove", 64, "jemalloc", at=7, alloc="jemalloc"),
    _row("copy/memmove", 64, "glibc", at=8, alloc="glibc"),
    _row("alu/add", None, "jemalloc", at=9, alloc="jemalloc"),
    _row("alu/add", None, "glibc", at=10, alloc="glibc"),
]
SKIPPED = [_row(b, p, "tcmalloc", status="skipped") for b, p in (("copy/memcpy", 4096), ("copy/memcpy", 64),
                                                                    ("copy/memcpy", 65536), ("copy/memmove", 64),
                                                                    ("alu/add", None))]
EXPECTED = [
    "loop/empty[None]",
    "copy/memcpy[64]jemalloc+jemalloc", "copy/memcpy[64]glibc+glibc", "copy/memcpy[64]tcmalloc",
    "copy/memcpy[4096]jemalloc+jemalloc", "copy/memcpy[4096]glibc+glibc", "copy/memcpy[4096]tcmalloc",
    "copy/memcpy[65536]jemalloc+jemalloc", "copy/memcpy[65536]glibc+glibc", "copy/memcpy[65536]tcmalloc",
    "copy/memmove[64]jemalloc+jemalloc", "copy/memmove[64]glibc+glibc", "copy/memmove[64]tcmalloc",
    "alu/add[None]jemalloc+jemalloc", "alu/add[None]glibc+glibc", "alu/add[None]tcmalloc",
]


@pytest.mark.parametrize("seed", range(20))
def test_shuffled_rows_come_back_in_the_suite_order(seed: int) -> None:
    rows = [dict(r) for r in SKIPPED + PLAN]
    random.Random(seed).shuffle(rows)
    before = [dict(r) for r in rows]
    got = suite_order(rows)
    assert _names(got) == EXPECTED
    assert rows == before  # a new list; the rows given are not touched


def test_without_plan_index_the_first_row_of_each_benchmark_sets_its_place() -> None:
    """Rows stored before results.plan_index (or by other commands): their order by id is the plan's,
    but for the rows that finished late; a benchmark keeps the place of its first row."""
    stored = [_row("loop/empty"), _row("copy/memcpy", 4096), _row("alu/add"), _row("copy/memcpy", 64),
              _row("alu/mul"), _row("copy/memcpy", 65536), _row("alu/add", variant="-O3")]
    assert _names(suite_order(stored)) == ["loop/empty[None]", "copy/memcpy[64]", "copy/memcpy[4096]",
                                           "copy/memcpy[65536]", "alu/add[None]", "alu/add[None]-O3",
                                           "alu/mul[None]"]


def test_the_plan_index_outranks_the_order_given() -> None:
    """`run --target-ci` stores a row when its last pass ends: alu/add (no parameter) needed more
    passes and was stored last; its plan index puts it back before alu/mul."""
    stored = [_row("alu/mul", at=2), _row("loop/empty", at=0), _row("alu/add", at=1)]
    assert _names(suite_order(stored)) == ["loop/empty[None]", "alu/add[None]", "alu/mul[None]"]


def test_a_scaling_row_s_task_count_comes_after_its_mode() -> None:
    """A scaling row's param is its task count: each mode's series stays whole, tasks ascending."""
    stored = [_row("contend/padded", t, mode, kind=SCALING) for mode in ("process", "threads") for t in (4, 1, 2)]
    assert _names(suite_order(stored)) == [f"contend/padded[{t}]{mode}" for mode in ("process", "threads")
                                           for t in (1, 2, 4)]


def test_the_store_reads_a_run_back_in_the_suite_order(tmp_path: Path) -> None:
    s = Store(f"sqlite:///{tmp_path / 'o.db'}")
    rid, other = s.begin_run(command=["cyclebench", "run"]), s.begin_run(command=["cyclebench", "run"])
    rows = [dict(r) for r in SKIPPED + PLAN]
    random.Random(1).shuffle(rows)
    for r in rows:
        s.add_result(rid, Result.of({**r, "status": r.get("status") or "ok"}))
    s.add_result(other, {"bench": "x/y", "status": "ok"})
    assert _names(s.results(rid)) == EXPECTED
    assert _names(s.results_of([rid, other])[rid]) == EXPECTED
    s.close()
