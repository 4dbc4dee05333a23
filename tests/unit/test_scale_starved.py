"""A scaling row is `ok` only with a throughput, and a task the host starved is `disturbed` with
its reason, not `failed` as a test case that blocks (runner.scaling, stats.scaling.judged). The
intervals here are fixtures of what the sampler prints (engine/scale.c), as read under load:
no load is hoped for."""

from __future__ import annotations

from typing import Any

from cyclebench.model import DISTURBED, FAILED, OK, ScaleRun, kept_off
from cyclebench.runner import scaling as runner_scaling
from cyclebench.stats import scaling

MS = 1_000_000


def _iv(i: int, deltas: list[int], run: list[int], wait: list[int], warmup: bool = False) -> dict[str, Any]:
    return {"type": "interval", "i": i, "t": 0.1 * i, "dt": 0.1, "warmup": warmup, "deltas": deltas,
            "run_ns": run, "wait_ns": wait}


def _wis(intervals: list[dict[str, Any]], total: list[int]) -> ScaleRun:
    return ScaleRun("wis/getppid1", None, "processes", len(total), start={"wis": {"description": "getppid"}},
                    intervals=tuple(intervals), end={"total_ops": total, "sampled_s": 0.6, "sampler_cpu_s": 0.01})  # type: ignore[arg-type]


def test_a_task_the_host_starved_is_disturbed_with_its_reason() -> None:
    """getppid at 2 processes on a host at load 5: task 0 runnable all along, never on its CPU."""
    ivs = [_iv(0, [900, 40_000], [MS, 90 * MS], [0, 0], warmup=True),
           *(_iv(i, [0, 40_000], [0, 95 * MS], [70 * MS, 0]) for i in range(1, 6))]
    run = runner_scaling._never_bumped(_wis(ivs, [900, 240_000]))
    assert run.status == DISTURBED, run.reason
    assert "task 0" in (run.reason or "") and "waited 70%" in (run.reason or "")
    row = scaling.row_fields(run, scaling.summarize(run, 2))
    assert row.status == DISTURBED and row.reason == run.reason


def test_a_task_that_blocked_without_waiting_for_its_cpu_still_fails() -> None:
    ivs = [_iv(0, [900, 40_000], [MS, 90 * MS], [0, 0], warmup=True),
           *(_iv(i, [0, 40_000], [0, 95 * MS], [0, 0]) for i in range(1, 6))]
    run = runner_scaling._never_bumped(_wis(ivs, [900, 240_000]))
    assert run.status == FAILED and "blocked all along" in (run.reason or "")


def _one_task(zero_wait: int) -> ScaleRun:
    """fallocate2 at 1 task under load: no operation in 4 of 6 intervals (the task ran a little,
    waiting ``zero_wait`` ns for its CPU in each), some in the other 2."""
    ivs = [*(_iv(i, [0], [5 * MS], [zero_wait]) for i in range(1, 5)),
           *(_iv(i, [2_000], [99 * MS], [0]) for i in range(5, 7))]
    return ScaleRun("wis/fallocate2", None, "threads", 1, intervals=tuple(ivs))  # type: ignore[arg-type]


def test_a_row_of_0_ops_per_s_from_a_starved_task_is_disturbed_never_ok() -> None:
    run = _one_task(zero_wait=40 * MS)
    s = scaling.summarize(run, 1)
    assert s.total_median == 0  # the figure that was stored `ok`
    row = scaling.row_fields(run, s)
    assert row.status == DISTURBED and "median 0 ops/s" in (row.reason or "") and "CPU" in (row.reason or "")
    assert any(n.startswith("disturbed: ") for n in row.scale["notes"])  # type: ignore[index]


def test_a_row_of_0_ops_per_s_with_no_wait_fails() -> None:
    row = scaling.row_fields(_one_task(zero_wait=0), scaling.summarize(_one_task(zero_wait=0), 1))
    assert row.status == FAILED and "median 0 ops/s" in (row.reason or "")


