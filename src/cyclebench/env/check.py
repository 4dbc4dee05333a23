"""``cyclebench check``: what on this machine spoils measurements, and the command that fixes it.

Modelled on pyperf's ``system show`` (report the state that matters for benchmarking) and
``system tune`` (change what can be changed at runtime). :func:`run_checks` reads the machine
through :mod:`cyclebench.sysinfo` (so it runs on fixture trees via ``root``) and returns one
:class:`Finding` per check, in the order of :data:`NAMES`:

* ``governor`` — cpufreq scaling governor of the chosen CPU (``scaling_governor``;
  Documentation/admin-guide/pm/cpufreq.rst, intel_pstate.rst): anything but ``performance``
  lets the clock follow load.
* ``boost`` — turbo: ``intel_pstate/no_turbo`` (intel_pstate.rst) or the cpufreq ``boost``
  file, global (acpi-cpufreq) or per policy (amd-pstate) (cpufreq.rst "The boost file").
* ``smt`` — online SMT siblings of the chosen CPU share its core (execution ports, L1/L2).
  The fix offlines them (``cpuN/online``, Documentation/core-api/cpu_hotplug.rst); it is only
  shown, never applied by ``--fix``: taking CPUs away is not something to do silently.
* ``isolation`` — ``isolcpus=``, ``nohz_full=``, ``rcu_nocbs=`` (kernel-parameters.txt): boot
  parameters, so the "fix" is the text to add to the kernel command line.
* ``hypervisor`` — a guest shares its host: steal time and host load move results.
* ``tsc`` — invariant TSC (``constant_tsc`` + ``nonstop_tsc``) and the kernel's clocksource.
* ``perf_event_paranoid`` — Documentation/admin-guide/sysctl/kernel.rst: ≥ 2 forbids kernel
  profiling to unprivileged users (no kernel-side cycles of a syscall), ≥ 3 (Debian/Ubuntu
  patch) forbids perf_event_open entirely.
* ``pmu`` — whether a hardware PMU is exposed (VMs often have none).
* ``load`` — 1-minute load average against the number of online CPUs (proc(5)).
* ``busy`` — other runnable threads on the chosen CPU (:func:`sysinfo.busy_on_cpu`).
* ``nmi_watchdog`` — sysctl/kernel.rst: the perf-based hard-lockup detector holds one
  hardware counter on every CPU (Documentation/admin-guide/lockup-watchdogs.rst).
* ``aslr`` — ``kernel.randomize_va_space`` (sysctl/kernel.rst): with randomization, code and
  data addresses (hence alignment and cache-set effects) differ from run to run. Reported
  only; pyperf leaves it alone too.
* ``tools`` — the system tools the commands run (env/tools.tsv, the table `bash dev.sh run`
  installs from): each one missing, its package and the commands that need it. It reads this
  machine's PATH and compiler even with a fixture ``root``.

Statuses: ``OK`` (nothing to do), ``WARN`` (spoils or limits measurements; a fix is usually
given), ``INFO`` (worth knowing; nothing that cyclebench would change). Each ``fix`` is the
command to type as root; the ``fix_writes`` of a finding are the (path, value) writes that
:func:`apply_fixes` (``--fix``) performs — only for settings that are safe to change and to
change back at runtime (governor, boost, perf_event_paranoid, nmi_watchdog), with the
``revert_writes`` holding the values read before.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cyclebench.env import sysinfo, tools
from cyclebench.model import BusyThread, CheckFinding

STATUSES = ("OK", "WARN", "INFO")
NAMES = ("governor", "boost", "smt", "isolation", "hypervisor", "tsc", "perf_event_paranoid", "pmu", "load",
         "busy", "kthreads", "nmi_watchdog", "aslr", "tools")
LOAD_PER_CPU = 0.5  # 1-min load average above this × online CPUs: WARN
BUSY_SHOWN = 5  # runnable threads listed by name in the "busy" detail
KTHREADS_SHOWN = 3  # movable kernel threads listed by name in the "kthreads" detail

NO_CPUFREQ = "no cpufreq (VM or fixed clock): core clock may drift; use cycles~ calibration"
NO_PMU = ("no hardware PMU exposed (typical of VMs): no cycles event; "
          "cycles~ (add-chain calibration) estimates core cycles instead")
NEEDS_ROOT = "--fix needs root: run as root or apply the commands shown"

_CPU = "sys/devices/system/cpu"
_CLOCKSOURCE = "sys/devices/system/clocksource/clocksource0"
_PARANOID = "proc/sys/kernel/perf_event_paranoid"
_NMI_WATCHDOG = "proc/sys/kernel/nmi_watchdog"
_ASLR = "proc/sys/kernel/randomize_va_space"


@dataclass(frozen=True)
class Finding:
    """One line of the check report.

    ``detail`` is one line saying what was found; ``fix`` the exact command a user would type
    (as root) to fix it — for ``isolation`` the kernel parameters to add, since that needs a
    reboot — or None. ``fix_writes`` are the (absolute path, value) writes :func:`apply_fixes`
    performs, ``revert_writes`` the writes that restore the values read before.
    """

    name: str
    status: str
    detail: str
    fix: str | None = None
    fix_writes: tuple[tuple[str, str], ...] = ()
    revert_writes: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {self.status!r}")
        if "\n" in self.detail:
            raise ValueError("detail must be one line")

    def to_dict(self) -> CheckFinding:
        """JSON-ready (``check --json``, a run's ``env["check"]``): the writes become lists of
        [path, value]."""
        return {
            "name": self.name,
            "status": self.status,
            "detail": self.detail,
            "fix": self.fix,
            "fix_writes": [list(w) for w in self.fix_writes],
            "revert_writes": [list(w) for w in self.revert_writes],
        }


# ----------------------------------------------------------------------------- helpers


def _as_root(root: Path) -> bool:
    """Running as root on the real machine. A fixture tree is judged as an ordinary user sees it,
    so results on fixtures do not depend on who runs the tests."""
    return _is_live(root) and hasattr(os, "geteuid") and os.geteuid() == 0


# the pseudo-file readers are sysinfo's: missing or unreadable → None, never an exception
_is_live, _read, _read_int = sysinfo.is_live, sysinfo.read, sysinfo.read_int


def _online(root: Path) -> list[int] | None:
    return sysinfo.parse_cpu_list(_read(root, f"{_CPU}/online"))


def _ghz(khz: int | None) -> str | None:
    return None if not khz else f"{khz / 1e6:.2f} GHz"


def _cpus(cpus: Iterable[int]) -> str:
    return ",".join(str(c) for c in cpus)


def _threads(busy: Sequence[BusyThread], limit: int = BUSY_SHOWN) -> str:
    """``pid (comm)`` — ``pid/tid (comm)`` for a thread other than the main one — up to ``limit``."""
    shown = [f"{b['pid']} ({b['comm']})" if b["tid"] == b["pid"] else f"{b['pid']}/{b['tid']} ({b['comm']})"
             for b in busy[:limit]]
    if len(busy) > limit:
        shown.append(f"… and {len(busy) - limit} more")
    return ", ".join(shown)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# ----------------------------------------------------------------------------- the checks


def check_governor(cpu: int, root: Path) -> Finding:
    """Scaling governor of ``cpu``'s cpufreq policy (cpufreq.rst "scaling_governor").

    WARN unless ``performance``; the fix writes ``performance`` to the CPU's own
    ``cpufreq/scaling_governor`` (its policy), as ``pyperf system tune`` does.
    """
    freq = sysinfo.frequency_info(cpu, root)
    gov, driver = freq["governor"], freq["driver"]
    if gov is None:
        if driver is None:
            return Finding("governor", "INFO", NO_CPUFREQ)
        return Finding("governor", "INFO", f"cpufreq driver {driver} exposes no governor for CPU {cpu}")
    where = f"{driver}, CPU {cpu}" if driver else f"CPU {cpu}"
    if gov == "performance":
        return Finding("governor", "OK", f"performance ({where})")
    rel = f"{_CPU}/cpu{cpu}/cpufreq/scaling_governor"
    available = (_read(root, f"{_CPU}/cpu{cpu}/cpufreq/scaling_available_governors") or "").split()
    detail = f"{gov} ({where}): the clock follows load, so the first samples run slower than the last"
    if available and "performance" not in available:
        return Finding("governor", "WARN", f"{detail}; no performance governor offered ({' '.join(available)})")
    path = "/" + rel
    return Finding("governor", "WARN", detail, f"echo performance > {path}",
                   fix_writes=((path, "performance"),), revert_writes=((path, gov),))


def check_boost(cpu: int, root: Path) -> Finding:
    """Turbo / boost (intel_pstate.rst ``no_turbo``; cpufreq.rst "The boost file").

    WARN when turbo is on: the clock then depends on temperature, power and the other cores'
    load. The fix writes ``intel_pstate/no_turbo`` = 1, else ``cpufreq/boost`` = 0 (the global
    file of acpi-cpufreq, or the policy's own of amd-pstate).
    """
    freq = sysinfo.frequency_info(cpu, root)
    top, base = freq["hw_max_khz"], freq["base_khz"]
    # intel_pstate: cpuinfo_max_freq is the top turbo clock and base_frequency the base one;
    # acpi-cpufreq has no base_frequency and its cpuinfo_max_freq leaves boost clocks out.
    span = f"up to {_ghz(top)} (base {_ghz(base)})" if top and base and top > base else "above base"
    span = f": the clock rises {span} depending on temperature and on the other cores' load"
    candidates = (
        (f"{_CPU}/intel_pstate/no_turbo", "intel_pstate no_turbo", "1"),  # (file, label, value meaning off)
        (f"{_CPU}/cpufreq/boost", "cpufreq boost", "0"),
        (f"{_CPU}/cpu{cpu}/cpufreq/boost", f"cpu{cpu} cpufreq boost", "0"),
    )
    for rel, label, off in candidates:
        value = _read_int(root, rel)
        if value is None:
            continue
        if str(value) == off:
            return Finding("boost", "OK", f"turbo off ({label}={value})")
        path = "/" + rel
        return Finding("boost", "WARN", f"turbo on ({label}={value}){span}", f"echo {off} > {path}",
                       fix_writes=((path, off),), revert_writes=((path, str(value)),))
    if freq["driver"] is None:
        return Finding("boost", "INFO", "no turbo/boost control (no cpufreq: VM or fixed clock)")
    return Finding("boost", "INFO", f"no turbo/boost control exposed by {freq['driver']}")


def check_smt(cpu: int, root: Path) -> Finding:
    """SMT siblings of ``cpu`` (``topology/thread_siblings_list``) that are online.

    WARN with the command that offlines them (``echo 0 > .../cpuN/online``; or
    ``echo off > /sys/devices/system/cpu/smt/control`` for all cores) — shown, never in
    ``fix_writes``. CPU 0 usually cannot go offline; then the advice is another CPU.
    Siblings with runnable threads are named, since they compete for the core right now.
    """
    top = sysinfo.cpu_topology(cpu, root)
    siblings = top["smt_siblings"]
    if siblings is None:
        return Finding("smt", "INFO", f"SMT topology of CPU {cpu} unknown")
    online = _online(root)
    others = [s for s in siblings if s != cpu and (online is None or s in online)]
    if not others:
        why = {"notsupported": "SMT not supported", "off": "SMT off", "forceoff": "SMT forced off",
               "notimplemented": "SMT not implemented"}.get(top["smt_control"] or "", "")
        return Finding("smt", "INFO", f"no SMT sibling online for CPU {cpu}" + (f" ({why})" if why else ""))
    detail = (f"CPU {cpu} shares its core with CPU {_cpus(others)} (online): "
              "work there takes the core's execution ports and L1/L2")
    for s in others:
        busy = sysinfo.busy_on_cpu(s, root)
        if busy:
            detail += f"; CPU {s} has {_plural(len(busy), 'runnable thread')}: {_threads(busy)}"
    offlinable = [s for s in others if s != 0]
    if not offlinable:
        detail += "; CPU 0 usually cannot go offline: choose a CPU on another core (--cpu)"
        return Finding("smt", "WARN", detail)
    fix = " && ".join(f"echo 0 > /sys/devices/system/cpu/cpu{s}/online" for s in offlinable)
    return Finding("smt", "WARN", detail, fix)


def check_isolation(cpu: int, root: Path) -> Finding:
    """``isolcpus=`` / ``nohz_full=`` (kernel-parameters.txt; the effective sets are
    /sys/devices/system/cpu/{isolated,nohz_full}).

    OK when ``cpu`` is isolated; INFO otherwise, with the parameters to add to the kernel
    command line (``isolcpus``, ``nohz_full``, ``rcu_nocbs`` for the CPU and its online SMT
    siblings) — a boot-time change, never applied by ``--fix``.
    """
    kern = sysinfo.kernel_info(root)
    isolated, nohz = kern["isolcpus"] or [], kern["nohz_full"] or []
    if cpu in isolated:
        if cpu in nohz:
            return Finding("isolation", "OK", f"CPU {cpu} isolated (isolcpus) and tickless (nohz_full)")
        return Finding("isolation", "OK", f"CPU {cpu} isolated (isolcpus); not nohz_full, so the tick still runs")
    if cpu == 0:
        return Finding("isolation", "INFO", "CPU 0 not isolated, and cannot be: it keeps housekeeping work "
                       "(timers, most interrupts); choose another CPU (--cpu)")
    online = _online(root)
    siblings = sysinfo.cpu_topology(cpu, root)["smt_siblings"] or []
    cpus = sorted({cpu, *(s for s in siblings if s != 0 and (online is None or s in online))})
    params = " ".join(f"{p}={_cpus(cpus)}" for p in ("isolcpus", "nohz_full", "rcu_nocbs"))
    known = "" if kern["isolcpus"] is not None else " (isolation unknown)"
    detail = f"CPU {cpu} not isolated{known}: the scheduler may run other tasks on it"
    if isolated:
        detail += f" (isolated: {_cpus(isolated)})"
    return Finding("isolation", "INFO", detail, f"add to the kernel command line and reboot: {params}")


def check_hypervisor(cpu: int, root: Path) -> Finding:
    """Hypervisor detected by :func:`sysinfo.hypervisor` (cpuinfo flag, DMI, clocksource)."""
    hv = sysinfo.hypervisor(root)
    if hv is None:
        return Finding("hypervisor", "OK", "bare metal (no hypervisor detected)")
    name = "unknown hypervisor" if hv == "unknown" else hv
    return Finding("hypervisor", "WARN",
                   f"{name} guest: steal time and host load shift results; compare only within one run")


def check_tsc(cpu: int, root: Path) -> Finding:
    """Invariant TSC and clocksource (Intel SDM vol. 3 §18.17; arch/x86/kernel/tsc.c).

    OK with ``constant_tsc`` and ``nonstop_tsc`` and clocksource ``tsc``. When the kernel
    uses another clocksource but still offers tsc, the fix switches to it (shown only: the
    system clock is not --fix's business); when tsc is not offered the kernel found it
    unstable at boot. Non-x86: INFO (generic timer / clock_gettime).
    """
    tsc = sysinfo.tsc_info(root)
    if tsc["constant_tsc"] is None:
        machine = sysinfo.kernel_info(root)["machine"] or ""
        timer = "generic timer (cntvct_el0)" if machine.startswith(("aarch64", "arm64")) else \
            "generic timer or clock_gettime(CLOCK_MONOTONIC_RAW)"
        return Finding("tsc", "INFO", f"no TSC: {timer}")
    problems = []
    if not tsc["constant_tsc"]:
        problems.append("no constant_tsc (the TSC rate follows P-states)")
    if not tsc["nonstop_tsc"]:
        problems.append("no nonstop_tsc (the TSC may stop in deep C-states)")
    cs, avail = tsc["clocksource"], tsc["available_clocksources"] or []
    fix = None
    if cs != "tsc":
        text = f"clocksource {cs or 'unknown'}, not tsc"
        if "tsc" in avail:
            fix = f"echo tsc > /{_CLOCKSOURCE}/current_clocksource"
        elif cs is not None:
            text += " (tsc not offered: the kernel marked it unstable; see dmesg | grep -i clocksource)"
        problems.append(text)
    if problems:
        return Finding("tsc", "WARN", "; ".join(problems), fix)
    extra = ", tsc_known_freq" if tsc["tsc_known_freq"] else ""
    return Finding("tsc", "OK", f"invariant TSC (constant_tsc, nonstop_tsc{extra}); clocksource tsc")


_PARANOID_MEANING = {
    -1: "all events for all users",
    0: "CPU-wide and kernel events for all users",
    1: "user and kernel events of own processes, no CPU-wide events",
    2: "only user-space events of own processes: kernel-side cycles (syscalls) not counted",
}


def check_perf_event_paranoid(cpu: int, root: Path) -> Finding:
    """``kernel.perf_event_paranoid`` (sysctl/kernel.rst).

    OK at ≤ 1 or as root; WARN above 1 for an ordinary user, fix ``sysctl -w
    kernel.perf_event_paranoid=1`` (applied by --fix, reverted to the old value).
    """
    value = _read_int(root, _PARANOID)
    if value is None:
        return Finding("perf_event_paranoid", "INFO", "kernel.perf_event_paranoid unreadable (no perf_event support?)")
    meaning = _PARANOID_MEANING.get(value) or (
        "perf_event_open forbidden to unprivileged users (Debian/Ubuntu patch)" if value > 2 else "unknown level")
    detail = f"{value}: {meaning}"
    if _as_root(root):
        return Finding("perf_event_paranoid", "OK", f"{detail}; running as root, so not restricted")
    if value <= 1:
        return Finding("perf_event_paranoid", "OK", detail)
    path = "/" + _PARANOID
    return Finding("perf_event_paranoid", "WARN", detail, "sysctl -w kernel.perf_event_paranoid=1",
                   fix_writes=((path, "1"),), revert_writes=((path, str(value)),))


def check_pmu(cpu: int, root: Path) -> Finding:
    """A hardware PMU in /sys/bus/event_source/devices (:func:`sysinfo.pmu_info`)."""
    pmu = sysinfo.pmu_info(root)
    if pmu["hardware_pmu"]:
        name = f" ({pmu['pmu_name']})" if pmu["pmu_name"] else ""
        return Finding("pmu", "OK", f"hardware PMU: {pmu['pmu']}{name}")
    return Finding("pmu", "WARN", NO_PMU)


def check_load(cpu: int, root: Path) -> Finding:
    """1-minute load average (/proc/loadavg) against ``LOAD_PER_CPU`` × online CPUs."""
    load = sysinfo.load_info(root)
    if load["load1"] is None:
        return Finding("load", "INFO", "load average unreadable (/proc/loadavg)")
    online = _online(root)
    n = len(online) if online else (sysinfo.cpu_info(root)["logical_cpus"] or (os.cpu_count() if _is_live(root)
                                                                              else None) or 1)
    limit = LOAD_PER_CPU * n
    detail = (f"load average {load['load1']:.2f} (1 min), {load['load5']:.2f} (5 min) on "
              f"{_plural(n, 'CPU')}; limit {LOAD_PER_CPU:g} × {n} = {limit:g}")
    return Finding("load", "WARN" if load["load1"] > limit else "OK", detail)


def check_busy(cpu: int, root: Path) -> Finding:
    """Other runnable threads on ``cpu`` right now (a snapshot, :func:`sysinfo.busy_on_cpu`)."""
    busy = sysinfo.busy_on_cpu(cpu, root)
    if not busy:
        return Finding("busy", "OK", f"no other runnable thread on CPU {cpu}")
    return Finding("busy", "WARN", f"{_plural(len(busy), 'runnable thread')} on CPU {cpu}: {_threads(busy)}")


def check_kthreads(cpu: int, root: Path) -> Finding:
    """Kernel threads that may run on ``cpu`` and could be bound elsewhere
    (:func:`sysinfo.movable_kthreads`): INFO naming the busiest, with the taskset(1) loop that binds
    them to the other online CPUs (the kernel's advice for such threads,
    Documentation/admin-guide/kernel-per-CPU-kthreads.rst; ``taskset -pc`` with every CPU puts
    them back). Not applied by --fix: it changes no file, and a reboot undoes it anyway. OK when
    there are none (isolcpus keeps them off an isolated CPU)."""
    threads = sysinfo.movable_kthreads(cpu, root)
    if not threads:
        return Finding("kthreads", "OK", f"no movable kernel thread may run on CPU {cpu}")
    shown = ", ".join(f"{k.comm} ({k.cpu_s:.3g} s)" for k in threads[:KTHREADS_SHOWN])
    more = f" and {len(threads) - KTHREADS_SHOWN} more" if len(threads) > KTHREADS_SHOWN else ""
    detail = (f"{_plural(len(threads), 'kernel thread')} may run on CPU {cpu} (and do when the other CPUs are "
              f"busy): {shown}{more}, by CPU time since boot")
    others = [c for c in (_online(root) or []) if c != cpu]
    fix = (f"for p in {' '.join(str(k.pid) for k in threads)}; do taskset -pc {_cpus(others)} $p; done"
           if others else None)
    return Finding("kthreads", "INFO", detail, fix)


def check_nmi_watchdog(cpu: int, root: Path) -> Finding:
    """``kernel.nmi_watchdog`` (sysctl/kernel.rst, lockup-watchdogs.rst).

    WARN at 1 when there is a hardware PMU: the hard-lockup detector keeps one counter busy on
    every CPU. Fix ``sysctl -w kernel.nmi_watchdog=0`` (applied by --fix). Without a hardware
    PMU the detector holds no counter: INFO.
    """
    pmu = sysinfo.pmu_info(root)
    value = pmu["nmi_watchdog"]
    if value is None:
        return Finding("nmi_watchdog", "INFO", "kernel.nmi_watchdog not exposed")
    if value == 0:
        return Finding("nmi_watchdog", "OK", "0: no counter held by the watchdog")
    if not pmu["hardware_pmu"]:
        return Finding("nmi_watchdog", "INFO", f"{value}: no hardware PMU here, so it holds no counter")
    path = "/" + _NMI_WATCHDOG
    return Finding("nmi_watchdog", "WARN", f"{value}: the hard-lockup detector holds one PMU counter on every CPU",
                   "sysctl -w kernel.nmi_watchdog=0", fix_writes=((path, "0"),), revert_writes=((path, str(value)),))


_ASLR_MEANING = {
    0: "off: addresses repeat from run to run",
    1: "stack, mmap and vDSO randomized: addresses vary run to run",
    2: "stack, mmap, vDSO and heap randomized: addresses vary run to run",
}


def check_aslr(cpu: int, root: Path) -> Finding:
    """``kernel.randomize_va_space`` (sysctl/kernel.rst). Reported, never changed: alignment
    effects that vary with addresses are part of what a run samples."""
    value = _read_int(root, _ASLR)
    if value is None:
        return Finding("aslr", "INFO", "kernel.randomize_va_space unreadable")
    return Finding("aslr", "INFO", f"randomize_va_space={value}: {_ASLR_MEANING.get(value, 'unknown level')}")


def check_tools(cpu: int, root: Path) -> Finding:
    """The run-time tools of env/tools.tsv missing here, package by package with the commands that
    need each; the fix is the install command on Debian or Ubuntu (os-release under ``root``), the
    Debian names elsewhere. Only shown: ``--fix`` installs nothing (`bash dev.sh run` does, as root)."""
    rows = tools.table()
    gone = tools.missing(("run",), rows)
    if not gone:
        return Finding("tools", "OK", f"every command's tools are here ({sum(t.scope == 'run' for t in rows)} checked)")
    distro = tools.distro(root)
    apt = distro in ("debian", "ubuntu")
    packages = [p for t in gone for p in t.packages(distro if apt else "debian")]
    detail = "missing: " + "; ".join(f"{' '.join(t.packages(distro if apt else 'debian'))} for {t.needed_by}"
                                     for t in gone)
    fix = (f"apt-get install {' '.join(dict.fromkeys(packages))}" if apt
           else f"install your distribution's {', '.join(dict.fromkeys(packages))} (Debian's names)")
    return Finding("tools", "WARN", detail, fix)


_CHECKS: tuple[Callable[[int, Path], Finding], ...] = (
    check_governor, check_boost, check_smt, check_isolation, check_hypervisor, check_tsc, check_perf_event_paranoid,
    check_pmu, check_load, check_busy, check_kthreads, check_nmi_watchdog, check_aslr, check_tools,
)


def run_checks(cpu: int, root: Path = Path("/")) -> list[Finding]:
    """All checks for a run pinned to ``cpu``, one Finding per name of :data:`NAMES`, in order.

    A check that fails unexpectedly gives an INFO finding saying so instead of stopping the rest.
    """
    root = Path(root)
    out = []
    for name, check in zip(NAMES, _CHECKS, strict=True):
        try:
            out.append(check(cpu, root))
        except Exception as exc:  # a report must not die on one odd file
            out.append(Finding(name, "INFO", f"check failed: {type(exc).__name__}: {exc}".replace("\n", " ")))
    return out


# ----------------------------------------------------------------------------- activity over an interval


@dataclass(frozen=True)
class CpuTimes:
    """/proc/stat's per-CPU times (proc(5)), in clock ticks (USER_HZ): ``busy`` = user + nice +
    system + irq + softirq, ``steal`` = time the hypervisor ran something else while this
    virtual CPU wanted to run, ``total`` = all columns but guest (already in user)."""

    busy: int
    steal: int
    total: int


def cpu_times(root: Path = Path("/")) -> dict[int, CpuTimes]:
    """Per-CPU times now, ``{cpu: CpuTimes}``; {} when /proc/stat is unreadable."""
    try:
        text = (Path(root) / "proc/stat").read_text()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        name, *cols = line.split()
        if not name.startswith("cpu") or name == "cpu" or len(cols) < 8:
            continue
        user, nice, system, idle, iowait, irq, softirq, steal = (int(c) for c in cols[:8])
        out[int(name[3:])] = CpuTimes(user + nice + system + irq + softirq, steal,
                                      user + nice + system + idle + iowait + irq + softirq + steal)
    return out


def activity(before: dict[int, CpuTimes], after: dict[int, CpuTimes], cpu: int,
             own_seconds: float = 0.0) -> dict[str, float | None]:
    """What the rest of the machine did between two :func:`cpu_times` readings.

    Returns ``{"others": busy fraction of the CPUs other than ``cpu`` (0–1), less
    ``own_seconds`` of CPU time the caller knows it spent itself; "steal": fraction of ``cpu``'s
    time stolen by the hypervisor (0–1)}``, None where /proc/stat gave nothing.
    """
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    others = [c for c in after if c != cpu and c in before]
    total = sum(after[c].total - before[c].total for c in others)
    busy = sum(after[c].busy - before[c].busy for c in others) - own_seconds * hz
    mine = (after[cpu].total - before[cpu].total) if cpu in after and cpu in before else 0
    return {"others": max(0.0, busy / total) if total > 0 else None,
            "steal": (after[cpu].steal - before[cpu].steal) / mine if mine > 0 else None}


# ----------------------------------------------------------------------------- --fix


def _write(root: Path, path: str, value: str) -> None:
    """``echo value > path`` below ``root``: no creation (a missing file is an error), then read back."""
    target = Path(root) / path.lstrip("/")
    fd = os.open(target, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, (value + "\n").encode())
    finally:
        os.close(fd)
    got = _read(root, path.lstrip("/"))
    if got != value:
        raise OSError(f"wrote {value!r} but it reads {got!r}")


def planned_fixes(findings: Iterable[Finding]) -> list[Finding]:
    """The findings whose ``fix_writes`` :func:`apply_fixes` performs (every WARN that has some),
    in order; reads and writes nothing (``check --fix --dry-run``)."""
    return [f for f in findings if f.status == "WARN" and f.fix_writes]


def apply_fixes(findings: Iterable[Finding], root: Path = Path("/")) -> list[tuple[Finding, str | None]]:
    """Perform the ``fix_writes`` of every WARN finding; returns (finding, error or None) for each.

    On the real machine (``root`` is "/") this needs root, else PermissionError (raised before
    any write). A ``root`` other than "/" is a copy of a tree (tests) and is written without
    privileges. A finding whose writes fail part-way has the earlier ones put back (from
    ``revert_writes``, best effort); its error names the path and the reason.
    """
    root = Path(root)
    if _is_live(root) and not (hasattr(os, "geteuid") and os.geteuid() == 0):
        raise PermissionError(NEEDS_ROOT)
    results: list[tuple[Finding, str | None]] = []
    for finding in planned_fixes(findings):
        done: list[str] = []
        error = None
        for path, value in finding.fix_writes:
            try:
                _write(root, path, value)
            except OSError as exc:
                error = f"{path}: {exc.strerror or exc}"
                break
            done.append(path)
        if error:
            for path, value in finding.revert_writes:
                if path in done:
                    try:
                        _write(root, path, value)
                    except OSError:
                        error += f"; could not restore {path}"
        results.append((finding, error))
    return results


def summary_exit_code(findings: Iterable[Finding], strict: bool = False) -> int:
    """Exit status of ``cyclebench check``: 0, even with WARNs (a VM cannot fix most of them);
    with ``strict`` (for a future ``--strict``), 1 when any finding is a WARN."""
    return 1 if strict and any(f.status == "WARN" for f in findings) else 0
