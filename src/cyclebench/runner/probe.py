"""A program built with -finstrument-functions, run with cyclebench's own probe preloaded
(engine/probe.c, built by build/probe.py), and its traces read back: every function's calls
(runner.profile.Calls, in timer ticks), the probe's calibration blocks made in the same process
before and after the program, and the facts of the clock (docs/method.md §10)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from cyclebench.build.elf import name_addresses
from cyclebench.build.probe import build_probe
from cyclebench.lifetime import supervised
from cyclebench.runner.child import run_child
from cyclebench.runner.profile import STEPS_KEPT, Calls, ProfileError, calls_in
from cyclebench.runner.protocol import signal_name

EXIT, MARK = 1 << 63, 1 << 62
HELD = EXIT | MARK
PAUSE, RESUME, CAL_BEGIN, CAL_END, FULL = 1, 2, 3, 4, 5  # mark codes (engine/probe.c)
SIDES = {0: "before", 1: "after", 2: "during"}  # a calibration block's place: around main, or interleaved
CHUNK = 1 << 16  # events read at a time (the probe pre-faults as many)
ENTER_HOOK, MCOUNT = "__cyg_profile_func_enter", ("mcount", "_mcount", "__fentry__")


def instrumentation(path: Path) -> str | None:
    """How an executable is instrumented, from the symbols it calls (its dynamic symbol table):
    "finstrument" (-finstrument-functions: this probe), "pg" (-pg: uftrace's mcount) or None."""
    try:
        with path.open("rb") as f:
            sec = ELFFile(f).get_section_by_name(".dynsym")
            names = {s.name for s in sec.iter_symbols()} if sec is not None else set()
    except (OSError, ELFError):
        return None
    if ENTER_HOOK in names:
        return "finstrument"
    return "pg" if names & set(MCOUNT) else None


def record(argv: Sequence[str], out_dir: Path, timeout: float, cpu: int | None = None, cc: str = "cc") -> float:
    """Run ``argv`` with the probe preloaded, its traces into ``out_dir``, pinned to CPU ``cpu``
    (taskset); its wall seconds. ProfileError when it does not start, is killed or times out. A
    build the probe cannot reach (not -finstrument-functions, or static: LD_PRELOAD does not
    apply) leaves only the probe's own calibration: the caller says so (no_calls). A program
    that exits non-zero is profiled all the same."""
    lib = build_probe(cc)
    out_dir.mkdir(parents=True, exist_ok=True)
    pin = ["taskset", "-c", str(cpu)] if cpu is not None and shutil.which("taskset") else []
    # env(1) sets the preload for the program alone: not the supervisor's Python, nor taskset
    env = ["env", f"LD_PRELOAD={lib}", f"CB_PROBE_DIR={out_dir}"]
    child = run_child(supervised([*pin, *env, *argv]), timeout)
    if child.timed_out:
        raise ProfileError(f"{argv[0]} did not end within {timeout:g} s (killed)")
    if child.returncode > 128:  # the supervisor says a signal as 128 + N
        raise ProfileError(f"{argv[0]} was killed by {signal_name(child.returncode - 128)} with the probe loaded")
    if child.returncode == 127 and not any(out_dir.glob("proc-*.txt")):
        tail = (child.stderr.strip().splitlines() or [""])[-1]
        raise ProfileError(f"{argv[0]} did not start: {tail}")
    return child.wall_s


def no_calls(program: str) -> ProfileError:
    """What to say when the probe recorded no call of the program's own (only its calibration)."""
    return ProfileError(f"the probe recorded no call of {program}: build it with -finstrument-functions (and "
                        "dynamically linked; -pg goes through uftrace), or use --backend callgrind")


def _chunks(path: Path) -> Iterator[np.ndarray]:
    """A trace's events as (n, 2) uint64 arrays [tsc | flags, fn], up to the first empty slot
    (the file is sparse past the last event)."""
    with path.open("rb") as f:
        while True:
            raw = f.read(CHUNK * 16)
            if not raw:
                return
            ev = np.frombuffer(raw[: len(raw) // 16 * 16], dtype="<u8").reshape(-1, 2)
            empty = np.flatnonzero(ev[:, 0] == 0)
            if len(empty):
                if empty[0]:
                    yield ev[: empty[0]]
                return
            yield ev


SWITCH, SWITCH_OUT = 14, 0x2000  # PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT (linux/perf_event.h)


def off_cpu(path: Path) -> list[tuple[int, int]]:
    """A thread's time off the CPU from its perf records (engine/probe.c's s-PID-TID.bin:
    perf_event_open(2)'s ring, records of ``struct perf_event_header`` {u32 type, u16 misc, u16
    size} each followed here by its sample id, the time in CLOCK_MONOTONIC ns): the (out, in)
    intervals, in ns. A switch out with no switch in after it (the end of the ring) is left out."""
    if not path.is_file():
        return []
    raw, spans, out_at, at = path.read_bytes(), [], None, 0
    while at + 8 <= len(raw):
        kind, misc, size = int.from_bytes(raw[at:at + 4], "little"), int.from_bytes(raw[at + 4:at + 6], "little"), \
            int.from_bytes(raw[at + 6:at + 8], "little")
        if size < 8 or at + size > len(raw):
            break
        if kind == SWITCH and size >= 16:
            t = int.from_bytes(raw[at + size - 8:at + size], "little")
            if misc & SWITCH_OUT:
                out_at = t
            elif out_at is not None:
                spans.append((out_at, t))
                out_at = None
        at += size
    return spans


def _gaps_off(stamps: np.ndarray, spans: list[tuple[float, float]]) -> np.ndarray:
    """Per gap between consecutive events (k, k+1) of a thread, the time off the CPU inside it
    (intervals clipped to each gap they cross: the clocks' conversion may put an interval's end a
    few ns across an event that was on the CPU)."""
    off = np.zeros(max(len(stamps) - 1, 0))
    for a, b in spans:
        k0 = max(int(np.searchsorted(stamps, a, "right")) - 1, 0)
        k1 = min(int(np.searchsorted(stamps, b, "left")), len(stamps) - 1)
        for k in range(k0, k1):
            lo, hi = max(a, stamps[k]), min(b, stamps[k + 1])
            if hi > lo:
                off[k] += hi - lo
    return off


@dataclass(frozen=True)
class Block:
    """One calibration block (engine/probe.c's cbp_block): ``side`` "before" or "after" the
    program, or "during" it (a tenth of a block, interleaved every ~115 µs of a busy thread), in
    process ``pid``; ticks per call of the plain (uninstrumented) empty call and
    300-add chain; ``ratio`` core cycles per tick from the add chain (0: not measured); and the
    calls the probe recorded of its instrumented bodies (``calls``: "empty", "chain", "fan",
    "fan_plain", "top")."""

    side: str
    index: int
    pid: int
    plain_call: float
    plain_chain: float
    ratio: float
    calls: dict[str, Calls]


@dataclass(frozen=True)
class ProbeTrace:
    """Every traced process read back: ``calls`` per function (ticks: the engine's timer's
    ``unit``, named by ``timer``), the calibration ``blocks``, ``steps`` (differences between one
    thread's consecutive timestamps, ticks: the clock's grid), ``tick_hz`` (ticks per second,
    from CLOCK_MONOTONIC read beside the timer at the first and last moment; None if unknown),
    the processes and threads read, and the threads whose trace filled (``full``: their calls
    after that are missing)."""

    calls: dict[str, Calls]
    blocks: list[Block]
    steps: list[int]
    tick_hz: float | None
    timer: str
    unit: str
    processes: int
    threads: int
    full: list[str] = field(default_factory=list)
    off_cpu: float = 0.0  # ticks the traced threads spent off the CPU (context switches), taken out


_FN_NAMES = {"empty": "cbp_cal_empty", "chain": "cbp_cal_chain", "fan": "cbp_cal_fan",
             "fan_plain": "cbp_cal_fan_plain", "top": "cbp_cal_top"}


def read_proc(path: Path) -> dict:
    """A proc-PID.txt (engine/probe.c): its calibration functions' addresses (``fn``), clock
    pairs (TSC, CLOCK_MONOTONIC ns), calibration blocks (side, index, plain call and chain ticks,
    core cycles per tick), the timer's name and unit, the parent's pid (0: the first process)."""
    d: dict = {"fn": {}, "clock": [], "block": [], "timer": ("?", "ticks"), "parent": 0}
    for line in path.read_text(errors="replace").splitlines():
        w = line.split()
        if not w:
            continue
        if w[0] == "fn" and len(w) == 3:
            d["fn"][int(w[2], 16)] = w[1]
        elif w[0] == "clock" and len(w) == 3:
            d["clock"].append((int(w[1]), int(w[2])))
        elif w[0] == "block" and len(w) == 6:
            d["block"].append((w[1], int(w[2]), float(w[3]), float(w[4]), float(w[5])))
        elif w[0] == "timer" and len(w) == 3:
            d["timer"] = (w[1], w[2])
        elif w[0] == "parent" and len(w) == 2:
            d["parent"] = int(w[1])
    return d


def core_ghz(proc: dict) -> tuple[float, float, float] | None:
    """From a read_proc dict: (GHz over every block, GHz of the blocks before, after), the core
    clock as the add chains gave it × the timer's ticks per second; None without both."""
    clocks, ratios = proc["clock"], [b[4] for b in proc["block"] if b[4] > 0]
    if len(clocks) < 2 or clocks[-1][1] <= clocks[0][1] or not ratios:
        return None
    hz = (clocks[-1][0] - clocks[0][0]) / (clocks[-1][1] - clocks[0][1]) * 1e9

    def med(side: str) -> float:
        got = [b[4] for b in proc["block"] if b[0] == side and b[4] > 0]
        return float(np.median(got)) * hz / 1e9 if got else float("nan")
    return float(np.median(ratios)) * hz / 1e9, med("before"), med("after")


def read(out_dir: Path) -> ProbeTrace:
    """The traces of ``out_dir`` (engine/probe.c's files) → ProbeTrace. ProfileError when none
    can be read."""
    procs = {int(re.sub(r"\D", "", p.stem)): read_proc(p) for p in out_dir.glob("proc-*.txt")}
    if not procs:
        raise ProfileError("the probe wrote nothing (is the program dynamically linked?)")
    events: dict[tuple[int, int], np.ndarray] = {}
    for path in sorted(out_dir.glob("t-*.cbp")):
        m = re.fullmatch(r"t-(\d+)-(\d+)", path.stem)
        if m is not None:
            parts = list(_chunks(path))
            if parts:
                events[(int(m[1]), int(m[2]))] = np.concatenate(parts)
    names: dict[int, dict[int, str]] = {}
    for pid in {p for p, _ in events}:
        code = np.unique(np.concatenate([ev[(ev[:, 0] & MARK) == 0, 1] for (p, _), ev in events.items() if p == pid]
                                        + [np.zeros(0, dtype=np.uint64)]))
        maps = out_dir / f"maps-{pid}.txt"
        text = maps.read_text(errors="replace") if maps.is_file() else ""
        names[pid] = name_addresses([int(a) for a in code], text)
        names[pid].update({a: _FN_NAMES.get(k, k) for a, k in procs.get(pid, {"fn": {}})["fn"].items()})
    main: list[tuple[str, str, float, object]] = []
    cal: dict[tuple[int, str, int], list[tuple[str, str, float, object]]] = {}
    steps: list[int] = []
    full: list[str] = []
    off_total = 0.0
    for (pid, tid), ev in events.items():
        stamp = (ev[:, 0] & np.uint64(MARK - 1)).astype(np.int64)
        ts = (stamp - stamp[0]).astype(float)  # from the thread's first event: exact in a double
        clocks = procs.get(pid, {}).get("clock", [])
        gap_off = np.zeros(max(len(ts) - 1, 0))
        if len(clocks) >= 2 and clocks[-1][1] > clocks[0][1]:  # CLOCK_MONOTONIC ns → this thread's ticks
            (c0, n0), (c1, n1) = clocks[0], clocks[-1]
            per_ns = (c1 - c0) / (n1 - n0)
            spans = [((a - n0) * per_ns + c0 - int(stamp[0]), (b - n0) * per_ns + c0 - int(stamp[0]))
                     for a, b in off_cpu(out_dir / f"s-{pid}-{tid}.bin")]
            gap_off = _gaps_off(ts, spans)
            off_total += float(gap_off.sum())
        if len(steps) < STEPS_KEPT:
            steps += [int(x) for x in np.diff(ts[: STEPS_KEPT + 1]).astype(np.int64)]
        flags, fns = ev[:, 0] & np.uint64(HELD), ev[:, 1]
        where = main
        stack: list[tuple[int, bool]] = []  # (fn, inherited at fork)
        nm = names.get(pid, {})
        key = (pid, tid)
        offs = [*gap_off.tolist(), 0.0]
        for f, fn, t, o in zip(flags.tolist(), fns.tolist(), ts.tolist(), offs, strict=True):
            if f == MARK:
                code = fn & 0xFF
                if code == PAUSE:
                    where.append(("B", "probe:pause", t, key))
                elif code == RESUME:
                    where.append(("E", "probe:pause", t, key))
                elif code == CAL_BEGIN:
                    main.append(("B", "probe:calibration", t, key))
                    where = cal.setdefault((pid, SIDES.get((fn >> 8) & 0xFF, "?"), fn >> 16), [])
                elif code == CAL_END:
                    where = main
                    main.append(("E", "probe:calibration", t, key))
                elif code == FULL:
                    full.append(f"thread {tid} of process {pid}")
            elif f == HELD:
                stack.append((fn, True))
                where.append(("B", "probe:held", t, key))
            elif f == EXIT:
                while stack and stack[-1][0] != fn and any(s[0] == fn for s in stack):
                    stack.pop()
                if stack and stack[-1][0] == fn:
                    held = stack.pop()[1]
                    where.append(("E", "probe:held" if held else nm.get(fn, f"{fn:#x}"), t, key))
            else:
                stack.append((fn, False))
                where.append(("B", nm.get(fn, f"{fn:#x}"), t, key))
            if o > 0:  # off the CPU after this event: a frame of no function's, just after it
                where.append(("B", "linux:schedule", t, key))
                where.append(("E", "linux:schedule", t + o, key))
    blocks = []
    for pid, d in procs.items():
        for side, k, call, chain, ratio in d["block"]:
            got = calls_in(cal.get((pid, side, k), []))
            blocks.append(Block(side, k, pid, call, chain, ratio,
                                {k2: got[v] for k2, v in _FN_NAMES.items() if v in got}))
    first = min(procs, key=lambda p: (procs[p]["parent"] != 0, p))
    clocks = procs[first]["clock"]
    hz = None
    if len(clocks) >= 2 and clocks[-1][1] > clocks[0][1]:
        hz = (clocks[-1][0] - clocks[0][0]) / (clocks[-1][1] - clocks[0][1]) * 1e9
    timer, unit = procs[first]["timer"]
    return ProbeTrace(calls_in(main), blocks, steps, hz, timer, unit, len(procs), len(events), full, off_total)
