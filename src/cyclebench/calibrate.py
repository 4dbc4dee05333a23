"""Timer calibration: which clock, its rate (and where that rate came from), its cost.

The TSC rate turns ref-cycles into ns. Sources, best first:
  1. cpuid leaf 0x15 (crystal clock × ratio; exact, Intel SDM vol. 3 §18.7.3) — often
     hidden under hypervisors;
  2. the kernel's refined calibration ("tsc: Refined TSC clocksource calibration");
  3. the kernel's boot-time figure ("tsc: Detected … MHz processor");
  4. measured by the runner against CLOCK_MONOTONIC_RAW over 100 ms (±0.01%).
The measured rate is always kept beside the chosen one, so a disagreement shows.
On aarch64 the generic timer's rate is architectural (cntfrq_el0); with the
clock_gettime fallback the unit is already ns.
"""

from __future__ import annotations

from typing import Any

# A chosen rate that differs from the measured one by more than this is not trusted.
MAX_DISAGREEMENT = 0.01


def timer_rate(calibration: dict[str, Any], kernel: tuple[float, str] | None) -> tuple[float, str]:
    """Ticks per second of the runner's timer and the source of that figure.

    Args: calibration: the runner's ``--calibrate`` line; kernel: (Hz, source) from the
    kernel log or None. Returns (Hz, source), source one of cpuid-0x15, kernel-refined,
    kernel-detected, measured, cntfrq_el0, ns.
    """
    unit = calibration.get("unit")
    measured = float(calibration.get("measured_hz") or 0)
    if unit == "ns":
        return 1e9, "ns"
    if unit == "ticks" and calibration.get("arch_timer_hz"):
        return float(calibration["arch_timer_hz"]), "cntfrq_el0"
    candidates: list[tuple[float, str]] = []
    if calibration.get("cpuid_tsc_hz"):
        candidates.append((float(calibration["cpuid_tsc_hz"]), "cpuid-0x15"))
    if kernel:
        candidates.append(kernel)
    for hz, source in candidates:
        if measured <= 0 or abs(hz - measured) / measured <= MAX_DISAGREEMENT:
            return hz, source
    return measured, "measured"
