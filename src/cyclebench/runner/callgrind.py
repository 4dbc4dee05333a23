"""Simulated counters: a benchmark under valgrind's callgrind (docs/method.md §5c).

The runner's ``--sim N`` mode (engine/simulate.c) collects two batches, of N and 2N
operations, each dumped under its own label; per-op counts are the difference divided by
N, so fixed costs cancel exactly. Events (callgrind manual, "Cache and branch
simulation"): Ir instructions, Dr/Dw data reads/writes, I1mr/D1mr/D1mw first-level misses,
ILmr/DLmr/DLmw last-level misses, Bc/Bcm conditional branches/mispredicted, Bi/Bim
indirect. The cache geometry is fixed (below, overridable), so the counts are identical
on every machine and every run: *simulated*, never a measurement of this CPU.

Valgrind 3.19 cannot decode AVX-512: build without ``-march=native`` on such hosts (the
suite's run-time CPUID gates see what valgrind emulates).
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from cyclebench.model import CRASHED, ERROR, FAILED, INVALID, OK, SIMULATED, SKIPPED, TIMEOUT, Outcome, Result
from cyclebench.runner import run_child
from cyclebench.runner.protocol import parse_lines as _parse_lines

# A typical modern core's L1s and a mid-size LL: sizes in bytes, associativity, line size.
DEFAULT_CACHE = {"I1": (32768, 8, 64), "D1": (32768, 8, 64), "LL": (8388608, 16, 64)}
EVENT_NAMES = ("Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bc", "Bcm", "Bi", "Bim")


class SimulationError(Exception):
    """valgrind missing, or a cache geometry it would refuse."""


def parse_cache(spec: str | None) -> dict[str, tuple[int, int, int]]:
    """'I1=32768,8,64;LL=...' → geometry dict (missing levels keep the default)."""
    cache = dict(DEFAULT_CACHE)
    if not spec:
        return cache
    for part in spec.split(";"):
        m = re.fullmatch(r"\s*(I1|D1|LL)=(\d+),(\d+),(\d+)\s*", part)
        if not m:
            raise SimulationError(f"bad cache geometry '{part}': want e.g. I1=32768,8,64 (size,assoc,line)")
        size, assoc, line = int(m.group(2)), int(m.group(3)), int(m.group(4))
        if not (size and assoc and line) or line & (line - 1) or size % (assoc * line):
            raise SimulationError(f"{m.group(1)}: size must be a multiple of assoc × line, line a power of two")
        cache[m.group(1)] = (size, assoc, line)
    return cache


def valgrind_argv(out_file: Path, cache: dict[str, tuple[int, int, int]], branch_sim: bool = True) -> list[str]:
    if shutil.which("valgrind") is None:
        raise SimulationError("valgrind not found: install it (apt-get install valgrind) for --backend callgrind")
    argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no", "--cache-sim=yes",
            "--vgdb=no",  # no vgdb-pipe-* debris in /tmp when a run is killed
            f"--branch-sim={'yes' if branch_sim else 'no'}", f"--callgrind-out-file={out_file}.%p"]
    argv += [f"--{lvl}={','.join(map(str, geo))}" for lvl, geo in cache.items()]
    return argv


def parse_dump(path: Path) -> tuple[str | None, dict[str, int]]:
    """(trigger label, {event: count}) of one callgrind output file ("summary:" line)."""
    label, events, values = None, [], []
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("desc: Trigger: Client Request: "):
            label = line.removeprefix("desc: Trigger: Client Request: ").strip()
        elif line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:"):
            values = [int(x) for x in line.split()[1:]]
    values += [0] * (len(events) - len(values))  # callgrind leaves trailing zero counts out of the line
    return label, dict(zip(events, values, strict=False))


def per_op(dumps: dict[str, dict[str, int]], n1: int, n2: int) -> dict[str, float]:
    """Per-op events from the two labelled dumps: (E(n2) − E(n1)) / (n2 − n1)."""
    a, b = dumps["cb:n1"], dumps["cb:n2"]
    return {ev: (b.get(ev, 0) - a.get(ev, 0)) / (n2 - n1) for ev in a if ev in b}


def simulate(binary: Path, bench: str, param: int | None, n1: int = 10, cache: dict | None = None,
             timeout: float = 600, cpu: int | None = None, launcher: list[str] | None = None,
             workdir: Path | None = None) -> Outcome:
    """Run one benchmark under callgrind. The Outcome's result holds ``events`` (per op),
    ``n`` ([n1, 2·n1]) and ``cache``; its status follows runner.Outcome's vocabulary.
    ``launcher``: an argv prefix valgrind runs under (a revision's sandbox, runner.sandbox), with
    ``workdir`` a directory writable inside it for callgrind's output (default: the temp dir)."""
    cache = cache or DEFAULT_CACHE
    with tempfile.TemporaryDirectory(prefix="cb-cg-", dir=workdir) as tmp:
        out = Path(tmp) / "cg.out"
        argv = [*(launcher or []), *valgrind_argv(out, cache), str(binary), "--sim", str(n1), "--run", bench]
        if param is not None:
            argv += ["--param", str(param)]
        if cpu is not None:
            argv += ["--cpu", str(cpu)]
        t0 = time.monotonic()
        proc = run_child(argv, timeout)
        if proc.timed_out:
            return Outcome(bench, param, TIMEOUT, f"timed out after {timeout:g} s under callgrind (killed)")
        wall = time.monotonic() - t0
        lines = _parse_lines(proc.stdout)
        final = next((ln for ln in lines if ln.get("type") in ("sim", "skip", "fail", "error")), None)
        o = Outcome(bench, param, ERROR, stderr=proc.stderr[-4000:], wall_s=wall, lines=lines)
        if proc.returncode < 0 or (final is None and "SIGILL" in proc.stderr):
            return replace(o, status=CRASHED, reason="crashed under valgrind" + (
                " (SIGILL: an instruction valgrind cannot decode, e.g. AVX-512: build without -march=native)"
                if "SIGILL" in proc.stderr else ""))
        if final is None:
            tail = [ln for ln in proc.stderr.splitlines() if ln.strip()][-1:]
            return replace(o, reason=f"no result under callgrind (exit {proc.returncode}): {tail[0] if tail else ''}")
        if final["type"] != "sim":
            return replace(o, status={"skip": SKIPPED, "fail": FAILED}.get(final["type"], ERROR),
                           reason=final.get("reason"))
        dumps = {}
        for f in Path(tmp).glob("cg.out.*"):
            label, ev = parse_dump(f)
            if label:
                dumps[label] = ev
        if "cb:n1" not in dumps or "cb:n2" not in dumps:
            return replace(o, reason="callgrind wrote no labelled dumps (built without valgrind/callgrind.h?)")
        n1_, n2_ = final["n"]
        result = {**final, "events": per_op(dumps, n1_, n2_),
                  "cache": {k: list(v) for k, v in cache.items()}, "unit": "Ir"}
        if final.get("verified") is False or final.get("reason"):
            return replace(o, status=INVALID, reason=f"verification failed: {final.get('reason') or 'verify hook'}",
                           result=result)
        return replace(o, status=OK, result=result)


def result_fields(o: Outcome, variant: str = "") -> Result:
    """Results-table row of a simulated outcome (a new Result of kind simulated, not stored):
    per_op = Ir per operation (unit Ir); every event per operation, the cache geometry and the
    batch sizes its ``simulated``."""
    row = Result(kind=SIMULATED, bench=o.bench, param=o.param, variant=variant, status=o.status, reason=o.reason,
                 wall_s=o.wall_s, unit="Ir")
    if not o.result:
        return row
    ev = o.result["events"]
    return replace(row, per_op=ev.get("Ir"), min=ev.get("Ir"), median=ev.get("Ir"), n_samples=2,
                   simulated={"simulated": True, "backend": "callgrind", "events": ev, "cache": o.result["cache"],
                              "n": o.result["n"]})
