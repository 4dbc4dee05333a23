"""experiments/revcounts.comparison: the verdict of two exact counts against the threshold, and
none for a count whose readings differ or that is missing."""

from __future__ import annotations

import pytest

from cyclebench.experiments.revcounts import NOT_EXACT, Count, comparison


@pytest.mark.parametrize(("a", "b", "verdict"), [
    (200.0, 201.0, "equivalent"),   # +0.5%: not beyond the threshold
    (200.0, 201.01, "slower"),      # just beyond it
    (200.0, 198.99, "faster"),
    (200.0, 200.0, "equivalent"),
])
def test_exact_counts_are_judged_by_the_threshold(a: float, b: float, verdict: str) -> None:
    c = comparison(Count((a, a)), Count((b, b)), 0.005)
    assert c is not None and c.verdict == verdict
    assert c.diff == c.ci_low == c.ci_high == pytest.approx(b - a) and c.rel == pytest.approx(b / a - 1)


def test_readings_that_differ_get_no_verdict_and_their_range() -> None:
    c = comparison(Count((200.0, 200.0)), Count((230.0, 210.0), "two readings differ"), 0.005)
    assert c is not None and c.verdict == NOT_EXACT
    assert (c.ci_low, c.ci_high) == (10.0, 30.0)


def test_a_side_not_counted_is_no_comparison() -> None:
    assert comparison(Count((200.0,), "crashed: SIGSEGV"), Count((200.0, 200.0)), 0.005) is None
