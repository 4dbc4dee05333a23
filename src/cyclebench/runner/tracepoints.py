"""Keep the engine's interrupt tracepoints registered while this process runs runners.

The runner counts the interrupts on its pinned CPU with the kernel's interrupt-entry
tracepoints (engine/disturb.h). The first perf event on a tracepoint registers the kernel's
probe and the last one's close unregisters it, which waits for RCU grace periods: ~35 ms per
tracepoint at a runner's exit on an AMD EPYC guest (strace: close of the group leader 33 ms),
0.28 s a process for the eight, so a 3-process run of six benchmarks spent seconds in exits.
While another event stays open on each tracepoint nothing is unregistered, and a runner's
process took 0.07 s again. So the first pinned Runner of a process opens one disabled event on
each (counting nothing: ``disabled`` set, never enabled), kept until the process exits.
Best effort: without tracefs or the right to count (perf_event_open(2): CAP_PERFMON, or
perf_event_paranoid), nothing is held and runners exit slower, measuring the same.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
from pathlib import Path

# the same events as engine/disturb.c's irq_events, in the same tracefs roots
EVENTS = ("irq/irq_handler_entry", "irq_vectors/local_timer_entry", "irq_vectors/call_function_entry",
          "irq_vectors/call_function_single_entry", "irq_vectors/reschedule_entry", "irq_vectors/irq_work_entry",
          "irq_vectors/x86_platform_ipi_entry", "irq_vectors/thermal_apic_entry")
ROOTS = (Path("/sys/kernel/tracing"), Path("/sys/kernel/debug/tracing"))
SYSCALL = {"x86_64": 298, "aarch64": 241}  # __NR_perf_event_open (asm/unistd_64.h; asm-generic/unistd.h)
PERF_TYPE_TRACEPOINT, ATTR_SIZE_VER0, DISABLED, FD_CLOEXEC = 2, 64, 1, 8

_held: list[int] | None = None


def _attr(config: int) -> ctypes.Array[ctypes.c_char]:
    """struct perf_event_attr as PERF_ATTR_SIZE_VER0 lays it out (64 bytes): type, size, config,
    sample_period, sample_type, read_format, the flag bits (bit 0: disabled), wakeup_events,
    bp_type, config1."""
    return ctypes.create_string_buffer(struct.pack("=IIQQQQQIIQ", PERF_TYPE_TRACEPOINT, ATTR_SIZE_VER0, config,
                                                   0, 0, 0, DISABLED, 0, 0, 0), ATTR_SIZE_VER0)


def hold() -> int:
    """Open the held events once per process; returns how many are held (0: none could be)."""
    global _held
    if _held is not None:
        return len(_held)
    _held = []
    nr = SYSCALL.get(platform.machine())
    root = next((r for r in ROOTS if (r / "events" / "irq").is_dir()), None)
    if nr is None or root is None:
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    cpu = min(os.sched_getaffinity(0))
    for event in EVENTS:
        try:
            config = int((root / "events" / event / "id").read_text())
        except (OSError, ValueError):
            continue
        fd = libc.syscall(nr, _attr(config), -1, cpu, -1, FD_CLOEXEC)
        if fd < 0:
            break  # not permitted: the others would fail alike
        _held.append(fd)
    return len(_held)
