"""One `cyclebench run`: build → run → parse → stats → store, item by item.

Each item's result is stored the moment it is analysed; the caller gets callbacks for its
progress display. KeyboardInterrupt marks the run 'interrupted' and propagates: every
finished result is already committed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as sps

from cyclebench import __version__, counters
from cyclebench.build import Binary, BuildSpec, build
from cyclebench.env import check, sysinfo
from cyclebench.model import OK, Item, Outcome
from cyclebench.runner import Runner, callgrind
from cyclebench.runner.plan import MeasureOptions, SelectionError, plan
from cyclebench.stats import NotEnoughSamples, clock, combine_difference, estimate, slow_side
from cyclebench.store import Store

LOOP_REFERENCE = "loop/empty"


@dataclass
class RunConfig:
    """Everything `cyclebench run` was asked to do."""

    spec: BuildSpec
    globs: Sequence[str] = ()
    params: Sequence[int] = ()
    cpu: int | None = None  # None: sysinfo.choose_cpu()
    options: MeasureOptions = field(default_factory=MeasureOptions)
    timeout: float | None = None  # per item; None: options.timeout()
    variant: str = ""
    command: Sequence[str] = ()
    fifo: int | None = None  # SCHED_FIFO priority for the runner
    backend: str = "timing"  # or "callgrind": simulated counts (callgrind.py), no timing
    sim_iters: int = 10  # callgrind: batches of sim_iters and 2·sim_iters operations
    cache: dict[str, tuple[int, int, int]] | None = None  # callgrind cache geometry
    events: list[list[Any]] | None = None  # counter groups (counters.Event) read around every batch
    max_rss: int | None = None  # bytes: a runner whose session's RSS passes this is killed (row 'failed')


@dataclass
class Prepared:
    binary: Binary
    runner: Runner
    items: list[Item]
    cpu: int


def prepare(cfg: RunConfig) -> Prepared:
    """Build the runner and expand the selection. Raises BuildError, ToolMissing,
    FileNotFoundError, RunnerError, SelectionError — all user-facing, one line each."""
    if cfg.cpu is not None and cfg.cpu not in (allowed := sorted(os.sched_getaffinity(0))):
        raise SelectionError(f"CPU {cfg.cpu} is not available here (allowed: {','.join(map(str, allowed))})")
    binary = build(cfg.spec)
    cpu = cfg.cpu if cfg.cpu is not None else sysinfo.choose_cpu()
    runner = Runner(binary.path, cpu, fifo=cfg.fifo, max_rss=cfg.max_rss)
    benches = runner.list()
    items = plan(benches, cfg.globs, cfg.params)
    # The loop's own cost is measured first in every run, so every result has a net figure.
    ref = Item(LOOP_REFERENCE, None)
    if any(b.name == LOOP_REFERENCE for b in benches):
        items = [ref] + [i for i in items if i != ref]
    return Prepared(binary, runner, items, cpu)


def code_revision(sources: Sequence[Path]) -> str | None:
    """``git describe --always --dirty`` of the first source's repository, or None."""
    if not sources:
        return None
    try:
        proc = subprocess.run(
            ["git", "-C", str(Path(sources[0]).resolve().parent), "describe", "--always", "--dirty"],
            capture_output=True, text=True, timeout=5, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def counter_fields(res: dict[str, Any], events: list[list[Any]], n: np.ndarray, group: int | None,
                   keep: np.ndarray, seed: int) -> dict[str, Any]:
    """Per-op slope of every requested event (counters.py parses the runner's raw group
    reads), its status, and derived metrics (IPC, MPKI, branch-miss rate)."""
    c = res.get("counters") or {}
    names = [e.name for g in events for e in g]
    series, status = counters.per_sample_counts(c.get("reads") or [], c.get("nevents") or [],
                                                c.get("open_errors") or [None] * len(events))
    out: dict[str, Any] = {}
    per_op: dict[str, float] = {}
    for name, vals, st in zip(names, series, status, strict=True):
        entry: dict[str, Any] = {"status": st}
        if vals is not None and len(vals) == len(n):
            try:
                est = estimate(n, np.asarray(vals), seed=seed, group=group, keep=keep)
                entry.update(per_op=est.per_op, ci_low=est.ci_low, ci_high=est.ci_high)
                per_op[name] = est.per_op
            except NotEnoughSamples as e:
                entry["status"] = f"not counted: {e}"
        out[name] = entry
    return {"events": out, "derived": counters.derived(per_op)}


def result_fields(outcome: Outcome, rate_hz: float, variant: str = "",
                  events: list[list[Any]] | None = None) -> dict[str, Any]:
    """The results-table row for one outcome: estimators in the timer's unit and in
    cycles~ (when the runner timed its calibration chain), disturbed samples dropped."""
    fields: dict[str, Any] = {
        "bench": outcome.bench, "param": outcome.param, "variant": variant, "status": outcome.status,
        "reason": outcome.reason, "wall_s": outcome.wall_s,
    }
    res = outcome.result
    if res is None:
        return fields
    unit = res.get("unit", "ticks")
    fields["unit"] = unit
    fields["timer_overhead"] = (res.get("timer_overhead") or {}).get("median")
    fields["extra"] = {k: v for k, v in res.items()
                       if k not in ("n", "ticks", "cal", "disturbed", "pmu_cycles", "counters")}
    n = np.asarray(res["n"], dtype=float)
    t = np.asarray(res["ticks"], dtype=float)
    keep = np.asarray(res.get("disturbed") or np.zeros(len(n)), dtype=int) == 0
    ratio = clock.core_ratio(res)
    if ratio is not None:
        keep &= np.isfinite(ratio)
    if keep.sum() < max(3, len(keep) // 2):  # a storm of disturbances: keep all rather than nothing
        fields["extra"]["disturbed_ignored"] = True
        keep = np.ones(len(n), dtype=bool) if ratio is None else np.isfinite(ratio)
    fields["n_disturbed"] = int(len(n) - keep.sum())
    seed = int(res.get("seed", 0)) & 0xFFFFFFFF
    group = res.get("ladder")
    if not fields["extra"].get("disturbed_ignored"):  # a benchmark that disturbs itself varies by nature
        hit = slow_side(n, t, group, keep, float(fields["timer_overhead"] or 0))
        fields["n_trimmed"] = int(hit.sum())
        keep &= ~hit
    try:
        est = estimate(n, t, seed=seed, group=group, keep=keep)
    except NotEnoughSamples as e:
        if fields["status"] == OK:
            fields["status"], fields["reason"] = "error", str(e)
        return fields
    fields.update(est.to_dict())
    fields["ns_per_op"] = est.per_op * 1e9 / rate_hz if unit != "ns" else est.per_op
    if ratio is not None:
        smooth = clock.round_ratio(np.where(keep, ratio, np.nan), group)
        cyc = estimate(n, np.where(keep, t * np.nan_to_num(smooth), 0.0), seed=seed, group=group, keep=keep)
        r = ratio[keep]
        fields.update(
            cycles_per_op=cyc.per_op, cycles_ci_low=cyc.ci_low, cycles_ci_high=cyc.ci_high, cycles_min=cyc.min,
            cycles_rcv=cyc.rcv, core_ghz=float(np.median(r)) * rate_hz / 1e9,
            ratio_rcv=float(sps.median_abs_deviation(r, scale="normal") / np.median(r)),
            chain_agreement=clock.chain_agreement(res),
        )
    if events:
        fields["extra"]["counters"] = counter_fields(res, events, n, group, keep, seed)
    if res.get("pmu_cycles"):  # a real PMU: the cycles event per op, and how well cycles~ agrees
        pmu = estimate(n, np.asarray(res["pmu_cycles"], dtype=float), seed=seed, group=group, keep=keep)
        fields.update(pmu_cycles_per_op=pmu.per_op, pmu_ci_low=pmu.ci_low, pmu_ci_high=pmu.ci_high)
        if fields.get("cycles_per_op") and pmu.per_op > 0:
            fields["pmu_agreement"] = fields["cycles_per_op"] / pmu.per_op
    return fields


def sample_rows(res: dict[str, Any] | None) -> list[tuple[int, int, int | None, int | None, int | None]]:
    if not res:
        return []
    n = len(res["n"])
    cal = res.get("cal") or [None] * n
    dist = res.get("disturbed") or [None] * n
    pmu = res.get("pmu_cycles") or [None] * n
    return list(zip(res["n"], res["ticks"], cal, dist, pmu, strict=True))


def add_net(fields: dict[str, Any], loop: dict[str, Any] | None) -> None:
    """Fill the net-of-loop columns of ``fields`` from the loop/empty row of the same run."""
    if not loop or fields.get("per_op") is None or loop.get("per_op") is None:
        return
    if fields.get("unit") == loop.get("unit"):
        d = combine_difference(
            (fields["per_op"], fields["ci_low"], fields["ci_high"]), (loop["per_op"], loop["ci_low"], loop["ci_high"]))
        fields["net_per_op"], fields["net_ci_low"], fields["net_ci_high"] = d
    if fields.get("cycles_per_op") is not None and loop.get("cycles_per_op") is not None:
        d = combine_difference((fields["cycles_per_op"], fields["cycles_ci_low"], fields["cycles_ci_high"]),
                               (loop["cycles_per_op"], loop["cycles_ci_low"], loop["cycles_ci_high"]))
        fields["cycles_net"], fields["cycles_net_ci_low"], fields["cycles_net_ci_high"] = d


def begin(cfg: RunConfig, prepared: Prepared, store: Store) -> tuple[int, float]:
    """Calibrate, capture the environment and open a run row. Returns (run id, timer Hz)."""
    calib = prepared.runner.calibrate()
    rate, source = clock.timer_rate(calib, sysinfo.kernel_tsc_hz())
    calib = {**calib, "rate_hz": rate, "rate_source": source}
    env = sysinfo.capture(prepared.cpu, cc=cfg.spec.cc)
    env["check"] = [f.to_dict() for f in check.run_checks(prepared.cpu)]  # what `cyclebench check` says now
    b = prepared.binary
    run_id = store.begin_run(
        command=list(cfg.command) or sys.argv, host=env.get("hostname"),
        cpu_model=(env.get("cpu_info") or {}).get("model_name"), cpu=prepared.cpu, tool_version=__version__,
        code_rev=code_revision(cfg.spec.sources), calibration=calib, env=env,
        build={"cc": b.cc, "cc_version": b.cc_version, "cflags": list(b.cflags), "sources": list(b.sources),
               "key": b.key},
    )
    return run_id, rate


def execute(
    cfg: RunConfig,
    prepared: Prepared,
    store: Store,
    on_start: Callable[[Item], None] = lambda _i: None,
    on_done: Callable[[Item, dict[str, Any]], None] = lambda _i, _r: None,
) -> tuple[int, list[dict[str, Any]]]:
    """Measure every item and store each result as it comes. Returns (run id, rows)."""
    run_id, rate = begin(cfg, prepared, store)
    rows: list[dict[str, Any]] = []
    loop: dict[str, Any] | None = None
    timeout = cfg.timeout or cfg.options.timeout()
    with store.finishing(run_id):
        for item in prepared.items:
            on_start(item)
            if cfg.backend == "callgrind":
                outcome = callgrind.simulate(prepared.binary.path, item.bench, item.param, cfg.sim_iters, cfg.cache,
                                            timeout=max(600.0, timeout), cpu=prepared.cpu)
                fields = callgrind.result_fields(outcome, cfg.variant)
                fields["id"] = store.add_result(run_id, fields)
                rows.append(fields)
                on_done(item, fields)
                continue
            outcome = prepared.runner.run(item.bench, item.param, cfg.options, timeout, cfg.events)
            fields = result_fields(outcome, rate, cfg.variant, cfg.events)
            res = outcome.result
            if item.bench == LOOP_REFERENCE and outcome.status == OK:
                loop = fields
            add_net(fields, loop)
            fields["id"] = store.add_result(run_id, fields, sample_rows(res))
            rows.append(fields)
            on_done(item, fields)
    store.finish_run(run_id, "complete")
    return run_id, rows
