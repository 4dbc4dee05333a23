"""This CPU's names in the models: cpuid's family and model (/proc/cpuinfo) → llvm-mca's
``-mcpu`` and OSACA's ``--arch`` (docs/method.md §12).

Family/model → core: AMD's Processor Programming References (family 17h Zen/Zen 2, 19h Zen 3/4,
1Ah Zen 5), Intel's SDM vol. 4 table 2-1 (DisplayFamily_DisplayModel) — the same table
LLVM's ``sys::getHostCPUName`` (llvm/lib/TargetParser/Host.cpp) encodes. A core a tool has no
model of falls back to the nearest older one it has, and says so: LLVM 19 knows ``znver5`` (and
schedules it with its Zen 4 model), LLVM 14 stops at ``znver3``; OSACA 0.7 stops at ZEN4.
"""

from __future__ import annotations

from dataclasses import dataclass

# (vendor, family, model range) → (core, llvm-mca names newest first, OSACA arch, why OSACA's)
# OSACA's archs newest first too: where the first has no data for an instruction of the loop
# (OSACA 0.7's ZEN4 file lacks imul r64,r64), the next one that has is used, and named (osaca.py).
_AMD: list[tuple[int, range, str, tuple[str, ...], tuple[str, ...]]] = [
    (0x17, range(0x00, 0x30), "Zen / Zen+", ("znver1",), ("ZEN1",)),
    (0x17, range(0x30, 0x100), "Zen 2", ("znver2", "znver1"), ("ZEN2",)),
    (0x19, range(0x00, 0x10), "Zen 3", ("znver3", "znver2"), ("ZEN3",)),
    (0x19, range(0x10, 0x20), "Zen 4", ("znver4", "znver3"), ("ZEN4", "ZEN3")),
    (0x19, range(0x20, 0x60), "Zen 3", ("znver3", "znver2"), ("ZEN3",)),
    (0x19, range(0x60, 0x80), "Zen 4", ("znver4", "znver3"), ("ZEN4", "ZEN3")),
    (0x19, range(0xA0, 0xB0), "Zen 4", ("znver4", "znver3"), ("ZEN4", "ZEN3")),
    (0x1A, range(0x00, 0x100), "Zen 5", ("znver5", "znver4", "znver3"), ("ZEN4", "ZEN3")),
]
_INTEL: dict[int, tuple[str, tuple[str, ...], tuple[str, ...]]] = {}
for _models, _core, _mca, _osaca in [
    ((0x2A, 0x2D), "Sandy Bridge", ("sandybridge",), ("SNB",)),
    ((0x3A, 0x3E), "Ivy Bridge", ("ivybridge", "sandybridge"), ("IVB",)),
    ((0x3C, 0x3F, 0x45, 0x46), "Haswell", ("haswell",), ("HSW",)),
    ((0x3D, 0x47, 0x4F, 0x56), "Broadwell", ("broadwell", "haswell"), ("BDW",)),
    ((0x4E, 0x5E, 0x8E, 0x9E, 0xA5, 0xA6), "Skylake (client)", ("skylake", "broadwell"), ("SKX",)),
    ((0x55,), "Skylake-SP / Cascade Lake", ("skylake-avx512", "skylake"), ("SKX",)),
    ((0x7D, 0x7E), "Ice Lake (client)", ("icelake-client", "skylake"), ("ICL",)),
    ((0x6A, 0x6C), "Ice Lake-SP", ("icelake-server", "icelake-client"), ("ICX",)),
    ((0x8C, 0x8D), "Tiger Lake", ("tigerlake", "icelake-client"), ("ICL",)),
    ((0xA7,), "Rocket Lake", ("rocketlake", "icelake-client"), ("ICL",)),  # some Xeon KVM guests report it
    ((0x97, 0x9A, 0xB7, 0xBA, 0xBF), "Alder / Raptor Lake", ("alderlake", "icelake-client"), ("SPR",)),
    ((0x8F,), "Sapphire Rapids", ("sapphirerapids", "icelake-server"), ("SPR",)),
    ((0xCF,), "Emerald Rapids", ("emeraldrapids", "sapphirerapids", "icelake-server"), ("SPR",)),
    ((0xAD, 0xAE), "Granite Rapids", ("graniterapids", "sapphirerapids", "icelake-server"), ("SPR",)),
]:
    for _m in _models:
        _INTEL[_m] = (_core, _mca, _osaca)

