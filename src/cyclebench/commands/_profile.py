"""The machinery of `cyclebench profile`: a gprof-style flat profile with exact call counts, the probe's own cost
measured on this machine and subtracted (seed 004), per call in cycles~.

The recipe (timing, uftrace): calibrate the core clock with the add chain; measure the probe
(suite/profile/probe.c under uftrace: an empty instrumented call against a plain one, and the
empty function's recorded durations); record the program (``-- CMD``, built with -pg or
-finstrument-functions) or the benchmark (``BENCH``, its sources built with -pg) under uftrace;
calibrate again; convert ns to cycles~ with the mean of the two calibrations; compensate
(stats/profile.py); print (report/profile.py). ``--backend callgrind``: exact calls and
simulated Ir per function of any build, nothing to compensate.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from cyclebench.build import BuildSpec, build
from cyclebench.commands._common import UserError
from cyclebench.commands._options import (
    BuildOptions,
    RunnerOptions,
    not_a_file,
)
from cyclebench.env import sysinfo
from cyclebench.runner import Runner
from cyclebench.runner import profile as tracer
from cyclebench.runner.plan import MeasureOptions
from cyclebench.stats import clock
from cyclebench.stats.profile import Probe, flat_profile, inner_part

PROBE_OPTS = MeasureOptions(min_time=0.05, repeat=8, warmup=0.01)


BENCH_OPTS = MeasureOptions(min_time=0.05, repeat=4, warmup=0.005)


PROBE_DRAWS = 4  # processes the probe is measured in: its drift between them is part of its ±


@dataclass
class Clock:
    """ns → the profile's unit: cycles~ (add chains before and after), else ref-cycles, else ns."""

    scale: float
    unit: str
    how: str


def _probe_runner(pin: RunnerOptions, launcher: list[str] | None = None) -> Runner:
    src = Path(str(resources.files("cyclebench") / "suite" / "profile" / "probe.c"))
    binary = build(BuildSpec(sources=(src,), cflags=("-O2", "-pg"), werror=True))
    return Runner(binary.path, pin.cpu, fifo=pin.fifo, launcher=launcher)


def _ghz(runner: Runner) -> tuple[float | None, float]:
    """(core cycles per TSC tick from the add chain or None, TSC Hz), measured now."""
    o = runner.run("profile/plain_call", None, MeasureOptions(min_time=0.02, repeat=6, warmup=0.005), 30)
    ratio = clock.core_ratio(o.result) if o.result else None
    hz, _ = clock.timer_rate(runner.calibrate(), sysinfo.kernel_tsc_hz())
    r = float(np.nanmedian(ratio)) if ratio is not None and np.isfinite(ratio).any() else None
    return r, hz


def _clock(before: tuple[float | None, float], after: tuple[float | None, float]) -> Clock:
    (r0, hz), (r1, _) = before, after
    if hz == 1e9:  # an ns clock: nothing to convert
        return Clock(1.0, "ns", "ns (no cycle counter)")
    if r0 is None or r1 is None:
        return Clock(hz / 1e9, "ref-cycles", "ref-cycles: TSC ticks (no add chain to calibrate the core clock)")
    g0, g1 = r0 * hz / 1e9, r1 * hz / 1e9
    return Clock((g0 + g1) / 2, "cycles~", f"cycles~: core clock from add chains before ({g0:.3f} GHz) and after "
                 f"({g1:.3f} GHz) the program")


def _probe(runner: Runner, pin: RunnerOptions, scale: float, trace: Path) -> tuple[float, float, float]:
    """One measurement of the probe: its whole cost per call (the engine-timed difference of the
    two probe benchmarks, in the engine's unit), its inner part and that part's per-call spread
    (the empty function's recorded durations × ``scale``)."""
    traced = Runner(runner.binary, pin.cpu, fifo=pin.fifo, launcher=tracer.uftrace_argv(trace, []))
    outs = traced.run_many([("profile/probe_call", None), ("profile/plain_call", None)], PROBE_OPTS, 120)
    bad = [o for o in outs if o.result is None]
    if bad:
        raise UserError(f"the probe could not be measured: {bad[0].status}: {bad[0].reason}")
    probe_call, plain_call = (float(np.nanmedian(clock.round_costs(o.result)[0])) for o in outs)
    inner, spread = inner_part(tracer.read_uftrace(trace)["cb_probe_empty"].self, scale)
    return probe_call - plain_call, inner, spread