def test_a_row_with_a_throughput_stays_ok() -> None:
    ivs = [_iv(i, [2_000], [99 * MS], [0]) for i in range(1, 7)]
    run = ScaleRun("wis/fallocate2", None, "threads", 1, intervals=tuple(ivs))  # type: ignore[arg-type]
    row = scaling.row_fields(run, scaling.summarize(run, 1))
    assert row.status == OK and row.median and row.median > 0


def _ready(iv: dict[str, Any], runnable: list[int]) -> dict[str, Any]:
    return {**iv, "runnable": runnable}


def test_a_task_kept_off_its_cpu_to_the_end_is_disturbed_though_no_wait_was_charged() -> None:
    """slow_setup at 2 threads beside other tests: task 0 counted in the warm-up, then neither ran
    nor counted through the 3 measured intervals, runnable at each sample, its wait not yet charged
    (schedstat charges it when the task runs again): disturbed, not failed as blocked."""
    ivs = [_iv(0, [185_439, 40_000], [30 * MS, 90 * MS], [0, 0], warmup=True),
           *(_ready(_iv(i, [0, 40_000], [0, 95 * MS], [0, 0]), [1, 1]) for i in range(1, 4))]
    run = runner_scaling._never_bumped(_wis(ivs, [185_439, 160_000]))
    assert run.status == DISTURBED, run.reason
    assert "task 0" in (run.reason or "") and "waited 100%" in (run.reason or "")


def test_a_task_asleep_at_every_sample_still_fails_as_blocked() -> None:
    ivs = [_iv(0, [900, 40_000], [MS, 90 * MS], [0, 0], warmup=True),
           *(_ready(_iv(i, [0, 40_000], [0, 95 * MS], [0, 0]), [0, 1]) for i in range(1, 6))]
    run = runner_scaling._never_bumped(_wis(ivs, [900, 240_000]))
    assert run.status == FAILED and "blocked all along" in (run.reason or "")


def test_an_interval_in_which_one_task_was_kept_off_its_cpu_is_not_kept() -> None:
    """The others ran: the interval is disturbed all the same, and left out while enough are kept."""
    ivs = [*(_ready(_iv(i, [40_000, 40_000], [95 * MS, 95 * MS], [0, 0]), [1, 1]) for i in range(1, 5)),
           _ready(_iv(5, [0, 40_000], [0, 95 * MS], [0, 0]), [1, 1])]
    run = ScaleRun("wis/getppid1", None, "threads", 2, intervals=tuple(ivs))  # type: ignore[arg-type]
    s = scaling.summarize(run, 2)
    assert (s.intervals_measured, s.intervals_kept, s.intervals_disturbed) == (5, 4, 1)
    assert s.total_min == s.total_max  # the interval at 40,000 ops instead of 80,000 left out
    asleep = [_ready(iv, [0, 1]) for iv in ivs]  # the same counts, task 0 not runnable: blocked, kept
    s = scaling.summarize(ScaleRun("wis/getppid1", None, "threads", 2, intervals=tuple(asleep)), 2)  # type: ignore[arg-type]
    assert (s.intervals_kept, s.intervals_disturbed) == (5, 0)


def test_kept_off_is_one_rule_and_reads_only_what_the_interval_has() -> None:
    """model.kept_off, which both the status (runner.scaling) and the kept intervals
    (stats.scaling) ask: runnable, 0 ns run and 0 operations, per task; False where an older
    sampler printed no state, where schedstat is missing, or past the lists' end."""
    iv = _ready(_iv(1, [0, 40_000], [0, 95 * MS], [0, 0]), [1, 1])
    assert [kept_off(iv, t) for t in range(3)] == [True, False, False]  # task 2: past the lists
    assert not kept_off(_ready(_iv(1, [0, 40_000], [0, 95 * MS], [0, 0]), [0, 1]), 0)  # asleep: blocked
    assert not kept_off(_iv(1, [0, 40_000], [0, 95 * MS], [0, 0]), 0)  # no state read
    assert not kept_off({**iv, "run_ns": []}, 0)  # no schedstat
    assert not kept_off(_ready(_iv(1, [0], [0, 95 * MS], [0, 0]), [1, 1]), 1)  # lists of unequal length
