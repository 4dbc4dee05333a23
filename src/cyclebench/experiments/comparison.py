"""The rows a comparison prints: one per pair (A, B, parameter) with its Comparison, and how
their p-values are adjusted together (Holm) when the design allows it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from cyclebench.model import ComparisonRow
from cyclebench.stats.ab import holm, with_adjusted_p

Row = ComparisonRow  # the record every comparison makes (model.ComparisonRow)


class CompareError(Exception):
    """A comparison cannot be made (a side failed, too few rounds, nothing in common)."""


def adjust(rows: Sequence[Row], alpha: float) -> list[Row]:
    """The rows with the fixed design's p-values Holm-adjusted over all of them (new records;
    the sequential design's rows as they are: its α is spent by design)."""
    judged = [i for i, r in enumerate(rows) if r.cmp is not None and r.sequential is None]
    out = list(rows)
    for i, p in zip(judged, holm([rows[i].cmp.p for i in judged]), strict=True):  # type: ignore[union-attr]
        out[i] = replace(rows[i], cmp=with_adjusted_p(rows[i].cmp, p, alpha))  # type: ignore[arg-type]
    return out


def fail_outcomes(rows: Sequence[Row], fail_on: Sequence[str]) -> str:
    """The comparisons that end as one of ``fail_on`` (slower, faster, different = either,
    inconclusive), as one line; empty when none does."""
    want = set(fail_on) | ({"slower", "faster"} if "different" in fail_on else set())
    hits = [f"{r.a} → {r.b}{'' if r.param is None else f' [{r.param}]'}: {r.cmp.verdict}"
            for r in rows if r.cmp is not None and r.cmp.verdict in want]
    return "; ".join(hits)
