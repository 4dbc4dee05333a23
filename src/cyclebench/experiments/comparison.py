"""The rows a comparison prints: one per pair (A, B, parameter) with its Comparison, and how
their p-values are adjusted together (Holm) when the design allows it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cyclebench.model import Comparison
from cyclebench.stats.ab import holm, with_adjusted_p


class CompareError(Exception):
    """A comparison cannot be made (a side failed, too few rounds, nothing in common)."""


@dataclass
class Row:
    a: str
    b: str
    param: int | None
    unit: str
    cmp: Comparison | None
    note: str = ""
    sequential: dict[str, Any] | None = None  # the sequential design's looks (None: fixed design, Holm)

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "param": self.param, "unit": self.unit,
                "comparison": self.cmp.to_dict() if self.cmp else None, "note": self.note,
                "sequential": self.sequential}


def adjust(rows: list[Row], alpha: float) -> None:
    judged = [r for r in rows if r.cmp is not None and r.sequential is None]  # sequential: Bonferroni by design
    for r, p in zip(judged, holm([r.cmp.p for r in judged if r.cmp]), strict=True):
        if r.cmp is not None:
            r.cmp = with_adjusted_p(r.cmp, p, alpha)



def fail_outcomes(rows: Sequence[Row], fail_on: Sequence[str]) -> str:
    """The comparisons that end as one of ``fail_on`` (slower, faster, different = either,
    inconclusive), as one line; empty when none does."""
    want = set(fail_on) | ({"slower", "faster"} if "different" in fail_on else set())
    hits = [f"{r.a} → {r.b}{'' if r.param is None else f' [{r.param}]'}: {r.cmp.verdict}"
            for r in rows if r.cmp is not None and r.cmp.verdict in want]
    return "; ".join(hits)
