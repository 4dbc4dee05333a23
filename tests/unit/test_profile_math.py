"""Profile parsing (uftrace's chrome events, callgrind's format) and the probe compensation."""

from __future__ import annotations

import pytest

from cyclebench.runner.profile import calls_of, read_callgrind
from cyclebench.stats.profile import Probe, flat_profile, inner_part


def ev(ph: str, ts_us: float, name: str, tid: int = 1) -> dict:
    return {"ph": ph, "ts": ts_us, "pid": 1, "tid": tid, "name": name}


def test_nesting_self_children_and_off_cpu_time() -> None:
    events = [ev("B", 0, "main"), ev("B", 1, "f"), ev("B", 1.5, "g"), ev("E", 2, "g"), ev("E", 3, "f"),
              ev("B", 4, "f"), ev("B", 4.2, "linux:schedule"), ev("E", 6.2, "linux:schedule"), ev("E", 9, "f"),
              ev("E", 10, "main"), ev("B", 0, "f", tid=2), ev("E", 0.5, "f", tid=2)]
    c = calls_of(events)
    assert c["f"].total == pytest.approx([2000, 3000, 500])  # ns; the second f slept 2 of its 5 µs (off the CPU)
    assert c["g"].total == pytest.approx([500]) and c["f"].children == [1, 0, 0]
    assert c["main"].children == [2] and c["main"].descendants == [3]
    assert c["main"].self == pytest.approx([10000 - 2000 - (2000 + 3000)])  # less the sleep and its children
    assert "linux:schedule" not in c


def test_callgrind_calls_and_inclusive_cost() -> None:
    text = "\n".join(["events: Ir", "fn=main", "3 10", "cfn=f", "calls=1000 5", "4 3000", "fn=f", "5 3000", ""])
    s = read_callgrind(text)
    assert (s["f"].calls, s["f"].self_ir) == (1000, 3000)
    assert (s["main"].self_ir, s["main"].total_ir, s["main"].calls) == (10, 3010, 0)


def test_compensation_arithmetic() -> None:
    class C:
        total, self, children, descendants = [500.0, 700.0], [300.0, 300.0], [2, 3], [2, 5]

    probe = Probe(whole=100, inner=40, spread=5)
    [row] = flat_profile({"x": C()}, scale=1.0, probe=probe)
    assert row["self"] == pytest.approx(((300 - 40 - 2 * 60) + (300 - 40 - 3 * 60)) / 2)
    assert row["total"] == pytest.approx(((500 - 40 - 200) + (700 - 40 - 500)) / 2)
    assert row["self_pm"] == pytest.approx(5 * 3.5) and row["pct"] == pytest.approx(100)
    med, spread = inner_part([100, 102, 98, 100, 400], scale=3.0)
    assert med == 300 and spread == pytest.approx(1.4826 * 2 * 3.0, rel=0.01)


def test_a_probe_process_with_no_figure_is_measured_again(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from cyclebench.commands import _profile
    from cyclebench.commands._common import UserError

    got = iter([(float("nan"), 150.0, 5.0), (300.0, 140.0, 5.0)] + [(310.0, 150.0, 4.0)] * 10)
    monkeypatch.setattr(_profile, "_probe", lambda *a: next(got))
    draws = _profile._draws(None, None, 1.0, tmp_path)  # type: ignore[arg-type]
    assert len(draws) == _profile.PROBE_DRAWS and all(d[0] in (300.0, 310.0) for d in draws)
    monkeypatch.setattr(_profile, "_probe", lambda *a: (float("nan"), 1.0, 1.0))
    with pytest.raises(UserError, match="disturbed"):
        _profile._draws(None, None, 1.0, tmp_path)  # type: ignore[arg-type]
