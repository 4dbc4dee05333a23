"""Spawn the runner binary: pinning, timeout, crash isolation and JSON-lines parsing.

Each (benchmark, parameter) runs in its own process, so a benchmark that crashes or
hangs costs one result row with the signal or the timeout, never the run. The child is
started in its own session: Ctrl-C reaches only cyclebench, which kills the child and
keeps what was already stored.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cyclebench.measure import MeasureOptions

# Outcome statuses, in the order a reader cares about them.
OK, INVALID, SKIPPED, FAILED, CRASHED, TIMEOUT, ERROR = (
    "ok", "invalid", "skipped", "failed", "crashed", "timeout", "error",
)


class RunnerError(Exception):
    """The runner could not be used at all (not a per-benchmark failure)."""


@dataclass(frozen=True)
class BenchInfo:
    """One registered benchmark, from ``runner --list``."""

    name: str
    group: str
    params: tuple[int, ...] | None
    require: str | None
    file: str
    line: int
    has_verify: bool


@dataclass
class Outcome:
    """What one runner invocation produced.

    ``status`` is one of ok, invalid (verify failed), skipped (feature gate or setup),
    failed (setup or runner-reported failure), crashed (signal), timeout, error.
    ``result`` is the runner's result line (samples in ``n``/``ticks``) when there is one.
    """

    bench: str
    param: int | None
    status: str
    reason: str | None = None
    result: dict[str, Any] | None = None
    stderr: str = ""
    wall_s: float = 0.0
    lines: list[dict[str, Any]] = field(default_factory=list)


def _parse_lines(text: str) -> list[dict[str, Any]]:
    lines = []
    for raw in text.splitlines():
        raw = raw.strip()
        if not raw:
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError:
            continue  # a torn last line from a crash; the status says why
        if isinstance(obj, dict):
            lines.append(obj)
    return lines


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _last_stderr_line(stderr: str) -> str:
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


class Runner:
    """A built runner binary, pinned to ``cpu`` (None: not pinned)."""

    def __init__(self, binary: Path, cpu: int | None = None, fifo: int | None = None,
                 launcher: list[str] | None = None, max_rss: int | None = None) -> None:
        self.binary = binary
        self.max_rss = max_rss  # bytes of RSS (the runner's whole session) before it is killed
        self.cpu = cpu
        self.fifo = fifo
        self.launcher = launcher or []  # e.g. qemu-user for a cross target: results are *emulated*

    def _argv(self, *args: str) -> list[str]:
        argv = [*self.launcher, str(self.binary), *args]
        if self.cpu is not None:
            argv += ["--cpu", str(self.cpu)]
        if self.fifo is not None and ("--run" in args or "--scale" in args):  # measuring calls only
            argv += ["--fifo", str(self.fifo)]
        return argv

    def _simple(self, *args: str, timeout: float = 30) -> list[dict[str, Any]]:
        proc = run_child(self._argv(*args), timeout, self.max_rss)
        if proc.timed_out or proc.limit:
            raise RunnerError(f"runner {' '.join(args)} " + (proc.limit or f"timed out after {timeout:g} s"))
        lines = _parse_lines(proc.stdout)
        errors = [ln for ln in lines if ln.get("type") == "error"]
        if errors:
            raise RunnerError(str(errors[0].get("reason")))
        if proc.returncode != 0:
            why = _signal_name(-proc.returncode) if proc.returncode < 0 else f"exit {proc.returncode}"
            raise RunnerError(f"runner {' '.join(args)} failed ({why}): {_last_stderr_line(proc.stderr)}")
        return lines

    def list(self) -> list[BenchInfo]:
        """Every registered benchmark. Raises RunnerError (e.g. a hook naming no benchmark)."""
        out = []
        for ln in self._simple("--list"):
            if ln.get("type") != "bench":
                continue
            params = ln.get("params")
            out.append(
                BenchInfo(
                    name=ln["name"], group=ln["group"], params=tuple(params) if params else None,
                    require=ln.get("require"), file=ln.get("file", ""), line=int(ln.get("line", 0)),
                    has_verify=bool(ln.get("has_verify")),
                )
            )
        return out

    def features(self) -> dict[str, int]:
        """CPU features as the engine's CB_REQUIRE gates see them: name → 1, 0 (or -1: unknown)."""
        for ln in self._simple("--features"):
            if ln.get("type") == "features":
                return {k: int(v) for k, v in ln.items() if k != "type"}
        raise RunnerError("runner --features printed nothing")

    def calibrate(self) -> dict[str, Any]:
        """The runner's calibration line: timer name and unit, its cost in ticks, the TSC
        rate from cpuid and as measured against CLOCK_MONOTONIC_RAW."""
        for ln in self._simple("--calibrate"):
            if ln.get("type") == "calibration":
                return ln
        raise RunnerError("runner --calibrate printed no calibration")

    def probe(self, groups: list[list[Any]]) -> list[str | None]:
        """Try to open each counter group here: None where it opens, else the error text."""
        from cyclebench.counters import groups_argv

        for ln in self._simple("--probe", *groups_argv(groups)):
            if ln.get("type") == "probe":
                return list(ln["open_errors"])
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
            from cyclebench.counters import groups_argv

            args += groups_argv(events)
        for bench, param in items:
            args += ["--run", bench] + (["--param", str(param)] if param is not None else [])
        child = run_child(self._argv(*args), timeout, self.max_rss)
        lines = _parse_lines(child.stdout)
        finals = [ln for ln in lines if ln.get("type") in ("result", "skip", "fail", "error")]
        outcomes = []
        for i, (bench, param) in enumerate(items):
            # lines come in request order; a request that never got one shares the process's fate
            mine = [ln for ln in finals if ln.get("bench") == bench and ln.get("param") == param]
            k = sum(1 for b, p in items[:i] if (b, p) == (bench, param))
            final = mine[k] if k < len(mine) else (finals[0] if finals and finals[0]["type"] == "error" else None)
            outcomes.append(self._outcome(bench, param, final, child, timeout, lines))
        return outcomes

    @staticmethod
    def _outcome(bench: str, param: int | None, final: dict[str, Any] | None, child: Child, timeout: float,
                 lines: list[dict[str, Any]]) -> Outcome:
        returncode, stderr = child.returncode, child.stderr
        outcome = Outcome(bench, param, ERROR, stderr=stderr[-4000:], wall_s=child.wall_s, lines=lines)
        if child.limit:
            outcome.status, outcome.reason = FAILED, child.limit
        elif child.timed_out:
            outcome.status, outcome.reason = TIMEOUT, f"timed out after {timeout:g} s (killed)"
        elif returncode < 0:
            outcome.status = CRASHED
            outcome.reason = f"crashed: {_signal_name(-returncode)}"
            tail = _last_stderr_line(stderr)
            if tail:
                outcome.reason += f" ({tail})"
        if outcome.status != ERROR or outcome.reason:
            return outcome
        if final is None:
            outcome.reason = f"runner exited {returncode} without a result: {_last_stderr_line(stderr)}"
        elif final["type"] == "result":
            outcome.result = final
            if final.get("verified") is False or final.get("reason"):
                outcome.status = INVALID
                outcome.reason = f"verification failed: {final.get('reason') or 'verify hook returned false'}"
            else:
                outcome.status = OK
        elif final["type"] == "skip":
            outcome.status, outcome.reason = SKIPPED, final.get("reason")
        elif final["type"] == "fail":
            outcome.status, outcome.reason = FAILED, final.get("reason")
        else:
            outcome.status, outcome.reason = ERROR, final.get("reason")
        if returncode > 0 and outcome.status == OK:
            outcome.status, outcome.reason = ERROR, f"runner exited {returncode} after its result"
        return outcome


