"""The measurement environment: what is recorded with every run, and which CPU to pin to.

Everything here reads Linux pseudo-files (``/proc``, ``/sys``) below a ``root`` directory
(default ``/``), so tests run on fixture trees. A file that is missing or unreadable gives
``None`` for that field — never an exception: a VM has no cpufreq, a container may hide DMI,
an arm64 ``/proc/cpuinfo`` has no ``flags``. Only :func:`kernel_tsc_hz` and
:func:`compiler_info` run programs (argv lists, with a timeout); :func:`choose_cpu` may
briefly set the calling thread's affinity to check that an isolated CPU can be pinned to.

Sources: ``proc(5)``; the kernel's ``Documentation/ABI/testing/sysfs-devices-system-cpu``,
``Documentation/admin-guide/pm/cpufreq.rst`` and ``intel_pstate.rst``,
``Documentation/admin-guide/kernel-parameters.txt`` (``isolcpus``, ``nohz_full``, cpu lists);
``arch/x86/kernel/tsc.c`` for the ``tsc:`` boot messages; systemd's ``detect-virt`` DMI table
for hypervisor names; pyperf's ``system show`` for what is worth recording.
"""

from __future__ import annotations

import os
import platform
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path("/")
KERN_LOG = Path("/var/log/kern.log")
SUBPROCESS_TIMEOUT = 5.0  # seconds, for dmesg and the compiler

_CPU = "sys/devices/system/cpu"
_CLOCKSOURCE = "sys/devices/system/clocksource/clocksource0"

# Names of event_source devices that are a CPU's hardware PMU (x86 hybrid: cpu_core/cpu_atom).
_HW_PMU_NAMES = ("cpu", "cpu_core", "cpu_atom")
_HW_PMU_PREFIXES = ("armv8_", "armv7_", "apple_")

# DMI substrings → hypervisor name, checked in order (after systemd's detect-virt table).
_DMI_HYPERVISORS: tuple[tuple[str, str], ...] = (
    ("amazon ec2", "Amazon EC2"),
    ("google compute engine", "Google Compute Engine"),
    ("kubevirt", "KubeVirt"),
    ("openstack", "OpenStack"),
    ("kvm", "KVM"),
    ("qemu", "QEMU"),
    ("vmware", "VMware"),
    ("vmw", "VMware"),
    ("innotek gmbh", "VirtualBox"),
    ("virtualbox", "VirtualBox"),
    ("xen", "Xen"),
    ("bochs", "Bochs"),
    ("parallels", "Parallels"),
    ("bhyve", "bhyve"),
    ("hyper-v", "Microsoft Hyper-V"),
    ("apple virtualization", "Apple Virtualization"),
)
_DMI_FIELDS = ("sys_vendor", "product_name", "board_vendor", "bios_vendor")

# Clocksources that only exist under a hypervisor (x86 paravirtual clocks).
_CLOCKSOURCE_HYPERVISORS = (
    ("kvm-clock", "KVM"),
    ("hyperv_clocksource_tsc_page", "Microsoft Hyper-V"),
    ("hyperv_clocksource_msr", "Microsoft Hyper-V"),
    ("xen", "Xen"),
)

# arm64 "CPU implementer" codes (arch/arm64/include/asm/cputype.h).
_ARM_IMPLEMENTERS = {
    0x41: "ARM", 0x42: "Broadcom", 0x43: "Cavium", 0x46: "Fujitsu", 0x48: "HiSilicon", 0x4E: "NVIDIA",
    0x50: "APM", 0x51: "Qualcomm", 0x61: "Apple", 0x63: "Arm China", 0x6D: "Microsoft", 0xC0: "Ampere",
}

_REFINED_RE = re.compile(r"tsc: Refined TSC clocksource calibration: (\d+(?:\.\d+)?) MHz")
_DETECTED_RE = re.compile(r"tsc: Detected (\d+(?:\.\d+)?) MHz (?:processor|TSC)")


# ----------------------------------------------------------------------------- helpers


def is_live(root: Path) -> bool:
    """True when ``root`` is the real ``/`` (so os.uname, affinity etc. describe it)."""
    return os.path.realpath(root) == "/"


