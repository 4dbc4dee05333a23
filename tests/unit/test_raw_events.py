"""Raw event codes encoded from the PMU's own sysfs format (Evans's runpm,
docs/references.md#malloc-profiling-freebsd-2008), per vendor."""

from __future__ import annotations

import pytest

from cyclebench.counters import EventError, groups_argv, raw

from conftest import FIXTURES


def pmu(vendor: str) -> raw.Pmu:
    p = raw.core_pmu(FIXTURES / f"pmu_{vendor}")
    assert p is not None
    return p


def test_intel_event_and_umask_bytes() -> None:
    p = pmu("intel")
    assert (p.name, p.type) == ("cpu", 4)
    e = p.encode("x", event=0x3C, umask=0x01)  # cpu_clk_unhalted.ref_xclk
    assert (e.type, e.config, e.config1) == (4, 0x013C, 0)
    assert p.encode("x", event=0xD1, umask=0x08, cmask=1, inv=1).config == 0x01_80_08_D1
    assert p.encode("x", ldlat=3).config1 == 3


def test_amd_twelve_bit_event_select_is_split() -> None:
    p = pmu("amd")
    assert p.name == "cpu"  # the core PMU, not amd_l3
    e = p.encode("x", event=0x1C0, umask=0)  # bits 8-11 of the event go to config 32-35
    assert e.config == (0x1 << 32) | 0xC0
    with pytest.raises(EventError, match="does not fit the 12 bits"):
        p.encode("x", event=0x1000)


def test_arm64_sixteen_bit_event_and_its_own_type() -> None:
    p = pmu("arm64")
    assert (p.name, p.type) == ("armv8_pmuv3_0", 10)  # a dynamic PMU type, not PERF_TYPE_RAW
    assert p.encode("x", event=0x11).config == 0x11  # CPU_CYCLES
    assert p.encode("x", event=0x4004).config == 0x4004  # 16 bits: the implementation-defined range
    with pytest.raises(EventError, match="no format field 'umask'"):
        p.encode("x", umask=1)
    [e] = raw.raw_events(p, [0x08], umask=0x01)  # no umask on arm64: ignored, not refused
    assert e.name == "armv8_pmuv3_0/event=0x08/" and e.config == 0x08


def test_the_sweep_reaches_the_runner_as_raw_encodings() -> None:
    evs = raw.raw_events(pmu("intel"), raw.parse_range("0x00-0x02,0xc0"), umask=0)
    assert [e.name for e in evs] == [f"cpu/event={c:#04x},umask=0x00/" for c in (0, 1, 2, 0xC0)]
    argv = groups_argv([[e] for e in evs])
    assert argv == ["--events", "4:0x0:0x0:0x0;4:0x1:0x0:0x0;4:0x2:0x0:0x0;4:0xc0:0x0:0x0"]
    amd = raw.raw_events(pmu("amd"), [0x1C0], umask=0)
    assert groups_argv([amd])[1] == "4:0x1000000c0:0x0:0x0"


def test_ranges_and_formats() -> None:
    assert raw.parse_range("0x00-0xff") == list(range(256))
    assert raw.parse_range("5,3-4,5") == [5, 3, 4]
    for bad in ("0x10-0x01", "x", "-1", "0-70000"):
        with pytest.raises(EventError):
            raw.parse_range(bad)
    assert raw.parse_format("config:0-7,32-35\n") == (("config", 0, 7), ("config", 32, 35))
    assert raw.parse_format("config1:0") == (("config1", 0, 0),)
    with pytest.raises(EventError):
        raw.parse_format("bits:0-7")
    assert raw.core_pmu(FIXTURES / "sysroot_kvm") is None  # a VM: software PMUs only
