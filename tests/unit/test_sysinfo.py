"""Tests for cyclebench.sysinfo on fixture trees of /proc and /sys (see fixtures/README.md).

Only the capture()/choose_cpu() smoke tests touch the real machine, and they assert shapes,
never a vendor or a CPU count.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from cyclebench.env import kernel, sysinfo

from conftest import write_file

FIXTURES = Path(__file__).parents[1] / "fixtures"
KVM = FIXTURES / "sysroot_kvm"
METAL = FIXTURES / "sysroot_baremetal"
CPU = "sys/devices/system/cpu"




# ----------------------------------------------------------------------------- cpu_info


def test_cpu_info_kvm() -> None:
    info = sysinfo.cpu_info(KVM)
    assert info["model_name"] == "Intel(R) Xeon(R) Processor"
    assert info["vendor"] == "GenuineIntel"
    assert (info["family"], info["model"], info["stepping"]) == (6, 167, 1)
    assert info["microcode"] == "0x1"
    assert isinstance(info["flags"], list)
    assert {"hypervisor", "constant_tsc", "avx2", "rdtscp"} <= set(info["flags"])
    assert info["logical_cpus"] == 2
    assert info["online"] == [0, 1]


def test_cpu_info_baremetal() -> None:
    info = sysinfo.cpu_info(METAL)
    assert info["model_name"] == "Intel(R) Core(TM) i5-7200U CPU @ 2.50GHz"
    assert (info["family"], info["model"], info["stepping"]) == (6, 142, 9)
    assert info["microcode"] == "0xf4"
    assert "hypervisor" not in info["flags"]
    assert "vmx" in info["flags"]
    assert info["logical_cpus"] == 4  # from sys/.../present, though cpuinfo holds two blocks
    assert info["online"] == [0, 1, 2, 3]


def test_cpu_info_arm64(tmp_path: Path) -> None:
    write_file(tmp_path, "proc/cpuinfo",
           "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes crc32 atomics\n"
           "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\n"
           "CPU part\t: 0xd0c\nCPU revision\t: 1\n\n")
    info = sysinfo.cpu_info(tmp_path)
    assert info["vendor"] == "ARM"
    assert info["flags"] == ["fp", "asimd", "evtstrm", "aes", "crc32", "atomics"]
    assert (info["family"], info["model"], info["stepping"]) == (8, 0xD0C, 1)
    assert info["logical_cpus"] == 1
    assert sysinfo.hypervisor(tmp_path) is None
    assert sysinfo.tsc_info(tmp_path)["constant_tsc"] is None


def test_empty_root_gives_none_not_exceptions(tmp_path: Path) -> None:
    assert set(sysinfo.cpu_info(tmp_path).values()) == {None}
    assert sysinfo.cpu_topology(0, tmp_path)["smt_siblings"] is None
    assert set(sysinfo.frequency_info(0, tmp_path).values()) == {None}
    kern = sysinfo.kernel_info(tmp_path)
    assert kern["cmdline"] is None and kern["isolcpus"] is None and kern["release"] is None
    assert sysinfo.hypervisor(tmp_path) is None
    assert sysinfo.tsc_info(tmp_path)["clocksource"] is None
    pmu = sysinfo.pmu_info(tmp_path)
    assert pmu["perf_event_paranoid"] is None and pmu["event_sources"] is None
    assert pmu["hardware_pmu"] is False
    assert set(sysinfo.load_info(tmp_path).values()) == {None}
    assert sysinfo.busy_on_cpu(0, tmp_path) == []
    assert sysinfo.choose_cpu(tmp_path) == 0
    json.dumps(sysinfo.capture(0, cc="/nonexistent/cc", root=tmp_path))


# ----------------------------------------------------------------------------- topology, frequency


def test_topology_smt_siblings() -> None:
    t0 = sysinfo.cpu_topology(0, METAL)
    assert t0["smt_siblings"] == [0, 2]
    assert (t0["core_id"], t0["package_id"]) == (0, 0)
    t3 = sysinfo.cpu_topology(3, METAL)
    assert t3["smt_siblings"] == [1, 3] and t3["core_id"] == 1
    assert t3["smt_active"] is True and t3["smt_control"] == "on"
    kvm = sysinfo.cpu_topology(1, KVM)
    assert kvm["smt_siblings"] == [1] and kvm["core_id"] == 1 and kvm["smt_active"] is False


def test_frequency_intel_pstate() -> None:
    f = sysinfo.frequency_info(3, METAL)
    assert f["driver"] == "intel_pstate"
    assert f["governor"] == "powersave"
    assert (f["min_khz"], f["max_khz"], f["cur_khz"]) == (400_000, 3_100_000, 1_100_000)
    assert f["pstate_status"] == "active"
    assert f["no_turbo"] == 0 and f["boost"] is None and f["turbo"] is True


def test_frequency_no_turbo(metal: Path) -> None:
    write_file(metal, f"{CPU}/intel_pstate/no_turbo", "1")
    assert sysinfo.frequency_info(0, metal)["turbo"] is False


def test_frequency_acpi_cpufreq_boost(tmp_path: Path) -> None:
    write_file(tmp_path, f"{CPU}/cpu0/cpufreq/scaling_driver", "acpi-cpufreq")
    write_file(tmp_path, f"{CPU}/cpu0/cpufreq/scaling_governor", "performance")
    write_file(tmp_path, f"{CPU}/cpufreq/boost", "0")
    f = sysinfo.frequency_info(0, tmp_path)
    assert (f["driver"], f["governor"], f["boost"], f["turbo"], f["no_turbo"]) == (
        "acpi-cpufreq", "performance", 0, False, None)


def test_frequency_vm_has_none() -> None:
    assert set(sysinfo.frequency_info(0, KVM).values()) == {None}


# ----------------------------------------------------------------------------- kernel


@pytest.mark.parametrize(("text", "expected"), [
    ("0-3,8", [0, 1, 2, 3, 8]),
    ("3", [3]),
    ("", []),
    ("(null)", []),
    ("0-7:2/4", [0, 1, 4, 5]),
    ("5,1-2", [1, 2, 5]),
    ("x", None),
    ("3-1", None),
])
def test_parse_cpu_list(text: str, expected: list[int] | None) -> None:
    assert sysinfo.parse_cpu_list(text) == expected


def test_parse_cpu_list_last_cpu() -> None:
    assert sysinfo.parse_cpu_list("2-N", last=5) == [2, 3, 4, 5]
    assert sysinfo.parse_cpu_list("2-N") is None


def test_parse_isolcpus_flags() -> None:
    assert sysinfo.parse_isolcpus("managed_irq,domain,2-3,6") == ([2, 3, 6], ["managed_irq", "domain"])
    assert sysinfo.parse_isolcpus("3") == ([3], [])
    assert sysinfo.parse_isolcpus(None) == (None, [])


def test_kernel_info_baremetal() -> None:
    k = sysinfo.kernel_info(METAL)
    assert k["release"] == "6.1.0-18-amd64"
    assert k["version"].startswith("#1 SMP PREEMPT_DYNAMIC Debian")
    assert k["machine"] == "x86_64"
    assert "isolcpus=3" in k["cmdline"]
    assert k["isolcpus"] == [3] and k["nohz_full"] == [3]
    assert k["cmdline_isolcpus"] == [3] and k["cmdline_nohz_full"] == [3]


def test_kernel_info_kvm_ignores_init_args() -> None:
    k = sysinfo.kernel_info(KVM)
    assert k["isolcpus"] == [] and k["nohz_full"] == []
    params = sysinfo.parse_cmdline(k["cmdline"])
    assert params["panic"] == "1" and "quiet" in params
    assert "--firecracker-init" not in params  # after "--": init's, not the kernel's


def test_kernel_info_cmdline_only_and_sysfs_wins(metal: Path) -> None:
    (metal / CPU / "isolated").unlink()
    (metal / CPU / "nohz_full").unlink()
    write_file(metal, "proc/cmdline", "ro isolcpus=nohz,domain,1-N nohz_full=2")
    k = sysinfo.kernel_info(metal)
    assert k["isolcpus"] == [1, 2, 3] and k["isolcpus_flags"] == ["nohz", "domain"]
    assert k["nohz_full"] == [2]
    write_file(metal, f"{CPU}/isolated", "")  # e.g. isolcpus=nohz,... without 'domain'
    write_file(metal, f"{CPU}/nohz_full", "(null)")
    k = sysinfo.kernel_info(metal)
    assert k["isolcpus"] == [] and k["cmdline_isolcpus"] == [1, 2, 3]
    assert k["nohz_full"] == []


def test_kernel_info_live_uses_uname() -> None:
    k = sysinfo.kernel_info()
    assert k["release"] == os.uname().release and k["machine"] == os.uname().machine


# ----------------------------------------------------------------------------- hypervisor


def test_hypervisor_kvm_fixture() -> None:
    assert sysinfo.hypervisor(KVM) == "KVM"  # hypervisor flag, no DMI, kvm-clock available


def test_hypervisor_baremetal_fixture() -> None:
    assert sysinfo.hypervisor(METAL) is None


def _flag_hypervisor(root: Path) -> None:
    path = root / "proc/cpuinfo"
    path.write_text(path.read_text().replace("flags\t\t: fpu ", "flags\t\t: fpu hypervisor "))
    assert "hypervisor" in sysinfo.cpu_info(root)["flags"]


@pytest.mark.parametrize(("dmi", "expected"), [
    ({"sys_vendor": "QEMU", "product_name": "Standard PC (Q35 + ICH9, 2009)"}, "QEMU"),
    ({"sys_vendor": "VMware, Inc.", "product_name": "VMware Virtual Platform"}, "VMware"),
    ({"sys_vendor": "Microsoft Corporation", "product_name": "Virtual Machine"}, "Microsoft Hyper-V"),
    ({"sys_vendor": "Amazon EC2", "product_name": "m5.large"}, "Amazon EC2"),
    ({"sys_vendor": "Xen", "product_name": "HVM domU"}, "Xen"),
    ({"sys_vendor": "Google", "product_name": "Google Compute Engine"}, "Google Compute Engine"),
    ({"sys_vendor": "innotek GmbH", "product_name": "VirtualBox"}, "VirtualBox"),
])
def test_hypervisor_from_dmi(metal: Path, dmi: dict[str, str], expected: str) -> None:
    _flag_hypervisor(metal)
    for field, value in dmi.items():
        write_file(metal, f"sys/class/dmi/id/{field}", value)
    assert sysinfo.hypervisor(metal) == expected


def test_hypervisor_sys_hypervisor_and_unknown(metal: Path) -> None:
    _flag_hypervisor(metal)
    assert sysinfo.hypervisor(metal) == "unknown"  # flag set, LENOVO DMI, no paravirt clock
    write_file(metal, "sys/hypervisor/type", "xen")
    assert sysinfo.hypervisor(metal) == "Xen"


def test_hypervisor_ec2_metal_is_bare(metal: Path) -> None:
    write_file(metal, "sys/class/dmi/id/sys_vendor", "Amazon EC2")
    write_file(metal, "sys/class/dmi/id/product_name", "m5.metal")
    assert sysinfo.hypervisor(metal) is None


# ----------------------------------------------------------------------------- tsc, pmu, load


def test_tsc_info() -> None:
    kvm = sysinfo.tsc_info(KVM)
    assert kvm["constant_tsc"] is True and kvm["nonstop_tsc"] is True and kvm["tsc_known_freq"] is True
    assert kvm["clocksource"] == "tsc"
    assert kvm["available_clocksources"] == ["tsc", "kvm-clock"]
    metal = sysinfo.tsc_info(METAL)
    assert metal["constant_tsc"] is True and metal["tsc_known_freq"] is False
    assert metal["available_clocksources"] == ["tsc", "hpet", "acpi_pm"]


def test_pmu_info() -> None:
    kvm = sysinfo.pmu_info(KVM)
    assert kvm["perf_event_paranoid"] == 2
    assert kvm["hardware_pmu"] is False and kvm["pmu"] is None
    assert "software" in kvm["event_sources"] and "cpu" not in kvm["event_sources"]
    metal = sysinfo.pmu_info(METAL)
    assert metal["perf_event_paranoid"] == 3
    assert metal["hardware_pmu"] is True and metal["pmu"] == "cpu" and metal["pmu_name"] == "skylake"
    assert metal["nmi_watchdog"] == 1


def test_pmu_hybrid_and_arm(tmp_path: Path) -> None:
    for name in ("cpu_atom", "cpu_core", "software"):
        write_file(tmp_path, f"sys/bus/event_source/devices/{name}/type", "1")
    assert sysinfo.pmu_info(tmp_path)["pmu"] == "cpu_atom"
    arm = tmp_path / "arm"
    write_file(arm, "sys/bus/event_source/devices/armv8_pmuv3_0/type", "8")
    assert sysinfo.pmu_info(arm)["hardware_pmu"] is True
    (arm / "sys/bus/event_source/devices/armv8_pmuv3_0/type").unlink()
    assert sysinfo.pmu_info(arm)["hardware_pmu"] is False  # a directory without 'type' is no PMU


def test_load_info() -> None:
    load = sysinfo.load_info(METAL)
    assert load == {"load1": 0.52, "load5": 0.38, "load15": 0.30, "running": 3, "total": 812}


# ----------------------------------------------------------------------------- busy_on_cpu


def test_busy_on_cpu() -> None:
    busy = sysinfo.busy_on_cpu(3, METAL)
    assert [(b["pid"], b["tid"], b["comm"]) for b in busy] == [
        (4242, 4242, "yes"),
        (4245, 4246, "worker 2)"),   # a runnable thread of a sleeping process; ')' in comm
        (4300, 4300, "no-task-dir"),  # /proc/[pid]/stat when there is no task directory
    ]  # 4243 sleeps on CPU 3: not listed
    assert [b["comm"] for b in sysinfo.busy_on_cpu(1, METAL)] == ["Web (Content)"]
    assert sysinfo.busy_on_cpu(0, METAL) == []


def test_busy_on_cpu_live_excludes_self() -> None:
    for cpu in sorted(os.sched_getaffinity(0)):
        assert all(b["pid"] != os.getpid() for b in sysinfo.busy_on_cpu(cpu))


# ----------------------------------------------------------------------------- TSC from the kernel log

DETECTED = "[    0.000000] tsc: Detected 2600.000 MHz processor\n"
REFINED = "[    1.234567] tsc: Refined TSC clocksource calibration: 2593.905 MHz\n"


def test_parse_kernel_tsc_refined_preferred() -> None:
    assert sysinfo.parse_kernel_tsc_mhz(DETECTED + "other\n" + REFINED) == (2593.905, "kernel-refined")


def test_parse_kernel_tsc_detected_only() -> None:
    assert sysinfo.parse_kernel_tsc_mhz("x\n" + DETECTED + "y\n") == (2600.0, "kernel-detected")
    cpuid_style = "[ 0.0] tsc: Detected 2112.000 MHz TSC\n"
    assert sysinfo.parse_kernel_tsc_mhz(cpuid_style) == (2112.0, "kernel-detected")


def test_parse_kernel_tsc_none() -> None:
    assert sysinfo.parse_kernel_tsc_mhz("") is None
    assert sysinfo.parse_kernel_tsc_mhz("clocksource: Switched to clocksource tsc\n") is None


def test_parse_kernel_tsc_last_match_and_boots() -> None:
    two_refined = DETECTED + REFINED + REFINED.replace("2593.905", "2593.911")
    assert sysinfo.parse_kernel_tsc_mhz(two_refined) == (2593.911, "kernel-refined")
    # kern.log with two boots: the second boot's own figure, not the first boot's refined one
    two_boots = DETECTED + REFINED + DETECTED.replace("2600.000", "3000.000")
    assert sysinfo.parse_kernel_tsc_mhz(two_boots) == (3000.0, "kernel-detected")
    # a log that lost its "Detected" line still yields the refined figure
    assert sysinfo.parse_kernel_tsc_mhz(REFINED) == (2593.905, "kernel-refined")


def test_kernel_tsc_hz_falls_back_to_kern_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(kernel, "_run", lambda argv, timeout=5.0: None)  # dmesg not permitted
    log = tmp_path / "kern.log"
    prefix = "Jan  1 00:00:00 host kernel: "
    log.write_text(prefix + DETECTED + prefix + "noise\n" + prefix + REFINED)
    assert sysinfo.kernel_tsc_hz(kern_log=log) == (2593.905e6, "kernel-refined")
    assert sysinfo.kernel_tsc_hz(kern_log=tmp_path / "missing.log") is None


def test_kernel_tsc_hz_from_dmesg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def fake_run(argv: list[str], timeout: float = 5.0) -> str:
        calls.append(argv)
        return DETECTED

    monkeypatch.setattr(kernel, "_run", fake_run)
    assert sysinfo.kernel_tsc_hz(kern_log=tmp_path / "missing.log") == (2600e6, "kernel-detected")
    assert calls == [["dmesg"]]


def test_kernel_tsc_hz_real_machine_does_not_raise() -> None:
    got = sysinfo.kernel_tsc_hz()
    assert got is None or (got[0] > 1e8 and got[1] in ("kernel-refined", "kernel-detected"))


# ----------------------------------------------------------------------------- compiler


def test_compiler_info_missing() -> None:
    info = sysinfo.compiler_info("/nonexistent/definitely-not-a-cc")
    assert info == {"cc": "/nonexistent/definitely-not-a-cc", "path": None, "version": None, "target": None}


@pytest.mark.skipif(shutil.which("cc") is None, reason="no cc on PATH")
def test_compiler_info_cc() -> None:
    info = sysinfo.compiler_info("cc")
    assert isinstance(info["version"], str) and "\n" not in info["version"]
    assert isinstance(info["target"], str) and "-" in info["target"]


# ----------------------------------------------------------------------------- choose_cpu


def test_choose_cpu_prefers_isolated() -> None:
    assert sysinfo.choose_cpu(METAL) == 3  # isolcpus=3


def test_choose_cpu_picks_isolated_over_higher(metal: Path) -> None:
    write_file(metal, "proc/cmdline", "ro isolcpus=1")
    write_file(metal, f"{CPU}/isolated", "1")
    write_file(metal, f"{CPU}/nohz_full", "")
    assert sysinfo.choose_cpu(metal) == 1


def test_choose_cpu_avoids_cpu0_and_its_sibling(metal: Path) -> None:
    write_file(metal, "proc/cmdline", "ro quiet")
    write_file(metal, f"{CPU}/isolated", "")
    write_file(metal, f"{CPU}/nohz_full", "")
    write_file(metal, f"{CPU}/online", "0-2")
    assert sysinfo.choose_cpu(metal) == 1  # 2 is CPU 0's SMT sibling
    write_file(metal, f"{CPU}/isolated", "2")  # an isolated sibling of CPU 0 is still avoided
    assert sysinfo.choose_cpu(metal) == 1


def test_choose_cpu_fallbacks(metal: Path) -> None:
    write_file(metal, f"{CPU}/isolated", "")
    write_file(metal, f"{CPU}/online", "0,2")
    assert sysinfo.choose_cpu(metal) == 2  # only CPU 0 and its sibling: the highest
    write_file(metal, f"{CPU}/online", "0")
    assert sysinfo.choose_cpu(metal) == 0  # a 1-CPU machine


def test_choose_cpu_kvm() -> None:
    assert sysinfo.choose_cpu(KVM) == 1


def test_choose_cpu_live() -> None:
    cpu = sysinfo.choose_cpu()
    allowed = os.sched_getaffinity(0)
    isolated = set(sysinfo.kernel_info()["isolcpus"] or [])
    assert cpu in allowed | isolated
    if len(allowed) > 1 and not isolated:
        assert cpu != 0
    assert os.sched_getaffinity(0) == allowed  # the pinning probe restored our mask


# ----------------------------------------------------------------------------- capture

CAPTURE_KEYS = {
    "cpu", "topology", "cpu_info", "frequency", "kernel", "hypervisor", "tsc", "pmu", "load", "busy",
    "compiler", "python", "hostname", "cyclebench_version",
}


def test_capture_real_machine_is_json() -> None:
    cpu = sysinfo.choose_cpu()
    t0 = time.perf_counter()
    env = sysinfo.capture(cpu)
    elapsed = time.perf_counter() - t0
    assert set(env) >= CAPTURE_KEYS
    assert json.loads(json.dumps(env)) == env
    assert env["cpu"] == cpu and env["topology"]["cpu"] == cpu
    assert isinstance(env["cpu_info"]["flags"], list) or env["cpu_info"]["flags"] is None
    assert env["python"]["version"].count(".") == 2
    assert env["hostname"]
    assert elapsed < 1.0  # budget is 0.3 s; slack for a loaded CI machine
    # the package's version, which the run row's tool_version records too, is the installed
    # distribution's (pyproject.toml): one version, read without importlib.metadata (14 ms)
    from importlib import metadata

    import cyclebench

    assert env["cyclebench_version"] == cyclebench.__version__ == metadata.version("cyclebench")


def test_capture_fixture_root() -> None:
    env = sysinfo.capture(3, cc="/nonexistent/cc", root=METAL)
    json.dumps(env)
    assert env["hostname"] == "bench01"
    assert env["hypervisor"] is None
    assert env["frequency"]["governor"] == "powersave"
    assert env["topology"]["smt_siblings"] == [1, 3]
    assert [b["pid"] for b in env["busy"]] == [4242, 4245, 4300]
    assert env["compiler"]["version"] is None


def test_capture_keys_are_the_records_keys() -> None:
    """The stored env JSON and its TypedDicts (model.Environment and its parts) name the same
    keys, each part's all of them: a key added to one and not the other fails here."""
    from cyclebench import model

    env = sysinfo.capture(3, cc="/nonexistent/cc", root=METAL)
    added = set(model.EnvExtra.__annotations__) | {"check"}  # experiments.session.open_run's, not capture's
    assert set(env) == set(model.Environment.__annotations__) - added
    parts = {"topology": model.Topology, "cpu_info": model.CpuInfo, "frequency": model.Frequency,
             "kernel": model.KernelInfo, "tsc": model.Tsc, "pmu": model.Pmu, "load": model.Load,
             "compiler": model.Compiler, "python": model.PythonInfo}
    for key, record in parts.items():
        assert set(env[key]) == record.__required_keys__, key
    assert all(set(b) == model.BusyThread.__required_keys__ for b in env["busy"]) and env["busy"]


def test_a_known_version_line_is_not_asked_again(tmp_path: Path) -> None:
    """The build's `cc --version` line (remembered) is the run's: the compiler is not run for it."""
    asked = tmp_path / "asked"
    cc = tmp_path / "xcc"
    cc.write_text(f'#!/bin/sh\necho "$1" >> {asked}\necho "xcc 9"\n')
    cc.chmod(0o755)
    info = sysinfo.compiler_info(str(cc), "xcc 9 (from the build)")
    assert info["version"] == "xcc 9 (from the build)" and info["target"] == "xcc 9"
    assert asked.read_text().split() == ["-dumpmachine"]
    assert sysinfo.compiler_info(str(cc))["version"] == "xcc 9"  # unknown: asked
    asked.unlink()
    info = sysinfo.compiler_info(str(cc), "xcc 9 (from the build)", "xcc-linux-gnu")  # the target too
    assert (info["version"], info["target"]) == ("xcc 9 (from the build)", "xcc-linux-gnu") and not asked.exists()
