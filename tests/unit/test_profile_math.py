"""Profile parsing (uftrace's chrome events, callgrind's format) and the probe compensation."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from cyclebench.runner.profile import Calls, calls_of, read_callgrind
from cyclebench.stats.profile import Probe, flat_profile


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
    assert c["main"].branches == [1] and c["f"].branches == [0, 0, 0]  # the first f made a call, the second not
    assert c["g"].parent == c["f"].id[:1] and c["f"].parent[:2] == c["main"].id * 2 and c["f"].parent[2] == -1
    assert c["main"].self == pytest.approx([10000 - 2000 - (2000 + 3000)])  # less the sleep and its children
    assert "linux:schedule" not in c


def test_callgrind_calls_and_inclusive_cost() -> None:
    text = "\n".join(["events: Ir", "fn=main", "3 10", "cfn=f", "calls=1000 5", "4 3000", "fn=f", "5 3000", ""])
    s = read_callgrind(text)
    assert (s["f"].calls, s["f"].self_ir) == (1000, 3000)
    assert (s["main"].self_ir, s["main"].total_ir, s["main"].calls) == (10, 3010, 0)


def _tree() -> tuple[dict[str, Calls], Probe]:
    """main → 2 × outer (self 40; raw 40 + inner + 3 × outer) → 2 × leaf (raw = inner: truly
    empty) and a chain (raw 300 + inner)."""
    probe = Probe(inner_lo=110, inner_hi=130, outer=150)
    events, t = [ev("B", 0, "main")], 0.0
    for _ in range(2):
        t += 1
        events.append(ev("B", t / 1000, "outer"))
        for _ in range(2):
            events += [ev("B", (t + 150) / 1000, "leaf"), ev("E", (t + 150 + 120) / 1000, "leaf")]
            t += 150 + 120
        events += [ev("B", (t + 150) / 1000, "chain"), ev("E", (t + 150 + 300 + 120) / 1000, "chain")]
        t += 150 + 300 + 120 + 40 + 120
        events.append(ev("E", t / 1000, "outer"))
    events.append(ev("E", (t + 1) / 1000, "main"))
    return calls_of(events), probe


def test_compensation_arithmetic() -> None:
    calls, probe = _tree()
    rows = {r["function"]: r for r in flat_profile(calls, 1.0, probe)}
    assert probe.inner == 120 and probe.inner_pm == 10 and probe.whole == 270
    assert rows["chain"]["self"] == pytest.approx(300) and rows["leaf"]["self"] == pytest.approx(0)
    # outer: raw self = 3 children × 150 + its 40 + 120 of its own probe
    assert rows["outer"]["self_raw"] == pytest.approx(3 * 150 + 40 + 120)
    assert rows["outer"]["self"] == pytest.approx(40)
    assert rows["outer"]["total"] == pytest.approx(40 + 300)  # its own calls' children, not the probes
    assert rows["chain"]["self_pm"] == pytest.approx(10)  # half the range between the two bodies
    assert rows["outer"]["self_pm"] == pytest.approx(10 + 3 * probe.outer_pm)
    # main's two children make calls: each costs it outer_branch, not outer
    branchy = {r["function"]: r for r in flat_profile(calls, 1.0, replace(probe, outer_branch=130))}
    assert branchy["main"]["self"] == pytest.approx(rows["main"]["self"] + 2 * (150 - 130))
    assert branchy["outer"]["self"] == pytest.approx(rows["outer"]["self"])  # its children are leaves


def test_a_parents_total_holds_its_childrens_when_compensation_overshoots() -> None:
    """An over-subtracted parent (probe.outer too large for this caller) has a negative self;
    its total still holds its children's, call by call, and % comes from the medians shown."""
    calls, _ = _tree()
    rows = {r["function"]: r for r in flat_profile(calls, 1.0, Probe(inner_lo=110, inner_hi=130, outer=200))}
    assert rows["outer"]["self"] < 0 and rows["main"]["self"] < 0
    assert rows["outer"]["total"] >= rows["chain"]["total"] + 2 * rows["leaf"]["total"]
    assert rows["main"]["total"] >= 2 * rows["outer"]["total"]
    assert rows["outer"]["pct"] == 0 and rows["leaf"]["pct"] == pytest.approx(0)
    shown = {n: r["calls"] * max(r["self"], 0) for n, r in rows.items()}
    for n, r in rows.items():
        assert r["pct"] == pytest.approx(100 * shown[n] / sum(shown.values()))


