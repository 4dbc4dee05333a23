"""Scaling mode (issue 7): orderings measured in one session on this machine, never absolute rates.

Here the parts that need no compiler (parsers, statistics, fixture trees); the rest, which
builds and runs the engine, is in tests/engine or tests/commands under the same name."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cyclebench.build import BuildSpec, suite_sources
from cyclebench.commands import scale
from cyclebench.env.cpus import cpu_order
from cyclebench.model import ScaleRun, Series
from cyclebench.report import plots
from cyclebench.runner import scaling as runner_scaling
from cyclebench.stats import scaling


def _cfg(**kw: Any) -> scale.ScaleConfig:
    base: dict[str, Any] = {"spec": BuildSpec(sources=tuple(suite_sources()), werror=True), "duration": 0.6,
                            "interval": 0.1, "warmup": 0.2}
    return scale.ScaleConfig(**{**base, **kw})


def _iv(i: int, deltas: list[int], wait: list[int] | None = None, warmup: bool = False) -> dict[str, Any]:
    iv: dict[str, Any] = {"type": "interval", "i": i, "t": 0.1 * i, "dt": 0.1, "warmup": warmup, "deltas": deltas}
    if wait is not None:
        iv["wait_ns"], iv["run_ns"] = wait, [100_000_000 - w for w in wait]
    return iv


def test_plot_svg(tmp_path: Path) -> None:
    ser = Series("contend/x", None, "threads", [
        {"tasks": 1, "total_median": 10.0, "total_min": 9.0, "total_max": 11.0, "efficiency": 1.0,
         "efficiency_min": 0.9, "efficiency_max": 1.1},
        {"tasks": 2, "total_median": 15.0, "total_min": 14.0, "total_max": 16.0, "efficiency": 0.75,
         "efficiency_min": 0.7, "efficiency_max": 0.8}])
    w, h = plots.plot_scaling([ser], tmp_path / "p.svg", ncpus=1)
    assert w > 0 and h > 0 and "<svg" in (tmp_path / "p.svg").read_text()
    with pytest.raises(ValueError):
        plots.plot_scaling([ser], tmp_path / "p.txt")


def test_parse_tasks() -> None:
    assert runner_scaling.parse_tasks("1..4") == [1, 2, 3, 4]
    assert runner_scaling.parse_tasks("2,4") == [1, 2, 4]
    assert runner_scaling.parse_tasks("3") == [1, 2, 3]
    assert runner_scaling.parse_tasks("1..2,8") == [1, 2, 8]
    for bad in ("0", "a", "4..2", "2000"):
        with pytest.raises(runner_scaling.ScaleError):
            runner_scaling.parse_tasks(bad)
    assert runner_scaling.default_tasks(2) == [1, 2, 3] and runner_scaling.default_tasks(8) == [1, 2, 4, 8, 9]


def test_cpu_order_distinct_cores_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for cpu, core in ((0, 0), (1, 0), (2, 1), (3, 1)):  # two cores, two SMT threads each
        top = tmp_path / f"sys/devices/system/cpu/cpu{cpu}/topology"
        top.mkdir(parents=True)
        (top / "core_id").write_text(f"{core}\n")
        (top / "physical_package_id").write_text("0\n")
        (top / "thread_siblings_list").write_text(f"{2 * core}-{2 * core + 1}\n")
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3})
    assert cpu_order(tmp_path) == [2, 0, 3, 1]  # CPU 0's core last; siblings after every core


def test_summarize_drops_warmup_and_disturbed_intervals() -> None:
    run = ScaleRun("b", None, "threads", 2, intervals=[
        _iv(1, [1, 1], [0, 0], warmup=True),  # warm-up: ignored whatever it says
        *[_iv(i, [100, 50], [0, 0]) for i in range(2, 6)],
        _iv(6, [10, 50], [60_000_000, 0]),  # task 0 waited 60% for its CPU: dropped
    ])
    s = scaling.summarize(run, 2)
    assert s["intervals_measured"] == 5 and s["intervals_kept"] == 4 and s["intervals_disturbed"] == 1
    assert s["total_median"] == pytest.approx(1500.0)
    assert s["per_task"] == pytest.approx([1000.0, 500.0]) and s["fairness"] == pytest.approx(0.5)
    assert s["ns_per_op_cpu"] == pytest.approx(1.5e6)  # 0.4 CPU-s / 400 and / 200 ops: median of 1 and 2 ms
    base = scaling.summarize(ScaleRun("b", None, "threads", 1, intervals=[
        _iv(i, [100], [0]) for i in range(1, 4)]), 1)
    scaling.add_speedup(base, base)
    scaling.add_speedup(s, base)
    assert s["speedup"] == pytest.approx(1.5) and s["efficiency"] == pytest.approx(0.75)
    assert "1/5 intervals disturbed, dropped" in scaling.notes(s)


def test_summarize_oversubscribed_keeps_waiting_intervals() -> None:
    run = ScaleRun("b", None, "threads", 3, intervals=[
        _iv(i, [50, 100, 50], [50_000_000, 0, 50_000_000]) for i in range(1, 4)])
    s = scaling.summarize(run, 2)
    assert s["oversubscribed"] and s["intervals_kept"] == 3 and s["intervals_disturbed"] == 0
    assert scaling.notes(s)[0] == "oversubscribed: 3 tasks on 2 CPUs"


def test_disturbed_task_count_is_measured_again(monkeypatch: pytest.MonkeyPatch) -> None:
    busy = [_iv(i, [10, 50], [60_000_000, 0]) for i in range(1, 5)]  # every interval disturbed
    quiet = [_iv(i, [50, 50], [0, 0]) for i in range(1, 5)]
    calls = iter([busy, busy, quiet])
    monkeypatch.setattr(scale, "run_one", lambda *_a: ScaleRun("b", None, "threads", 2, intervals=next(calls)))
    run, s = scale.measure(Path("x"), "b", None, "threads", 2, _cfg(retries=2), [0, 1])
    assert run.intervals is quiet and s["attempts"] == 3 and not scaling.disturbed(s)
    assert "best of 3 attempts" in scaling.notes(s)
    calls = iter([busy, busy])
    run, s = scale.measure(Path("x"), "b", None, "threads", 2, _cfg(retries=1), [0, 1])
    assert scaling.disturbed(s) and s["attempts"] == 2
