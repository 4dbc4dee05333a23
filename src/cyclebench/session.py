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

from cyclebench import __version__, calibrate, sysinfo
from cyclebench.build import Binary, BuildSpec, build
from cyclebench.measure import Item, MeasureOptions, SelectionError, plan
from cyclebench.runner import OK, Outcome, Runner
from cyclebench.stats import NotEnoughSamples, estimate
from cyclebench.store import Store


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
    runner = Runner(binary.path, cpu)
    items = plan(runner.list(), cfg.globs, cfg.params)
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


def result_fields(outcome: Outcome, rate_hz: float, variant: str = "") -> dict[str, Any]:
    """The results-table row for one outcome (estimators filled when there are samples)."""
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
    fields["extra"] = {k: v for k, v in res.items() if k not in ("n", "ticks")}
    try:
        est = estimate(res["n"], res["ticks"], seed=int(res.get("seed", 0)) & 0xFFFFFFFF, group=res.get("ladder"))
    except NotEnoughSamples as e:
        if fields["status"] == OK:
            fields["status"], fields["reason"] = "error", str(e)
        return fields
    fields.update(est.to_dict())
    fields["ns_per_op"] = est.per_op * 1e9 / rate_hz if unit != "ns" else est.per_op
    return fields


def execute(
    cfg: RunConfig,
    prepared: Prepared,
    store: Store,
    on_start: Callable[[Item], None] = lambda _i: None,
    on_done: Callable[[Item, dict[str, Any]], None] = lambda _i, _r: None,
) -> tuple[int, list[dict[str, Any]]]:
    """Measure every item and store each result as it comes. Returns (run id, rows)."""
    calib = prepared.runner.calibrate()
    rate, source = calibrate.timer_rate(calib, sysinfo.kernel_tsc_hz())
    calib = {**calib, "rate_hz": rate, "rate_source": source}
    env = sysinfo.capture(prepared.cpu, cc=cfg.spec.cc)
    b = prepared.binary
    run_id = store.begin_run(
        command=list(cfg.command) or sys.argv, host=env.get("hostname"),
        cpu_model=(env.get("cpu_info") or {}).get("model_name"), cpu=prepared.cpu, tool_version=__version__,
        code_rev=code_revision(cfg.spec.sources), calibration=calib, env=env,
        build={"cc": b.cc, "cc_version": b.cc_version, "cflags": list(b.cflags), "sources": list(b.sources),
               "key": b.key},
    )
    rows: list[dict[str, Any]] = []
    timeout = cfg.timeout or cfg.options.timeout()
    try:
        for item in prepared.items:
            on_start(item)
            outcome = prepared.runner.run(item.bench, item.param, cfg.options, timeout)
            fields = result_fields(outcome, rate, cfg.variant)
            res = outcome.result
            sample_rows = list(zip(res["n"], res["ticks"], strict=True)) if res else []
            fields["id"] = store.add_result(run_id, fields, sample_rows)
            rows.append(fields)
            on_done(item, fields)
    except KeyboardInterrupt:
        store.finish_run(run_id, "interrupted")
        raise
    except BaseException:
        store.finish_run(run_id, "failed")
        raise
    store.finish_run(run_id, "complete")
    return run_id, rows
