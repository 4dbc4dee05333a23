"""Scaling mode (README "Scaling"): orderings measured in one session on this machine, never absolute rates.

CLI runs are short (0.2 s warm-up, 0.6 s of 0.1 s intervals); the orderings come from
sweeps of 6 alternating passes over 1.8 s (scale.sweep). A sweep in which the tasks had to
wait for their CPUs (another program ran there: the machine is shared) is measured again;
if every attempt is disturbed, the tests that judge that benchmark are skipped.

getppid and padded share nothing, so only the host can keep them from 2×: on the AMD EPYC
VM it slows a vCPU for seconds at a time (padded on one task swung between 1.24G and
2.33G ops/s within 6 s) and at times, it seems, runs both vCPUs on one physical core (a
steady 1.27–1.56× with equal task rates, for a whole sweep). Their sweep is measured again
while it falls short of 1.8×, up to 6 times, and the best is judged: the host only takes
speed away, so the best sweep is the one it disturbed least (the argument for keeping the
minimum of repeated timings). Up to 3 times left padded's best at 1.796× and 1.72× in two fresh
CIs on the AMD EPYC Zen 4 guest (2026-11-26/27), nothing else running: the host's slow stretch
outlasted three sweeps of ~2 s. A cyclebench bug that costs scaling fails all six.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from cyclebench.build import BuildSpec, build, suite_sources
from cyclebench.env.cpus import cpu_order
from cyclebench.experiments import scale
from cyclebench.model import CRASHED, OK
from cyclebench.report import plots
from cyclebench.runner import scaling as runner_scaling
from cyclebench.stats import scaling

from conftest import DATA, cli

# speed-ups at 2 tasks need both CPUs: beside other tests they read "machine busy" and skip
pytestmark = pytest.mark.timing

SHORT = ["--duration", "0.6", "--interval", "0.1", "--warmup", "0.2"]

ATTEMPTS = 3
STRICT_ATTEMPTS = 6  # getppid's and padded's sweeps while they fall short of SCALES (the docstring)


def _cfg(**kw: Any) -> scale.ScaleConfig:
    base: dict[str, Any] = {"spec": BuildSpec(sources=tuple(suite_sources()), werror=True), "duration": 0.6,
                            "interval": 0.1, "warmup": 0.2}
    return scale.ScaleConfig(**{**base, **kw})

@pytest.fixture(scope="module")
def binary() -> Path:
    return build(_cfg().spec).path

def _sweep(binary: Path, bench: str, mode: str, tasks: tuple[int, ...] = (1, 2)) -> dict[int, dict[str, Any]]:
    cfg = _cfg(tasks=tasks, duration=1.8, warmup=0.1, passes=6, retries=0)
    out: dict[int, dict[str, Any]] = {}
    for run, s in scale.sweep(binary, bench, None, mode, cfg, cpu_order()):
        assert run.status == OK, run.reason
        out[run.tasks] = s
    return out

PARALLEL = {"contend/getppid", "contend/padded"}  # share nothing: they scale unless the host stops them

SCALES = 1.8  # the speed-up at 2 tasks asked of them

def _speedup(points: dict[int, dict[str, Any]]) -> float:
    return float(points[max(points)].get("speedup") or 0.0)

Points = dict[int, dict[str, Any]]

class Measured:
    """Sweeps by benchmark; a benchmark that stayed disturbed has a reason instead, and only
    the tests that judge it are skipped."""

    def __init__(self) -> None:
        self.points: dict[str, Points] = {}
        self.skipped: dict[str, str] = {}

    def __getitem__(self, bench: str) -> Points:
        if bench in self.skipped:
            pytest.skip(self.skipped[bench])
        return self.points[bench]

def _measure(binary: Path, benches: list[str], mode: str, strict: bool) -> Measured:
    """Each benchmark at 1 and 2 tasks, in one session. A sweep disturbed by other programs
    is measured again, and skipped after ATTEMPTS. strict: getppid and padded are also
    measured again while they fall short of 1.8×, and the best sweep is kept (best of
    STRICT_ATTEMPTS, as the minimum of runs is kept for noise that only slows: see the module
    docstring)."""
    m = Measured()
    for bench in benches:
        best: Points | None = None
        for attempt in range(STRICT_ATTEMPTS if strict and bench in PARALLEL else ATTEMPTS):
            points = _sweep(binary, bench, mode)
            if any(scaling.disturbed(p) or _unsteady(p) for p in points.values()):
                if attempt + 1 >= ATTEMPTS and best is None:
                    break  # disturbed every time: the machine is busy, skipped below
                continue
            if best is None or _speedup(points) > _speedup(best):
                best = points
            if not (strict and bench in PARALLEL and _speedup(best) < SCALES):
                break
        if best is not None and strict and bench in PARALLEL and _speedup(best) < SCALES and (why := _one_core()):
            m.skipped[bench] = f"{bench} ({mode}): best of {STRICT_ATTEMPTS} sweeps {_speedup(best):.2f}×: {why}"
        elif best is not None:
            m.points[bench] = best
        else:
            waits = {n: round(p.get("wait_pct") or 0) for n, p in points.items()}
            spread = {n: round((p.get("total_max") or 0) / (p.get("total_min") or 1), 1) for n, p in points.items()}
            m.skipped[bench] = (f"{bench} ({mode}): in {ATTEMPTS} attempts tasks kept waiting for their CPUs (wait % "
                                f"by task count {waits}) or the host's speed moved under them (max/min interval "
                                f"throughput {spread}): machine busy")
    return m


def _one_core() -> str | None:
    """Why 2 tasks cannot scale now, if the host runs this guest's two vCPUs on one physical core:
    an add chain on the last CPU, timed beside a busy loop on the first, runs more than
    SPLIT_EXPLAINS slower than the imul chain timed beside it (stats.clock.clock_split; an SMT
    sibling slows the 1-cycle op and not the 3-cycle one). In a fresh CI on the AMD EPYC Zen 3
    guest padded's best sweep read 1.69× while the selftest beside a busy loop read that split
    at 6.35–6.57%. None when they do not share one, or there is no second CPU."""
    import os
    import subprocess
    import sys

    from cyclebench.experiments.selftest import SPLIT_EXPLAINS
    from cyclebench.runner import Runner
    from cyclebench.runner.plan import MeasureOptions
    from cyclebench.stats import clock

    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    faults = build(BuildSpec(sources=(DATA / "faults.c",))).path
    loop = subprocess.Popen([sys.executable, "-c", "while 1: pass"])
    try:
        os.sched_setaffinity(loop.pid, {cpus[0]})
        out = Runner(faults, cpu=cpus[-1]).run("faults/ok", None, MeasureOptions(min_time=0.3, warmup=0.05),
                                               timeout=60)
    finally:
        loop.kill()
        loop.wait()
    split = clock.clock_split(out.result) if out.result else None
    if split is None or split <= SPLIT_EXPLAINS:
        return None
    return (f"beside a busy loop on CPU {cpus[0]} the add chain on CPU {cpus[-1]} ran {split:.2%} slower than the "
            "imul chain beside it: the host runs both vCPUs on one physical core now")


# Interval throughput of one task count spread over more than this factor: the host moved the
# vCPUs' speed under the sweep (an Intel KVM guest here: padded 388M–1.56G ops/s at 1 task in
# one sweep, 2.2× and then 5.2× "speed-up" at 2 tasks with wait 0–1%); no ordering can be judged.
UNSTEADY = 2.5


def _unsteady(p: dict) -> bool:  # type: ignore[type-arg]
    lo, hi = p.get("total_min"), p.get("total_max")
    return bool(lo and hi and hi > UNSTEADY * lo)

@pytest.fixture(scope="module")
def threads(binary: Path) -> Measured:
    return _measure(binary, ["contend/getppid", "contend/padded", "contend/unpadded", "contend/lock_xadd"], "threads",
                    strict=True)

@pytest.fixture(scope="module")
def processes(binary: Path) -> Measured:
    return _measure(binary, ["contend/getppid", "contend/padded", "contend/lock_xadd"], "processes", strict=False)

@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("scale")
    db = f"sqlite:///{d / 'r.db'}"
    res = cli("scale", "contend/getppid", "contend/padded", "--tasks", "1..3", "--mode", "threads", *SHORT,
              "--plot", str(d / "s.png"), "--json", str(d / "s.json"), "--csv", str(d / "s.csv"), "--db", db)
    return {"res": res, "dir": d, "db": d / "r.db"}

@pytest.fixture(scope="module")
def crash_binary() -> Path:
    return build(BuildSpec(sources=(DATA / "scale_crash.c",))).path


def test_syscall_control_scales(threads: Measured) -> None:
    assert threads["contend/getppid"][2]["speedup"] >= SCALES


def test_padded_counters_scale(threads: Measured) -> None:
    assert threads["contend/padded"][2]["speedup"] >= SCALES
    assert len(set(threads["contend/padded"][2]["task_cpus"])) == 2  # pinned to distinct CPUs


def test_a_shared_atomic_scales_worse_than_padded(threads: Measured) -> None:
    """lock xadd on one line serialises the tasks wherever they run (sharing a cache or not):
    measured on the 2-vCPU VMs, undisturbed, padded 1.9–2.3× and lock xadd 0.17–0.3×."""
    padded, xadd = threads["contend/padded"][2]["speedup"], threads["contend/lock_xadd"][2]["speedup"]
    assert xadd < padded - 0.3 or xadd < 1.3, (xadd, padded)


# A line shared by two tasks never makes them faster than lines of their own: unpadded may
# come close to padded (two vCPUs on one cache), never above it by more than the sweeps' noise
# (speed-ups of one sweep vary by ±5% here; 10% is the tolerance).
NEVER_ABOVE = 1.10
# False sharing's cost depends on the host: unpadded 1.15–1.55× (Intel) and 0.03–0.5× (AMD)
# against padded 1.9–2.3× on two VMs, but 1.81× vs 1.95× on a host whose two vCPUs share a
# cache. Below this gap the cost is not judged (the test skips, saying the figures).
FALSE_SHARING_GAP = 0.3


def test_false_sharing_never_beats_padded_and_costs_where_lines_move(threads: Measured) -> None:
    padded, unpadded = threads["contend/padded"][2]["speedup"], threads["contend/unpadded"][2]["speedup"]
    assert unpadded <= padded * NEVER_ABOVE, (unpadded, padded)
    if unpadded >= padded - FALSE_SHARING_GAP and unpadded >= 1.3:
        pytest.skip(f"unpadded {unpadded:.2f}× vs padded {padded:.2f}× at 2 tasks: false sharing costs these CPUs "
                    f"less than {FALSE_SHARING_GAP}× of speed-up (they may share a cache); not judged here")


def test_processes_mode_shares_memory(processes: Measured) -> None:
    """Forked tasks scale on private counters and contend on the MAP_SHARED one: if the
    region were not shared across processes, lock xadd would scale like padded. The ≥ 1.8×
    criterion is judged in threads mode; here the ordering is (measured: padded 1.9–2.1×,
    lock xadd ≈ 0.2–0.3×). How far padded scales is the host's to give: CI saw it at 1.54× on a
    busy host and 1.18× in a fresh CI whose other vCPU the hypervisor took; the shared counter
    still fell far below it (xadd ≈ 0.2–0.3×), which is what shows the region is shared."""
    padded, xadd = processes["contend/padded"][2]["speedup"], processes["contend/lock_xadd"][2]["speedup"]
    assert padded > 1.0, padded  # the private counters gained from a second task at all
    assert xadd < 0.6 * padded, (xadd, padded)


@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_speedup_agrees_with_its_own_throughput(threads: Measured, processes: Measured, mode: str) -> None:
    """The speed-up (median of the passes' own ratios) is within 10% of
    the ratio of the totals printed beside it, in the same sweep (getppid in processes mode
    once printed 17.1M vs 8.61M ops/s and 1.29×). Both figures come from one sweep, so the
    load of the machine moves them together."""
    m = threads if mode == "threads" else processes
    if not m.points:
        pytest.skip("; ".join(m.skipped.values()))
    for bench, pts in m.points.items():
        ratio = pts[2]["total_median"] / pts[1]["total_median"]
        assert pts[2]["speedup"] == pytest.approx(ratio, rel=0.10), (bench, pts[2].get("pass_speedups"))
        assert pts[2]["efficiency"] == pytest.approx(pts[2]["speedup"] / 2)
        assert pts[2]["pass_speedups"], bench  # the passes were paired


def test_cli_speedup_agrees_with_the_stored_totals(cli_run: dict[str, Any]) -> None:
    rows = sqlite3.connect(cli_run["db"]).execute("select bench, param, median, extra from results").fetchall()
    base = {b: m for b, n, m, _ in rows if n == 1}
    for bench, n, median, extra in rows:
        e = json.loads(extra)
        assert e["speedup"] == pytest.approx(median / base[bench], rel=0.10), (bench, n, e.get("pass_speedups"))


def test_sampler_is_cheap(threads: Measured) -> None:
    pct = [p["sampler_cpu_pct"] for pts in threads.points.values() for p in pts.values()]
    if not pct:
        pytest.skip("; ".join(threads.skipped.values()))
    assert max(pct) < 1.0


def test_cpu_time_per_op_is_per_task(threads: Measured) -> None:
    """ns/op is CPU time per operation of one task: flat for the perfectly scaling syscall,
    higher under contention (lock xadd: the line moves between the cores)."""
    g, x = threads["contend/getppid"], threads["contend/lock_xadd"]
    assert g[2]["ns_per_op"] == pytest.approx(g[1]["ns_per_op"], rel=0.25)
    assert x[2]["ns_per_op"] > 1.3 * x[1]["ns_per_op"]


def test_cli_table_chart_and_sampler_line(cli_run: dict[str, Any]) -> None:
    res = cli_run["res"]
    assert res.exit_code == 0, res.output
    assert "contend/getppid (threads)" in res.output and "speed-up" in res.output
    assert "oversubscribed: 3 tasks on 2 CPUs" in res.output
    assert "efficiency per CPU-second (│ = 1.0), wall-clock beside" in res.output and "█" in res.output
    assert "% of one CPU" in res.output


def test_cli_stores_one_row_per_task_count(cli_run: dict[str, Any]) -> None:
    con = sqlite3.connect(cli_run["db"])
    rows = con.execute("select bench, param, variant, unit, status, median, extra from results order by id").fetchall()
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (b, n, "threads") for b in ("contend/getppid", "contend/padded") for n in (1, 2, 3)]
    assert all(r[3] == "ops/s" and r[4] == "ok" and r[5] > 0 for r in rows)
    extra = json.loads(rows[1][6])
    assert extra["tasks"] == 2 and extra["speedup"] > 0 and len(extra["per_task"]) == 2
    assert any(iv["warmup"] for iv in extra["intervals"]) and extra["intervals_measured"] == 6
    assert json.loads(rows[2][6])["oversubscribed"] is True


def test_show_prints_a_stored_scaling_run(cli_run: dict[str, Any]) -> None:
    res = cli("show", "--db", f"sqlite:///{cli_run['db']}")
    assert res.exit_code == 0, res.output
    assert "contend/padded (threads)" in res.output and "speed-up" in res.output
    assert "efficiency per CPU-second (│ = 1.0)" in res.output and "oversubscribed" in res.output


def test_cli_exports_and_plot(cli_run: dict[str, Any]) -> None:
    d = cli_run["dir"]
    data = json.loads((d / "s.json").read_text())
    assert len(data["results"]) == 6 and data["results"][0]["unit"] == "ops/s"
    with (d / "s.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [int(r["tasks"]) for r in rows] == [1, 2, 3, 1, 2, 3]
    png = (d / "s.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_crash_in_threads_mode_keeps_intervals(crash_binary: Path) -> None:
    cfg, cpus = _cfg(duration=2.0), cpu_order()
    run = runner_scaling.run_one(crash_binary, "scalecrash/late_segv", None, "threads", 2, cfg, cpus)
    assert run.status == CRASHED
    assert "SIGSEGV" in run.reason and "interval" in run.reason
    assert 2 <= len(run.intervals) < 15  # crashed after ~0.45 s, long before the 2.2 s end
    s = scaling.summarize(run, 2)
    assert s["intervals_measured"] >= 1 and s["total_median"] > 0


def test_crash_in_processes_mode_via_cli(crash_binary: Path, tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    res = cli("scale", "scalecrash/late_segv", "-f", str(DATA / "scale_crash.c"), "--tasks", "1,2", "--mode",
              "processes", "--duration", "2", "--interval", "0.1", "--warmup", "0.2", "--db", f"sqlite:///{db}")
    assert res.exit_code == 1, res.output
    assert "task 1 crashed: Segmentation fault (signal 11)" in res.output
    con = sqlite3.connect(db)
    rows = con.execute("select param, status, reason, extra from results order by id").fetchall()
    assert [(r[0], r[1]) for r in rows] == [(1, "ok"), (2, "crashed")]
    extra = json.loads(rows[1][3])
    assert extra["crash"]["task"] == 1 and len(extra["intervals"]) >= 2
    assert extra["end"]["crashed"] is True and len(extra["end"]["total_ops"]) == 2


def test_stored_rows_give_back_the_series(cli_run: dict[str, Any]) -> None:
    from cyclebench.store import Store

    store = Store(f"sqlite:///{cli_run['db']}")
    series = scaling.series_from_rows(store.results(store.last_run_id()))
    assert [(s.bench, s.mode, [p["tasks"] for p in s.points]) for s in series] == [
        ("contend/getppid", "threads", [1, 2, 3]), ("contend/padded", "threads", [1, 2, 3])]
    assert plots.scale_table(series[0]).row_count == 3


def test_ctrl_c_mid_sweep_keeps_finished_passes(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in the second pass: the task counts measured in the first are stored, marked."""
    real, calls = scale.measure, []

    def measure(*a: Any, **kw: Any) -> Any:
        calls.append(a[4])  # the task count
        if len(calls) == 4:  # pass 1: 1, 2 tasks; pass 2: 2, then 1 ← here
            raise KeyboardInterrupt
        return real(*a, **kw)

    monkeypatch.setattr(scale, "measure", measure)
    r = cli("scale", "contend/getppid", "--tasks", "1,2", "--passes", "2", "--mode", "threads", *SHORT)
    assert r.exit_code == 130 and "kept" in r.output, r.output
    con = sqlite3.connect(db.removeprefix("sqlite:///"))
    status = con.execute("select status from runs").fetchone()[0]
    extras = [json.loads(x) for (x,) in con.execute("select extra from results order by id")]
    assert status == "interrupted" and calls == [1, 2, 2, 1]
    assert [(e["tasks"], e["passes"]) for e in extras] == [(1, 1), (2, 2)]
    assert all("interrupted after" in " ".join(e["notes"]) for e in extras)
