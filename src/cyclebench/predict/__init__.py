"""Static models beside the measurement: the hot loop of a benchmark's body in its built runner
(``hotloop``), as assembly (``asm``), predicted by llvm-mca (``mca``) and OSACA (``osaca``) on the
CPU's model (``cpu``); docs/method.md §12. Starts processes (valgrind, objdump, the tools) and
reads them; never stores or prints.
"""

from __future__ import annotations

from pathlib import Path

from cyclebench.predict import asm, cpu, hotloop, mca, osaca
from cyclebench.prediction import NO_LOOP, TOOLS, ModelResult, Prediction

__all__ = ["Target", "predict", "target"]


class Target:
    """The CPU's names for the tools: llvm-mca's ``-mcpu`` (and why), OSACA's archs newest
    first (and why), the CPU's model name. ``override``: ``--mcpu`` items (an llvm-mca name,
    an OSACA arch such as ZEN3, or both, comma-separated)."""

    def __init__(self, info: dict, override: str | None = None) -> None:
        core = cpu.core_of(info.get("vendor"), info.get("family"), info.get("model"))
        self.model_name: str | None = info.get("model_name")
        self.core = core
        tool = mca.find_tool()
        self.mcpu, self.mcpu_reason = cpu.pick_mca(core, mca.known_cpus(tool[0]) if tool else None)
        self.osaca, self.osaca_reason = core.osaca, core.osaca_why
        if override:
            for item in (x.strip() for x in override.split(",") if x.strip()):
                if item.upper() in cpu.OSACA_ARCHS:
                    self.osaca, self.osaca_reason = (item.upper(),), f"--mcpu {item.upper()}"
                else:
                    self.mcpu, self.mcpu_reason = item, f"--mcpu {item}"
                    if not any(x.upper() in cpu.OSACA_ARCHS for x in override.split(",")):
                        arch = cpu.osaca_for_mca(item)
                        self.osaca = (arch,) if arch else ()
                        self.osaca_reason = (f"--mcpu {item}: OSACA's {arch}" if arch
                                             else f"--mcpu {item}: no OSACA arch for it (add one, e.g. ZEN4)")

    def line(self) -> str:
        """One line: the CPU and each tool's name for it, with why."""
        o = self.osaca[0] if self.osaca else "none"
        return (f"{self.model_name or self.core.name} ({self.core.name}): llvm-mca -mcpu={self.mcpu or 'none'} "
                f"({self.mcpu_reason}); OSACA --arch {o} ({self.osaca_reason})")


def target(override: str | None = None) -> Target:
    """The Target of this machine's CPU (env.sysinfo.cpu_info), with ``--mcpu``'s override."""
    from cyclebench.env import sysinfo

    return Target(sysinfo.cpu_info(), override)


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
