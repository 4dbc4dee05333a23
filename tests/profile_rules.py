"""The rules every timed profile must hold as printed (docs/method.md §10), shared by the tests that
make profiles (tests/commands/test_profile.py) and the one that reads the lab's stored profile back
(tests/commands/test_lab_readers.py)."""

from __future__ import annotations

import pytest


def adds_up(rows: dict[str, dict]) -> None:
    """What every timed profile the tests produce must hold as printed (docs/method.md §10):
    a function's total per call is its self plus, over the functions it calls, their calls per
    call × their total — exactly with the self clipped at 0 (a self that is ≈0 counts as 0), and
    within the printed ± with the self as it is; and the % self of every function, shown or not,
    adds up to 100. A function that calls itself keeps its calls' own totals (not checked)."""
    for name, r in rows.items():
        callees = r.get("callees")
        assert callees is not None, f"{name}: no callees stored"
        if name in callees:
            continue
        below = sum(k * rows[g]["total"] for g, k in callees.items())
        assert r["total"] == pytest.approx(max(r["self"], 0.0) + below, rel=1e-9, abs=1e-6), name
        if r["self"] >= -r["self_pm"]:
            assert abs(r["total"] - (r["self"] + below)) <= r["total_pm"] + 1e-6, name
    assert sum(r["pct"] for r in rows.values()) == pytest.approx(100.0, abs=0.5)
