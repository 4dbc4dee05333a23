"""Scaling mode (README "Scaling"): orderings measured in one session on this machine, never absolute rates.

Here the parts that need no compiler (parsers, statistics, fixture trees); the rest, which
builds and runs the engine, is in tests/engine or tests/commands under the same name."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cyclebench.build import BuildSpec, suite_sources
from cyclebench.env.cpus import cpu_order
from cyclebench.experiments import scale
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
    base = scaling.add_speedup(base, base)
    s = scaling.add_speedup(s, base)
    assert s["speedup"] == pytest.approx(1.5) and s["efficiency"] == pytest.approx(0.75)
    assert "1/5 intervals disturbed, dropped" in scaling.notes(s)


def test_an_interval_in_which_no_task_ran_is_disturbed() -> None:
    """Figures of wis/getppid1 at 1 task on the loaded VM: the task neither ran nor waited for
    0.27 s (its wait is charged when it runs again); kept, those intervals gave 0 ops/s."""
    stalled = {"run_ns": [0], "wait_ns": [0], "deltas": [0]}
    ivs = [_iv(1, [400_000], [0]), {**_iv(2, [0]), **stalled}, {**_iv(3, [0]), **stalled},
           {**_iv(4, [0]), **stalled}, _iv(5, [33_000], [99_000_000]), *[_iv(i, [400_000], [0]) for i in range(6, 9)]]
    s = scaling.summarize(ScaleRun("wis/getppid1", None, "threads", 1, intervals=ivs), 1)
    assert s["intervals_disturbed"] == 4 and s["intervals_kept"] == 4
    assert s["total_median"] == pytest.approx(4e6)
    few = scaling.summarize(ScaleRun("b", None, "threads", 1, intervals=ivs[:5]), 1)  # 1 undisturbed: keep all
    assert few.get("disturbed_kept") and scaling.disturbed(few)


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


def _passes(n: int, per_pass: list[tuple[list[int], list[int]]]) -> list[tuple[ScaleRun, dict[str, Any]]]:
    """One ScaleRun per pass as scale.sweep gets them, each summarised on its own as
    scale.measure does: per pass (deltas of every task, wait ns of every task), 7 intervals
    of 0.1 s after one warm-up interval."""
    out = []
    for deltas, wait in per_pass:
        run = ScaleRun("contend/getppid", None, "processes", n, intervals=[
            _iv(0, deltas, wait, warmup=True), *[_iv(i, deltas, wait) for i in range(1, 8)]])
        out.append((run, scaling.summarize(run, n)))
    return out


def test_speedup_agrees_with_the_totals_when_a_pass_is_all_disturbed() -> None:
    """getppid in processes mode once printed 17.1M vs 8.61M ops/s at 2 vs 1
    task and a speed-up of 1.29×. Two passes at 2 tasks were disturbed in every interval:
    judged alone (fewer than 3 undisturbed intervals) each kept its disturbed intervals
    (11.1M ops/s), while the pooled total, with 7 undisturbed intervals, dropped them."""
    quiet, busy = [0, 0], [5_000_000, 0]  # task 0 waited 5% of the interval for its CPU
    got = {1: _passes(1, [([861_000], [0])] * 3),
           2: _passes(2, [([555_000, 555_000], busy), ([555_000, 555_000], busy), ([855_000, 855_000], quiet)])}
    assert [s["total_median"] for _, s in got[2]] == pytest.approx([11.1e6, 11.1e6, 17.1e6])  # the old pass totals
    (_, one), (_, two) = scaling.combine(got, [1, 2], [0, 1])
    assert one["total_median"] == pytest.approx(8.61e6) and two["total_median"] == pytest.approx(17.1e6)
    throughput = two["total_median"] / one["total_median"]
    assert two["pass_totals"] == [None, None, pytest.approx(17.1e6)]  # the printed total's intervals only
    assert two["speedup"] == pytest.approx(throughput) and two["efficiency"] == pytest.approx(throughput / 2)
    assert two["pass_speedups"] == [pytest.approx(throughput)]
    assert "14/21 intervals disturbed, dropped" in scaling.notes(two)


def test_speedup_is_the_median_of_pass_ratios_when_it_agrees_with_the_totals() -> None:
    got = {1: _passes(1, [([100], [0]), ([104], [0]), ([96], [0])]),
           2: _passes(2, [([98, 98], [0, 0]), ([100, 100], [0, 0]), ([104, 104], [0, 0])])}
    _, (_, two) = scaling.combine(got, [1, 2], [0, 1])
    assert two["total_median"] / 1000 == pytest.approx(2.0)  # totals: 2000 vs 1000 ops/s
    assert two["pass_speedups"] == pytest.approx([1.96, 200 / 104, 208 / 96])
    assert two["speedup"] == pytest.approx(1.96) and not two.get("passes_disagree")
    assert "speed-up per pass 1.96 1.92 2.17" in scaling.notes(two)


def test_passes_that_disagree_with_the_totals_show_the_totals_ratio() -> None:
    """Throughput drifted between passes so that the median of the pass ratios (2.0) and
    the ratio of the pooled totals (3.0) part by more than PASS_AGREEMENT: the row shows the
    ratio of its own totals and says the passes disagree, never a contradiction."""
    got = {1: _passes(1, [([100], [0]), ([50], [0]), ([50], [0])]),
           2: _passes(2, [([100, 100], [0, 0]), ([50, 50], [0, 0]), ([75, 75], [0, 0])])}
    (_, one), (_, two) = scaling.combine(got, [1, 2], [0, 1])
    assert two["total_median"] / one["total_median"] == pytest.approx(3.0)
    assert two["pass_speedup"] == pytest.approx(2.0) and two["passes_disagree"]
    assert two["speedup"] == pytest.approx(3.0) and two["efficiency"] == pytest.approx(1.5)
    assert any(n.startswith("passes disagree: speed-up per pass 2.00 2.00 3.00 (median 2.00×) vs 3.00×")
               for n in scaling.notes(two))


def test_summary_is_a_frozen_record_whose_json_has_only_the_keys_it_measured() -> None:
    # The stored extra (docs/method.md §8) keeps its shape: interval statistics only when an
    # interval was measured, schedstat's CPU time only with schedstat, placement only with a
    # start line, speed-ups only once computed; arrays read back as JSON lists.
    import dataclasses

    head = ["tasks", "mode", "cpus_used", "oversubscribed", "intervals_total", "intervals_measured",
            "intervals_kept", "intervals_disturbed", "disturbed_kept", "steal", "idle_pct"]
    empty = scaling.summarize(ScaleRun("b", None, "threads", 1), 1)
    assert list(empty) == head and "total_median" not in empty and empty.get("speedup") is None
    with pytest.raises(KeyError):
        empty["total_median"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        empty.tasks = 2  # type: ignore[misc]
    plain = scaling.summarize(ScaleRun("b", None, "threads", 2, intervals=[
        _iv(i, [100, 50]) for i in range(1, 4)]), 2)
    stats = ["total_median", "total_min", "total_max", "total_cv", "per_task", "task_min", "task_median",
             "task_max", "fairness", "task_cv", "ns_per_op_wall", "ns_per_op"]
    assert list(plain) == head + stats and plain["per_task"] == [1000.0, 500.0]
    started = scaling.summarize(ScaleRun("b", None, "threads", 2, start={"batch": 8, "cpus": [0, 1]}, intervals=[
        _iv(i, [100, 50], [0, 0]) for i in range(1, 4)]), 2)
    assert list(started) == [*head, "batch", "task_cpus", "sampler_cpus", "wait_pct", *stats[:10],
                             "ns_per_op_cpu", "cpu_rate_median", *stats[10:]]
    assert started["task_cpus"] == [0, 1] and started["sampler_cpus"] is None
    faster = scaling.add_speedup(started, plain)
    assert "speedup" not in started and faster["speedup"] == pytest.approx(1.0)
    assert "cpu_efficiency" not in faster and "passes_disagree" not in faster  # not computed, not true
