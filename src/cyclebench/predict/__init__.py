"""Static models beside the measurement: the hot loop of a benchmark's body in its built runner
(``hotloop``), as assembly (``asm``), predicted by llvm-mca (``mca``) and OSACA (``osaca``) on the
CPU's model (``cpu``); docs/method.md §12. Starts processes (valgrind, objdump, the tools) and
reads them; never stores or prints.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cyclebench.predict import asm, blocks, cpu, hotloop, mca, osaca
from cyclebench.prediction import (
    CALLGRIND,
    FAILED,
    NO_LOOP,
    OK,
    OSACA,
    TOOLS,
    UNSUPPORTED,
    Block,
    BlockProfile,
    HotLoop,
    LoopInstruction,
    ModelResult,
    Prediction,
)

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
            use_callgrind: bool = True, timeout: float = 600, debug: Path | None = None) -> Prediction:
    """Both models' prediction for ``bench`` at ``param`` in ``binary``: the hot loop's, where one
    innermost loop holds blocks.SINGLE_LOOP of the op's instructions, each run once a trip
    (blocks.one_trip), or callgrind is not used;
    else every block the op executes priced by each model and weighted by its count (predict.blocks:
    llvm-mca's in ``blocks``, OSACA's of the same blocks in ``osaca_blocks``, a block OSACA has no
    data for left out of its figure and named with its share). A missing tool, an unknown
    CPU or a body that runs nothing per op is in the Prediction (a status and a reason), never an
    exception; OSError from objdump or valgrind propagates. ``debug``: the same build with -g,
    whose line table names the blocks' source lines."""
    counts, note, events = None, None, {}
    if use_callgrind and shutil.which("valgrind") is not None:
        try:
            counts, events = hotloop.simulate(binary, bench, param, timeout)
        except hotloop.HotLoopError as e:
            note = f"callgrind: {e}; the loop read statically"
    elif use_callgrind:
        note = "valgrind not found (apt-get install valgrind): the loop read statically, 1 trip an op assumed"
    try:
        if counts is None:
            loop = hotloop.static(binary, bench)
        else:
            listings = hotloop.listings_of(counts)
            try:
                loop = hotloop.from_counts(counts, listings=listings)
            except hotloop.HotLoopError:
                if sum(sum(v.values()) for v in counts.values()) < 1:
                    raise
                return _by_blocks(bench, param, variant, tgt, counts, listings, None,
                                  {str(binary): str(debug)} if debug else None, events)
            if not blocks.one_trip(loop):
                return _by_blocks(bench, param, variant, tgt, counts, listings, loop,
                                  {str(binary): str(debug)} if debug else None, events)
    except hotloop.HotLoopError as e:
        models = tuple(ModelResult(t, NO_LOOP, str(e)) for t in TOOLS)
        return Prediction(bench, param, variant, tgt.model_name, None, models, str(e))
    source, lines = asm.loop_source(loop)
    results = (mca.run(source, lines, tgt.mcpu, tgt.mcpu_reason), osaca.run(source, tgt.osaca, tgt.osaca_reason))
    return Prediction(bench, param, variant, tgt.model_name, loop, results, note)


