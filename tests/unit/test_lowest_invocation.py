"""A variant's lowest invocation is not called "best": `show 15` of the lab fixture printed
"-O2  198.3  2.68%  182.6" — a "best: fastest invocation" of 182.6 cycles~ for 200 dependent adds
(at least 200 on any core), the lowest of 11 noisy per-invocation estimates (the others 198.1–201.9),
unflagged. The column is named for what it is, its caption says it is as noisy as one invocation,
and an outlier among the invocations is said in the row's notes."""

from __future__ import annotations

import pytest
from rich.console import Console

from cyclebench.report.ranked import RankedSide, ranked_table
from cyclebench.report.variants import variants_ranked
from cyclebench.stats.repetitions import low_outlier, spread

# run 15 of the lab fixture (variants --backend callgrind), per-invocation cycles~ per op
O1 = [200.6, 201.8, 202.1, 200.9, 199.9, 200.5, 199.2, 198.6, 200.1, 199.9, 200.5]
O2 = [201.9, 200.5, 182.6, 199.7, 200.2, 198.4, 199.9, 201.0, 198.1, 199.6, 199.3]


def render(table: object, width: int = 200) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(table)
    return console.export_text()


def variant(label: str, values: list[float], baseline: bool = False) -> dict[str, object]:
    return {"label": label, "status": "ok", "reason": None, "emulated": False, "baseline": baseline,
            "per_invocation": values, **spread(values)}


def test_an_outlying_lowest_invocation_is_flagged() -> None:
    assert low_outlier(O2) == pytest.approx((199.7 - 182.6) / 199.7)
    assert low_outlier(O1) is None  # 198.6: 0.9% below the median, within the spread
    assert low_outlier([1.0, 2.0]) is None and low_outlier([]) is None
    assert low_outlier([100.0, 100.0, 100.0, 94.0]) is not None  # MAD 0: beyond the 5% floor
    assert low_outlier([100.0, 100.0, 100.0, 96.0]) is None


def test_the_variants_table_never_calls_it_best() -> None:
    d = {"bench": "chain/add200", "param": None, "unit": "cycles~",
         "variants": [variant("-O1", O1, baseline=True), variant("-O2", O2)]}
    text = render(variants_ranked(d, run_id=15, wide=True))
    assert "best" not in text and "fastest" not in text
    assert "lowest inv." in text and "182.6" in text
    assert "not a floor" in " ".join(text.split())
    o2 = next(ln for ln in text.splitlines() if ln.lstrip().startswith("-O2"))
    assert "lowest inv. an outlier: 8.6% below the median invocation" in o2
    o1 = next(ln for ln in text.splitlines() if "-O1" in ln)
    assert "outlier" not in o1


def test_the_ranked_table_of_stored_runs_calls_it_min() -> None:
    text = render(ranked_table("chain/add200", "cycles~", [RankedSide("run #1", 200.1, 0.4, 158.5, True)]))
    assert "best" not in text and " min " in f" {text} " and "not a floor" in " ".join(text.split())
