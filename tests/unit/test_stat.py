"""cyclebench stat -- CMD: whole commands like `perf stat -r`, counters enabled at exec.

Here the parts that need no compiler (parsers, statistics, fixture trees); the rest, which
builds and runs the engine, is in tests/engine or tests/commands under the same name."""

from __future__ import annotations

from pathlib import Path

import pytest

from cyclebench import counters
from cyclebench.counters.events import per_run_counts
from cyclebench.stats.repetitions import Metric, aggregate, same_work
from cyclebench.stats.result import derived

from conftest import cli


def one_line_error(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


def _aggregate(reps: list[dict], groups: list) -> list[Metric]:
    """What `stat` does with the timing backend's records: decode (counters), summarise (stats)."""
    return aggregate(reps, per_run_counts(reps, groups), derive=derived)

def _rep(groups: list[list[int]], errors: list[str | None], wall_ms: float = 2.0) -> dict:
    return {"type": "stat", "exit": 0, "signal": None, "wall_ns": int(wall_ms * 1e6), "user_us": 1000,
            "sys_us": 500, "maxrss_kb": 1000, "groups": groups, "open_errors": errors, "inherit": True,
            "user_only": [False] * len(groups)}


def test_command_not_found(db: str) -> None:
    r = cli("stat", "-r", "3", "--", "no-such-command-xyz")
    assert r.exit_code == 2
    assert "no-such-command-xyz" in one_line_error(r.output)


def test_not_executable(db: str, tmp_path: Path) -> None:
    f = tmp_path / "data"
    f.write_text("x")
    r = cli("stat", "--", str(f))
    assert r.exit_code == 2
    assert "not executable" in one_line_error(r.output)


def test_aggregate_recorded_buffers() -> None:
    """The PMU path without a PMU: recorded group reads — counted, multiplexed, not counted, not supported."""
    groups = counters.parse_events("{cycles,instructions},branch-misses,task-clock,cache-misses")
    reps = [
        # {cycles,instructions}: full; branch-misses: multiplexed (running = enabled/2, scaled ×2);
        # task-clock (ns); cache-misses: not counted (running 0)
        _rep([[2, 1000, 1000, 4000, 8000], [1, 1000, 500, 10], [1, 1500000, 1500000, 1500000], [1, 1000, 0, 0]],
             [None] * 4, wall_ms=2.0),
        _rep([[2, 1000, 1000, 6000, 12000], [1, 1000, 250, 10], [1, 2500000, 2500000, 2500000], [1, 1000, 0, 0]],
             [None] * 4, wall_ms=4.0),
    ]
    m = {x.name: x for x in _aggregate(reps, groups)}
    assert m["wall"].values == [2.0, 4.0] and m["user"].values == [1.0, 1.0] and m["sys"].values == [0.5, 0.5]
    s = m["wall"].summary()
    assert s["mean"] == 3.0 and s["min"] == 2.0 and s["max"] == 4.0
    assert s["stddev"] == pytest.approx(2 ** 0.5) and s["cv"] == pytest.approx(2 ** 0.5 / 3)
    assert s["sem"] == pytest.approx(1.0)
    assert m["cycles"].values == [4000, 6000] and m["instructions"].values == [8000, 12000]
    assert m["cycles"].notes == ()
    assert m["branch-misses"].values == [20, 40]  # 10 × 1000/500, 10 × 1000/250
    assert m["branch-misses"].notes == ("multiplexed 38%",)  # 750 of 2000 ns on the PMU
    assert m["task-clock"].values == [1.5, 2.5] and m["task-clock"].unit == "ms"
    assert m["task-clock"].notes == ("0.67 CPUs utilized",)
    assert m["cache-misses"].status == "not counted" and m["cache-misses"].counted == []
    assert m["IPC"].status == "derived" and m["IPC"].values == [pytest.approx(2.0)]
    assert m["branch-misses MPKI"].values == [pytest.approx(3.0)]

    # a group the kernel refused: not supported, with its reason; the others still counted
    refused = [_rep([[1, 10, 10, 7], []], [None, "No such file or directory"])] * 3
    m2 = {x.name: x for x in _aggregate(refused, counters.parse_events("page-faults,cycles"))}
    assert m2["page-faults"].values == [7, 7, 7] and m2["page-faults"].summary()["cv"] == 0
    assert m2["cycles"].status == "not supported" and "No such file" in (m2["cycles"].reason or "")

    # not counted in one repetition only: the others make the mean, the row says so
    part = [_rep([[1, 10, 10, 5]], [None]), _rep([[1, 10, 0, 0]], [None])]
    m3 = {x.name: x for x in _aggregate(part, counters.parse_events("page-faults"))}
    assert m3["page-faults"].values == [5, None] and m3["page-faults"].summary()["mean"] == 5
    assert "not counted in 1/2 runs" in m3["page-faults"].notes

    with pytest.raises(ValueError):  # a truncated buffer is an error, not a silent zero
        _aggregate([_rep([[2, 10, 10, 1]], [None])], counters.parse_events("{cycles,instructions}"))


def test_callgrind_refuses_events(db: str) -> None:
    r = cli("stat", "--backend", "callgrind", "-e", "cycles", "--", "/bin/true")
    assert r.exit_code == 2
    assert "-e applies to the timing backend" in one_line_error(r.output)


def _metric(name: str, values: list[float | None]) -> Metric:
    return Metric(name, "count", list(values))


def test_same_work_rule() -> None:
    # instructions: 0.1% of the others' median, whatever the page faults do
    ins = _metric("instructions", [1_000_000, 1_000_400, 999_700, 1_002_000, 1_000_100])
    pf = _metric("page-faults", [100, 100, 900, 100, 100])
    (ins2, pf2), lines = same_work([ins, pf])
    assert [ln.split(":")[0] for ln in lines] == ["repetition 4 did other work"]
    assert ins2.different == (4,) and ins2.notes == ("other work in run 4",) and pf2 is pf and pf.different == ()
    assert ins.different == ()  # a new metric says so: the one given is as it was
    # without instructions: the others' median ± 5 MAD, never narrower than 3·√median
    pf, cs = _metric("page-faults", [130, 131, 130, 129, 130, 400]), _metric("context-switches", [5, 7, 6, 5, 6, None])
    (pf, cs), lines = same_work([pf, cs])
    assert lines and pf.different == (6,) and cs.different == ()
    assert same_work([_metric("page-faults", [130, 131])])[1] == []  # two repetitions: no majority to judge by
    # 76 faults more than the others (304 KiB touched) is other work, the floor notwithstanding
    (pf,), lines = same_work([_metric("page-faults", [254, 255, 330, 253, 254])])
    assert lines and pf.different == (3,)


def test_same_work_ignores_the_jitter_of_identical_work() -> None:
    """Counts measured on the project's KVM guest for one shell command repeated (the third
    repetition dd'ing 64 MiB): page faults of identical work 248–259, context switches 3–16.
    A MAD of 0–1 count once flagged a repetition 8 faults off, or 9 switches vs 7, or 14 vs 7.5."""
    pf = _metric("page-faults", [254, 262, 16636, 254, 255])
    cs = _metric("context-switches", [9, 7, 14, 7, 7])
    (pf, cs), lines = same_work([pf, cs])
    assert pf.different == (3,) and cs.different == ()
    (cs,), more = same_work([_metric("context-switches", [7, 8, 27, 14, 7])])
    lines += more
    assert cs.different == (3,)
    assert [ln.split(":")[0] for ln in lines] == ["repetition 3 did other work"] * 2
    assert pf.notes == ("other work in run 3",)
    quiet = [_metric("page-faults", v) for v in ([253, 258, 248, 257, 255], [251, 255, 254, 250, 258])]
    assert same_work(quiet) == (quiet, [])