def read(root: Path, rel: str) -> str | None:
    """Text of ``root/rel`` stripped of surrounding whitespace, or None if unreadable."""
    try:
        return (Path(root) / rel).read_text(errors="replace").strip()
    except (OSError, ValueError):
        return None


def read_int(root: Path, rel: str) -> int | None:
    text = read(root, rel)
    if text is None:
        return None
    try:
        return int(text, 0) if text.lower().startswith("0x") else int(text)
    except ValueError:
        return None


def _to_int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text, 0)
    except ValueError:
        try:
            return int(text)
        except ValueError:
            return None


def parse_cpu_list(text: str | None, last: int | None = None) -> list[int] | None:
    """Parse a kernel cpu list (``"0-3,8,10-15:2/4"``, ``""``) into sorted CPU numbers.

    Syntax from kernel-parameters.txt "cpu lists": ranges ``a-b``, groups ``a-b:used/size``,
    and ``N`` for the last CPU (needs ``last``). ``"(null)"`` (an unset nohz_full on older
    kernels) and ``""`` give ``[]``; a malformed list gives None.
    """
    if text is None:
        return None
    text = text.strip()
    if text in ("", "(null)"):
        return []
    cpus: set[int] = set()
    try:
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            rng, _, group = part.partition(":")
            lo_s, _, hi_s = rng.partition("-")
            lo = _cpu_number(lo_s, last)
            hi = _cpu_number(hi_s, last) if hi_s else lo
            used, size = 1, 1
            if group:
                used_s, _, size_s = group.partition("/")
                used, size = int(used_s), int(size_s)
            if hi < lo or used < 1 or size < used:
                return None
            cpus.update(c for c in range(lo, hi + 1) if (c - lo) % size < used)
    except ValueError:
        return None
    return sorted(cpus)


def _cpu_number(text: str, last: int | None) -> int:
    text = text.strip()
    if text.upper() == "N":
        if last is None:
            raise ValueError("N without a known last CPU")
        return last
    return int(text)


def _cpu_list(root: Path, rel: str) -> list[int] | None:
    return parse_cpu_list(read(root, rel))


def _cpuinfo_blocks(root: Path, first_only: bool = False) -> Iterator[dict[str, str]]:
    """The ``key : value`` blocks of /proc/cpuinfo, one per processor (streamed, so asking
    for the first block does not make the kernel format all of them)."""
    try:
        f = (Path(root) / "proc/cpuinfo").open(errors="replace")
    except OSError:
        return
    with f:
        block: dict[str, str] = {}
        try:
            for line in f:
                if not line.strip():
                    if block:
                        yield block
                        if first_only:
                            return
                    block = {}
                    continue
                key, sep, value = line.partition(":")
                if sep:
                    block.setdefault(key.strip(), value.strip())
        except OSError:
            return
        if block:
            yield block


def _cpuinfo_first(root: Path) -> dict[str, str] | None:
    return next(_cpuinfo_blocks(root, first_only=True), None)


def _flags(block: dict[str, str] | None) -> list[str] | None:
    """CPU feature flags: x86 ``flags``, arm64 ``Features``; None when neither is there."""
    if block is None:
        return None
    text = block.get("flags", block.get("Features"))
    return None if text is None else text.split()


def _run(argv: list[str], timeout: float = SUBPROCESS_TIMEOUT) -> str | None:
    """stdout of ``argv`` if it ran and exited 0 within ``timeout`` seconds, else None."""
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, errors="replace", timeout=timeout, check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return proc.stdout if proc.returncode == 0 else None


# ----------------------------------------------------------------------------- CPU


def cpu_info(root: Path = ROOT) -> dict[str, Any]:
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


def cpu_topology(cpu: int, root: Path = ROOT) -> dict[str, Any]:
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


def frequency_info(cpu: int, root: Path = ROOT) -> dict[str, Any]:
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


