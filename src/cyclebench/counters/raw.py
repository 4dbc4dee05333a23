"""Raw event codes, encoded from the PMU's own format description (Evans's runpm,
docs/references.md#malloc-profiling-freebsd-2008: "try them all", every code of 0x00–0xff, the
undocumented ones too).

A PMU's sysfs directory (``/sys/bus/event_source/devices/<pmu>/``) says how its raw events
are encoded: ``type`` is the perf_event_attr.type to use and every file of ``format/`` maps
a field to bit ranges of config, config1 or config2 (sysfs-bus-event_source-devices-format
in the kernel's Documentation/ABI). Intel's core PMU has ``event = config:0-7`` and
``umask = config:8-15``; AMD's a 12-bit event select split over ``config:0-7,32-35``;
arm64's PMUv3 a 16-bit ``event = config:0-15``. So nothing here assumes a vendor: a code's
bits are laid into whichever ranges the PMU names, low bits first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from cyclebench.counters.event import Event, EventError

ROOT = Path("/")  # where sysfs is (a fixture tree in tests)
DEVICES = "sys/bus/event_source/devices"
# the core PMU's directory name: "cpu" on x86 (Intel and AMD), "cpu_core"/"cpu_atom" on hybrid
# Intel, "armv8_pmuv3_0", "armv8_cortex_a72", … on arm64
_CORE = re.compile(r"^(cpu|cpu_core|cpu_atom|armv[0-9]+_.+|arm_.*pmu.*)$")
_WORDS = ("config", "config1", "config2")


@dataclass(frozen=True)
class Pmu:
    """A PMU as sysfs describes it: its perf type and each format field's bit ranges
    ((word, low bit, high bit), low bits of the value first)."""

    name: str
    type: int
    fields: dict[str, tuple[tuple[str, int, int], ...]]

    def encode(self, name: str, **values: int) -> Event:
        """An Event with ``values`` (field → value, e.g. event=0x3c, umask=0) laid into the
        fields' bit ranges. Raises EventError for a field this PMU does not have or a value
        wider than its bits."""
        words = dict.fromkeys(_WORDS, 0)
        for field, value in values.items():
            ranges = self.fields.get(field)
            if ranges is None:
                raise EventError(f"PMU {self.name} has no format field '{field}' ({', '.join(sorted(self.fields))})")
            width = sum(hi - lo + 1 for _, lo, hi in ranges)
            if value < 0 or value >> width:
                raise EventError(f"{field}={value:#x} does not fit the {width} bits of PMU {self.name}'s '{field}'")
            for word, lo, hi in ranges:
                bits = hi - lo + 1
                words[word] |= (value & ((1 << bits) - 1)) << lo
                value >>= bits
        return Event(name, self.type, words["config"], words["config1"], words["config2"])


def parse_format(text: str) -> tuple[tuple[str, int, int], ...]:
    """``config:0-7,32-35`` → (("config", 0, 7), ("config", 32, 35)); ``config1:0`` one bit.
    Raises EventError for text that is not a format description."""
    m = re.fullmatch(r"\s*(config[12]?)\s*:\s*([0-9,\s-]+?)\s*", text)
    if not m:
        raise EventError(f"not a PMU format field: {text.strip()!r}")
    out = []
    for part in m.group(2).split(","):
        lo, _, hi = part.strip().partition("-")
        out.append((m.group(1), int(lo), int(hi or lo)))
    return tuple(out)


def core_pmu(root: Path | None = None) -> Pmu | None:
    """The CPU's own PMU under ``root`` (default ROOT), None where there is none (a VM without
    PMU passthrough: only software, tracepoint, breakpoint… PMUs)."""
    devices = (root or ROOT) / DEVICES
    if not devices.is_dir():
        return None
    for d in sorted(devices.iterdir()):
        if not _CORE.match(d.name) or not (d / "format").is_dir() or not (d / "type").is_file():
            continue
        fields = {f.name: parse_format(f.read_text()) for f in sorted((d / "format").iterdir()) if f.is_file()}
        if "event" in fields:
            return Pmu(d.name, int((d / "type").read_text().strip()), fields)
    return None


def parse_range(text: str) -> list[int]:
    """``0x00-0xff`` / ``0-255`` / ``0x3c`` / ``0x10,0x20-0x2f`` → the codes, in order, each once.
    Raises EventError for anything else (a range ending before it starts, more than 65536 codes)."""
    codes: list[int] = []
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        try:
            a, b = int(lo, 0), int(hi, 0) if sep else int(lo, 0)
        except ValueError:
            raise EventError(f"--raw: '{part.strip()}' is not a code or a range like 0x00-0xff") from None
        if a < 0 or b < a:
            raise EventError(f"--raw: '{part.strip()}' is not a range of codes ≥ 0, low-high")
        codes += range(a, b + 1)
        if len(codes) > 65536:
            raise EventError("--raw: more than 65536 codes")
    return list(dict.fromkeys(codes))


def raw_events(pmu: Pmu, codes: list[int], umask: int | None = None) -> list[Event]:
    """One Event per code, named as perf names it (``cpu/event=0x3c,umask=0x00/``); ``umask``
    is set where the PMU has that field (Intel, AMD), ignored where it has none (arm64)."""
    with_umask = umask is not None and "umask" in pmu.fields
    out = []
    for code in codes:
        values = {"event": code, **({"umask": umask} if with_umask else {})}
        label = f"event={code:#04x}" + (f",umask={umask:#04x}" if with_umask else "")
        out.append(pmu.encode(f"{pmu.name}/{label}/", **values))
    return out