def _draws(runner: Runner, pin: RunnerOptions, scale: float, work: Path) -> list[tuple[float, float, float]]:
    """PROBE_DRAWS measurements of the probe with a figure: a process whose every batch was
    disturbed (a busy host: seen once in fresh CI while another test suite ran) gives none and
    is measured again, up to twice as many processes; UserError when none gave one."""
    draws: list[tuple[float, float, float]] = []
    for k in range(2 * PROBE_DRAWS):
        d = _probe(runner, pin, scale, work / f"probe{k}")
        if all(np.isfinite(d)):
            draws.append(d)
        if len(draws) == PROBE_DRAWS:
            break
    if not draws:
        raise UserError("the probe's cost could not be measured: every batch was disturbed (the machine is busy); "
                        "try again when it is quieter")
    return draws


def _probes(draws: list[tuple[float, float, float]]) -> Probe:
    """The probe measured in several processes (before and after the program), as one: the
    means, and a spread holding the per-call spread and the sd between the processes — on
    this KVM guest the inner part moved by 10–40 cycles~ from one process to the next, 5× its
    per-call spread within one."""
    whole, inner, within = (np.asarray(x) for x in zip(*draws, strict=True))
    between = float(np.std(inner, ddof=1)) if len(inner) > 1 else 0.0
    return Probe(whole=float(whole.mean()), inner=float(inner.mean()),
                 spread=float(np.hypot(within.max(), between)))


def target_argv(bench: str | None, command: tuple[str, ...], build_opts: BuildOptions, pin: RunnerOptions,
            simulated: bool) -> tuple[list[str], str]:
    """The argv to profile and its name: CMD as given, or the runner measuring BENCH briefly (its
    sources built with -pg for uftrace; as they are for callgrind)."""
    if command:
        if shutil.which(command[0]) is None:
            raise UserError(f"command not found: {command[0]}")
        return list(command), " ".join(command)
    assert bench is not None
    not_a_file(bench, "profile")
    spec = build_opts.spec()
    if not simulated:
        spec = replace(spec, cflags=(*spec.cflags, "-pg"))
    runner = Runner(build(spec).path, pin.cpu, fifo=pin.fifo)
    names = {b.name: b for b in runner.list()}
    if bench not in names:
        raise UserError(f"unknown benchmark '{bench}' (see cyclebench run --list)")
    param = names[bench].params[0] if names[bench].params else None
    args = [*BENCH_OPTS.argv(), "--run", bench, *(["--param", str(param)] if param is not None else [])]
    return runner._argv(*args), bench + ("" if param is None else f" [{param}]")


def timed_rows(argv: list[str], work: Path, timeout: float, pin: RunnerOptions) -> tuple[list[Any], str, str, Probe]:
    probe_runner = _probe_runner(pin)
    before = _ghz(probe_runner)
    tracer.record(argv, work / "target", timeout, pin.cpu)
    after = _ghz(probe_runner)
    clk = _clock(before, after)
    probe = _probes(_draws(probe_runner, pin, clk.scale, work))
    # the suite's registration constructors (cb_reg_*) run once at start-up: not the benchmark's
    calls = {k: v for k, v in tracer.read_uftrace(work / "target").items() if not k.startswith("cb_reg_")}
    return flat_profile(calls, clk.scale, probe), clk.unit, clk.how, probe


def simulated_rows(argv: list[str], work: Path, timeout: float) -> list[Any]:
    sims = tracer.callgrind(argv, work / "callgrind.out", timeout)
    whole = sum(s.self_ir for s in sims.values()) or 1
    rows = [{"function": n, "calls": s.calls, "self": s.self_ir / max(s.calls, 1),
             "total": s.total_ir / max(s.calls, 1), "self_ir": s.self_ir, "total_ir": s.total_ir,
             "pct": 100.0 * s.self_ir / whole} for n, s in sims.items()]
    return sorted(rows, key=lambda r: -r["pct"])