def parse_cmdline(cmdline: str) -> dict[str, str]:
    """Kernel parameters as {name: value} (flags without ``=`` map to ""), last one wins.

    Words after a bare ``--`` belong to init, not the kernel, and are dropped.
    """
    params: dict[str, str] = {}
    try:
        words = shlex.split(cmdline)
    except ValueError:
        words = cmdline.split()
    for word in words:
        if word == "--":
            break
        name, _, value = word.partition("=")
        params[name] = value
    return params


def parse_isolcpus(value: str | None, last: int | None = None) -> tuple[list[int] | None, list[str]]:
    """Split an ``isolcpus=[flag,...,]cpu-list`` value into (cpus, flags).

    Flags are ``nohz``, ``domain``, ``managed_irq`` (kernel-parameters.txt); with no flag
    the kernel isolates from the scheduler domains. (None, []) when value is None.
    """
    if value is None:
        return None, []
    parts = value.split(",")
    flags: list[str] = []
    while parts and parts[0] and not parts[0][0].isdigit() and parts[0].upper() != "N":
        flags.append(parts.pop(0))
    return parse_cpu_list(",".join(parts), last), flags


def kernel_info(root: Path = ROOT) -> dict[str, Any]:
    """Kernel release and the boot parameters that matter for measurement.

    Returns ``{"release", "version", "machine": str|None, "cmdline": str|None,
    "isolcpus": list[int]|None, "isolcpus_flags": list[str], "nohz_full": list[int]|None,
    "cmdline_isolcpus": list[int]|None, "cmdline_nohz_full": list[int]|None}``.
    release/version/machine come from os.uname() when root is "/", else from
    proc/sys/kernel/{osrelease,version,arch}. ``isolcpus``/``nohz_full`` are the effective
    sets from /sys/devices/system/cpu/{isolated,nohz_full} when those files exist, else
    what the command line asks for; ``[]`` means none, None means unknown.
    """
    root = Path(root)
    if is_live(root):
        u = os.uname()
        release, version, machine = u.release, u.version, u.machine
    else:
        release = read(root, "proc/sys/kernel/osrelease")
        version = read(root, "proc/sys/kernel/version")
        machine = read(root, "proc/sys/kernel/arch")
    cmdline = read(root, "proc/cmdline")
    possible = _cpu_list(root, f"{_CPU}/possible")
    last = possible[-1] if possible else None
    params = parse_cmdline(cmdline) if cmdline is not None else {}
    cmd_iso, iso_flags = parse_isolcpus(params.get("isolcpus"), last)
    cmd_nohz = parse_cpu_list(params.get("nohz_full"), last)
    if cmdline is not None:
        cmd_iso = [] if cmd_iso is None and "isolcpus" not in params else cmd_iso
        cmd_nohz = [] if cmd_nohz is None and "nohz_full" not in params else cmd_nohz
    iso = _cpu_list(root, f"{_CPU}/isolated")
    nohz = _cpu_list(root, f"{_CPU}/nohz_full")
    return {
        "release": release,
        "version": version,
        "machine": machine,
        "cmdline": cmdline,
        "isolcpus": iso if iso is not None else cmd_iso,
        "isolcpus_flags": iso_flags,
        "nohz_full": nohz if nohz is not None else cmd_nohz,
        "cmdline_isolcpus": cmd_iso,
        "cmdline_nohz_full": cmd_nohz,
    }


def _dmi_hypervisor(root: Path) -> tuple[str | None, bool]:
    """(hypervisor name from DMI strings or None, whether DMI says bare metal)."""
    values = {f: read(root, f"sys/class/dmi/id/{f}") for f in _DMI_FIELDS}
    product = (values.get("product_name") or "").lower()
    vendor = (values.get("sys_vendor") or "").lower()
    if product.endswith(".metal"):  # EC2 bare-metal instances keep sys_vendor "Amazon EC2"
        return None, True
    if vendor.startswith("microsoft") and "virtual machine" in product:
        return "Microsoft Hyper-V", False
    for field in _DMI_FIELDS:
        text = (values.get(field) or "").lower()
        if not text:
            continue
        for needle, name in _DMI_HYPERVISORS:
            if needle in text:
                return name, False
    return None, False


