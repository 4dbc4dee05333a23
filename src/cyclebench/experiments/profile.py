"""The machinery of `cyclebench profile`: a gprof-style flat profile with exact call counts, the probe's own cost
measured on this machine and subtracted
(docs/references.md#malloc-profiling-freebsd-2008), per call in cycles~.

The recipe (timing, a -finstrument-functions build): run it with the engine's probe preloaded
(runner/probe.py, engine/probe.c), which measures its own cost and the core clock in calibration
blocks before, during and after main in the same process; compensate the same way.

The recipe (timing, a -pg build, uftrace): calibrate the core clock with the add chain; measure the probe
(suite/profile/probe.c under uftrace: the recorded durations of an empty function and of a
300-add chain, and a caller's self time with instrumented children against uninstrumented
ones); record the program (``-- CMD``, built with -pg or
-finstrument-functions) or the benchmark (``BENCH``, its sources built with -pg) under uftrace;
calibrate again; convert ns to cycles~ with the mean of the two calibrations; compensate
(stats/profile.py); print (report/profile.py). ``--backend callgrind``: exact calls and
simulated Ir per function of any build, nothing to compensate.
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cyclebench.build import BuildSpec, build
from cyclebench.env import sysinfo
from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.options import BuildOptions, RunnerOptions
from cyclebench.experiments.progress import SILENT, Progress
from cyclebench.experiments.session import open_run
from cyclebench.lifetime import owner_tag, sweep
from cyclebench.model import OK, PROFILE, ProfileRow, Result, SimulatedProfileRow, TimedProfileRow
from cyclebench.runner import Runner
from cyclebench.runner import probe as inprocess
from cyclebench.runner import profile as tracer
from cyclebench.runner.plan import MeasureOptions
from cyclebench.stats import clock
from cyclebench.stats.profile import (
    IN_PROCESS,
    Probe,
    block_draw,
    clock_of,
    combine,
    flat_profile,
    grid_median,
    resolution,
)

if TYPE_CHECKING:
    from cyclebench.store import Store

# ~20k traced calls per function: the medians moved by <1 cycle~ between processes here, and
# `uftrace dump` of them takes 0.5 s (1M calls took 20 s)
PROBE_OPTS = MeasureOptions(min_time=0.002, repeat=2, warmup=0.001)
FAN = 10  # child calls of cb_probe_fan (CB_PROBE_FAN in probe.c)
SCRATCH_PREFIX = "cyclebench-profile-"
IR_MIN_S, IR_FACTOR = 30.0, 20.0  # callgrind's budget: 20× the traced run's wall time, at least 30 s


BENCH_OPTS = MeasureOptions(min_time=0.05, repeat=4, warmup=0.005)


PROBE_DRAWS = 4  # processes the probe is measured in: its drift between them is part of its ±


@dataclass(frozen=True)
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


def _probe(runner: Runner, pin: RunnerOptions, scale: float, trace: Path) -> tuple[float, float, float, float]:
    """One measurement of the probe in one traced process (suite/profile/probe.c), in cycles~
    (durations × ``scale``, the engine's slopes as they are): (inner around a 300-add chain,
    inner around an empty body, outer per leaf child call, outer per child call that makes
    calls). NaN when the engine timed no chain."""
    traced = Runner(runner.binary, pin.cpu, fifo=pin.fifo, launcher=tracer.uftrace_argv(trace, []))
    outs = traced.run_many([(f"profile/{b}", None) for b in ("plain_call", "plain_chain", "probe_fan", "probe_tree",
                                                                       "probe_chain")],
                           PROBE_OPTS, 120)
    bad = [o for o in outs if o.result is None]
    if bad:
        raise ExperimentError(f"the probe could not be measured: {bad[0].status}: {bad[0].reason}")
    with warnings.catch_warnings():  # a process whose every round was disturbed: NaN, measured again
        warnings.simplefilter("ignore", RuntimeWarning)
        call, chain = (float(np.nanmedian(clock.round_costs(o.result)[0])) for o in outs[:2])
    read = tracer.read_trace(trace)
    calls, tick = read.calls, resolution(read.steps)
    missing = {"cb_probe_empty", "cb_probe_chain", "cb_probe_fan", "cb_probe_fan_plain", "cb_probe_top"} - set(calls)
    if missing:
        raise ExperimentError(f"the probe's trace lacks {', '.join(sorted(missing))}: uftrace recorded no such call")

    def med(name: str, what: str = "self") -> float:
        return grid_median(getattr(calls[name], what), tick) * scale

    # both fans' own inner parts cancel; what is left is FAN children's probes in the caller
    outer = (med("cb_probe_fan") - med("cb_probe_fan_plain", "total")) / FAN
    # top and fan: the same loop and own probe, children with children against leaves
    branch = outer + (med("cb_probe_top") - med("cb_probe_fan")) / FAN
    return med("cb_probe_chain") - (chain - call), med("cb_probe_empty"), outer, branch


def _draws(runner: Runner, pin: RunnerOptions, scale: float, work: Path) -> list[tuple[float, float, float, float]]:
    """PROBE_DRAWS measurements of the probe with a figure: a process whose every batch was
    disturbed (a busy host: seen once in fresh CI while another test suite ran) gives none and
    is measured again, up to twice as many processes; ExperimentError when none gave one."""
    draws: list[tuple[float, float, float, float]] = []
    for k in range(2 * PROBE_DRAWS):
        d = _probe(runner, pin, scale, work / f"probe{k}")
        shutil.rmtree(work / f"probe{k}", ignore_errors=True)
        if all(np.isfinite(d)):
            draws.append(d)
        if len(draws) == PROBE_DRAWS:
            break
    if not draws:
        raise ExperimentError("the probe's cost could not be measured: every batch was disturbed (the machine is "
                              "busy); try again when it is quieter")
    return draws


def scratch_dir() -> Path:
    """A private scratch directory for the traces, named with this process's tag (pid and start
    time: lifetime.owner_tag); those of `cyclebench profile` processes that are gone (SIGKILLed:
    no cleanup ran; a pid reused since) are removed first."""
    tmp = Path(tempfile.gettempdir())
    sweep(tmp, SCRATCH_PREFIX)
    return Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{owner_tag()}-", dir=tmp))


def target_argv(bench: str | None, command: tuple[str, ...], build_opts: BuildOptions, pin: RunnerOptions,
            simulated: bool) -> tuple[list[str], str]:
    """The argv to profile and its name: CMD as given, or the runner measuring BENCH briefly (its
    sources built with -finstrument-functions for the in-process probe; as they are for callgrind)."""
    if command:
        if shutil.which(command[0]) is None:
            raise ExperimentError(f"command not found: {command[0]}")
        return list(command), " ".join(command)
    assert bench is not None
    spec = build_opts.spec()
    if not simulated:  # the in-process probe's hooks (engine/probe.c)
        spec = replace(spec, cflags=(*spec.cflags, "-finstrument-functions"))
    runner = Runner(build(spec).path, pin.cpu, fifo=pin.fifo)
    names = {b.name: b for b in runner.list()}
    if bench not in names:
        raise ExperimentError(f"unknown benchmark '{bench}' (see cyclebench run --list)")
    param = names[bench].params[0] if names[bench].params else None
    args = [*BENCH_OPTS.argv(), "--run", bench, *(["--param", str(param)] if param is not None else [])]
    return runner._argv(*args), bench + ("" if param is None else f" [{param}]")


def timed_rows(argv: list[str], work: Path, timeout: float, pin: RunnerOptions,
               ir: bool = True, progress: Progress = SILENT) -> tuple[list[TimedProfileRow], str, str, Probe]:
    """The timed flat profile of ``argv``, and with ``ir`` callgrind's Ir per call beside it
    where valgrind is installed (not for BENCH: the runner sizes its batches by time, so a body's
    call does another amount of work under callgrind). A -finstrument-functions build is read by
    the probe in its own process (engine/probe.c); a -pg build (or one the probe cannot reach) by
    uftrace, its probe measured in other processes."""
    exe = shutil.which(argv[0])
    # a -pg build goes to uftrace; anything else to the preloaded probe, which also reaches an
    # instrumented program started by a wrapper (sh -c, env: the preload is inherited)
    if exe is not None and inprocess.instrumentation(Path(exe)) == "pg":
        rows, unit, how, probe, wall = _uftrace_rows(argv, work, timeout, pin)
    else:
        rows, unit, how, probe, wall = _inprocess_rows(argv, work, timeout, pin)
    if ir and shutil.which("valgrind") is not None:
        # callgrind runs a program 20–100× slower than natively (valgrind manual): a budget, not
        # the whole --timeout, so a long program's Ir does not multiply the wait
        rows = _add_ir(rows, argv, work, min(timeout, max(IR_MIN_S, IR_FACTOR * wall)), progress)
    return rows, unit, how, probe


def _own(calls: dict) -> dict:
    # the suite's registration constructors (cb_reg_*) run once at start-up: not the benchmark's
    return {k: v for k, v in calls.items() if not k.startswith("cb_reg_")}


def _inprocess_rows(argv: list[str], work: Path, timeout: float,
                    pin: RunnerOptions) -> tuple[list[TimedProfileRow], str, str, Probe, float]:
    """The program with the probe preloaded: its calls, the probe's cost and the core clock all
    from its own process (calibration blocks before and after main: docs/method.md §10)."""
    wall = inprocess.record(argv, work / "target", timeout, pin.cpu)
    trace = inprocess.read(work / "target")
    if not _own(trace.calls):
        raise inprocess.no_calls(argv[0])
    tick = resolution(trace.steps)  # the timer's grid, in ticks: 26 on an AMD EPYC guest, 1 on Xeon
    if trace.unit == "ns":
        scale, unit, how, u_scale = 1.0, "ns", "ns (no cycle counter)", 0.0
    else:
        scale, rb, ra, u_scale = clock_of(*([b.ratio for b in trace.blocks if b.side == side]
                                            for side in ("before", "after", "during")))
        if np.isfinite(scale) and trace.tick_hz:
            g0, g1 = rb * trace.tick_hz / 1e9, ra * trace.tick_hz / 1e9
            during = sum(b.side == "during" for b in trace.blocks)
            unit, how = "cycles~", (f"cycles~: core clock from add chains in the program's own process, before "
                                    f"({g0:.3f} GHz) and after ({g1:.3f} GHz) it"
                                    + (f" and {during} times during it" if during else ""))
        elif np.isfinite(scale):
            unit, how = "cycles~", "cycles~: core clock from add chains in the program's own process"
        else:
            scale, unit, u_scale = 1.0, trace.unit, 0.0
            how = f"{unit}: timer ticks (no add chain to calibrate the core clock)"
    draws = [block_draw(b.calls, b.plain_chain, tick) for b in trace.blocks]
    draws = [tuple(x * scale for x in d) for d in draws if all(np.isfinite(d))]
    if not draws:
        raise ExperimentError("the probe's cost could not be measured in the program's process: no calibration "
                              "block was recorded (did it end by _exit or exec?)")
    probe = combine(draws, tick=tick * scale, u_scale=u_scale, source=IN_PROCESS)  # type: ignore[arg-type]
    return flat_profile(_own(trace.calls), scale, probe), unit, how, probe, wall


def _uftrace_rows(argv: list[str], work: Path, timeout: float,
                  pin: RunnerOptions) -> tuple[list[TimedProfileRow], str, str, Probe, float]:
    probe_runner = _probe_runner(pin)
    before = _ghz(probe_runner)
    wall = tracer.record(argv, work / "target", timeout, pin.cpu)
    after = _ghz(probe_runner)
    clk = _clock(before, after)
    trace = tracer.read_trace(work / "target")
    # the clock's resolution, read from the program's own timestamps: 10 ns on an AMD EPYC guest
    probe = combine(_draws(probe_runner, pin, clk.scale, work), tick=resolution(trace.steps) * clk.scale)
    return flat_profile(_own(trace.calls), clk.scale, probe), clk.unit, clk.how, probe, wall


def _add_ir(rows: list[TimedProfileRow], argv: list[str], work: Path, timeout: float,
            progress: Progress = SILENT) -> list[TimedProfileRow]:
    """Beside the time, the count a probe does not disturb (an event count takes the probe's cost
    off exactly; time only approximately: docs/method.md §10): callgrind's exact
    instructions per call of each function (``ir_self``, ``ir_total``), the same build run
    again (its mcount calls are glibc's: one call instruction in each function's own count).
    A -pg build outside uftrace writes gprof's gmon.out: GMON_OUT_PREFIX puts it in ``work``.
    Where callgrind cannot run the program, the rows go without and stderr says why."""
    try:
        sims = tracer.callgrind(argv, work / "ir.out", timeout, env=[f"GMON_OUT_PREFIX={work / 'gmon.out'}"])
    except tracer.ProfileError as e:
        progress.note(f"no Ir per call beside the time: {e}")
        return rows
    out = []
    for r in rows:
        s = sims.get(r.function)
        out.append(replace(r, ir_self=s.self_ir / s.calls, ir_total=s.total_ir / s.calls) if s is not None and s.calls
                   else r)
    return out


def simulated_rows(argv: list[str], work: Path, timeout: float) -> list[SimulatedProfileRow]:
    """The flat profile of ``argv`` under callgrind: exact calls and instructions per function,
    the largest share of the program's own instructions first."""
    sims = tracer.callgrind(argv, work / "callgrind.out", timeout)
    whole = sum(s.self_ir for s in sims.values()) or 1
    rows = [SimulatedProfileRow(n, s.calls, s.self_ir / max(s.calls, 1), s.total_ir / max(s.calls, 1), s.self_ir,
                                s.total_ir, 100.0 * s.self_ir / whole) for n, s in sims.items()]
    return sorted(rows, key=lambda r: -r.pct)


