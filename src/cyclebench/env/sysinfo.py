"""The measurement environment: what is recorded with every run, and which CPU to pin to.

This module holds the CPU's side (model, features, topology, frequency, PMU, TSC, choosing and
pinning a CPU) and :func:`capture`, the one environment record of a run; the kernel's side
(boot parameters, hypervisor, boot-time TSC rate, load) is ``env/kernel.py`` and the readers
of pseudo-files are ``env/sysfs.py``; both are re-exported here.

Everything reads Linux pseudo-files (``/proc``, ``/sys``) below a ``root`` directory (default
``/``), so tests run on fixture trees. A file that is missing or unreadable gives ``None`` for
that field — never an exception: a VM has no cpufreq, a container may hide DMI, an arm64
``/proc/cpuinfo`` has no ``flags``. Only ``kernel_tsc_hz`` and :func:`compiler_info` run
programs (argv lists, with a timeout); :func:`choose_cpu` may briefly set the calling thread's
affinity to check that an isolated CPU can be pinned to.

Sources: ``proc(5)``; the kernel's ``Documentation/ABI/testing/sysfs-devices-system-cpu``,
``Documentation/admin-guide/pm/cpufreq.rst`` and ``intel_pstate.rst``; pyperf's ``system
show`` for what is worth recording.
"""

from __future__ import annotations

import os
import platform
import shlex
import shutil
import socket
import sys
import time
from pathlib import Path

from cyclebench import __version__
from cyclebench.env.identity import boot_id
from cyclebench.env.kernel import (
    _CLOCKSOURCE,
    KERN_LOG,
    busy_on_cpu,
    hypervisor,
    kernel_info,
    kernel_tsc_hz,
    load_info,
    movable_kthreads,
    parse_cmdline,
    parse_isolcpus,
    parse_kernel_tsc_mhz,
)
from cyclebench.env.sysfs import (
    _CPU,
    ROOT,
    SUBPROCESS_TIMEOUT,
    _cpu_list,
    _cpuinfo_blocks,
    _cpuinfo_first,
    _flags,
    _run,
    _to_int,
    is_live,
    parse_cpu_list,
    read,
    read_int,
)
from cyclebench.model import Compiler, CpuInfo, Environment, Frequency, Pmu, PythonInfo, Topology, Tsc

# Names of event_source devices that are a CPU's hardware PMU (x86 hybrid: cpu_core/cpu_atom).
_HW_PMU_NAMES = ("cpu", "cpu_core", "cpu_atom")
_HW_PMU_PREFIXES = ("armv8_", "armv7_", "apple_")


# arm64 "CPU implementer" codes (arch/arm64/include/asm/cputype.h).
_ARM_IMPLEMENTERS = {
    0x41: "ARM", 0x42: "Broadcom", 0x43: "Cavium", 0x46: "Fujitsu", 0x48: "HiSilicon", 0x4E: "NVIDIA",
    0x50: "APM", 0x51: "Qualcomm", 0x61: "Apple", 0x63: "Arm China", 0x6D: "Microsoft", 0xC0: "Ampere",
}


# ----------------------------------------------------------------------------- helpers


# ----------------------------------------------------------------------------- CPU


def cpu_info(root: Path = ROOT) -> CpuInfo:
    """Identity and features of the CPU, from the first block of /proc/cpuinfo.

    Returns ``{"model_name": str|None, "vendor": str|None, "family": int|None,
    "model": int|None, "stepping": int|None, "microcode": str|None (e.g. "0xf4"),
    "flags": list[str]|None, "logical_cpus": int|None, "online": list[int]|None}``.
    On arm64 vendor is the implementer's name, family/model/stepping are "CPU architecture",
    "CPU part", "CPU revision", and flags are "Features". ``logical_cpus`` counts
    /sys/devices/system/cpu/present (else the processor blocks of /proc/cpuinfo);
    ``online`` is /sys/devices/system/cpu/online.
    """
    root = Path(root)
    b = _cpuinfo_first(root) or {}
    vendor = b.get("vendor_id")
    if vendor is None and "CPU implementer" in b:
        code = _to_int(b["CPU implementer"])
        vendor = _ARM_IMPLEMENTERS.get(code, b["CPU implementer"]) if code is not None else None
    present = _cpu_list(root, f"{_CPU}/present")
    if present:
        logical: int | None = len(present)
    else:
        logical = sum(1 for blk in _cpuinfo_blocks(root) if "processor" in blk) or None
    return {
        "model_name": b.get("model name") or b.get("Model") or b.get("Hardware"),
        "vendor": vendor,
        "family": _to_int(b.get("cpu family", b.get("CPU architecture"))),
        "model": _to_int(b.get("model", b.get("CPU part"))),
        "stepping": _to_int(b.get("stepping", b.get("CPU revision"))),
        "microcode": b.get("microcode"),
        "flags": _flags(b or None),
        "logical_cpus": logical,
        "online": _cpu_list(root, f"{_CPU}/online"),
    }