def _by_blocks(bench: str, param: int | None, variant: str, tgt: Target,
               counts: dict[tuple[str, str], dict[int, float]], listings: dict[tuple[str, str], list[hotloop.Insn]],
               loop: HotLoop | None, debug: dict[str, str] | None, events: dict[str, float]) -> Prediction:
    """The block-weighted Prediction (predict.blocks): each model's figure Σ count × cycles; llvm-mca's
    per-instruction view of the block that costs it the most per op (the ``loop`` shown); OSACA's
    pricing of the same blocks (_osaca_blocks)."""
    tool = mca.find_tool()
    usable = tgt.mcpu if tool is not None and tgt.mcpu in mca.known_cpus(tool[0]) else None
    prof, why = blocks.profile(counts, listings, usable, debug)
    prof = replace(prof, events=tuple(sorted(events.items())))
    ranked = prof.ranked()
    top = ranked[0]
    shown = HotLoop(function=top.function, obj=top.obj, start=top.start, end=top.end,
                    instructions=tuple(LoopInstruction(a, t, 1.0, hotloop.why_unmodelled(t))
                                       for a, t in zip(top.addresses, top.instructions, strict=True)),
                    source=CALLGRIND, trips_per_op=top.count, ir_per_op=prof.ir_per_op, loop_ir_per_op=top.ir,
                    outside=tuple(f"{n.what}: {n.text} in {n.function}, {n.count:g}/op ({100 * n.share:.0f}% of "
                                  f"the op's instructions)" for n in prof.not_modelled))
    if loop is None:
        hot = "no loop runs per op"
    else:
        share = 100 * (loop.loop_ir_per_op or 0) / (loop.ir_per_op or 1)
        hot = (f"the hot loop holds {share:.0f}%" + (", its instructions run unequally a trip"
                                                        if share >= 100 * blocks.SINGLE_LOOP else ""))
    note = (f"block-weighted: {len(prof.blocks)} blocks, {100 * prof.coverage:.0f}% of the op's "
            f"{prof.ir_per_op:g} instructions priced ({hot})")
    source, lines = asm.loop_source(shown)
    m = mca.run(source, lines, tgt.mcpu, tgt.mcpu_reason)
    if m.status == OK and prof.cycles_per_op is not None:
        m = replace(m, notes=(note, *m.notes))
    elif m.status == OK:
        m = replace(m, status=FAILED, reason=why or "no block priced")
    o, oprof = _osaca_blocks(tgt, counts, listings, prof, top)
    return Prediction(bench, param, variant, tgt.model_name, shown, (m, o), None, prof, oprof)


def _osaca_blocks(tgt: Target, counts: dict[tuple[str, str], dict[int, float]],
                  listings: dict[tuple[str, str], list[hotloop.Insn]], prof: BlockProfile, top: Block
                  ) -> tuple[ModelResult, BlockProfile | None]:
    """OSACA's block-weighted result for the units llvm-mca priced (blocks.osaca_profile, one worker
    process): its ModelResult — ``cycles``/``throughput`` those of llvm-mca's top block (the one
    shown), the notes its coverage and the blocks it has no data for with their share of the op's
    instructions — and its BlockProfile (None where it priced nothing)."""
    if not osaca.available():
        return osaca.missing(), None
    if not tgt.osaca:
        return ModelResult(OSACA, UNSUPPORTED, tgt.osaca_reason), None
    got = blocks.osaca_profile(counts, listings, tgt.osaca, like=prof)
    if got.error is not None or got.profile is None:
        return ModelResult(OSACA, FAILED, got.error or "no block to price", version=got.version,
                           cpu=tgt.osaca[0], cpu_reason=tgt.osaca_reason), None
    op = got.profile
    why = tgt.osaca_reason
    fallback = [(a, n) for a, n in got.used if a != tgt.osaca[0]]
    if fallback:
        why += "; " + ", ".join(f"{tgt.osaca[0]} has no data for an instruction of {n} blocks: {a}"
                                for a, n in fallback)
    notes = [f"block-weighted: {len(op.blocks)} blocks, {100 * op.coverage:.0f}% of the op's {op.ir_per_op:g} "
             f"instructions priced by OSACA"]
    if got.unpriced:
        funcs = ", ".join(f"{f} ({100 * s:.1f}%: {'its error' if t.startswith('OSACA') else t.split()[0]})"
                          for f, s, t in got.unpriced[:3])
        notes.append(f"not priced by OSACA (no data in {'/'.join(tgt.osaca)}): {len(got.unpriced)} blocks, "
                     f"{100 * got.unpriced_share:.1f}% of the op's instructions ({funcs})")
    if op.cycles_per_op is None:
        return ModelResult(OSACA, FAILED, "; ".join(notes[1:]) or "no block priced by OSACA", version=got.version,
                           cpu=tgt.osaca[0], cpu_reason=why, unpriced=got.unknown), None
    mine = next((b for b in op.blocks if (b.obj, b.function, b.start, b.kind) == (top.obj, top.function, top.start,
                                                                                  top.kind)), None)
    return ModelResult(OSACA, OK, None, version=got.version, cpu=tgt.osaca[0], cpu_reason=why,
                       cycles=None if mine is None else mine.cycles,
                       throughput=None if mine is None else mine.throughput,
                       notes=tuple(notes), unpriced=got.unknown), op
