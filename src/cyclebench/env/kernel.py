"""The kernel's side of the environment: boot parameters (isolcpus, nohz_full), the hypervisor
(DMI, clocksource), the TSC rate it measured at boot, load and who runs on a CPU.

Sources: ``Documentation/admin-guide/kernel-parameters.txt``, ``arch/x86/kernel/tsc.c`` for the
``tsc:`` boot messages, systemd's ``detect-virt`` DMI table, proc(5)."""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from cyclebench.env.sysfs import _CPU, ROOT, _cpu_list, _cpuinfo_first, _flags, _run, is_live, parse_cpu_list, read
from cyclebench.model import BusyThread, KernelInfo, Load

KERN_LOG = Path("/var/log/kern.log")


_CLOCKSOURCE = "sys/devices/system/clocksource/clocksource0"


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


_REFINED_RE = re.compile(r"tsc: Refined TSC clocksource calibration: (\d+(?:\.\d+)?) MHz")


_DETECTED_RE = re.compile(r"tsc: Detected (\d+(?:\.\d+)?) MHz (?:processor|TSC)")


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


def kernel_info(root: Path = ROOT) -> KernelInfo:
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


def load_info(root: Path = ROOT) -> Load:
    """System load from /proc/loadavg (proc(5)).

    Returns ``{"load1", "load5", "load15": float|None (run-queue averages over 1/5/15 min),
    "running": int|None (runnable scheduling entities now, this process included),
    "total": int|None (entities in the system)}``.
    """
    text = read(Path(root), "proc/loadavg")
    out = Load(load1=None, load5=None, load15=None, running=None, total=None)
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


def _split_stat(text: str) -> tuple[str, list[str]] | None:
    """(comm, the fields after it) of a /proc/[pid]/stat line, proc(5): comm may hold spaces and
    ')', so it ends at the last ')'; the list's [0] is field 3 (state), [k] field k + 3."""
    lpar, rpar = text.find("("), text.rfind(")")
    if lpar < 0 or rpar < lpar:
        return None
    return text[lpar + 1:rpar], text[rpar + 2:].split()


def _parse_stat(text: str) -> tuple[str, str, int] | None:
    """(comm, state, processor) from a /proc/[pid]/stat line."""
    split = _split_stat(text)
    if split is None or len(split[1]) < 37:  # field 39 (processor) is rest[36]
        return None
    comm, rest = split
    try:
        return comm, rest[0], int(rest[36])
    except ValueError:
        return None


def busy_on_cpu(cpu: int, root: Path = ROOT) -> list[BusyThread]:
    """Threads that last ran on ``cpu`` and are runnable now: competitors for the runner.

    Scans /proc/[pid]/task/[tid]/stat (or /proc/[pid]/stat when there is no task dir) for
    state ``R`` with field 39 (processor, proc(5)) equal to ``cpu``. When root is "/", this
    process's own threads are left out. Returns ``[{"pid": int, "tid": int, "comm": str}]``
    sorted by (pid, tid). A snapshot: a thread that just slept is missed, one that just
    woke is caught.
    """
    root = Path(root)
    me = os.getpid() if is_live(root) else None
    # strings and os calls, not pathlib: every thread's stat is read, ~300 here, twice a run
    # (capture and check): 33 → 21 ms here
    proc = os.path.join(root, "proc")
    found: list[BusyThread] = []
    try:
        pids = [int(name) for name in os.listdir(proc) if name.isdigit()]
    except OSError:
        return found
    for pid in sorted(pids):
        if pid == me:
            continue
        try:
            task = f"{proc}/{pid}/task"
            paths = [(tid, f"{task}/{tid}/stat") for tid in sorted(int(t) for t in os.listdir(task) if t.isdigit())]
        except OSError:
            paths = [(pid, f"{proc}/{pid}/stat")]
        for tid, path in paths:
            try:
                with open(path, "rb") as f:
                    parsed = _parse_stat(f.read().decode(errors="replace"))
            except OSError:
                continue
            if parsed and parsed[1] == "R" and parsed[2] == cpu:
                found.append({"pid": pid, "tid": tid, "comm": parsed[0]})
    return found


# include/linux/sched.h: a kernel thread, and one whose affinity the kernel fixes (per-CPU threads,
# workqueue workers: sched_setaffinity(2) refuses them)
PF_KTHREAD = 0x00200000
PF_NO_SETAFFINITY = 0x04000000


@dataclass(frozen=True)
class KernelThread:
    """A kernel thread that may be moved between CPUs: its pid, name and the CPU seconds it has
    used since it started (utime + stime, proc(5))."""

    pid: int
    comm: str
    cpu_s: float


def movable_kthreads(cpu: int, root: Path = ROOT) -> list[KernelThread]:
    """The kernel threads allowed on ``cpu`` that could be bound elsewhere, most CPU time first.

    /proc/[pid]/stat's flags (field 9) mark a kernel thread (PF_KTHREAD) and one whose CPUs the
    kernel fixes (PF_NO_SETAFFINITY: per-CPU threads such as ksoftirqd/N, workqueue workers);
    /proc/[pid]/status's Cpus_allowed_list says where the others may run. The others (rcu_preempt,
    kdamond, khugepaged, kswapd, ...) go where a CPU is free: beside a busy CPU 0 that is the
    measured CPU (docs/method.md §5a: rcu_preempt preempted the runner 87 times in 30 processes).
    The kernel's advice for them is to bind them to housekeeping CPUs
    (Documentation/admin-guide/kernel-per-CPU-kthreads.rst). ~3 ms for 120 processes here."""
    proc = os.path.join(root, "proc")
    tick = os.sysconf("SC_CLK_TCK") if is_live(root) else 100
    found = []
    try:
        pids = [name for name in os.listdir(proc) if name.isdigit()]
    except OSError:
        return []
    for pid in pids:
        try:
            with open(f"{proc}/{pid}/stat", "rb") as f:
                split = _split_stat(f.read().decode(errors="replace"))
            if split is None:
                continue
            comm, rest = split
            flags, used = int(rest[6]), int(rest[11]) + int(rest[12])  # fields 9, 14 and 15
            if not flags & PF_KTHREAD or flags & PF_NO_SETAFFINITY:
                continue
            with open(f"{proc}/{pid}/status", "rb") as f:
                allowed = re.search(rb"^Cpus_allowed_list:\s*(\S+)", f.read(), re.M)
        except (OSError, ValueError, IndexError):
            continue
        if allowed and cpu in (parse_cpu_list(allowed.group(1).decode()) or []):
            found.append(KernelThread(int(pid), comm, used / tick))
    return sorted(found, key=lambda k: (-k.cpu_s, k.pid))
