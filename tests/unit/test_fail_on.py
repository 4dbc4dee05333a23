"""`compare --allocator … --fail-on`: which verdicts fail the command. A variant whose verdict
could not be reached (its disturbed rounds dropped, too few pairs left: seen under a CI's load)
is inconclusive, not silently passed."""

from __future__ import annotations

import pytest

from cyclebench.commands._compare import _fails, _verdict


@pytest.mark.parametrize(("verdict", "fail_on", "fails"), [
    ("slower", ["slower"], True), ("faster", ["slower"], False), ("faster", ["different"], True),
    ("~", ["different"], False), ("~", ["inconclusive"], True), ("inconclusive", ["inconclusive"], True),
    ("inconclusive (2 pairs: at least 6 are needed)", ["different"], False),
    ("inconclusive (2 pairs: at least 6 are needed)", ["inconclusive"], True),
])
def test_which_verdicts_fail(verdict: str, fail_on: list[str], fails: bool) -> None:
    assert _fails(verdict, fail_on) is fails


def test_a_variant_without_a_verdict_is_inconclusive() -> None:
    assert _verdict({"comparison": None, "note": "2 pairs: at least 6 are needed"}) == \
        "inconclusive (2 pairs: at least 6 are needed)"
    assert _verdict({"comparison": {"verdict": "slower"}}) == "slower"
