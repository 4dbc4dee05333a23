"""`compare --allocator … --fail-on`: which verdicts fail the command. A variant whose verdict
could not be reached (its disturbed rounds dropped, too few pairs left: seen under a CI's load)
is inconclusive, not silently passed."""

from __future__ import annotations

import pytest

from cyclebench.experiments.variants import fail_on_hits, verdict_of


@pytest.mark.parametrize(("verdict", "fail_on", "fails"), [
    ("slower", ["slower"], True), ("faster", ["slower"], False), ("faster", ["different"], True),
    ("~", ["different"], False), ("~", ["inconclusive"], True), ("inconclusive", ["inconclusive"], True),
    ("inconclusive (2 pairs: at least 6 are needed)", ["different"], False),
    ("inconclusive (2 pairs: at least 6 are needed)", ["inconclusive"], True),
])
def test_which_verdicts_fail(verdict: str, fail_on: list[str], fails: bool) -> None:
    note = verdict.partition(" (")[2].rstrip(")") or None
    measured = {"label": "jemalloc", "status": "ok", "note": note,
                "comparison": None if verdict.startswith("inconclusive") else {"verdict": verdict}}
    data = [{"bench": "alloc/small", "variants": [{"label": "glibc", "status": "ok", "baseline": True}, measured]}]
    assert fail_on_hits(data, fail_on) == ([f"alloc/small jemalloc: {verdict}"] if fails else [])


def test_only_measured_variants_fail() -> None:
    """The baseline and a variant that crashed (its own exit status) are never --fail-on hits."""
    data = [{"bench": "alloc/small", "variants": [
        {"label": "glibc", "status": "ok", "baseline": True, "comparison": None},
        {"label": "tcmalloc", "status": "crashed", "comparison": None}]}]
    assert fail_on_hits(data, ["inconclusive", "different"]) == []


def test_a_variant_without_a_verdict_is_inconclusive() -> None:
    assert verdict_of({"comparison": None, "note": "2 pairs: at least 6 are needed"}) == \
        "inconclusive (2 pairs: at least 6 are needed)"
    assert verdict_of({"comparison": {"verdict": "slower"}}) == "slower"