def hypervisor(root: Path = ROOT) -> str | None:
    """Name of the hypervisor this kernel runs under, or None on bare metal.

    x86: the cpuinfo ``hypervisor`` flag (CPUID.1:ECX[31]) decides whether there is one;
    its name comes from DMI (sys_vendor, product_name, board_vendor, bios_vendor — e.g.
    "QEMU", "VMware", "Microsoft Hyper-V", "Amazon EC2"), else /sys/hypervisor/type ("Xen"),
    else a paravirtual clocksource ("kvm-clock" → "KVM"), else "unknown". Other
    architectures have no such flag: the name from DMI or /sys/hypervisor alone decides.
    Names follow systemd-detect-virt's DMI table.
    """
    root = Path(root)
    block = _cpuinfo_first(root)
    flags = _flags(block)
    x86 = block is not None and "vendor_id" in block and flags is not None
    dmi, metal = _dmi_hypervisor(root)
    if x86 and "hypervisor" not in (flags or []):
        return None
    if metal and not x86:
        return None
    name = dmi
    if name is None:
        hv_type = read(root, "sys/hypervisor/type")
        if hv_type:
            name = "Xen" if hv_type.lower() == "xen" else hv_type
    if name is None:
        avail = (read(root, f"{_CLOCKSOURCE}/available_clocksource") or "").split()
        name = next((n for cs, n in _CLOCKSOURCE_HYPERVISORS if cs in avail), None)
    if name is None and x86:
        return "unknown"
    return name


def tsc_info(root: Path = ROOT) -> dict[str, Any]:
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


def parse_kernel_tsc_mhz(text: str) -> tuple[float, str] | None:
    """TSC frequency (MHz) and its source from kernel log text, or None.

    Prefers ``tsc: Refined TSC clocksource calibration: 2593.905 MHz`` ("kernel-refined",
    the late calibration against HPET/PM timer) over ``tsc: Detected 2600.000 MHz processor``
    ("kernel-detected", the early boot figure); messages from arch/x86/kernel/tsc.c. The last
    match of the preferred kind wins. A log holding several boots (kern.log) is read from the
    last "Detected" line on, so a refined figure from an older boot — possibly on another host
    — never overrides the current boot's.
    """
    detected = list(_DETECTED_RE.finditer(text))
    start = detected[-1].start() if detected else 0
    refined = [m for m in _REFINED_RE.finditer(text) if m.start() >= start]
    if refined:
        return float(refined[-1].group(1)), "kernel-refined"
    if detected:
        return float(detected[-1].group(1)), "kernel-detected"
    return None


def kernel_tsc_hz(kern_log: Path = KERN_LOG) -> tuple[float, str] | None:
    """TSC frequency in Hz according to the kernel, with its source, or None.

    Runs ``dmesg`` (5 s timeout; fails without privileges when kernel.dmesg_restrict=1),
    then falls back to the ``tsc:`` lines of ``kern_log`` (/var/log/kern.log, read as a
    stream). Source is "kernel-refined" or "kernel-detected" (see parse_kernel_tsc_mhz).
    """
    out = _run(["dmesg"])
    found = parse_kernel_tsc_mhz(out) if out else None
    if found is None:
        try:
            with Path(kern_log).open(errors="replace") as f:
                found = parse_kernel_tsc_mhz("".join(line for line in f if "tsc:" in line))
        except OSError:
            found = None
    return None if found is None else (found[0] * 1e6, found[1])


def pmu_info(root: Path = ROOT) -> dict[str, Any]:
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


def load_info(root: Path = ROOT) -> dict[str, Any]:
    """System load from /proc/loadavg (proc(5)).

    Returns ``{"load1", "load5", "load15": float|None (run-queue averages over 1/5/15 min),
    "running": int|None (runnable scheduling entities now, this process included),
    "total": int|None (entities in the system)}``.
    """
    text = read(Path(root), "proc/loadavg")
    out: dict[str, Any] = dict.fromkeys(("load1", "load5", "load15", "running", "total"))
    if not text:
        return out
    fields = text.split()
    try:
        out["load1"], out["load5"], out["load15"] = (float(x) for x in fields[:3])
        running, _, total = fields[3].partition("/")
        out["running"], out["total"] = int(running), int(total)
    except (ValueError, IndexError):
        pass
    return out