@dataclass
class Child:
    """What run_child saw: the child's output, exit status (negative: killed by that
    signal), whether it hit the time limit, its wall time in seconds, and ``limit``: why
    cyclebench killed it other than the timeout (memory cap, protocol flood), else None.
    ``stderr`` is only its last STDERR_TAIL bytes."""

    stdout: str
    stderr: str
    returncode: int
    timed_out: bool
    wall_s: float
    limit: str | None = None
    peak_rss: int | None = None  # bytes, when --max-rss watched it


# A benchmark looping on write(2, ...) produced 1.9 GB of stderr in 1 s (audit D2); only a
# tail is ever shown (the last line names a crash), so that is all that is kept.
STDERR_TAIL = 64 * 1024
# The protocol is a few JSON lines per benchmark (raw samples: ~100 kB for 40 rounds × 8 sizes);
# more than this is a body writing into it, not a measurement.
PROTOCOL_CAP = 64 * 1024 * 1024
# After the child exits, a process it forked may still hold the pipes (audit D20): its result is
# already complete, so wait this long for EOF, then kill the session and keep what was read.
EXIT_GRACE_S = 0.5
RSS_POLL_S = 0.05

_PR_SET_PDEATHSIG = 1
_libc: Any = None


def die_with_parent() -> Callable[[], None]:
    """A ``preexec_fn`` that makes the child get SIGKILL when this process dies, whatever kills
    it (SIGKILL and the OOM killer included: no handler runs then). prctl(2) PR_SET_PDEATHSIG
    fires when the forking *thread* exits; run_child waits in that thread, so it outlives the
    child. The getppid check closes the race of a parent that died before prctl ran."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    prctl, parent = _libc.prctl, os.getpid()

    def pre() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(137)

    return pre


def session_rss(sid: int) -> int:
    """Resident set size in bytes summed over every process of session ``sid`` (the child and
    whatever it forked), from /proc/PID/stat (field 6: session, 24: rss in pages; proc(5))."""
    page, total = os.sysconf("SC_PAGE_SIZE"), 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[3]) == sid:
            total += int(fields[21]) * page
    return total


def run_child(argv: list[str], timeout: float, max_rss: int | None = None) -> Child:
    """Run argv in its own session, stdin from /dev/null, output captured, and killed (the whole
    session: it may have forked or started threads) at ``timeout`` seconds, when its session's
    RSS exceeds ``max_rss`` bytes, or when the caller is interrupted — KeyboardInterrupt and
    every other exception propagate after the kill. The child also dies with this process
    (die_with_parent). Memory stays bounded: stdout up to PROTOCOL_CAP, stderr's tail only."""
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=die_with_parent())
    assert proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    timed_out, limit, peak = False, None, 0
    exited_at: float | None = None
    next_rss = t0
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    sel.register(proc.stderr, selectors.EVENT_READ)
    try:
        while sel.get_map():
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE_S:
                break
            if now - t0 >= timeout:
                timed_out = True
                break
            if max_rss is not None and now >= next_rss:
                next_rss = now + RSS_POLL_S
                peak = max(peak, session_rss(proc.pid))
                if peak > max_rss:
                    limit = f"exceeded --max-rss {max_rss / 2**20:g} MiB (RSS {peak / 2**20:.0f} MiB; killed)"
                    break
            wait = min(timeout - (now - t0), RSS_POLL_S if max_rss is not None or exited_at is not None else 0.2)
            for key, _ in sel.select(max(wait, 0.001)):
                data = os.read(key.fd, 1 << 16)
                if not data:
                    sel.unregister(key.fileobj)
                elif key.fileobj is proc.stdout:
                    out += data
                    if len(out) > PROTOCOL_CAP:
                        limit = f"wrote over {PROTOCOL_CAP >> 20} MiB into the protocol stream (killed)"
                else:
                    err += data
                    if len(err) > 2 * STDERR_TAIL:
                        del err[:-STDERR_TAIL]
            if limit:
                break
    except BaseException:
        _kill(proc)
        proc.wait()
        raise
    finally:
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
    if not (timed_out or limit):
        with contextlib.suppress(subprocess.TimeoutExpired):  # pipes at EOF: the child is exiting
            proc.wait(timeout=EXIT_GRACE_S)
    _kill(proc)  # what it forked dies with it; a no-op when the session is already gone
    proc.wait()
    return Child(out.decode(errors="replace"), err[-STDERR_TAIL:].decode(errors="replace"), proc.returncode,
                 timed_out, time.monotonic() - t0, limit, peak or None)


def _kill(proc: subprocess.Popen[Any]) -> None:
    """Kill the child's whole session (it may have forked or spawned threads)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
