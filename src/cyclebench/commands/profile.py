"""`cyclebench profile`: a gprof-style flat profile with exact call counts, the probe's own cost
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

import json
import re
import shutil
import tempfile
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

import click
import numpy as np

from cyclebench.build import BuildError, BuildSpec, build
from cyclebench.commands._common import UserError, err, out, write_text
from cyclebench.commands._options import (
    BuildOptions,
    RunnerOptions,
    build_options,
    json_option,
    not_a_file,
    runner_options,
    wide_option,
)
from cyclebench.env import sysinfo
from cyclebench.report.profile import profile_table
from cyclebench.runner import Runner, RunnerError
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


def _probes(draws: list[tuple[float, float, float]]) -> Probe:
    """The probe measured in several processes (before and after the program), as one: the
    means, and a spread holding the per-call spread and the sd between the processes — on
    this KVM guest the inner part moved by 10–40 cycles~ from one process to the next, 5× its
    per-call spread within one."""
    whole, inner, within = (np.asarray(x) for x in zip(*draws, strict=True))
    between = float(np.std(inner, ddof=1)) if len(inner) > 1 else 0.0
    return Probe(whole=float(whole.mean()), inner=float(inner.mean()),
                 spread=float(np.hypot(within.max(), between)))


def _target(bench: str | None, command: tuple[str, ...], build_opts: BuildOptions, pin: RunnerOptions,
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


@click.command("profile")
@click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar="BENCH | -- CMD [ARGS]")
@click.option("--backend", type=click.Choice(["timing", "callgrind"]), default="timing", show_default=True,
              help="timing: uftrace (functions built with -pg or -finstrument-functions), per-call time with the "
                   "probe's cost subtracted; callgrind: exact calls and simulated Ir of any build.")
@click.option("--timeout", type=click.FloatRange(1, 86400), default=600, show_default=True,
              help="Seconds the profiled program may run.")
@click.option("--limit", type=click.IntRange(1), default=30, show_default=True, help="Functions shown.")
@json_option
@wide_option
@runner_options
@build_options()
def profile_cmd(args: tuple[str, ...], backend: str, timeout: float, limit: int, json_path: Path | None, wide: bool,
                pin: RunnerOptions, build: BuildOptions) -> None:
    """A flat profile (gprof's): exact calls per function, self and total per call with the
    probe's own cost — measured here — subtracted, % of the time. BENCH profiles a benchmark's
    body and callees; -- CMD a whole program."""
    # BENCH is group/name and names no file; anything else is the command (click drops the "--")
    is_bench = bool(args) and re.fullmatch(r"[\w.-]+/[\w.-]+", args[0]) is not None and not Path(args[0]).exists()
    bench, command = (args[0], args[1:]) if is_bench else (None, args)
    if bench is not None and command:
        raise click.UsageError("give BENCH, or -- CMD [ARGS]: not both")
    if bench is None and not command:
        raise click.UsageError("nothing to profile: cyclebench profile BENCH, or cyclebench profile -- CMD [ARGS]")
    pin = replace(pin, cpu=pin.cpu if pin.cpu is not None else sysinfo.choose_cpu())
    simulated = backend == "callgrind"
    try:
        with tempfile.TemporaryDirectory(prefix="cyclebench-profile-") as tmp:
            work = Path(tmp)
            argv, name = _target(bench, command, build, pin, simulated)
            if simulated:
                rows = _simulated(argv, work, timeout)
                unit, how, probe = "Ir", "simulated (callgrind): exact calls, instructions per call", None
            else:
                rows, unit, how, probe = _timed(argv, work, timeout, pin)
    except (BuildError, RunnerError, tracer.ProfileError) as e:
        raise UserError(str(e)) from None
    out.print(profile_table(rows, unit, f"profile of {name} · {how}", simulated, wide, limit))
    if probe is not None:
        err.print(f"probe (uftrace's mcount hooks), measured here: {probe.whole:.1f} {unit} a call, "
                  f"{probe.inner:.1f} ± {probe.spread:.1f} of it inside the call; subtracted per call and per "
                  "child call (a best case: see docs/method.md §10)", highlight=False)
    if json_path is not None:
        write_text(json_path, json.dumps({"format": "cyclebench-profile", "target": name, "backend": backend,
                                          "unit": unit, "clock": how, "probe": probe.to_dict() if probe else None,
                                          "functions": rows}, indent=1) + "\n")


def _timed(argv: list[str], work: Path, timeout: float, pin: RunnerOptions) -> tuple[list[Any], str, str, Probe]:
    probe_runner = _probe_runner(pin)
    before = _ghz(probe_runner)
    tracer.record(argv, work / "target", timeout, pin.cpu)
    after = _ghz(probe_runner)
    clk = _clock(before, after)
    probe = _probes([_probe(probe_runner, pin, clk.scale, work / f"probe{k}") for k in range(PROBE_DRAWS)])
    # the suite's registration constructors (cb_reg_*) run once at start-up: not the benchmark's
    calls = {k: v for k, v in tracer.read_uftrace(work / "target").items() if not k.startswith("cb_reg_")}
    return flat_profile(calls, clk.scale, probe), clk.unit, clk.how, probe


def _simulated(argv: list[str], work: Path, timeout: float) -> list[Any]:
    sims = tracer.callgrind(argv, work / "callgrind.out", timeout)
    whole = sum(s.self_ir for s in sims.values()) or 1
    rows = [{"function": n, "calls": s.calls, "self": s.self_ir / max(s.calls, 1),
             "total": s.total_ir / max(s.calls, 1), "self_ir": s.self_ir, "total_ir": s.total_ir,
             "pct": 100.0 * s.self_ir / whole} for n, s in sims.items()]
    return sorted(rows, key=lambda r: -r["pct"])
