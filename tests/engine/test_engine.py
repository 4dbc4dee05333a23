"""The C engine seen through the runner protocol."""

from __future__ import annotations

import platform
from pathlib import Path

import numpy as np
import pytest

from cyclebench.build import BuildSpec, build
from cyclebench.runner import Runner, interleave
from cyclebench.runner.plan import MeasureOptions
from cyclebench.stats import clock

from conftest import DATA


@pytest.fixture(scope="module")
def runner() -> Runner:
    return Runner(build(BuildSpec(sources=(DATA / "faults.c",))).path, cpu=None)


def cpuinfo_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith(("flags", "Features")):
            return set(line.split(":", 1)[1].split())
    return set()


def test_feature_gates_agree_with_the_kernel(runner: Runner) -> None:
    feats = runner.features()
    flags = cpuinfo_flags()
    if platform.machine() == "x86_64":
        assert feats["x86_64"] == 1 and feats["aarch64"] == 0
        for ours, kernel in [("sse2", "sse2"), ("avx2", "avx2"), ("avx512f", "avx512f"), ("erms", "erms"),
                             ("cx16", "cx16"), ("rdtscp", "rdtscp"), ("bmi2", "bmi2")]:
            assert feats[ours] == int(kernel in flags), ours
        assert feats["lse"] == 0
    assert set(feats.values()) <= {0, 1}


def test_list_reports_hooks_and_gates(runner: Runner) -> None:
    by_name = {b.name: b for b in runner.list()}
    assert by_name["faults/verify_fails"].has_verify
    assert by_name["faults/unknown_feature"].require == "no_such_feature_xyz"
    assert by_name["faults/ok"].params is None


def test_result_line_has_the_ladder(runner: Runner) -> None:
    opts = MeasureOptions(min_time=0.005, repeat=5, ladder=6, warmup=0, seed=7)
    out = runner.run("faults/ok", None, opts, timeout=30)
    res = out.result
    assert out.status == "ok" and res is not None
    assert len(res["n"]) == len(res["ticks"]) == 30
    assert sorted(set(res["n"])) == [k * res["n_base"] for k in range(1, 7)]
    assert res["seed"] == 7
    assert res["total_iters"] >= sum(res["n"])  # sizing and warm-up count too
    assert res["timer_overhead"]["min"] > 0


def test_calibration_measures_the_timer_rate(runner: Runner) -> None:
    cal = runner.calibrate()
    assert cal["measured_hz"] > 1e6
    assert cal["unit"] in ("ref-cycles", "ticks", "ns")
    assert 0 < cal["timer_overhead"]["min"] <= cal["timer_overhead"]["median"]


@pytest.fixture(scope="module")
def overrun() -> Runner:
    return Runner(build(BuildSpec(sources=(DATA / "overrun.c",))).path, cpu=None)


@pytest.mark.parametrize(("bench", "min_time", "max_time"), [
    ("overrun/slow_op", 0.05, 0.5),  # 10 ms an op: the old floor of 3 rounds ran 1.1 s
    ("overrun/slows_down", 1.0, 1.0),  # 10× dearer after the sizing: the plan alone ran 9.9 s
])
@pytest.mark.timing
def test_max_time_caps_the_wall_time(overrun: Runner, bench: str, min_time: float, max_time: float) -> None:
    """--max-time is a cap on a benchmark's sizing, warm-up and rounds, to
    within one round (only whole rounds are run, the first always). Both bodies spin on the
    wall clock, so a busy machine does not stretch them; the runner's wall time includes its
    start and the timer calibration, hence the slack."""
    opts = MeasureOptions(min_time=min_time, max_time=max_time, warmup=0.01, repeat=40)
    out = overrun.run(bench, None, opts, timeout=opts.timeout())
    res = out.result
    assert out.status == "ok" and res is not None, out.reason
    assert out.wall_s <= 1.5 * max_time + 0.2, (out.wall_s, res["rounds"])
    used = res["sizing_ns"] + res["warmup_ns"] + res["measured_ns"]
    assert used <= max_time * 1e9 or res["rounds"] == 1, (used / 1e9, res["rounds"])
    assert 1 <= res["rounds"] < 40 and len(res["n"]) == res["rounds"] * res["ladder"]  # whole rounds only


@pytest.mark.timing
@pytest.mark.skipif(platform.machine() != "x86_64", reason="the body flushes the runner's code with x86-64's clflush")
def test_the_chain_after_a_batch_reads_as_if_its_code_were_warm() -> None:
    """The chain timed after every batch gives that batch's cycles~, so it must not pay for
    fetching its own code. A body that flushes the runner's code from every cache level
    (tests/data/icache_evict.c) made the chain after it read 33–67% slower than the chain after
    a body that reads the same lines as data (AMD EPYC Zen 3 guest); with the timed path run once
    untimed before (engine/measure.c) the two read within 0.5% there. Measured together, round by
    round, so the host's clock moves both alike."""
    runner = Runner(build(BuildSpec(sources=(DATA / "icache_evict.c",))).path, cpu=None)
    opts = MeasureOptions(min_time=0.02, repeat=12, warmup=0.005)
    (evict, stay), _procs = interleave.measure(runner, [("icache/evict", None), ("icache/stay", None)], opts, 1)
    assert evict.result is not None and stay.result is not None, (evict.reason, stay.reason)
    # each side's chain readings as the calibration trims them (an interrupted one left out)
    after_evict, _se, _n = clock._trimmed_mean(np.asarray(evict.result["cal"], dtype=float))
    after_stay, _se, _n = clock._trimmed_mean(np.asarray(stay.result["cal"], dtype=float))
    ratio = after_evict / after_stay
    assert ratio == pytest.approx(1, abs=0.03)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the add chain and rdtsc timer of x86-64")
def test_injected_faults_change_the_readings_and_say_so(runner: Runner, monkeypatch: pytest.MonkeyPatch) -> None:
    """CYCLEBENCH_FAULT (docs/method.md §11): timer-skip makes every interval a multiple of 256
    ticks; calibration makes every timed chain read 1% short. Neither goes unannounced, and an
    unknown name injects nothing."""
    opts = MeasureOptions(min_time=0.005, repeat=5, warmup=0)
    clean = runner.run("faults/ok", None, opts, timeout=30).result or {}
    assert "fault" not in clean and "fault" not in runner.calibrate()
    assert any(t % 256 for t in clean["ticks"])
    monkeypatch.setenv("CYCLEBENCH_FAULT", "timer-skip")
    skip = runner.run("faults/ok", None, opts, timeout=30).result or {}
    assert skip["fault"] == "timer-skip" and runner.calibrate()["fault"] == "timer-skip"
    assert all(t % 256 == 0 for t in skip["ticks"] + skip["cal"]) and skip["timer_overhead"]["median"] % 256 == 0
    monkeypatch.setenv("CYCLEBENCH_FAULT", "calibration")
    short = runner.run("faults/ok", None, opts, timeout=30).result or {}
    assert short["fault"] == "calibration"
    monkeypatch.setenv("CYCLEBENCH_FAULT", "no-such-fault")
    assert "fault" not in (runner.run("faults/ok", None, opts, timeout=30).result or {})
    # its size (cycles~ 1.0% high) is the selftest's to show: tests/commands/test_selftest.py
