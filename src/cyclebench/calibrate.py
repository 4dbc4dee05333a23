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

import numpy as np

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


def core_ratio(result: dict[str, Any]) -> np.ndarray | None:
    """Core cycles per timer tick next to each sample, from the runner's add chain.

    ratio_i = adds / (chain_ticks_i − timer_overhead), the chain being ``adds`` dependent
    1-cycle register adds (engine/chain.h). Returns one ratio per sample, NaN where a
    chain reading is unusable (≤ the timer's own cost), or None when the runner timed no
    chain (no chain on this architecture, or an ns clock).
    """
    cal, chain = result.get("cal"), result.get("chain") or {}
    if not cal or chain.get("kind") != "add" or result.get("unit") == "ns":
        return None
    oh = float((result.get("timer_overhead") or {}).get("median") or 0)
    c = np.asarray(cal, dtype=float) - oh
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(c > 0, float(chain["adds"]) / c, np.nan)


def chain_agreement(result: dict[str, Any]) -> float | None:
    """Clock from the imul chain ÷ clock from the add chain (1.0 when both latencies hold).

    Both chains are timed five times at the start and at the end of the measurement; the
    fastest of each is used. A value far from 1 means the add chain does not run at one
    add per cycle here (e.g. an emulator, or a core that folds adds), and cycles~ is not
    to be trusted.
    """
    chain = result.get("chain") or {}
    if chain.get("kind") != "add":
        return None
    oh = float((result.get("timer_overhead") or {}).get("median") or 0)
    add_t = min(chain.get("add_ticks") or [0]) - oh
    imul_t = min(chain.get("imul_ticks") or [0]) - oh
    if add_t <= 0 or imul_t <= 0:
        return None
    return (chain["imuls"] * chain["imul_latency"] / imul_t) / (chain["adds"] / add_t)


def round_ratio(ratio: np.ndarray, group: int | None) -> np.ndarray:
    """Each sample's core/timer ratio replaced by the median over its round.

    One chain reading carries a few ticks of timer jitter (±0.2% of ~1500 ticks, i.e.
    ±0.6 cycle on a 300-cycle operation); the core clock moves far slower than a round
    (8 batches, about a millisecond), so the round's median keeps the drift and drops the
    jitter. NaN readings are ignored; a round with none stays NaN.
    """
    if not group or group < 2:
        return ratio
    out = np.array(ratio, dtype=float)
    for i in range(0, len(out), group):
        chunk = ratio[i : i + group]
        if np.isfinite(chunk).any():
            out[i : i + group] = np.nanmedian(chunk)
    return out


def round_costs(result: dict[str, Any]) -> tuple[np.ndarray, str]:
    """Per-round per-op slopes of a runner result, one entry per round (NaN for a round
    without one), in cycles~ when the add chain was timed, else in the timer's unit.

    Disturbed samples are left out. The rounds of benchmarks measured together in one
    process pair up by index (they alternate batch by batch), which is what
    compare.paired needs. Returns (slopes, unit).
    """
    from cyclebench.stats import round_slopes  # here to keep calibrate importable alone

    n = np.asarray(result["n"], dtype=float)
    t = np.asarray(result["ticks"], dtype=float)
    dist = result.get("disturbed") or [0] * len(n)
    keep = np.asarray([d in (0, None) for d in dist])
    ratio = core_ratio(result)
    group = int(result.get("ladder") or 8)
    if ratio is None:
        return round_slopes(n, t, group, keep, aligned=True), str(result.get("unit", "ticks"))
    keep &= np.isfinite(ratio)
    smooth = round_ratio(np.where(keep, ratio, np.nan), group)
    return round_slopes(n, t * np.nan_to_num(smooth), group, keep, aligned=True), "cycles~"
