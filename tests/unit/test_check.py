"""Tests for cyclebench.check on fixture trees of /proc and /sys.

Here the parts that need no compiler (parsers, statistics, fixture trees); the rest, which
builds and runs the engine, is in tests/engine or tests/commands under the same name."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from cyclebench.env import check
from cyclebench.env.check import Finding, apply_fixes, run_checks, summary_exit_code
from cyclebench.report.check import render

from conftest import write_file

FIXTURES = Path(__file__).parents[1] / "fixtures"

KVM = FIXTURES / "sysroot_kvm"

METAL = FIXTURES / "sysroot_baremetal"

AMD = FIXTURES / "sysroot_amd"

CPU = "sys/devices/system/cpu"

def by_name(findings: list[Finding]) -> dict[str, Finding]:
    return {f.name: f for f in findings}

@pytest.fixture
def amd(tmp_path: Path) -> Path:
    root = tmp_path / "amd"
    shutil.copytree(AMD, root)
    return root


@pytest.mark.parametrize("root,cpu", [(KVM, 1), (METAL, 0), (METAL, 3), (AMD, 5)])
def test_every_check_once_in_order(root: Path, cpu: int) -> None:
    findings = run_checks(cpu, root)
    assert [f.name for f in findings] == list(check.NAMES)
    for f in findings:
        assert f.status in ("OK", "WARN", "INFO")
        assert f.detail and "\n" not in f.detail
        assert not f.detail.startswith("check failed"), f.detail
        if f.fix_writes:  # --fix only for what is reported, can be typed, and can be undone
            assert f.status == "WARN" and f.fix
            assert [p for p, _ in f.revert_writes] == [p for p, _ in f.fix_writes]
            assert all(p.startswith(("/sys/", "/proc/sys/")) for p, _ in f.fix_writes)
        if f.status == "OK":
            assert f.fix is None and not f.fix_writes


def test_finding_validates_and_serialises() -> None:
    with pytest.raises(ValueError):
        Finding("x", "BAD", "detail")
    with pytest.raises(ValueError):
        Finding("x", "OK", "two\nlines")
    f = Finding("boost", "WARN", "on", "echo 1 > /a", fix_writes=(("/a", "1"),), revert_writes=(("/a", "0"),))
    assert json.loads(json.dumps(f.to_dict())) == {
        "name": "boost", "status": "WARN", "detail": "on", "fix": "echo 1 > /a",
        "fix_writes": [["/a", "1"]], "revert_writes": [["/a", "0"]]}


def test_kvm_fixture() -> None:
    f = by_name(run_checks(1, KVM))
    assert f["hypervisor"].status == "WARN" and f["hypervisor"].detail.startswith("KVM guest")
    assert "compare only within one run" in f["hypervisor"].detail
    assert f["pmu"].status == "WARN" and f["pmu"].detail == check.NO_PMU
    assert "cycles~" in f["pmu"].detail
    assert f["tsc"].status == "OK" and "constant_tsc" in f["tsc"].detail
    assert f["governor"].status == "INFO" and f["governor"].detail == check.NO_CPUFREQ
    assert f["governor"].fix is None
    assert f["boost"].status == "INFO" and not f["boost"].fix_writes
    assert f["smt"].status == "INFO"
    assert f["isolation"].status == "INFO" and "isolcpus=1 nohz_full=1" in f["isolation"].fix
    assert f["load"].status == "OK"  # 0.20 on 2 CPUs
    assert f["busy"].status == "OK"
    assert f["nmi_watchdog"].status == "OK"
    assert f["aslr"].status == "INFO" and "randomize_va_space=2" in f["aslr"].detail and f["aslr"].fix is None


def test_fixture_results_do_not_depend_on_who_runs_them(monkeypatch: pytest.MonkeyPatch) -> None:
    # paranoid 2 on the KVM tree: WARN whether the test runs as root or not (the tree is not "/")
    for uid in (0, 1000):
        monkeypatch.setattr(os, "geteuid", lambda uid=uid: uid)
        f = by_name(run_checks(1, KVM))["perf_event_paranoid"]
        assert f.status == "WARN" and f.fix == "sysctl -w kernel.perf_event_paranoid=1"
        assert f.fix_writes == (("/proc/sys/kernel/perf_event_paranoid", "1"),)
        assert f.revert_writes == (("/proc/sys/kernel/perf_event_paranoid", "2"),)


def test_baremetal_governor_and_boost() -> None:
    f = by_name(run_checks(0, METAL))
    gov = f["governor"]
    path = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
    assert gov.status == "WARN" and "powersave" in gov.detail and "intel_pstate" in gov.detail
    assert gov.fix == f"echo performance > {path}"
    assert gov.fix_writes == ((path, "performance"),) and gov.revert_writes == ((path, "powersave"),)
    boost = f["boost"]
    nt = "/sys/devices/system/cpu/intel_pstate/no_turbo"
    assert boost.status == "WARN" and "no_turbo=0" in boost.detail and "3.10 GHz" in boost.detail
    assert boost.fix == f"echo 1 > {nt}"
    assert boost.fix_writes == ((nt, "1"),) and boost.revert_writes == ((nt, "0"),)


def test_baremetal_smt_names_sibling_without_fix_writes() -> None:
    smt = by_name(run_checks(0, METAL))["smt"]
    assert smt.status == "WARN" and "CPU 2" in smt.detail
    assert smt.fix == "echo 0 > /sys/devices/system/cpu/cpu2/online"
    assert smt.fix_writes == () and smt.revert_writes == ()


def test_baremetal_isolation() -> None:
    iso3 = by_name(run_checks(3, METAL))["isolation"]
    assert iso3.status == "OK" and "nohz_full" in iso3.detail and iso3.fix is None
    iso1 = by_name(run_checks(1, METAL))["isolation"]
    assert iso1.status == "INFO" and not iso1.fix_writes
    # the CPU and its online sibling, which would otherwise share the core with anything
    assert "isolcpus=1,3 nohz_full=1,3 rcu_nocbs=1,3" in iso1.fix
    iso0 = by_name(run_checks(0, METAL))["isolation"]
    assert iso0.status == "INFO" and iso0.fix is None and "housekeeping" in iso0.detail


def test_baremetal_busy_lists_runnable_threads() -> None:
    busy = by_name(run_checks(3, METAL))["busy"]
    assert busy.status == "WARN"
    assert "4242 (yes)" in busy.detail and "4245/4246 (worker 2))" in busy.detail
    assert "4243" not in busy.detail  # sleeping
    assert by_name(run_checks(1, METAL))["busy"].detail.endswith("4244 (Web (Content))")
    assert by_name(run_checks(0, METAL))["busy"].status == "OK"


def _kthread(root: Path, pid: int, comm: str, flags: int, allowed: str, ticks: int) -> None:
    """A /proc/[pid] of a kernel thread (state S; utime and stime ``ticks`` each, at 100 a second)."""
    rest = ["S", "2", "0", "0", "0", "-1", str(flags), "0", "0", "0", "0", str(ticks), str(ticks)] + ["0"] * 39
    write_file(root, f"proc/{pid}/stat", f"{pid} ({comm}) " + " ".join(rest))
    write_file(root, f"proc/{pid}/status", f"Name:\t{comm}\nCpus_allowed:\tf\nCpus_allowed_list:\t{allowed}")


def test_kthreads_names_the_movable_ones_allowed_on_the_cpu(metal: Path) -> None:
    """Kernel threads the measured CPU may run that taskset(1) can move, busiest first, and the
    loop that binds them to the other online CPUs; not a per-CPU thread (PF_NO_SETAFFINITY), not
    one kept off the CPU, not a user process. None: OK (the fixture as it comes)."""
    assert by_name(run_checks(3, METAL))["kthreads"].status == "OK"
    kthread, pinned = 0x00208040, 0x04208040  # PF_KTHREAD (+ PF_NO_SETAFFINITY), as /proc shows them
    _kthread(metal, 15, "rcu_preempt", kthread, "0-3", 2270)
    _kthread(metal, 71, "kdamond.0", kthread, "0-3", 9150)
    _kthread(metal, 38, "khugepaged", kthread, "0-3", 114)
    _kthread(metal, 45, "kswapd0", kthread, "0-3", 0)
    _kthread(metal, 24, "ksoftirqd/3", pinned, "3", 500)  # per-CPU: cannot be moved
    _kthread(metal, 50, "irq/24-ACPI:Ged", kthread, "0", 10)  # not allowed on CPU 3
    _kthread(metal, 900, "not a kthread", 0x00400100, "0-3", 10**6)
    k = by_name(run_checks(3, metal))["kthreads"]
    assert k.status == "INFO" and not k.fix_writes  # --fix leaves it to the user
    assert k.detail.startswith("4 kernel threads may run on CPU 3")
    assert "kdamond.0 (183 s), rcu_preempt (45.4 s), khugepaged (2.28 s) and 1 more" in k.detail
    assert k.fix == "for p in 71 15 38 45; do taskset -pc 0,1,2 $p; done"
    assert by_name(run_checks(0, metal))["kthreads"].fix == "for p in 71 15 38 50 45; do taskset -pc 1,2,3 $p; done"


def test_baremetal_rest() -> None:
    f = by_name(run_checks(3, METAL))
    assert f["hypervisor"].status == "OK"
    assert f["tsc"].status == "OK"
    assert f["pmu"].status == "OK" and "skylake" in f["pmu"].detail
    assert f["load"].status == "OK" and "0.52" in f["load"].detail  # 0.52 ≤ 0.5 × 4
    p = f["perf_event_paranoid"]
    assert p.status == "WARN" and p.detail.startswith("3:")
    assert p.revert_writes == (("/proc/sys/kernel/perf_event_paranoid", "3"),)
    nmi = f["nmi_watchdog"]
    assert nmi.status == "WARN" and nmi.fix == "sysctl -w kernel.nmi_watchdog=0"
    assert nmi.fix_writes == (("/proc/sys/kernel/nmi_watchdog", "0"),)
    assert nmi.revert_writes == (("/proc/sys/kernel/nmi_watchdog", "1"),)


def test_variants_that_are_fine(metal: Path) -> None:
    write_file(metal, f"{CPU}/intel_pstate/no_turbo", "1")
    write_file(metal, f"{CPU}/cpu3/cpufreq/scaling_governor", "performance")
    write_file(metal, "proc/sys/kernel/perf_event_paranoid", "1")
    write_file(metal, "proc/sys/kernel/nmi_watchdog", "0")
    write_file(metal, f"{CPU}/cpu1/online", "0")
    write_file(metal, f"{CPU}/online", "0,2-3")
    write_file(metal, "proc/loadavg", "2.50 1.00 0.50 3/812 12345")
    f = by_name(run_checks(3, metal))
    assert f["boost"].status == "OK" and f["governor"].status == "OK"
    assert f["perf_event_paranoid"].status == "OK" and f["nmi_watchdog"].status == "OK"
    assert f["smt"].status == "INFO"  # sibling 1 offline
    assert f["load"].status == "WARN" and "2.50" in f["load"].detail  # > 0.5 × 3 online


def test_tsc_variants(metal: Path, tmp_path: Path) -> None:
    cs = "sys/devices/system/clocksource/clocksource0/current_clocksource"
    write_file(metal, cs, "hpet")
    tsc = by_name(run_checks(3, metal))["tsc"]
    assert tsc.status == "WARN" and "hpet" in tsc.detail
    assert tsc.fix == "echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource"
    assert tsc.fix_writes == ()  # the system clock is not --fix's business
    cpuinfo = (metal / "proc/cpuinfo").read_text().replace(" nonstop_tsc", "")
    (metal / "proc/cpuinfo").write_text(cpuinfo)
    assert "nonstop_tsc" in by_name(run_checks(3, metal))["tsc"].detail
    arm = tmp_path / "arm"
    write_file(arm, "proc/cpuinfo", "processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n\n")
    write_file(arm, "proc/sys/kernel/arch", "aarch64")
    tsc = by_name(run_checks(0, arm))["tsc"]
    assert tsc.status == "INFO" and tsc.detail.startswith("no TSC: generic timer")


def test_nmi_watchdog_without_pmu_holds_no_counter(tmp_path: Path) -> None:
    root = tmp_path / "kvm"
    shutil.copytree(KVM, root)
    write_file(root, "proc/sys/kernel/nmi_watchdog", "1")
    nmi = by_name(run_checks(1, root))["nmi_watchdog"]
    assert nmi.status == "INFO" and not nmi.fix_writes


def test_empty_root_gives_info_not_exceptions(tmp_path: Path) -> None:
    findings = run_checks(0, tmp_path)
    assert [f.name for f in findings] == list(check.NAMES)
    assert not any(f.detail.startswith("check failed") for f in findings)
    assert by_name(findings)["governor"].detail == check.NO_CPUFREQ


def test_a_failing_check_does_not_stop_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(cpu: int, root: Path) -> Finding:
        raise RuntimeError("odd file")

    checks = list(check._CHECKS)
    checks[check.NAMES.index("tsc")] = boom
    monkeypatch.setattr(check, "_CHECKS", tuple(checks))
    f = by_name(run_checks(1, KVM))
    assert f["tsc"].status == "INFO" and "RuntimeError: odd file" in f["tsc"].detail
    assert f["pmu"].status == "WARN"


def test_amd_fixture() -> None:
    f = by_name(run_checks(5, AMD))
    gov = f["governor"]
    assert gov.status == "WARN" and "ondemand" in gov.detail and "acpi-cpufreq" in gov.detail
    assert gov.revert_writes == (("/sys/devices/system/cpu/cpu5/cpufreq/scaling_governor", "ondemand"),)
    boost = f["boost"]
    path = "/sys/devices/system/cpu/cpufreq/boost"
    assert boost.status == "WARN" and boost.fix == f"echo 0 > {path}"
    assert boost.fix_writes == ((path, "0"),) and boost.revert_writes == ((path, "1"),)
    assert "GHz" not in boost.detail  # acpi-cpufreq's cpuinfo_max_freq is not the boost clock
    smt = f["smt"]
    assert smt.status == "WARN" and "CPU 11" in smt.detail and "ffmpeg" in smt.detail
    assert smt.fix == "echo 0 > /sys/devices/system/cpu/cpu11/online" and not smt.fix_writes
    assert f["isolation"].status == "INFO" and "isolcpus=5,11" in f["isolation"].fix
    tsc = f["tsc"]
    assert tsc.status == "WARN" and "hpet" in tsc.detail and "unstable" in tsc.detail and tsc.fix is None
    assert f["perf_event_paranoid"].status == "OK"
    assert f["pmu"].status == "OK" and f["pmu"].detail == "hardware PMU: cpu"
    assert f["load"].status == "WARN" and "7.85" in f["load"].detail and "12 CPUs" in f["load"].detail
    busy = f["busy"]
    assert busy.status == "WARN" and busy.detail.startswith("7 runnable threads on CPU 5")
    assert busy.detail.count("(cc1)") == 5 and "and 2 more" in busy.detail
    assert "kworker" not in busy.detail
    assert f["nmi_watchdog"].status == "OK"
    assert f["hypervisor"].status == "OK"


def test_amd_pstate_per_policy_boost(amd: Path) -> None:
    (amd / f"{CPU}/cpufreq/boost").unlink()
    write_file(amd, f"{CPU}/cpu5/cpufreq/boost", "1")
    boost = by_name(run_checks(5, amd))["boost"]
    path = "/sys/devices/system/cpu/cpu5/cpufreq/boost"
    assert boost.status == "WARN" and boost.fix_writes == ((path, "0"),)


def test_smt_sibling_cpu0_cannot_be_offlined(amd: Path) -> None:
    smt = by_name(run_checks(6, amd))["smt"]
    assert smt.status == "WARN" and "CPU 0" in smt.detail and smt.fix is None


def test_apply_fixes_writes_the_tree_copy(metal: Path) -> None:
    findings = run_checks(3, metal)
    results = apply_fixes(findings, metal)
    assert [(f.name, err) for f, err in results] == [
        ("governor", None), ("boost", None), ("perf_event_paranoid", None), ("nmi_watchdog", None)]
    assert (metal / f"{CPU}/cpu3/cpufreq/scaling_governor").read_text().strip() == "performance"
    assert (metal / f"{CPU}/intel_pstate/no_turbo").read_text().strip() == "1"
    assert (metal / "proc/sys/kernel/perf_event_paranoid").read_text().strip() == "1"
    assert (metal / "proc/sys/kernel/nmi_watchdog").read_text().strip() == "0"
    assert (metal / f"{CPU}/cpu1/online").exists() is False  # SMT: shown, never applied
    assert (metal / f"{CPU}/cpu2/cpufreq/scaling_governor").read_text().strip() == "powersave"  # only cpu 3
    after = by_name(run_checks(3, metal))
    assert all(after[n].status == "OK" for n in ("governor", "boost", "perf_event_paranoid", "nmi_watchdog"))
    # and the revert writes put everything back
    for f, _ in results:
        for path, value in f.revert_writes:
            (metal / path.lstrip("/")).write_text(value + "\n")
    assert by_name(run_checks(3, metal))["boost"].status == "WARN"


def test_apply_fixes_reports_failures_and_restores(metal: Path) -> None:
    ok = ("/sys/devices/system/cpu/intel_pstate/no_turbo", "1")
    missing = ("/sys/devices/system/cpu/nope/value", "1")
    f = Finding("boost", "WARN", "x", "echo", fix_writes=(ok, missing),
                revert_writes=((ok[0], "0"), (missing[0], "0")))
    info = Finding("aslr", "INFO", "y")
    [(got, err)] = apply_fixes([f, info], metal)
    assert got is f and err is not None and "/sys/devices/system/cpu/nope/value" in err
    assert (metal / ok[0].lstrip("/")).read_text().strip() == "0"  # first write undone
    assert not (metal / missing[0].lstrip("/")).exists()  # never created


def test_apply_fixes_needs_root_on_the_real_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    findings = run_checks(0, METAL)
    with pytest.raises(PermissionError, match="--fix needs root: run as root or apply the commands shown"):
        apply_fixes(findings, Path("/"))


def test_summary_exit_code() -> None:
    findings = run_checks(3, METAL)
    assert any(f.status == "WARN" for f in findings)
    assert summary_exit_code(findings) == 0
    assert summary_exit_code(findings, strict=True) == 1
    assert summary_exit_code([Finding("x", "OK", "fine"), Finding("y", "INFO", "fyi")], strict=True) == 0


def test_render_table() -> None:
    buf = io.StringIO()
    console = Console(file=buf, width=240, force_terminal=True, color_system="standard")
    render(run_checks(3, METAL), console)
    out = buf.getvalue()
    plain = Console(file=io.StringIO(), width=240)
    render(run_checks(3, METAL), plain)
    text = plain.file.getvalue()  # type: ignore[attr-defined]
    for name in check.NAMES:
        assert name in text
    assert "echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo" in text
    assert "4245/4246 (worker 2))" in text  # printed literally, not as markup
    assert "--fix (as root) changes: governor, boost, perf_event_paranoid, nmi_watchdog" in text
    assert "\x1b[33mWARN" in out and "\x1b[32mOK" in out  # yellow WARN, green OK


def test_real_machine_runs_every_check_and_is_json() -> None:
    from cyclebench.env import sysinfo

    findings = run_checks(sysinfo.choose_cpu())
    assert [f.name for f in findings] == list(check.NAMES)
    data = json.loads(json.dumps([f.to_dict() for f in findings]))
    assert all(d["status"] in ("OK", "WARN", "INFO") for d in data)
    assert not any(f.detail.startswith("check failed") for f in findings)
