"""Block-weighted pricing of an op (docs/method.md §12): every basic block the op executes,
priced by llvm-mca — and the same units by OSACA (``osaca_profile``) — and weighted by its
executions per op.

A single hot loop is the wrong unit for real code: nested loops, bodies that branch, work spread
over callees. lz4's decompression ran 0% of its instructions in the loop the single-loop path
chose (84 cycles predicted against 22,124 measured). Callgrind's per-op counts (hotloop's
``simulate``) already say how often each instruction runs; here they are cut into basic
blocks — at branch targets, after every branch, call and return, and where the count changes —
and each block is priced by llvm-mca as if repeated (TotalCycles / Iterations: its own dependency
chains count, as they do when the block runs in a loop), all blocks in one llvm-mca process (its
code regions, ``# LLVM-MCA-BEGIN``/``END``). The op's prediction is Σ count × cycles; the
throughput bound Σ count × Block RThroughput beside it.

What is not priced is said, never guessed: a ``call`` is priced through its callee's blocks (not
as llvm-mca's assumed cost of a call), so it is left out of its block's source; an instruction the
models do not model (a system call, a rep string op, cpuid, rdtsc, a fence) is left out of its
block and its instructions count against the **coverage** — the share of the op's executed
instructions (callgrind's Ir) in priced blocks — and is named with its executions per op.
A rep string op's Ir counts its iterations (a 4 KiB ``rep stosq`` is 512), its executions are its
block's.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from cyclebench.predict import mca, osaca
from cyclebench.predict.asm import _PREFIX, _TARGET
from cyclebench.predict.hotloop import NOT_PRICED, Insn, loops, why_unmodelled
from cyclebench.predict.osaca_worker import UnitRequest, UnitResult
from cyclebench.prediction import Block, BlockProfile, HotLoop, NotModelled

# A loop's typical trip: the instructions run in at least this share of its trips. Simulated as
# one repeating path, so a register an arm redefines on most trips flows as it does then (lz4's
# decompression copies literals on 94% of trips: left out, its ip seemed to come from the match
# pointer, a 6-cycle chain that is not there); rarer arms are priced as what they add to a trip.
TYPICAL = 0.5
SINGLE_LOOP = 0.9  # a loop holding this share of the op's instructions is priced as a loop, as before
MAX_BLOCKS = 400  # priced blocks (the most executed instructions first): one llvm-mca process prices them
ITERATIONS = 100  # llvm-mca's repetitions of each block
_ENDS = re.compile(r"^(j[a-z]+|loop[a-z]*|call[q]?|ret[q]?|jmp[q]?)\b")
_REP = re.compile(r"^rep[a-z]*\s")


def one_trip(loop: HotLoop) -> bool:
    """Whether the loop alone prices the op: it holds SINGLE_LOOP of the op's instructions (its
    straight-line callees included) and runs each of its instructions once a trip (a rep string
    op counts iterations: aside). A loop whose body branches prices an arm run 1 trip in 64 as if
    it ran every trip; lz4's compression loop ran most of its instructions ~11.6 times a trip."""
    if loop.ir_per_op is None or (loop.loop_ir_per_op or 0.0) < SINGLE_LOOP * loop.ir_per_op:
        return False
    return all(i.per_trip is None or abs(i.per_trip - 1) < 1e-3 for i in loop.instructions if not _REP.match(i.text))


def _block(key: tuple[str, str], run: Sequence[Insn], ex: Mapping[int, float]) -> Block:
    """One block of consecutive executed instructions: its count is its first instruction's that
    is not a rep string op (whose Ir counts iterations)."""
    first = next((i for i in run if not _REP.match(i.text)), run[0])
    return Block(function=key[1], obj=key[0], start=run[0].address, end=run[-1].address, count=ex[first.address],
                 ir=float(sum(ex[i.address] for i in run)), instructions=tuple(i.text for i in run),
                 addresses=tuple(i.address for i in run),
                 unmodelled=tuple(dict.fromkeys(w for i in run if (w := why_unmodelled(i.text)) and w != "call")))


