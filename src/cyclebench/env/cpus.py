"""The CPUs `scale` places its tasks on: a user's list checked against this machine
(parse_cpus), or the default order, distinct cores first (cpu_order)."""

from __future__ import annotations

import os
from pathlib import Path

from cyclebench.env import sysinfo


def parse_cpus(text: str) -> list[int]:
    """A user's CPU list (kernel syntax ``0-3,8``; order kept for plain lists), each checked
    (sysinfo.can_pin). Raises ValueError with a one-line message."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    cpus: list[int] = []
    for p in parts:
        got = sysinfo.parse_cpu_list(p)
        if not got:
            raise ValueError(f"--cpus: '{p}' is not a CPU number or range")
        cpus += [c for c in got if c not in cpus]
    for c in cpus:
        if not sysinfo.can_pin(c):
            allowed = ",".join(map(str, sorted(os.sched_getaffinity(0))))
            raise ValueError(f"--cpus: CPU {c} is not available here (allowed: {allowed})")
    return cpus


def cpu_order(root: Path = sysinfo.ROOT) -> list[int]:
    """The CPUs tasks are placed on, in order: one CPU of every core first (the core of CPU 0
    last: it takes most interrupts and housekeeping), then the second SMT thread of every
    core, and so on. Task i runs on order[i % len(order)]."""
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    cores: dict[tuple[int, int, int], list[int]] = {}
    for c in allowed:
        top = sysinfo.cpu_topology(c, root)
        key = (top.get("package_id") or 0, top.get("die_id") or 0,
               top.get("core_id") if top.get("core_id") is not None else c)
        cores.setdefault(key, []).append(c)
    groups = sorted(cores.values(), key=lambda g: (0 in g, min(g)))
    order: list[int] = []
    for rank in range(max((len(g) for g in groups), default=0)):
        order += [g[rank] for g in groups if rank < len(g)]
    return order
