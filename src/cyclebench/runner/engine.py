"""Spawn the runner binary: pinning, timeout, crash isolation and JSON-lines parsing.

Each (benchmark, parameter) runs in its own process, so a benchmark that crashes or
hangs costs one result row with the signal or the timeout, never the run. The child is
started in its own session: Ctrl-C reaches only cyclebench, which kills the child and
keeps what was already stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from cyclebench.counters import groups_argv, per_sample_counts
from cyclebench.model import (
    CRASHED,
    ERROR,
    FAILED,
    INVALID,
    OK,
    SKIPPED,
    TIMEOUT,
    BenchInfo,
    BenchLine,
    CalibrationLine,
    FeaturesLine,
    Outcome,
    ProbeLine,
    RunnerLine,
    RunnerResult,
)
from cyclebench.runner import tracepoints
from cyclebench.runner.child import Child, run_child
from cyclebench.runner.plan import MeasureOptions
from cyclebench.runner.protocol import classify, last_stderr_line, parse_lines, signal_name


class RunnerError(Exception):
    """The runner could not be used at all (not a per-benchmark failure)."""


class Runner:
    """A built runner binary, pinned to ``cpu`` (None: not pinned)."""

    def __init__(self, binary: Path, cpu: int | None = None, fifo: int | None = None,
                 launcher: list[str] | None = None, max_rss: int | None = None) -> None:
        self.binary = binary
        self.max_rss = max_rss  # bytes of RSS (the runner's whole session) before it is killed
        self.cpu = cpu
        self.fifo = fifo
        self.launcher = launcher or []  # e.g. qemu-user for a cross target: results are *emulated*
        self._listed: list[BenchInfo] | None = None
        if cpu is not None:  # a pinned runner counts its CPU's interrupts: keep their tracepoints registered
            tracepoints.hold()

    def _argv(self, *args: str) -> list[str]:
        argv = [*self.launcher, str(self.binary), *args]
        if self.cpu is not None:
            argv += ["--cpu", str(self.cpu)]
        if self.fifo is not None and ("--run" in args or "--scale" in args):  # measuring calls only
            argv += ["--fifo", str(self.fifo)]
        return argv

    def _simple(self, *args: str, timeout: float = 30) -> list[RunnerLine]:
        proc = run_child(self._argv(*args), timeout, self.max_rss)
        if proc.timed_out or proc.limit:
            raise RunnerError(f"runner {' '.join(args)} " + (proc.limit or f"timed out after {timeout:g} s"))
        lines = parse_lines(proc.stdout)
        errors = [ln for ln in lines if ln.get("type") == "error"]
        if errors:
            raise RunnerError(str(errors[0].get("reason")))
        if proc.returncode != 0:
            why = signal_name(-proc.returncode) if proc.returncode < 0 else f"exit {proc.returncode}"
            raise RunnerError(f"runner {' '.join(args)} failed ({why}): {last_stderr_line(proc.stderr)}")
        return lines

    def list(self) -> list[BenchInfo]:
        """Every registered benchmark. Raises RunnerError (e.g. a hook naming no benchmark).
        Asked once per Runner (a runner process, ~7 ms; compare asked three times): a binary
        does not change under its Runner."""
        if self._listed is None:
            self._listed = self._list()
        return list(self._listed)

    def _list(self) -> list[BenchInfo]:
        out = []
        for line in self._simple("--list"):
            if line.get("type") != "bench":
                continue
            ln = cast(BenchLine, line)
            params = ln.get("params")
            out.append(
                BenchInfo(
                    name=ln["name"], group=ln["group"], params=tuple(params) if params else None,
                    require=ln.get("require"), file=ln.get("file", ""), line=int(ln.get("line", 0)),
                    has_verify=bool(ln.get("has_verify")),
                )
            )
        return out

    def _features_line(self) -> FeaturesLine:
        for ln in self._simple("--features"):
            if ln.get("type") == "features":
                return cast(FeaturesLine, ln)
        raise RunnerError("runner --features printed nothing")

    def features(self) -> dict[str, int]:
        """CPU features as the engine's CB_REQUIRE gates see them: name → 1, 0 (or -1: unknown)."""
        return {k: int(v) for k, v in self._features_line().items() if isinstance(v, int)}

    def malloc_file(self) -> str | None:
        """The file whose malloc the runner calls (dlsym as its dynamic linker resolved it), e.g.
        /lib/x86_64-linux-gnu/libjemalloc.so.2; None from a runner that cannot tell."""
        path = self._features_line().get("malloc")
        return path if isinstance(path, str) else None

    def calibrate(self) -> CalibrationLine:
        """The runner's calibration line: timer name and unit, its cost in ticks, the TSC
        rate from cpuid and as measured against CLOCK_MONOTONIC_RAW. Raises RunnerError."""
        for ln in self._simple("--calibrate"):
            if ln.get("type") == "calibration":
                return cast(CalibrationLine, ln)
        raise RunnerError("runner --calibrate printed no calibration")

    def probe(self, groups: list[list[Any]]) -> list[str | None]:
        """Try to open each counter group here: None where it opens, else the error text."""
        for ln in self._simple("--probe", *groups_argv(groups)):
            if ln.get("type") == "probe":
                return list(cast(ProbeLine, ln)["open_errors"])
        raise RunnerError("runner --probe printed nothing")

    def run(self, bench: str, param: int | None, opts: MeasureOptions, timeout: float,
            events: list[list[Any]] | None = None) -> Outcome:
        """Measure one benchmark at one parameter in a fresh process.

        Never raises for the benchmark's own faults (crash, hang, failed verify): those
        come back as an Outcome. KeyboardInterrupt kills the child and propagates.
        """
        return self.run_many([(bench, param)], opts, timeout, events)[0]

    def run_many(self, items: list[tuple[str, int | None]], opts: MeasureOptions, timeout: float,
                 events: list[list[Any]] | None = None) -> list[Outcome]:
        """Measure several benchmarks interleaved in one process (round r runs them forward
        when r is even, backward when odd), so their rounds pair up for a paired comparison.
        The same name may appear twice (an A/A test). One Outcome per item, in order; a crash
        or a timeout is reported on every item that had no result yet."""
        args = [*opts.argv()]
        if events:
                args += groups_argv(events)
        for bench, param in items:
            args += ["--run", bench] + (["--param", str(param)] if param is not None else [])
        child = run_child(self._argv(*args), timeout, self.max_rss, own_pdeathsig=not self.launcher)
        lines = parse_lines(child.stdout)
        finals = [ln for ln in lines if ln.get("type") in ("result", "skip", "fail", "error")]
        outcomes = []
        for i, (bench, param) in enumerate(items):
            # lines come in request order; a request that got its own final line keeps it even if
            # the process died later (a crash in B once marked A crashed too); one that never
            # got one shares the process's fate
            mine = [ln for ln in finals if ln.get("bench") == bench and ln.get("param") == param]
            k = sum(1 for b, p in items[:i] if (b, p) == (bench, param))
            final = mine[k] if k < len(mine) else (finals[0] if finals and finals[0]["type"] == "error" else None)
            if events and final is not None and final["type"] == "result":  # before the Outcome holds it
                decode_counters(cast(RunnerResult, final), events)
            outcomes.append(self._outcome(bench, param, final, child, timeout, lines))
        if len(items) > 1 and child.returncode != 0:
            self._attribute(items, outcomes, opts, timeout, events)
        return outcomes

    def _attribute(self, items: list[tuple[str, int | None]], outcomes: list[Outcome], opts: MeasureOptions,
                   timeout: float, events: list[list[Any]] | None) -> None:
        """Several items shared a process that crashed or hung before some of them reported:
        run each of those alone, briefly, to find whose fault it was. The culprit keeps the
        process's status with its own reason; the others become 'error: not measured', naming
        it — never blamed for a crash that was not theirs."""
        from dataclasses import replace as dc_replace

        lost = [i for i, o in enumerate(outcomes) if o.status in (CRASHED, TIMEOUT) and o.result is None]
        if len({items[i] for i in lost}) < 2:
            return  # at most one item went without a result: the fault is its own
        probe = dc_replace(opts, repeat=3, min_time=0.0, warmup=0.0, max_time=min(opts.max_time, 1.0))
        culprits: dict[tuple[str, int | None], Outcome] = {}
        for i in lost:
            if items[i] in culprits:
                continue
            alone = self.run_many([items[i]], probe, min(timeout, 30.0), events)[0]
            if alone.status in (CRASHED, TIMEOUT, FAILED, ERROR):
                culprits[items[i]] = alone
        if not culprits:
            return
        names = ", ".join(b if p is None else f"{b}[{p}]" for b, p in culprits)
        for i in lost:
            if items[i] in culprits:
                outcomes[i] = dc_replace(outcomes[i], reason=f"{outcomes[i].reason}; alone too: "
                                                             f"{culprits[items[i]].reason}")
            else:
                outcomes[i] = dc_replace(outcomes[i], status=ERROR,
                                         reason=f"not measured: the runner process it shared failed in {names}")

    @staticmethod
    def _outcome(bench: str, param: int | None, final: RunnerLine | None, child: Child, timeout: float,
                 lines: list[RunnerLine]) -> Outcome:
        returncode, stderr = child.returncode, child.stderr
        status, reason, result = ERROR, None, None
        ended = classify(child, timeout) if final is None or final["type"] == "error" else None
        if ended:
            status, reason = ended
        elif final is None:
            tail = last_stderr_line(stderr)
            reason = f"runner exited {returncode} without a result" + (f": {tail}" if tail else "")
        elif final["type"] == "result":
            result = cast(RunnerResult, final)
            if result.get("verified") is False or result.get("reason"):
                status = INVALID
                reason = f"verification failed: {result.get('reason') or 'verify hook returned false'}"
            else:
                status = OK
        elif final["type"] == "skip":
            status, reason = SKIPPED, final.get("reason")
        elif final["type"] == "fail":
            status, reason = FAILED, final.get("reason")
        else:
            status, reason = ERROR, final.get("reason")
        if not ended and returncode > 0 and status == OK:
            status, reason = ERROR, f"runner exited {returncode} after its result"
        return Outcome(bench, param, status, reason, result, stderr=stderr[-4000:], wall_s=child.wall_s, lines=lines)


def decode_counters(result: RunnerResult, events: list[list[Any]]) -> None:
    """Turn the runner's raw group reads in ``result["counters"]`` into one per-sample series
    per event (None: not counted) and its status, added as ``series`` and ``status``."""
    c = result.get("counters")
    if c is None:
        return
    c["series"], c["status"] = per_sample_counts(c.get("reads") or [], c.get("nevents") or [],
                                                 c.get("open_errors") or [None] * len(events))