def split(counts: Mapping[tuple[str, str], Mapping[int, float]],
          listings: Mapping[tuple[str, str], Sequence[Insn]]) -> list[Block]:
    """The basic blocks of the executed instructions: ``counts`` {(object, function): {address:
    executions per op}}, ``listings`` their disassembly. Unpriced (cycles None)."""
    out: list[Block] = []
    for key, insns in listings.items():
        ex = counts.get(key, {})
        targets = {i.target for i in insns if i.target is not None}
        run: list[Insn] = []
        prev = -2
        for k, i in enumerate(insns):
            c = ex.get(i.address, 0.0)
            if c <= 0:
                continue
            head = next((x for x in run if not _REP.match(x.text)), None)
            new_block = run and (k != prev + 1 or i.address in targets or _ENDS.match(run[-1].text)
                                 or (head is not None and not _REP.match(i.text) and abs(c - ex[head.address]) > 1e-6))
            if new_block:
                out.append(_block(key, run, ex))
                run = []
            run.append(i)
            prev = k
        if run:
            out.append(_block(key, run, ex))
    return out


def _source(block: Block, out: str) -> list[str]:
    """The block as llvm-mca reads it: prefixes dropped, branches to the label ``out`` after it,
    calls and what the models do not model left out (module docstring)."""
    lines = []
    for text in block.instructions:
        t = _PREFIX.sub("", text)
        what = why_unmodelled(t)
        if what == "call" or what in NOT_PRICED:
            continue
        m = _TARGET.match(t)  # a branch (calls are left out above): to the label after the block
        if m:
            t = m.group(1) + out
        lines.append(t)
    return lines


def _priced_ir(block: Block, counts: Mapping[int, float], addresses: Sequence[int]) -> float:
    """Ir per op of the block's instructions llvm-mca prices, calls included (their callee is priced)."""
    return float(sum(counts.get(a, 0.0) for a, t in zip(addresses, block.instructions, strict=True)
                     if why_unmodelled(t) not in NOT_PRICED))


def _mca(units: Sequence[Block], mcpu: str, iterations: int, timeout: float
         ) -> tuple[dict[int, tuple[float, float]], str | None]:
    """llvm-mca over ``units`` in one process, a code region each, repeated ``iterations`` times:
    {index: (cycles per iteration, Block RThroughput)} and None, or ({}, why)."""
    tool = mca.find_tool()
    if tool is None:
        return {}, f"llvm-mca not found: install {mca.PACKAGE}"
    parts, which = [], []
    for k, b in enumerate(units):
        out_label = f".Lcb_out{k}"
        body = _source(b, out_label)
        if not body:
            continue
        parts += [f"# LLVM-MCA-BEGIN b{k}", *body, f"{out_label}:" if any(out_label in x for x in body) else "",
                  "# LLVM-MCA-END"]
        which.append(k)
    if not which:
        return {}, None
    with tempfile.TemporaryDirectory(prefix="cb-blocks-") as tmp:
        asm = Path(tmp) / "blocks.s"
        asm.write_text("\n".join(x for x in parts if x) + "\n")
        try:
            proc = subprocess.run([tool[0], f"-mcpu={mcpu}", f"-iterations={iterations}", "--json", str(asm)],
                                  capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return {}, f"llvm-mca took over {timeout:g} s"
    if proc.returncode != 0:
        err = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:200])
        return {}, f"llvm-mca: {err.strip()}"
    by_name = {r.get("Name"): r for r in json.loads(proc.stdout).get("CodeRegions", [])}
    out: dict[int, tuple[float, float]] = {}
    for k in which:
        r = by_name.get(f"b{k}")
        if r is not None:
            out[k] = (r["SummaryView"]["TotalCycles"] / r["SummaryView"]["Iterations"],
                      float(r["SummaryView"]["BlockRThroughput"]))
    return out, None


