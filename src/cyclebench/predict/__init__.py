"""Static models beside the measurement: the hot loop of a benchmark's body in its built runner
(``hotloop``), as assembly (``asm``), predicted by llvm-mca (``mca``) and OSACA (``osaca``) on the
CPU's model (``cpu``); docs/method.md §12. Starts processes (valgrind, objdump, the tools) and
reads them; never stores or prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cyclebench.predict import asm, cpu, hotloop, mca, osaca
from cyclebench.prediction import NO_LOOP, TOOLS, ModelResult, Prediction

__all__ = ["Target", "predict", "target", "target_of"]


@dataclass(frozen=True)
class Target:
    """The CPU's names for the tools: llvm-mca's ``-mcpu`` (None: none) and why, OSACA's archs
    newest first (empty: none) and why, the CPU's model name and cpuid's core."""

    model_name: str | None
    core: cpu.Core
    mcpu: str | None
    mcpu_reason: str
    osaca: tuple[str, ...]
    osaca_reason: str

    def line(self) -> str:
        """One line: the CPU and each tool's name for it, with why."""
        o = self.osaca[0] if self.osaca else "none"
        return (f"{self.model_name or self.core.name} ({self.core.name}): llvm-mca -mcpu={self.mcpu or 'none'} "
                f"({self.mcpu_reason}); OSACA --arch {o} ({self.osaca_reason})")


def target_of(info: Mapping[str, Any], override: str | None = None) -> Target:
    """The Target for env.sysinfo.cpu_info's ``info`` (vendor, family, model, model_name), with
    ``--mcpu``'s override: an llvm-mca name (``znver4``: OSACA's arch follows from the table), an
    OSACA arch (``ZEN3``), or both comma-separated."""
    core = cpu.core_of(info.get("vendor"), info.get("family"), info.get("model"))
    tool = mca.find_tool()
    mcpu, mcpu_reason = cpu.pick_mca(core, set(mca.known_cpus(tool[0])) if tool else None)
    archs, osaca_reason = core.osaca, core.osaca_why
    items = [x.strip() for x in (override or "").split(",") if x.strip()]
    given_archs = [x.upper() for x in items if x.upper() in cpu.OSACA_ARCHS]
    names = [x for x in items if x.upper() not in cpu.OSACA_ARCHS]
    if names:
        mcpu, mcpu_reason = names[-1], f"--mcpu {names[-1]}"
    if given_archs:
        archs, osaca_reason = (given_archs[-1],), f"--mcpu {given_archs[-1]}"
    elif names:
        archs = cpu.osaca_for_mca(names[-1])
        osaca_reason = (f"--mcpu {names[-1]}: OSACA's {archs[0]}" if archs
                        else f"--mcpu {names[-1]}: no OSACA arch for it (add one, e.g. ZEN4)")
    return Target(info.get("model_name"), core, mcpu, mcpu_reason, archs, osaca_reason)


def target(override: str | None = None) -> Target:
    """The Target of this machine's CPU (env.sysinfo.cpu_info), with ``--mcpu``'s override."""
    from cyclebench.env import sysinfo

    return target_of(sysinfo.cpu_info(), override)


def predict(binary: Path, bench: str, param: int | None, tgt: Target, *, variant: str = "",
            use_callgrind: bool = True, timeout: float = 600) -> Prediction:
    """Both models' prediction for ``bench`` at ``param`` in ``binary``. A missing tool, an
    unknown CPU or a body without a loop is in the Prediction (a status and a reason), never
    an exception; OSError from objdump or valgrind propagates."""
    try:
        loop, note = hotloop.find(binary, bench, param, use_callgrind=use_callgrind, timeout=timeout)
    except hotloop.HotLoopError as e:
        models = tuple(ModelResult(t, NO_LOOP, str(e)) for t in TOOLS)
        return Prediction(bench, param, variant, tgt.model_name, None, models, str(e))
    source, lines = asm.loop_source(loop)
    results = (mca.run(source, lines, tgt.mcpu, tgt.mcpu_reason), osaca.run(source, tgt.osaca, tgt.osaca_reason))
    return Prediction(bench, param, variant, tgt.model_name, loop, results, note)