def test_net_printing_and_the_compensation_note() -> None:
    from rich.console import Console

    from cyclebench.report.profile import profile_table

    calls, _ = _tree()
    rows = flat_profile(calls, 1.0, Probe(inner_lo=110, inner_hi=130, outer=200))
    con = Console(width=250, record=True)
    table = profile_table(rows, "cycles~", "t", wide=True)
    con.print(table)
    text = con.export_text()
    cells = {r[-1]: r for r in table.rows}
    for r in cells.values():  # each row printed whole, its cells in order
        assert re.search(r"\s+".join(re.escape(c) for c in r if c), text), r
    assert cells["leaf"][2] == "≈0"  # 0 ± 10
    assert cells["outer"][2] == "<0"  # 40 − 3·50 = −110, ± 10 + 3·(0.15·200)
    assert cells["chain"][2] == "300.0"
    assert cells["leaf"][8] == "100%!" and cells["chain"][8] == "29%"  # 120 of 120; 120 of 420
    assert "over 50%" in text


def test_a_probe_process_with_no_figure_is_measured_again(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from cyclebench.experiments import profile as _profile
    from cyclebench.experiments.errors import ExperimentError

    got = iter([(float("nan"), 150.0, 5.0), (300.0, 140.0, 5.0)] + [(310.0, 150.0, 4.0)] * 10)
    monkeypatch.setattr(_profile, "_probe", lambda *a: next(got))
    draws = _profile._draws(None, None, 1.0, tmp_path)  # type: ignore[arg-type]
    assert len(draws) == _profile.PROBE_DRAWS and all(d[0] in (300.0, 310.0) for d in draws)
    monkeypatch.setattr(_profile, "_probe", lambda *a: (float("nan"), 1.0, 1.0))
    with pytest.raises(ExperimentError, match="disturbed"):
        _profile._draws(None, None, 1.0, tmp_path)  # type: ignore[arg-type]


def test_a_parents_total_holds_its_childrens_even_when_medians_do_not_add() -> None:
    """outer() calls leaf() 10 times; in every outer call 6 leaves are long (80 net) and 4 are
    empty: the leaf's median is 80, so 10 leaves a call show 800, while the median outer call's
    leaves add up to 480. The total shown is raised to what its callees' totals shown add up to."""
    probe = Probe(inner_lo=100, inner_hi=100, outer=0)
    events, t = [ev("B", 0, "main")], 0.0
    for _ in range(5):
        events.append(ev("B", t / 1000, "outer"))
        t += 150
        for k in range(10):
            dur = 180 if k < 6 else 100
            events += [ev("B", t / 1000, "leaf"), ev("E", (t + dur) / 1000, "leaf")]
            t += dur
        t += 0
        events.append(ev("E", t / 1000, "outer"))
        t += 10
    events.append(ev("E", t / 1000, "main"))
    rows = {r["function"]: r for r in flat_profile(calls_of(events), 1.0, probe)}
    leaf, outer = rows["leaf"], rows["outer"]
    assert leaf["total"] == pytest.approx(80) and leaf["calls"] == 50
    assert outer["total"] >= 10 * leaf["total"] - 1e-9  # 800, not the median call's 530
    assert rows["main"]["total"] >= 5 * outer["total"] - 1e-9


def test_one_interrupted_call_moves_no_total() -> None:
    """main (called once) → 100 calls of f, each 300 net, one of them interrupted for 1,000,000:
    main's total is its children's medians propagated (gprof's arcs), not its one call's sum,
    which held the outlier (main read 4.1M and 30.6M cycles~ in two identical runs). A recursive
    function keeps its calls' own totals: its depth is in them, not in an arc."""
    probe = Probe(inner_lo=100, inner_hi=100, outer=0)
    events, t = [ev("B", 0, "main")], 10.0
    for k in range(100):
        dur = 100 + 300 + (1_000_000 if k == 50 else 0)
        events += [ev("B", t / 1000, "f"), ev("E", (t + dur) / 1000, "f")]
        t += dur
    events.append(ev("E", (t + 10) / 1000, "main"))
    # rec → rec → rec: 500, 500 and 200 net of their own (600, 600, 300 raw)
    t += 20
    events += [ev("B", t / 1000, "rec"), ev("B", (t + 300) / 1000, "rec"), ev("B", (t + 600) / 1000, "rec"),
               ev("E", (t + 900) / 1000, "rec"), ev("E", (t + 1200) / 1000, "rec"), ev("E", (t + 1500) / 1000, "rec")]
    rows = {r["function"]: r for r in flat_profile(calls_of(events), 1.0, probe)}
    assert rows["f"]["total"] == pytest.approx(300)
    assert rows["main"]["total"] == pytest.approx(100 * 300 + max(rows["main"]["self"], 0))
    assert rows["rec"]["total"] == pytest.approx(700)  # the median of 1200, 700, 200: deeper calls counted


def test_the_clock_grid_is_read_from_the_trace_and_medians_interpolate_in_it() -> None:
    """CLOCK_MONOTONIC advances in 10 ns steps on an AMD EPYC guest (88% of a trace's steps are
    multiples of 10): a plain median of such durations is a grid point; read on the grid it is
    the grouped-data median (statistics.median_grouped)."""
    import statistics

    import numpy as np

    from cyclebench.runner.profile import steps_of
    from cyclebench.stats.profile import grid_median, resolution

    rng = np.random.default_rng(1)
    # timestamps of a 10 ns clock whose phase shifts by 1 ns now and then; and of a 1 ns clock
    coarse = np.cumsum(10 * rng.integers(2, 9, 3000) + (rng.random(3000) < 0.12))
    fine = np.cumsum(rng.integers(15, 95, 3000))
    events = [ev("B" if i % 2 == 0 else "E", t / 1000, "f") for i, t in enumerate(coarse)]
    assert resolution(steps_of(events)) == 10
    assert resolution(list(np.diff(fine))) == 1
    assert resolution([10, 20]) == 1  # too few steps to tell
    # durations of a body of 33.3 ns read on the 10 ns grid (start phase uniform): 30 or 40
    truth = 33.3
    start = rng.random(5001) * 10
    read = np.floor((start + truth) / 10) * 10 - np.floor(start / 10) * 10
    assert float(np.median(read)) == 30.0  # a grid point, 3.3 off
    assert grid_median(read, 10) == pytest.approx(statistics.median_grouped(read.tolist(), 10))
    assert abs(grid_median(read + 1e-9, 10) - truth) < 1.0  # off the grid by a subtraction: the same
    assert grid_median(read, 0) == 30.0 and np.isnan(grid_median([], 10))


def test_the_probe_covers_one_more_process() -> None:
    """The profiled program's probe is never measured: its ± is a 95% prediction interval for one
    more process, t(0.975, k−1) · sd · √(1 + 1/k), not the sd of the k measured."""
    from scipy.stats import t

    from cyclebench.stats.profile import combine

    draws = [(100.0, 120.0, 200.0, 180.0), (110.0, 130.0, 210.0, 182.0), (90.0, 126.0, 190.0, 178.0),
             (104.0, 124.0, 204.0, 184.0)]
    p = combine(draws)
    mids = [(lo + hi) / 2 for lo, hi, _, _ in draws]
    import statistics

    assert p.u_inner == pytest.approx(t.ppf(0.975, 3) * statistics.stdev(mids) * (1 + 1 / 4) ** 0.5)
    assert p.inner_pm == pytest.approx((p.inner_hi - p.inner_lo) / 2 + p.u_inner)
    assert combine(draws[:1]).u_inner == 0.0


def _leaf_calls(durations: list[float]) -> Calls:
    n = len(durations)
    return Calls(total=list(durations), self=list(durations), children=[0] * n, descendants=[0] * n,
                 branches=[0] * n, id=list(range(n)), parent=[-1] * n, depth=[0] * n)


def test_a_function_whose_calls_disagree_with_themselves_is_marked() -> None:
    """The two halves of a function's calls (in the order they began) further apart than its ±:
    the host changed under it, and the row says so; steady calls, or too few to split, are not."""
    probe = Probe(inner_lo=10.0, inner_hi=10.0, outer=5.0)
    steady = {f"f{k}": _leaf_calls([300.0 + (i % 3) for i in range(40)]) for k in range(1)}
    shifted = {"g": _leaf_calls([300.0] * 20 + [360.0] * 20)}
    few = {"h": _leaf_calls([300.0] * 5 + [360.0] * 5)}
    rows = {r.function: r for r in flat_profile({**steady, **shifted, **few}, probe=probe)}
    assert rows["f0"].untrustworthy is None and rows["h"].untrustworthy is None
    assert "first and second half of calls read 290 and 350" in (rows["g"].untrustworthy or "")
    assert "untrustworthy" in rows["g"].to_json() and "untrustworthy" not in rows["f0"].to_json()


def test_time_off_the_cpu_is_clipped_to_the_gaps_it_falls_in() -> None:
    """A switch interval converted from CLOCK_MONOTONIC onto the TSC can cross an event by a few
    ticks: off-CPU time is only ever counted inside the gaps between a thread's events."""
    import numpy as np

    from cyclebench.runner.probe import _gaps_off

    stamps = np.array([0.0, 10.0, 100.0, 110.0])
    off = _gaps_off(stamps, [(12.0, 95.0), (105.0, 130.0), (8.0, 11.0)])
    assert off.tolist() == pytest.approx([2.0, 83.0 + 1.0, 5.0])


def test_calls_flow_into_the_callees_of_each_row() -> None:
    events = [ev("B", 0, "main"), ev("B", 1, "f"), ev("E", 2, "f"), ev("B", 3, "f"), ev("E", 4, "f"),
              ev("B", 5, "g"), ev("E", 6, "g"), ev("E", 10, "main")]
    rows = {r.function: r for r in flat_profile(calls_of(events))}
    assert rows["main"].callees == {"f": 2.0, "g": 1.0} and rows["f"].callees == {}
    assert rows["main"].total == pytest.approx(rows["main"].self + 2 * rows["f"].total + rows["g"].total)


def test_the_grouped_median_moves_by_what_is_subtracted_from_every_value() -> None:
    """A constant taken off every call (the probe's inner part) moves the grouped median by exactly
    that constant, also where an even count's two middle values lie a tick apart and the cell's
    edges fall on values (a fresh CI read self_raw − self 0.66 cycles~ off the probe's inner)."""
    import numpy as np

    from cyclebench.stats.profile import grid_median

    w = 26 / 2.445 * 3.2  # a 26-tick TSC step in cycles~ at 3.2 GHz
    rng = np.random.default_rng(1)
    for _ in range(2000):
        x = rng.integers(3, 12, size=2 * int(rng.integers(4, 40))) * w
        c = float(rng.uniform(50, 150))
        assert grid_median(x - c, w) == pytest.approx(grid_median(x, w) - c, abs=1e-6)