def loops_of(counts: Mapping[tuple[str, str], Mapping[int, float]],
             listings: Mapping[tuple[str, str], Sequence[Insn]]) -> list[Block]:
    """The typical trip of every innermost loop that runs per op, as a Block: the instructions of
    [head, backward branch] run in at least TYPICAL of its trips (the arms a trip takes more
    rarely are left to their blocks), ``count`` the head's executions per op (its trips). Loops
    whose ranges overlap without nesting (two back edges into one body: glibc's _int_free) share
    no instruction: the most executed claims it first."""
    found = []
    for key, insns in listings.items():
        ex = dict(counts.get(key, {}))
        for start, end, _branch in loops(list(insns), ex):
            trips = ex.get(start, 0.0)
            if trips > 0:
                found.append((trips, key, start, end))
    out, claimed = [], set()
    for trips, key, start, end in sorted(found, key=lambda f: (-f[0], f[1], f[2])):
        ex = counts.get(key, {})
        path = [i for i in listings[key] if start <= i.address <= end and ex.get(i.address, 0.0) > 0
                and (ex[i.address] >= TYPICAL * trips or _REP.match(i.text)) and (key, i.address) not in claimed]
        if path:
            claimed.update((key, i.address) for i in path)
            out.append(replace(_block(key, path, ex), count=trips, kind="loop"))
    return out


def _units(blocks: Sequence[Block], loops: Sequence[Block]) -> tuple[list[Block], dict[int, int | None]]:
    """What each model prices: the loops' paths, then per block either itself (outside every loop)
    or its loop's path with it (an arm, in address order); and each block's loop (None: none)."""
    home: dict[int, int | None] = {}
    for k, b in enumerate(blocks):
        home[k] = next((j for j, lp in enumerate(loops) if lp.obj == b.obj and lp.function == b.function
                        and lp.start <= b.start and b.end <= lp.end), None)
    units: list[Block] = [*loops]
    for k, b in enumerate(blocks):
        j = home[k]
        if j is None:
            units.append(b)
        else:  # the path with the arm, in address order
            lp = loops[j]
            merged = sorted([*zip(lp.addresses, lp.instructions, strict=True),
                             *zip(b.addresses, b.instructions, strict=True)])
            units.append(replace(lp, addresses=tuple(a for a, _t in merged),
                                 instructions=tuple(t for _a, t in merged)))
    return units, home


def price(blocks: Sequence[Block], loops: Sequence[Block], mcpu: str, timeout: float = mca.TIMEOUT_S
          ) -> tuple[list[Block], str | None]:
    """Every unit priced by llvm-mca, repeated, in one process. A loop's main path: its cycles per
    trip (its loop-carried chains are real: the path does repeat). An arm of a loop (a block in its
    range off the main path): what it adds to a trip that takes it — the path with the arm, less the
    path — so a chain that runs through the arm is the loop's (an arm of 200 dependent adds taken 1
    op in 64 costs 3.1 cycles an op; alone, at its throughput, 0.8). A block outside every loop
    (a prologue, a callee's straight code): its resource bound (Block RThroughput) — repeating a
    block that does not loop invents a chain from its end to its start (malloc + free, 34 cycles
    measured: 87.8 priced so, 61.4 at the blocks' resource bounds). Returns (loops then blocks,
    priced; why a price is missing)."""
    units, home = _units(blocks, loops)
    got, why = _mca(units, mcpu, ITERATIONS, timeout)
    out = [replace(lp, cycles=round(got[j][0], 4), throughput=got[j][1]) if j in got else lp
           for j, lp in enumerate(loops)]
    for k, b in enumerate(blocks):
        u = len(loops) + k
        if u not in got:
            out.append(b)
        elif home[k] is None:
            out.append(replace(b, cycles=round(got[u][1], 4), throughput=got[u][1]))
        elif home[k] in got:
            base = got[home[k]]
            out.append(replace(b, cycles=round(max(got[u][0] - base[0], 0.0), 4),
                               throughput=round(max(got[u][1] - base[1], 0.0), 4)))
        else:
            out.append(b)
    return out, why