# Where OSACA has no model of the core itself, the one it is given instead, and why.
_OSACA_FALLBACK_WHY = {
    ("Zen 5", "ZEN4"): "OSACA 0.7 has no Zen 5 model: ZEN4, its newest AMD core",
    ("Skylake (client)", "SKX"): "OSACA models Skylake-SP (SKX): the same core without the AVX-512 unit",
    ("Tiger Lake", "ICL"): "OSACA has no Tiger Lake model: ICL (Sunny Cove; Willow Cove differs in caches)",
    ("Rocket Lake", "ICL"): "OSACA has no Rocket Lake model: ICL (Cypress Cove is Sunny Cove back-ported to 14 nm)",
    ("Alder / Raptor Lake", "SPR"): "OSACA has no Alder Lake model: SPR (Golden Cove cores, as Alder Lake's P-cores)",
    ("Emerald Rapids", "SPR"): "OSACA has no Emerald Rapids model: SPR (the same Raptor Cove generation)",
    ("Granite Rapids", "SPR"): "OSACA has no Granite Rapids model: SPR, its newest Intel core",
}


@dataclass(frozen=True)
class Core:
    """What cpuid says this core is: its name, llvm-mca's and OSACA's candidate names newest
    first (empty: none) and why OSACA's first. ``known`` is False for a family/model not in the tables."""

    vendor: str | None
    family: int | None
    model: int | None
    name: str
    mca: tuple[str, ...]
    osaca: tuple[str, ...]
    osaca_why: str
    known: bool = True


def core_of(vendor: str | None, family: int | None, model: int | None) -> Core:
    """The core for cpuid's vendor string, family and model (as /proc/cpuinfo prints them,
    decimal). An unknown one gives ``known=False`` and no names (a marked cell, not an error)."""
    fam, mod = family if family is not None else -1, model if model is not None else -1
    if vendor in ("AuthenticAMD", "HygonGenuine"):
        for f, models, core, mca, osaca in _AMD:
            if f == fam and mod in models:
                why = _OSACA_FALLBACK_WHY.get((core, osaca[0]), f"{core}: OSACA's {osaca[0]}")
                return Core(vendor, family, model, core, mca, osaca, why)
    elif vendor == "GenuineIntel" and fam == 6 and mod in _INTEL:
        core, mca, osaca = _INTEL[mod]
        why = _OSACA_FALLBACK_WHY.get((core, osaca[0]), f"{core}: OSACA's {osaca[0]}")
        return Core(vendor, family, model, core, mca, osaca, why)
    fam_s = f"{fam:#x}" if family is not None else "?"
    mod_s = f"{mod:#x}" if model is not None else "?"
    return Core(vendor, family, model, f"{vendor or 'unknown vendor'} family {fam_s} model {mod_s}", (), (),
                "no model of this CPU in OSACA's tables", known=False)


def pick_mca(core: Core, known: set[str] | None) -> tuple[str | None, str]:
    """llvm-mca's ``-mcpu`` for ``core`` among the names this llvm-mca knows (``known``; None:
    not asked, the first candidate), and why: the first candidate it knows, a fallback named."""
    if not core.mca:
        return None, f"{core.name}: no llvm-mca model in cyclebench's table (give --mcpu)"
    for i, name in enumerate(core.mca):
        if known is None or name in known:
            if i == 0:
                return name, f"{core.name}: {name}"
            return name, f"{core.name}: {name} (this llvm-mca has no {core.mca[0]})"
    return None, f"{core.name}: this llvm-mca knows none of {', '.join(core.mca)} (give --mcpu)"


OSACA_ARCHS = frozenset({"SNB", "IVB", "HSW", "BDW", "SKX", "CSX", "ICL", "ICX", "SPR", "ZEN1", "ZEN2", "ZEN3",
                         "ZEN4", "TX2", "N1", "A64FX", "TSV110", "A72", "M1", "V2"})  # osaca --help, 0.7


def osaca_for_mca(mcpu: str) -> tuple[str, ...]:
    """OSACA's archs, newest first, for the core whose first llvm-mca name is ``mcpu``; () if none."""
    for *_, names, archs in _AMD:
        if names[0] == mcpu:
            return archs
    for _core, names, archs in _INTEL.values():
        if names[0] == mcpu:
            return archs
    return ()
