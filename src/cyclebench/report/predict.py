"""Measured beside predicted (docs/method.md §12): each result's cycles~ beside llvm-mca's and
OSACA's cycles per op for its hot loop and their ratio to the measurement (``predicted_table``,
for `--predict`), and one benchmark in depth for `explain` (``explain_tables``: the loop's
instructions with each model's port pressure, latency and chain, the ports' totals, the bound).

A model's figure is marked ``*`` when the loop runs an instruction the models do not model
(a system call, a lock prefix, a fence, ``rep movs``, ``cpuid``, ``rdtsc``, a call): the
figure is the model's, the marker says it is not the op's cost. It is marked ``?`` when the tool
has no data for an instruction of the loop (OSACA prices it at 0: a lower bound) or, priced block by
block, of a block (left out of OSACA's sum, its share said: a lower bound too). A missing tool's cell
names its package; an unsupported CPU or a body without a loop is a marked cell, said once below.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType

from cyclebench.prediction import BLOCKWISE, MCA, MISSING, NO_LOOP, OK, OSACA, UNSUPPORTED, ModelResult, Prediction
from cyclebench.report.console import NAME_FOLD, fmt
from cyclebench.report.fit import Column, FitTable
from cyclebench.report.text import safe_text

MARK = "*"  # beside a model's figure: the loop runs what the models do not model
UNPRICED = "?"  # beside a model's figure: the tool has no data for an instruction of the loop (priced 0)
SHORT_PACKAGE = {MCA: "llvm", OSACA: "osaca"}


def measured(row: Mapping[str, Any] | None) -> float | None:
    """The measurement a prediction is set beside: PMU cycles where a PMU counted, else cycles~."""
    if not row:
        return None
    return row.get("pmu_cycles_per_op") if row.get("pmu_cycles_per_op") is not None else row.get("cycles_per_op")


def _cell(p: Prediction, m: ModelResult | None) -> str:
    if m is None:
        return "-"
    if m.status == MISSING:
        return f"missing ({SHORT_PACKAGE.get(m.tool, m.tool)})"
    if m.status == NO_LOOP:
        return "no loop"
    if m.status == UNSUPPORTED:
        return "no CPU model"
    if m.status == BLOCKWISE:
        return "n/a: blocks"
    if m.status != OK:
        return "failed"
    v = p.cycles_per_op(m.tool)
    return fmt(v) + (MARK if p.loop is not None and p.loop.unmodelled else "") + (UNPRICED if m.unpriced else "")


def _ratio(p: Prediction, tool: str, meas: float | None) -> str:
    v = p.cycles_per_op(tool)
    if v is None or not meas or meas <= 0:
        return "-"
    return f"{v / meas:.2f}"


def _trips(p: Prediction) -> str:
    if p.loop is None:
        return "-"
    if p.loop.trips_per_op is None:
        return "1?"
    return f"{p.loop.trips_per_op:g}"


def footer_lines(preds: Sequence[Prediction], target_line: str | None = None) -> list[str]:
    """What the table's marks mean, once each: the CPU models used, a missing tool's package, an
    unsupported CPU, a body without a loop, the not-modelled marker."""
    lines = [f"models: {target_line}"] if target_line else []
    said: set[str] = set()
    for p in preds:
        for m in p.models:
            if m.status in (MISSING, UNSUPPORTED, BLOCKWISE, "failed") and m.reason and m.reason not in said:
                said.add(m.reason)
                lines.append(f"{m.tool}: {m.reason}")
            elif m.status == OK and m.cpu_reason and "has no data for" in m.cpu_reason:  # a per-loop fallback
                lines.append(f"{p.bench}: {m.tool} --arch {m.cpu} ({m.cpu_reason.rsplit('; ', 1)[-1]})")
        if p.loop is None and p.reason:
            lines.append(f"{p.bench}: {p.reason}")
        elif p.reason and p.reason not in said:
            said.add(p.reason)
            lines.append(p.reason)
    unpriced = sorted({f"{m.tool}: {' '.join(t.split()[:1])}" for p in preds for m in p.models for t in m.unpriced})
    if unpriced:
        lines.append(f"{UNPRICED}: the tool has no data for an instruction of the loop and prices it at 0, or of a "
                     f"block and leaves the block out (a lower bound): {', '.join(unpriced)}")
    if any(p.coverage is not None for p in preds):
        lines.append("covered: the share of the op's executed instructions (callgrind) the prediction prices; b: "
                     "priced block by block, each block's cycles × its executions per op (docs/method.md §12)")
    if any(p.loop is not None and p.loop.unmodelled for p in preds):
        lines.append(f"{MARK}: the loop runs what the models do not model (see notes): the figure is not the op's cost")
    return lines


def predicted_table(rows: Iterable[Mapping[str, Any]], preds: Sequence[Prediction], title: str | None = None,
                    wide: bool = False) -> FitTable:
    """One row per prediction: benchmark, param (variant), measured cycles~, llvm-mca's and OSACA's
    cycles per op (answer columns), their ratios to the measurement, OSACA's throughput and LCD
    bounds per op, loop trips per op, the share of the op's instructions priced (``b``: block by
    block), and the notes (what is not modelled)."""
    by_key = {(r.get("bench"), r.get("param"), r.get("variant") or ""): r for r in rows}
    variants = len({p.variant for p in preds}) > 1  # compare's one "compare" variant says nothing
    table = FitTable([
        Column("benchmark", justify="left", fold=NAME_FOLD),
        Column("param"),
        *([Column("variant", justify="left", fold=8)] if variants else []),
        Column("cycles~"),
        Column("llvm-mca"),
        Column("mca/meas", priority=1),
        Column("OSACA"),
        Column("OSACA/meas", priority=1),
        Column("OSACA TP", priority=3),
        Column("OSACA LCD", priority=3),
        Column("trips/op", priority=2),
        Column("covered", priority=1 if all(p.blocks is None for p in preds) else 0),
        Column("notes", justify="left", notes=True),
    ], title=title, wide=wide)
    for p in preds:
        meas = measured(by_key.get((p.bench, p.param, p.variant)))
        o = p.model(OSACA)
        trips = p.loop.trips if p.loop is not None else 1.0
        tp = fmt(o.throughput * trips) if o is not None and o.throughput is not None else "-"
        lcd = fmt(o.lcd * trips) if o is not None and o.lcd is not None else "-"
        if p.blocks is not None:  # block by block: OSACA's Σ count × throughput; its LCDs are in its figure
            ob = p.osaca_blocks
            tp, lcd = ("-" if ob is None or ob.throughput_per_op is None else fmt(ob.throughput_per_op)), "-"
        notes = [] if p.loop is None or not p.loop.unmodelled else ["not modelled: " + "; ".join(p.loop.unmodelled)]
        if p.osaca_blocks is not None and p.blocks is not None and p.osaca_blocks.coverage < p.blocks.coverage - 0.005:
            notes.insert(0, f"OSACA priced {100 * p.osaca_blocks.coverage:.0f}% (no data for the rest)")
        note = "; ".join(notes)
        table.add_row(p.bench, "" if p.param is None else str(p.param), *([p.variant] if variants else []),
                      fmt(meas) if meas is not None else "-", _cell(p, p.model(MCA)), _ratio(p, MCA, meas),
                      _cell(p, o), _ratio(p, OSACA, meas), tp, lcd, _trips(p), _covered(p), note)
    return table


def _covered(p: Prediction) -> str:
    """The share of the op's instructions the prediction prices (llvm-mca's: OSACA's, when less, is
    in the notes), ``b`` when priced block by block."""
    c = p.coverage
    if c is None:
        return "-"
    return f"{100 * c:.0f}%" + (" b" if p.blocks is not None else "")


def predicted_group(rows: Iterable[Mapping[str, Any]], preds: Sequence[Prediction], title: str | None = None,
                    wide: bool = False, target_line: str | None = None) -> RenderableType:
    """The table and the lines under it."""
    lines = [safe_text(x, style="dim") for x in footer_lines(preds, target_line)]
    return Group(predicted_table(rows, preds, title, wide), *lines)


# ------------------------------------------------------------------ explain


def _top_ports(ports: Sequence[tuple[str, float]], n: int = 3) -> str:
    top = sorted(ports, key=lambda kv: -kv[1])[:n]
    return " ".join(f"{k}:{v:.2g}" for k, v in top if v)


def instruction_table(p: Prediction, wide: bool = False) -> FitTable | None:
    """The loop's instructions: runs per trip, llvm-mca's latency and busiest resources, OSACA's
    latency and busiest ports, ``C`` on llvm-mca's critical sequence / ``L`` on OSACA's longest
    loop-carried dependency, and what is not modelled."""
    loop = p.loop
    if loop is None:
        return None
    mca_m, osa_m = p.model(MCA), p.model(OSACA)
    mv = list(mca_m.instructions) if mca_m is not None else []
    ov = list(osa_m.instructions) if osa_m is not None else []
    table = FitTable([
        Column("instruction", justify="left", fold=24),
        Column("per trip", priority=3),
        Column("mca lat", priority=2),
        Column("llvm-mca pressure", justify="left", priority=1),
        Column("OSACA lat", priority=2),
        Column("OSACA ports", justify="left"),
        Column("chain", justify="left"),
        Column("notes", justify="left", notes=True),
    ], title=(f"{p.bench} top block: {loop.function}, {len(loop.instructions)} instructions, {loop.trips:g} per op"
              if p.blocks is not None else
              f"{p.bench} hot loop: {loop.function}, {len(loop.instructions)} instructions"
              f"{'' if loop.trips_per_op is None else f', {loop.trips_per_op:g} trip(s) per op'}"), wide=wide)
    shown: list[list[str]] = []
    repeats: list[int] = []
    for i, ins in enumerate(loop.instructions):
        m = mv[i] if i < len(mv) else None
        o = ov[i] if i < len(ov) else None
        chain = ("C" if m is not None and m.on_chain else "") + ("L" if o is not None and o.on_chain else "")
        text = re.sub(r"\b[0-9a-f]+ <[^>+]*(\+0x[0-9a-f]+)?>", r"<\1>", ins.text)  # jb <+0x10>
        cells = [text, "-" if ins.per_trip is None else f"{ins.per_trip:g}",
                 "-" if m is None or m.latency is None else f"{m.latency:g}",
                 _top_ports(m.ports) if m is not None else "-",
                 "-" if o is None or o.latency is None else f"{o.latency:g}",
                 _top_ports(o.ports) if o is not None else "-", chain,
                 f"not modelled: {ins.unmodelled}" if ins.unmodelled else ""]
        if shown and shown[-1] == cells:  # a .rept: one row, ×N
            repeats[-1] += 1
        else:
            shown.append(cells)
            repeats.append(1)
    for cells, n in zip(shown, repeats, strict=True):
        table.add_row(cells[0] + (f" ×{n}" if n > 1 else ""), *cells[1:])
    return table


def _totals(m: ModelResult | None) -> list[tuple[str, float]]:
    tot: dict[str, float] = {}
    for v in m.instructions if m is not None else ():
        for k, x in v.ports:
            tot[k] = tot.get(k, 0.0) + x
    return sorted(((k, x) for k, x in tot.items() if x > 0.005), key=lambda kv: -kv[1])


def pressure_table(p: Prediction, wide: bool = False) -> FitTable:
    """Port (resource) pressure per loop trip, summed over the loop, busiest first, per model."""
    mt, ot = _totals(p.model(MCA)), _totals(p.model(OSACA))
    table = FitTable([Column("llvm-mca resource", justify="left"), Column("cycles/trip"),
                      Column("OSACA port", justify="left"), Column("cycles/trip ")],
                     title="port pressure per loop trip (busiest first)", wide=wide)
    for i in range(min(max(len(mt), len(ot)), 12)):
        a = mt[i] if i < len(mt) else ("", None)
        b = ot[i] if i < len(ot) else ("", None)
        table.add_row(a[0], "" if a[1] is None else f"{a[1]:.2f}", b[0], "" if b[1] is None else f"{b[1]:.2f}")
    return table


def bound_lines(p: Prediction, meas: float | None) -> list[str]:
    """Per model: its cycles per trip and per op, its bounds, which one binds and why; the ratio
    to the measurement; the loop's coverage of the op's instructions; what is not modelled."""
    out: list[str] = []
    loop = p.loop
    if loop is None:
        return [p.reason or "no loop"]
    where = f"{loop.function} in {loop.obj.rsplit('/', 1)[-1]} [{loop.start:#x}–{loop.end:#x}], found by {loop.source}"
    if p.blocks is not None:
        where = f"top block: {where}, {loop.trips:g} per op"
    elif loop.ir_per_op:
        share = 100 * (loop.loop_ir_per_op or 0) / loop.ir_per_op
        where += f"; the loop holds {share:.0f}% of the op's {loop.ir_per_op:g} instructions"
    out.append(where)
    for m in p.models:
        if m.status != OK:
            out.append(f"{m.tool}: {m.reason}")
            continue
        per_op = p.cycles_per_op(m.tool)
        if p.blocks is not None:  # the op's figure is block_lines'; this is the top block's
            s = (f"{m.tool} {m.version} ({m.cpu}: {m.cpu_reason}): the top block "
                 + (f"{fmt(m.cycles)} cycles an execution" if m.cycles is not None else "not priced"))
            per_op = None
        else:
            s = f"{m.tool} {m.version} ({m.cpu}: {m.cpu_reason}): {fmt(m.cycles)} cycles/trip, {fmt(per_op)}/op"
        if meas and per_op is not None:
            s += f" = {per_op / meas:.2f} × measured {fmt(meas)} cycles~"
        if m.tool == OSACA and m.lcd is not None and m.throughput is not None:
            which = ("the loop-carried dependency (L)" if m.lcd >= m.throughput
                     else f"port pressure (port {_totals(m)[0][0]})" if _totals(m) else "port pressure")
            s += f"; throughput bound {fmt(m.throughput)}, LCD {fmt(m.lcd)}: bound by {which}"
        elif m.throughput is not None:
            s += (f"; throughput bound {fmt(m.throughput)}" if m.tool == OSACA
                  else f"; resource bound (Block RThroughput) {fmt(m.throughput)}")
        out.append(s)
        out += [f"  {n}" for n in m.notes]
    if loop.unmodelled:
        out.append("not modelled (the figures above leave it out): " + "; ".join(loop.unmodelled))
    return out


def blocks_table(p: Prediction, wide: bool = False) -> FitTable | None:
    """A block-weighted prediction's blocks, most cycles per op first: rank, function, source line,
    kind (a loop's main path or a block), executions per op, llvm-mca's cycles per execution,
    cycles per op and their share of its prediction, OSACA's cycles per op for the same block
    (``?``: OSACA has no data for an instruction of it), what is not modelled in it."""
    b = p.blocks
    if b is None:
        return None
    whole = b.cycles_per_op or 0.0
    table = FitTable([
        Column("#"),
        Column("function", justify="left", fold=NAME_FOLD),
        Column("line", justify="left", priority=1),
        Column("kind", justify="left", priority=2),
        Column("per op"),
        Column("cycles", priority=1),
        Column("cycles/op"),
        Column("share"),
        Column("OSACA/op", priority=1),
        Column("notes", justify="left", notes=True),
    ], title=f"{p.bench}: {len(b.blocks)} blocks priced by llvm-mca, most cycles per op first", wide=wide)
    osaca = {(x.obj, x.function, x.start, x.kind): x for x in (p.osaca_blocks.blocks if p.osaca_blocks else ())}
    for k, x in enumerate(b.ranked()[:BLOCKS_SHOWN], 1):
        per = x.per_op
        o = osaca.get((x.obj, x.function, x.start, x.kind))
        o_per = "-" if o is None else UNPRICED if o.per_op is None else fmt(o.per_op)
        table.add_row(str(k), x.function, x.line or "-", x.kind, f"{x.count:g}",
                      "-" if x.cycles is None else fmt(x.cycles), "-" if per is None else fmt(per),
                      "-" if per is None or not whole else f"{100 * per / whole:.0f}%", o_per,
                      ("not modelled: " + ", ".join(x.unmodelled)) if x.unmodelled else "")
    return table


BLOCKS_SHOWN = 10  # rows of explain's block table (the rest: in the stored prediction's detail, 20)


def dominant_line(p: Prediction) -> str | None:
    """One line: what dominates a block-weighted prediction — the not-modelled instructions when
    they are most of the op's, else the top block's dependency chain (its cycles above its resource
    bound) or its throughput."""
    b = p.blocks
    if b is None:
        return None
    unmodelled = sum(n.share for n in b.not_modelled)
    if unmodelled >= 0.5:
        top = b.not_modelled[0]
        return (f"dominated by what no model prices: {100 * unmodelled:.0f}% of the op's instructions "
                f"({top.what}: {top.text} in {top.function}, {top.count:g}/op)")
    ranked = [x for x in b.ranked() if x.per_op is not None]
    if not ranked:
        return None
    top = ranked[0]
    share = 100 * (top.per_op or 0) / (b.cycles_per_op or 1)
    where = f"{top.function}" + (f" ({top.line})" if top.line else "")
    if top.cycles is not None and top.throughput is not None and top.cycles > 1.2 * top.throughput:
        return (f"dominated by a dependency chain: {where}, {fmt(top.cycles)} cycles an execution against its "
                f"resource bound {fmt(top.throughput)}, {share:.0f}% of the prediction")
    return f"dominated by throughput: {where}, at its resource bound, {share:.0f}% of the prediction"


def block_lines(p: Prediction, meas: float | None) -> list[str]:
    """A block-weighted prediction's figures: Σ count × cycles and the resource bound per op, the
    ratio to the measurement, coverage, what dominates, what is not modelled with its share."""
    b = p.blocks
    if b is None:
        return []
    m = p.model(MCA)
    s = f"block-weighted: {fmt(b.cycles_per_op)} cycles/op" if b.cycles_per_op is not None else "block-weighted:"
    if meas and b.cycles_per_op:
        s += f" = {b.cycles_per_op / meas:.2f} × measured {fmt(meas)} cycles~"
    if b.throughput_per_op is not None:
        s += f"; resource bound {fmt(b.throughput_per_op)}/op"
    s += f"; {100 * b.coverage:.0f}% of the op's {b.ir_per_op:g} instructions priced"
    if m is not None and m.version:
        s += f" (llvm-mca {m.version}, {m.cpu})"
    out = [s]
    o, ob = p.model(OSACA), p.osaca_blocks
    if o is not None and o.status == OK and ob is not None and ob.cycles_per_op is not None:
        s = f"OSACA block-weighted: {fmt(ob.cycles_per_op)} cycles/op"
        if meas:
            s += f" = {ob.cycles_per_op / meas:.2f} × measured"
        if ob.throughput_per_op is not None:
            s += f"; throughput bound {fmt(ob.throughput_per_op)}/op"
        out.append(s + f"; {100 * ob.coverage:.0f}% of the op's instructions priced (OSACA {o.version}, {o.cpu})")
    if (d := dominant_line(p)) is not None:
        out.append(d)
    ev = dict(b.events)
    if ev:
        mispredicted = ev.get("Bcm", 0.0) + ev.get("Bim", 0.0)
        l1 = ev.get("D1mr", 0.0) + ev.get("D1mw", 0.0)
        ll = ev.get("DLmr", 0.0) + ev.get("DLmw", 0.0)
        out.append(f"not priced by the model, simulated by callgrind per op: {fmt(mispredicted)} branch "
                   f"mispredictions of {fmt(ev.get('Bc', 0.0) + ev.get('Bi', 0.0))} branches, {fmt(l1)} L1 data "
                   f"misses, {fmt(ll)} last-level misses")
    for n in b.not_modelled[:5]:
        out.append(f"not modelled: {n.what}: {n.text} in {n.function}, {n.count:g}/op, {100 * n.share:.0f}% of the "
                   "op's instructions")
    return out


def explain_group(p: Prediction, meas: float | None, target_line: str, wide: bool = False) -> RenderableType:
    """Everything `explain` prints for one benchmark: a block-weighted prediction's blocks and
    what dominates, then the (top block's or loop's) instructions, port pressure and bounds."""
    parts: list[RenderableType] = [safe_text(f"models: {target_line}")]
    blocks = blocks_table(p, wide)
    if blocks is not None:
        parts += [blocks, *(safe_text(x) for x in block_lines(p, meas))]
    table = instruction_table(p, wide)
    if table is not None:
        parts += [table, pressure_table(p, wide)]
    parts += [safe_text(x) for x in bound_lines(p, meas)]
    return Group(*parts)
