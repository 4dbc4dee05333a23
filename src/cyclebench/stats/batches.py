"""Which of a runner result's batches an estimate uses: the engine's per-batch flags
(engine/disturb.h; docs/method.md §4).

The bits: 1 preempted and 2 migrated (a *disturbance*: the batch shared its CPU with another
program, or moved), 4 interrupted (the kernel's tracepoints counted an interrupt on the pinned
CPU during the timed batch). Flags from before the bits (any switch or migration: 1) read as
preempted.

A disturbed batch is dropped while at most half the batches are (stats.result.disturbed_note
says what happens beyond). An interrupted batch is left out too, under its own rule
(``interrupted``): an interrupt runs its handler inside the batch and lengthens it with no
context switch. Beside an fsync'd writer (~2,600 disk interrupts a second on the CPU its queue
is bound to, AMD EPYC Zen 3 guest) 36–43% of the selftest chains' batches took one, and cycles~
of add chains read +0.18…+0.38% over their truth with them and −0.09…+0.07% without.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

PREEMPTED, MIGRATED, INTERRUPTED = 1, 2, 4
DISTURBED_SHARE = 0.5  # more batches disturbed than this: rejection cannot apply, the result is disturbed
MIN_CLEAN = 3  # nor when fewer undisturbed batches than this would be left


def flags(res: Mapping[str, Any] | None) -> np.ndarray:
    """The per-batch flags of a runner result (int array, one per sample; 0 where none was
    stored)."""
    f = (res or {}).get("disturbed") or []
    n = len((res or {}).get("n") or f)
    out = np.zeros(n, dtype=np.int64)
    out[: len(f)] = [int(x or 0) for x in f[:n]]
    return out


def disturbed(res: Mapping[str, Any] | None) -> np.ndarray:
    """True for each batch that was preempted or migrated (any bit but INTERRUPTED)."""
    return (flags(res) & ~INTERRUPTED) != 0


def interrupted(res: Mapping[str, Any] | None, keep: np.ndarray) -> np.ndarray:
    """True for each batch of ``keep`` (bool, one per sample: the batches otherwise used) to leave
    out because an interrupt was taken during it; all False when more than half of ``keep`` took
    one, or fewer than MIN_CLEAN would be left.

    Why the rule: interrupts that arrive independently of the body (a device's completions, the
    tick) hit a batch by chance, so the batches they spared are an unbiased sample of the body's
    time. When most batches took one, either the interrupts are the benchmark's own (nanosleep
    ends in a timer interrupt, fsync in its disk's) or they are so frequent that few batches
    would be left: all are kept then, and the interrupts are part of the figure. The limit of
    it: a benchmark that raises interrupts on its own CPU in fewer than half its batches loses
    those batches, and its figure the interrupts' share.
    """
    keep = np.asarray(keep, dtype=bool)
    hit = ((flags(res) & INTERRUPTED) != 0) & keep
    k, kept = int(hit.sum()), int(keep.sum())
    if k and (k > DISTURBED_SHARE * kept or kept - k < MIN_CLEAN):
        return np.zeros(len(keep), dtype=bool)
    return hit