def lines_of(blocks: Sequence[Block], debug: Mapping[str, str] | None = None) -> list[Block]:
    """The blocks with their first instruction's source file:line (addr2line, one process an
    object), where the object — or its stand-in in ``debug`` (the same build with -g, whose code
    is the same: GCC's -g does not change the code it generates) — has debug information; else
    unchanged."""
    if shutil.which("addr2line") is None:
        return list(blocks)
    out = list(blocks)
    by_obj: dict[str, list[int]] = {}
    for k, b in enumerate(blocks):
        by_obj.setdefault(b.obj, []).append(k)
    for obj, ks in by_obj.items():
        try:
            proc = subprocess.run(["addr2line", "-e", (debug or {}).get(obj, obj),
                                   *(f"{blocks[k].start:#x}" for k in ks)],
                                  capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        got = proc.stdout.splitlines()
        if proc.returncode != 0 or len(got) != len(ks):
            continue
        for k, where in zip(ks, got, strict=True):
            where = where.split(" (discriminator")[0].strip()
            if where and not where.startswith("??") and not where.endswith(":?"):
                out[k] = replace(out[k], line=f"{Path(where.split(':')[0]).name}:{where.rsplit(':', 1)[-1]}")
    return out


def units_of(counts: Mapping[tuple[str, str], Mapping[int, float]],
             listings: Mapping[tuple[str, str], Sequence[Insn]]) -> tuple[list[Block], list[Block], float]:
    """What an op's pricing is made of: (the main paths of its innermost loops, its other blocks —
    a block partly on a loop's path less that part, the MAX_BLOCKS most executed —, its Ir per op)."""
    loops = loops_of(counts, listings)
    on_path = {(b.obj, b.function, a) for b in loops for a in b.addresses}
    blocks = [b for b in split(counts, listings)
              if not all((b.obj, b.function, a) in on_path for a in b.addresses)]
    # a block partly on a loop's path (its tail is an arm): the rest of it, the path's share priced there
    blocks = [_rest(b, on_path, counts) for b in blocks]
    blocks = [b for b in blocks if b is not None]
    total = float(sum(sum(v.values()) for v in counts.values()))
    keep = sorted(range(len(blocks)), key=lambda k: -blocks[k].ir)[:MAX_BLOCKS]
    return loops, [blocks[k] for k in sorted(keep)], total


def summarise(units: Sequence[Block], counts: Mapping[tuple[str, str], Mapping[int, float]],
              total: float) -> BlockProfile:
    """The BlockProfile of priced ``units`` (cycles None: not priced): coverage, what no model
    prices, Σ count × cycles and Σ count × throughput over the priced ones."""
    covered = 0.0
    not_modelled: list[NotModelled] = []
    for b in units:
        ex = counts.get((b.obj, b.function), {})
        if b.cycles is not None:
            covered += _priced_ir(b, ex, b.addresses)
        for a, t in zip(b.addresses, b.instructions, strict=True):
            what = why_unmodelled(t)
            if what and what != "call":
                not_modelled.append(NotModelled(what, " ".join(t.split()[:2]), b.function, b.count,
                                                ex.get(a, 0.0) / total if total else 0.0))
    priced = [b for b in units if b.per_op is not None]
    cycles = sum(b.per_op or 0.0 for b in priced) if priced else None
    thr = sum(b.count * (b.throughput or 0.0) for b in priced) if priced else None
    return BlockProfile(blocks=tuple(units), ir_per_op=round(total, 4), coverage=covered / total if total else 0.0,
                        not_modelled=tuple(sorted(not_modelled, key=lambda n: -n.share)),
                        cycles_per_op=None if cycles is None else round(cycles, 4),
                        throughput_per_op=None if thr is None else round(thr, 4))


def profile(counts: Mapping[tuple[str, str], Mapping[int, float]], listings: Mapping[tuple[str, str], Sequence[Insn]],
            mcpu: str | None, debug: Mapping[str, str] | None = None) -> tuple[BlockProfile, str | None]:
    """The op's BlockProfile: the main paths of its loops and its other blocks, priced on ``mcpu``
    (None: unpriced, with why) and named by source line (``debug``: lines_of's). Returns (profile,
    why a price is missing: None when llvm-mca priced them)."""
    loops, chosen, total = units_of(counts, listings)
    why: str | None = None
    if mcpu is None:
        why = "no llvm-mca model of this CPU"
        units = [*loops, *chosen]
    else:
        units, why = price(chosen, loops, mcpu)
    return summarise(lines_of(units, debug), counts, total), why


@dataclass(frozen=True)
class OsacaBlocks:
    """OSACA's pricing of the same units as llvm-mca's (osaca_profile): ``profile`` (None: OSACA
    failed, ``error`` says why), its version, the units priced on each arch (``used``: (arch, n),
    the CPU's list's order) and the instructions no arch asked for has data for (``unknown``); the
    blocks OSACA left unpriced are the profile's (BlockProfile.unpriced: function, share, the first
    instruction without data or OSACA's error on it)."""

    profile: BlockProfile | None
    version: str | None = None
    error: str | None = None
    used: tuple[tuple[str, int], ...] = ()
    unknown: tuple[str, ...] = ()

    @property
    def unpriced(self) -> tuple[tuple[str, float, str], ...]:
        """The profile's unpriced blocks (none without a profile)."""
        return self.profile.unpriced if self.profile is not None else ()

    @property
    def unpriced_share(self) -> float:
        """The share of the op's instructions in blocks OSACA has no data for."""
        return self.profile.unpriced_share if self.profile is not None else 0.0


def price_osaca(blocks: Sequence[Block], loops: Sequence[Block], archs: Sequence[str],
                timeout: float | None = None) -> tuple[list[Block], OsacaBlocks]:
    """The units of ``price`` priced by OSACA, all in one worker process (osaca.run_units), each
    on the first of ``archs`` with data for all its instructions. A loop's path: max(throughput,
    LCD) a trip, as OSACA reads a kernel; an arm: what it adds to its path (the path with it less
    the path, both on the arm's arch); a block outside every loop: its throughput bound, as
    llvm-mca's Block RThroughput. A unit with an instruction no arch has data for is left unpriced
    (``reason`` names it), never priced at 0. Returns (loops then blocks, OsacaBlocks without its
    profile; ``error`` set when the worker failed)."""
    units, home = _units(blocks, loops)
    requests: list[UnitRequest] = []
    which: dict[int, int] = {}
    for k, u in enumerate(units):
        out_label = f".Lcb_out{k}"
        body = _source(u, out_label)
        if not body:
            continue
        j = home.get(k - len(loops)) if k >= len(loops) else None
        which[k] = len(requests)
        requests.append({"code": "\n".join([*body, f"{out_label}:"]) + "\n", "lcd": k < len(loops) or j is not None,
                         "base": None})
    for k, r in which.items():  # an arm's base: its loop's path, by request index
        j = home.get(k - len(loops)) if k >= len(loops) else None
        if j is not None and j in which:
            requests[r]["base"] = which[j]
    if not requests:
        return [*loops, *blocks], OsacaBlocks(None)
    version, got, error = osaca.run_units(requests, tuple(archs), timeout)
    if error is not None:
        return [*loops, *blocks], OsacaBlocks(None, version, error)

    def cost(r: UnitResult) -> float:
        return max(r.get("throughput", 0.0), r.get("lcd", 0.0))

    used: dict[str, int] = {}
    unknown: list[str] = []
    out: list[Block] = []
    for k, u in enumerate([*loops, *blocks]):
        r = got[which[k]] if k in which else None
        if r is None:
            out.append(u)
            continue
        if "error" in r or r.get("arch") is None:
            why = (f"OSACA failed: {r['error']}" if "error" in r
                   else f"no data in OSACA's {'/'.join(archs)} for {', '.join(r.get('unknown', []))}")
            unknown += r.get("unknown", [])
            out.append(replace(u, reason=why))
            continue
        arch = str(r["arch"])
        used[arch] = used.get(arch, 0) + 1
        tp = r.get("throughput", 0.0)
        if k < len(loops) or home.get(k - len(loops)) is None:
            cyc = cost(r) if k < len(loops) else tp
            out.append(replace(u, cycles=round(cyc, 4), throughput=round(tp, 4)))
        elif "base" in r:
            b_tp = r["base"]["throughput"]
            b_cost = max(b_tp, r["base"]["lcd"])
            out.append(replace(u, cycles=round(max(cost(r) - b_cost, 0.0), 4),
                               throughput=round(max(tp - b_tp, 0.0), 4)))
        else:
            out.append(replace(u, reason="its loop's path is not priced by OSACA"))
    order = [a for a in archs if a in used]
    return out, OsacaBlocks(None, version, None, tuple((a, used[a]) for a in order),
                            tuple(dict.fromkeys(" ".join(t.split()) for t in unknown)))


def osaca_profile(counts: Mapping[tuple[str, str], Mapping[int, float]],
                  listings: Mapping[tuple[str, str], Sequence[Insn]], archs: Sequence[str],
                  like: BlockProfile | None = None, timeout: float | None = None) -> OsacaBlocks:
    """OSACA's pricing of the op block by block (price_osaca over units_of's units), summed as
    llvm-mca's is (summarise); the blocks' source lines taken from ``like`` (llvm-mca's profile of
    the same units). Its coverage counts only the blocks OSACA priced; those it has no data for
    are in ``unpriced`` with their share of the op's instructions."""
    loops, chosen, total = units_of(counts, listings)
    units, info = price_osaca(chosen, loops, archs, timeout)
    if info.error is not None:
        return info
    where = {(b.obj, b.function, b.start, b.kind): b.line for b in (like.blocks if like is not None else ())}
    units = [replace(b, line=where.get((b.obj, b.function, b.start, b.kind), b.line)) for b in units]
    unpriced = []
    for b in units:  # what OSACA could not price (no data, or its own failure on the block): its share said
        if b.cycles is None and b.reason is not None:
            ir = _priced_ir(b, counts.get((b.obj, b.function), {}), b.addresses)
            what = b.reason.split(" for ", 1)[-1].split(", ")[0] if b.reason.startswith("no data") else b.reason
            unpriced.append((b.function, ir / total if total else 0.0, what))
    # the share of what coverage would count (_priced_ir), not the block's whole Ir: a rep stos in
    # an unpriced block is outside llvm-mca's coverage too, and counted here it came twice (lz4's
    # compression on SPR, whose memset block OSACA has no data for: 0.149 + 0.851 against 0.916)
    return replace(info, profile=replace(summarise(units, counts, total),
                                         unpriced=tuple(sorted(unpriced, key=lambda x: -x[1]))))


def _rest(b: Block, on_path: set[tuple[str, str, int]], counts: Mapping[tuple[str, str], Mapping[int, float]]
          ) -> Block | None:
    """``b`` less its instructions on a loop's main path (None when nothing is left)."""
    keep = [k for k, a in enumerate(b.addresses) if (b.obj, b.function, a) not in on_path]
    if len(keep) == len(b.addresses):
        return b
    if not keep:
        return None
    ex = counts.get((b.obj, b.function), {})
    addrs = tuple(b.addresses[k] for k in keep)
    return replace(b, start=addrs[0], end=addrs[-1], addresses=addrs,
                   instructions=tuple(b.instructions[k] for k in keep), ir=float(sum(ex.get(a, 0.0) for a in addrs)))