def cpu_topology(cpu: int, root: Path = ROOT) -> Topology:
    """Where ``cpu`` sits: its SMT siblings, core, package, NUMA node.

    Returns ``{"cpu": int, "smt_siblings": list[int]|None (thread_siblings_list; includes
    cpu itself), "core_id": int|None, "package_id": int|None, "die_id": int|None,
    "numa_node": int|None, "smt_active": bool|None, "smt_control": str|None}`` from
    /sys/devices/system/cpu/cpuN/topology/, cpuN/nodeM and cpu/smt/{active,control}.
    """
    root = Path(root)
    top = f"{_CPU}/cpu{cpu}/topology"
    node = None
    try:
        nodes = sorted((Path(root) / _CPU / f"cpu{cpu}").glob("node[0-9]*"))
        node = int(nodes[0].name[4:]) if nodes else None
    except (OSError, ValueError):
        node = None
    active = read_int(root, f"{_CPU}/smt/active")
    return {
        "cpu": cpu,
        "smt_siblings": _cpu_list(root, f"{top}/thread_siblings_list"),
        "core_id": read_int(root, f"{top}/core_id"),
        "package_id": read_int(root, f"{top}/physical_package_id"),
        "die_id": read_int(root, f"{top}/die_id"),
        "numa_node": node,
        "smt_active": None if active is None else bool(active),
        "smt_control": read(root, f"{_CPU}/smt/control"),
    }


def frequency_info(cpu: int, root: Path = ROOT) -> Frequency:
    """Frequency scaling of ``cpu``: cpufreq driver and governor, limits, turbo/boost.

    Returns ``{"driver", "governor": str|None, "min_khz", "max_khz", "cur_khz" (scaling_*),
    "hw_min_khz", "hw_max_khz" (cpuinfo_*), "base_khz": int|None (kHz), "epp": str|None
    (energy_performance_preference), "pstate_status": str|None (intel_pstate or amd_pstate
    status), "no_turbo": int|None (intel_pstate/no_turbo), "boost": int|None
    (cpufreq/boost, else the policy's boost — acpi-cpufreq, amd-pstate), "turbo": bool|None
    (turbo/boost enabled, derived from the two)}``. All None on a VM without cpufreq.
    Source: Documentation/admin-guide/pm/cpufreq.rst, intel_pstate.rst, amd-pstate.rst.
    """
    root = Path(root)
    fq = f"{_CPU}/cpu{cpu}/cpufreq"
    no_turbo = read_int(root, f"{_CPU}/intel_pstate/no_turbo")
    boost = read_int(root, f"{_CPU}/cpufreq/boost")
    if boost is None:
        boost = read_int(root, f"{fq}/boost")
    turbo = (not no_turbo) if no_turbo is not None else (bool(boost) if boost is not None else None)
    status = read(root, f"{_CPU}/intel_pstate/status") or read(root, f"{_CPU}/amd_pstate/status")
    return {
        "driver": read(root, f"{fq}/scaling_driver"),
        "governor": read(root, f"{fq}/scaling_governor"),
        "min_khz": read_int(root, f"{fq}/scaling_min_freq"),
        "max_khz": read_int(root, f"{fq}/scaling_max_freq"),
        "cur_khz": read_int(root, f"{fq}/scaling_cur_freq"),
        "hw_min_khz": read_int(root, f"{fq}/cpuinfo_min_freq"),
        "hw_max_khz": read_int(root, f"{fq}/cpuinfo_max_freq"),
        "base_khz": read_int(root, f"{fq}/base_frequency"),
        "epp": read(root, f"{fq}/energy_performance_preference"),
        "pstate_status": status,
        "no_turbo": no_turbo,
        "boost": boost,
        "turbo": turbo,
    }


# ----------------------------------------------------------------------------- kernel