# ---------------------------------------------------------------- what is printed and stored
def title(target: str, how: str) -> str:
    """The flat profile's title (printed by `profile`, and by `show` of the run it stored)."""
    return f"profile of {target} · {how}"


def probe_line(probe: Mapping[str, Any], unit: str) -> str:
    """The line under a timed profile on what was subtracted, from ``Probe.to_dict()`` (as it
    is stored with the run)."""
    if probe.get("source") == IN_PROCESS:
        clock = f"; the clock's conversion ± {100 * probe['u_scale']:.1f}%" if probe.get("u_scale") else ""
        return (f"probe (cyclebench's, -finstrument-functions), measured in the program's own process, subtracted: "
                f"{probe['inner']:.1f} ± {probe['inner_pm']:.1f} {unit} inside each call (between "
                f"{probe['inner_lo']:.1f} and {probe['inner_hi']:.1f} over its bodies and callers), "
                f"{probe['outer']:.1f} in the caller per leaf child call and {probe['outer_branch']:.1f} per child "
                f"that makes calls, ± {probe['outer_pm']:.1f}{clock} (docs/method.md §10)")
    return (f"probe (uftrace's mcount hooks), measured here, subtracted: {probe['inner']:.1f} ± "
            f"{probe['inner_pm']:.1f} {unit} inside each call (between {probe['inner_lo']:.1f} around a latency-bound "
            f"body and {probe['inner_hi']:.1f} around an empty one), {probe['outer']:.1f} in the caller per leaf child "
            f"call and {probe['outer_branch']:.1f} per child that makes calls, ± {probe['outer_pm']:.1f} (a best case: "
            "see docs/method.md §10)")