def _parse_stat(text: str) -> tuple[str, str, int] | None:
    """(comm, state, processor) from a /proc/[pid]/stat line; comm may hold spaces and ')'."""
    lpar, rpar = text.find("("), text.rfind(")")
    if lpar < 0 or rpar < lpar:
        return None
    rest = text[rpar + 2:].split()
    # rest[0] is field 3 (state); field 39 (processor) is rest[36].
    if len(rest) < 37:
        return None
    try:
        return text[lpar + 1:rpar], rest[0], int(rest[36])
    except ValueError:
        return None


def busy_on_cpu(cpu: int, root: Path = ROOT) -> list[dict[str, Any]]:
    """Threads that last ran on ``cpu`` and are runnable now: competitors for the runner.

    Scans /proc/[pid]/task/[tid]/stat (or /proc/[pid]/stat when there is no task dir) for
    state ``R`` with field 39 (processor, proc(5)) equal to ``cpu``. When root is "/", this
    process's own threads are left out. Returns ``[{"pid": int, "tid": int, "comm": str}]``
    sorted by (pid, tid). A snapshot: a thread that just slept is missed, one that just
    woke is caught.
    """
    root = Path(root)
    me = os.getpid() if is_live(root) else None
    proc = root / "proc"
    found: list[dict[str, Any]] = []
    try:
        pids = [int(p.name) for p in proc.iterdir() if p.name.isdigit()]
    except OSError:
        return found
    for pid in sorted(pids):
        if pid == me:
            continue
        try:
            tids = [int(t.name) for t in (proc / str(pid) / "task").iterdir() if t.name.isdigit()]
            paths = [(tid, proc / str(pid) / "task" / str(tid) / "stat") for tid in sorted(tids)]
        except OSError:
            paths = [(pid, proc / str(pid) / "stat")]
        for tid, path in paths:
            try:
                parsed = _parse_stat(path.read_text(errors="replace"))
            except OSError:
                continue
            if parsed and parsed[1] == "R" and parsed[2] == cpu:
                found.append({"pid": pid, "tid": tid, "comm": parsed[0]})
    return found


# ----------------------------------------------------------------------------- compiler


def compiler_info(cc: str = "cc") -> dict[str, Any]:
    """Which compiler ``cc`` is: ``{"cc": str, "path": str|None (resolved on PATH),
    "version": str|None (first line of ``cc --version``), "target": str|None
    (``cc -dumpmachine``, e.g. "x86_64-linux-gnu")}``. ``cc`` may carry a wrapper
    ("ccache gcc"); it is split with shlex. Failures and timeouts give None fields.
    """
    try:
        argv = shlex.split(cc)
    except ValueError:
        argv = []
    if not argv:
        return {"cc": cc, "path": None, "version": None, "target": None}
    version = _run([*argv, "--version"])
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


def _version() -> str | None:
    try:
        return metadata.version("cyclebench")
    except metadata.PackageNotFoundError:
        return None


def capture(cpu: int, cc: str = "cc", root: Path = ROOT) -> dict[str, Any]:
    """The environment of a run on ``cpu``, as one JSON-serialisable dict.

    Keys: cpu, topology (cpu_topology), cpu_info (with flags), frequency (frequency_info),
    kernel, hypervisor, tsc, pmu, load, busy (busy_on_cpu), compiler (compiler_info(cc)),
    python {version, implementation, executable}, hostname, cyclebench_version (installed
    distribution's, else None), captured_at (Unix time, s), capture_s (seconds it took).
    Stored in the runs table's ``env`` column; ``cyclebench check`` reads it back.
    """
    root = Path(root)
    t0 = time.perf_counter()
    hostname = socket.gethostname() if is_live(root) else read(root, "proc/sys/kernel/hostname")
    env: dict[str, Any] = {
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
        "compiler": compiler_info(cc),
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
        "hostname": hostname,
        "cyclebench_version": _version(),
        "captured_at": time.time(),
    }
    env["capture_s"] = round(time.perf_counter() - t0, 4)
    return env