def tsc_info(root: Path = ROOT) -> Tsc:
    """Whether the TSC is usable as a clock, and what the kernel uses as its clock.

    Returns ``{"constant_tsc", "nonstop_tsc", "tsc_known_freq", "tsc_reliable",
    "rdtscp": bool|None (cpuinfo flags; None when there are no x86 flags),
    "clocksource": str|None, "available_clocksources": list[str]|None}`` from
    /sys/devices/system/clocksource/clocksource0/{current,available}_clocksource.
    constant_tsc: fixed rate across P-states; nonstop_tsc: keeps ticking in deep C-states;
    together "invariant TSC" (Intel SDM vol. 3 §18.17).
    """
    root = Path(root)
    block = _cpuinfo_first(root)
    flags = _flags(block) if block is not None and "vendor_id" in block else None

    def has(flag: str) -> bool | None:
        return None if flags is None else flag in flags

    avail = read(root, f"{_CLOCKSOURCE}/available_clocksource")
    return {
        "constant_tsc": has("constant_tsc"),
        "nonstop_tsc": has("nonstop_tsc"),
        "tsc_known_freq": has("tsc_known_freq"),
        "tsc_reliable": has("tsc_reliable"),
        "rdtscp": has("rdtscp"),
        "clocksource": read(root, f"{_CLOCKSOURCE}/current_clocksource"),
        "available_clocksources": avail.split() if avail is not None else None,
    }


def pmu_info(root: Path = ROOT) -> Pmu:
    """Can hardware counters be used here?

    Returns ``{"perf_event_paranoid": int|None (proc/sys/kernel/perf_event_paranoid; >= 2
    forbids kernel-side and CPU-wide events to unprivileged users, Debian/Ubuntu patch 3/4
    forbid perf_event_open entirely), "hardware_pmu": bool, "pmu": str|None (first hardware
    PMU device), "pmu_name": str|None (its caps/pmu_name, e.g. "skylake"), "event_sources":
    list[str]|None (/sys/bus/event_source/devices), "nmi_watchdog": int|None (1 = one
    counter is taken by the watchdog)}``. A hardware PMU is a device named cpu, cpu_core,
    cpu_atom, armv8_*… with a ``type`` file; KVM guests without PMU passthrough have none.
    """
    root = Path(root)
    dev_dir = Path(root) / "sys/bus/event_source/devices"
    try:
        sources: list[str] | None = sorted(p.name for p in dev_dir.iterdir())
    except OSError:
        sources = None
    hw = [
        name for name in sources or []
        if (name in _HW_PMU_NAMES or name.startswith(_HW_PMU_PREFIXES))
        and (dev_dir / name / "type").is_file()
    ]
    hw.sort(key=lambda n: (n not in _HW_PMU_NAMES, n))
    pmu = hw[0] if hw else None
    return {
        "perf_event_paranoid": read_int(root, "proc/sys/kernel/perf_event_paranoid"),
        "hardware_pmu": bool(hw),
        "pmu": pmu,
        "pmu_name": read(root, f"sys/bus/event_source/devices/{pmu}/caps/pmu_name") if pmu else None,
        "event_sources": sources,
        "nmi_watchdog": read_int(root, "proc/sys/kernel/nmi_watchdog"),
    }


# ----------------------------------------------------------------------------- load


# ----------------------------------------------------------------------------- compiler


def compiler_info(cc: str = "cc", version_line: str | None = None, target: str | None = None) -> Compiler:
    """Which compiler ``cc`` is: ``{"cc": str, "path": str|None (resolved on PATH),
    "version": str|None (first line of ``cc --version``), "target": str|None
    (``cc -dumpmachine``, e.g. "x86_64-linux-gnu")}``. ``cc`` may carry a wrapper
    ("ccache gcc"); it is split with shlex. Failures and timeouts give None fields.
    ``version_line``: that first line, when the caller has it (the build's, remembered), so
    `cc --version` is not run again (~10 ms a run); ``target`` likewise for ``-dumpmachine``.
    """
    try:
        argv = shlex.split(cc)
    except ValueError:
        argv = []
    if not argv:
        return {"cc": cc, "path": None, "version": None, "target": None}
    version = version_line if version_line is not None else _run([*argv, "--version"])
    if target is None:
        target = _run([*argv, "-dumpmachine"])
    first = version.strip().splitlines()[0].strip() if version and version.strip() else None
    return {
        "cc": cc,
        "path": shutil.which(argv[0]),
        "version": first,
        "target": (target.strip() or None) if target else None,
    }


# ----------------------------------------------------------------------------- pinning