BENCH_MAX = 255  # characters of results.bench (store/schema.py); the whole name stays in the profile row


def result_row(row: ProfileRow, unit: str) -> Result:
    """One function of the flat profile as a result row of kind ``profile``: per_op = its
    compensated self per call (a median over the calls, as ``median``), ci = ± what the probe
    may be off by, mean = gprof's time/calls; the profile row itself its ``profile``
    (what `show` gives report.profile.profile_table back; no n_samples: calls are not samples
    of a batch, and a row with samples but no min reads as off the line, report.console.notes)."""
    self_, pm = row.self, row.get("self_pm")
    return Result(kind=PROFILE, bench=row.function[:BENCH_MAX], param=None, variant="", status=OK, unit=unit,
                  per_op=self_, median=self_, mean=row.get("self_mean"),
                  ci_low=None if pm is None else self_ - pm, ci_high=None if pm is None else self_ + pm,
                  method="profile", profile=row)


def store_profile(store: Store, command: Sequence[str], cpu: int, sources: Sequence[Path],
                  labels: Mapping[str, str] | None, target: str, backend: str, unit: str, how: str,
                  probe: Probe | None, rows: Sequence[ProfileRow], limit: int) -> int:
    """Store a profile as a run (open_run: the machine and who made it), one result of kind
    ``profile`` per function, in the profile's order, and in the run's summary what the table
    and the probe line need (``profile``: target, backend, unit, clock, probe; ``display``: the
    rows shown). Returns the run id. StoreError propagates."""
    run_id, _ = open_run(store, command, cpu, sources, None, None, labels=labels)
    with store.finishing(run_id):
        store.add_results(run_id, [result_row(r, unit) for r in rows])
        store.update_run(run_id, summary={
            "profile": {"target": target, "backend": backend, "unit": unit, "clock": how,
                        "probe": probe.to_dict() if probe is not None else None},
            "display": {"limit": limit}})
    store.finish_run(run_id, "complete")
    return run_id
