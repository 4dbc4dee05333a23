"""The gate's status of a benchmark's timed sitting (experiments/ci.py): only a decided look
passes; a budget that ended before any look could judge leaves it undecided (exit 3), never
passed (docs/ci.md: "undecided … listed, not failed")."""

from __future__ import annotations

import pytest

from cyclebench.experiments.ci import time_status_of
from cyclebench.gate import BROKEN, FAIL, PASS, UNDECIDED


@pytest.mark.parametrize(("verdict", "failed", "status"), [
    (PASS, False, PASS), (FAIL, False, FAIL), (UNDECIDED, False, UNDECIDED),
    ("inconclusive", False, UNDECIDED),  # revpair: the budget ended with too few pairs for a look
    ("failed", True, BROKEN), (PASS, True, BROKEN),
])
def test_only_a_decided_look_passes(verdict: str, failed: bool, status: str) -> None:
    assert time_status_of(verdict, failed) == status