def can_pin(cpu: int) -> bool:
    """Whether this thread may run on ``cpu`` (tried, then the old mask restored); True when
    the affinity mask cannot be read (nothing to try it against)."""
    try:
        old = os.sched_getaffinity(0)
    except OSError:
        return True
    try:
        os.sched_setaffinity(0, {cpu})
    except (OSError, ValueError):
        return False
    finally:
        os.sched_setaffinity(0, old)
    return True


def choose_cpu(root: Path = ROOT) -> int:
    """The CPU to pin the runner to when the user does not say.

    Candidates: the CPUs this process may run on (os.sched_getaffinity(0) when root is "/",
    else the online list), plus isolated CPUs (isolcpus; kept out of the default affinity
    mask by the kernel) that a sched_setaffinity probe shows we may pin to. Preference,
    highest CPU number within a group:
      1. isolated and nohz_full, 2. isolated — neither CPU 0 nor an SMT sibling of CPU 0;
      3. any other CPU that is not 0 nor a sibling of 0 (CPU 0 takes housekeeping work and
         most interrupts, and its sibling shares its core);
      4. the highest candidate (a 1-CPU machine gets its only CPU).
    """
    root = Path(root)
    live = is_live(root)
    online = _cpu_list(root, f"{_CPU}/online")
    if live and hasattr(os, "sched_getaffinity"):
        allowed = set(os.sched_getaffinity(0))
    elif online:
        allowed = set(online)
    else:
        allowed = set(range(os.cpu_count() or 1)) if live else {0}
    kern = kernel_info(root)
    isolated = set(kern["isolcpus"] or [])
    if online:
        isolated &= set(online)
    if live and hasattr(os, "sched_setaffinity"):
        isolated = (isolated & allowed) | {c for c in isolated - allowed if can_pin(c)}
    else:
        isolated &= allowed
    pool = allowed | isolated
    if len(pool) == 1:
        return next(iter(pool))
    avoid = {0, *(cpu_topology(0, root)["smt_siblings"] or [])}
    nohz = set(kern["nohz_full"] or [])
    for group in ((isolated & nohz) - avoid, isolated - avoid, allowed - avoid):
        if group:
            return max(group)
    return max(pool)


# ----------------------------------------------------------------------------- capture


def capture(cpu: int, cc: str = "cc", root: Path = ROOT, cc_version: str | None = None,
            cc_target: str | None = None) -> Environment:
    """The environment of a run on ``cpu``, as one JSON-serialisable model.Environment.

    Keys: cpu, topology (cpu_topology), cpu_info (with flags), frequency (frequency_info),
    kernel, hypervisor, tsc, pmu, load, busy (busy_on_cpu), compiler (compiler_info(cc,
    cc_version, cc_target): the first line of its --version and its target when known),
    python {version, implementation, executable}, hostname, boot_id (identity.boot_id),
    cyclebench_version (the package's, as a run's tool_version), captured_at (Unix time, s),
    capture_s (seconds it took).
    Stored in the runs table's ``env`` column; ``cyclebench check`` reads it back.
    """
    root = Path(root)
    t0 = time.perf_counter()
    hostname = socket.gethostname() if is_live(root) else read(root, "proc/sys/kernel/hostname")
    env: Environment = {
        "cpu": cpu,
        "topology": cpu_topology(cpu, root),
        "cpu_info": cpu_info(root),
        "frequency": frequency_info(cpu, root),
        "kernel": kernel_info(root),
        "hypervisor": hypervisor(root),
        "tsc": tsc_info(root),
        "pmu": pmu_info(root),
        "load": load_info(root),
        "busy": busy_on_cpu(cpu, root),
        "compiler": compiler_info(cc, cc_version, cc_target),
        "python": PythonInfo(
            version=platform.python_version(),
            implementation=platform.python_implementation(),
            executable=sys.executable,
        ),
        "hostname": hostname,
        "boot_id": boot_id(root),
        "cyclebench_version": __version__,
        "captured_at": time.time(),
    }
    env["capture_s"] = round(time.perf_counter() - t0, 4)
    return env


# what the rest of cyclebench reads through sysinfo, wherever it lives
__all__ = [
    "KERN_LOG",
    "ROOT",
    "SUBPROCESS_TIMEOUT",
    "busy_on_cpu",
    "hypervisor",
    "is_live",
    "kernel_info",
    "kernel_tsc_hz",
    "load_info",
    "movable_kthreads",
    "parse_cmdline",
    "parse_cpu_list",
    "parse_isolcpus",
    "parse_kernel_tsc_mhz",
    "read",
    "read_int",
]
