"""The hot loop of a benchmark's body in a built runner (docs/method.md §12).

Exactly, from callgrind's per-instruction counts: the runner's ``--sim N`` mode
(engine/simulate.c) dumps two batches, of N and 2N operations, and with ``--dump-instr=yes``
each dump holds every executed instruction's count (Callgrind Format Specification, "positions:
instr"); their difference divided by N is how many times each instruction runs per operation —
set-up, a cold branch and anything done once per batch cancel. Every backward branch that runs
per op closes a loop [its target, itself]; the loop whose range holds no other (innermost) and
whose trips execute the most instructions per op is the hot loop, and its branch's count per op
is its trips per op (a body unrolled by 4 runs 1/4 trip an op; a byte loop over 64 bytes, 64).

Without valgrind, statically: the body symbol's innermost backward branch (the longest loop when
there are several), one trip per op assumed and said so.

Instructions the models do not model are named (``why_unmodelled``), never priced silently.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from elftools.elf.elffile import ELFFile

from cyclebench.build.elf import body_symbol
from cyclebench.prediction import CALLGRIND, STATIC, HotLoop, LoopInstruction
from cyclebench.runner import run_child

# operations in callgrind's first batch: per-op counts resolve to 1/64 (an arm taken 1 op in 64: 16 saw none)
SIM_OPS = 64
OBJDUMP_TIMEOUT_S = 60

# What static throughput models cannot price (llvm-mca's docs, "Limitations": no model of the
# memory subsystem beyond its load/store queues, of serialising or microcoded instructions'
# variable latency, or of anything outside the block; OSACA's paper, Laukemann et al. 2018, §II).
_UNMODELLED: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^(syscall|sysenter|int\s+\$0x80)\b"), "system call"),
    (re.compile(r"^lock\b"), "lock prefix"),
    (re.compile(r"^xchg[bwlq]?\s+%\w+,\s*[^%]|^xchg[bwlq]?\s+[^%][^,]*,\s*%"), "xchg with memory (locked)"),
    (re.compile(r"^(mfence|lfence|sfence)\b"), "fence"),
    (re.compile(r"^rep[a-z]*\s+(movs|stos|cmps|scas|lods)"), "rep string op"),
    (re.compile(r"^cpuid\b"), "cpuid"),
    (re.compile(r"^(rdtscp?|rdpmc)\b"), "timer read (rdtsc)"),
    (re.compile(r"^(call|callq)\b"), "call"),
]
# What a model cannot put a number on at all (its instructions count against the coverage); a lock
# prefix or a call gets a number, marked (a call's callee is priced where it can be: blocks, splicing)
NOT_PRICED = frozenset({"system call", "rep string op", "cpuid", "timer read (rdtsc)", "fence"})
_BRANCH = re.compile(r"^(j[a-z]+|loop[a-z]*)\s+([0-9a-f]+)\s+<")
_CALL = re.compile(r"^(?:call|callq)\s+[0-9a-f]+\s+<([^>+]+)")
_LINE = re.compile(r"^\s+([0-9a-f]+):\s+(.*)$")


class HotLoopError(Exception):
    """No loop to model: the body runs none per op (or has none), valgrind failed, or the body
    symbol is not in the binary. The message is one line for the user."""


@dataclass(frozen=True)
class Insn:
    """One disassembled instruction: address, AT&T text (comment dropped), branch target."""

    address: int
    text: str
    target: int | None = None


def why_unmodelled(text: str) -> str | None:
    """The class of an instruction the models do not model (``"lock prefix"``, ``"system call"``,
    ``"fence"``, ``"rep string op"``, ``"cpuid"``, ``"timer read (rdtsc)"``, ``"call"``), or None."""
    t = text.strip()
    for pat, what in _UNMODELLED:
        if pat.search(t):
            return what
    return None


def disassemble(obj: Path, start: int, stop: int, objdump: str = "objdump") -> list[Insn]:
    """Instructions of ``obj`` in [start, stop) (ELF virtual addresses), AT&T syntax. Raises
    HotLoopError without objdump or when it fails."""
    if shutil.which(objdump) is None:
        raise HotLoopError(f"'{objdump}' not found: install binutils (apt-get install binutils)")
    proc = subprocess.run([objdump, "-d", "-w", "--no-show-raw-insn", f"--start-address={start:#x}",
                           f"--stop-address={stop:#x}", str(obj)],
                          capture_output=True, text=True, timeout=OBJDUMP_TIMEOUT_S, check=False)
    if proc.returncode != 0:
        raise HotLoopError(f"objdump failed on {obj}: {proc.stderr.strip()[:200]}")
    out = []
    for line in proc.stdout.splitlines():
        m = _LINE.match(line)
        if not m or m.group(2).startswith("(bad)"):
            continue
        text = re.sub(r"\s+#.*$", "", m.group(2)).strip()
        text = re.sub(r"\s+", " ", text)
        b = _BRANCH.match(text)
        out.append(Insn(int(m.group(1), 16), text, int(b.group(2), 16) if b else None))
    return out


def symbol_range(obj: Path, name: str) -> tuple[int, int] | None:
    """[start, end) of function symbol ``name`` in ``obj``'s .symtab; None when absent."""
    with obj.open("rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")
        if symtab is None:
            return None
        for sym in symtab.get_symbol_by_name(name) or []:
            if sym["st_info"]["type"] == "STT_FUNC" and sym["st_size"]:
                return int(sym["st_value"]), int(sym["st_value"]) + int(sym["st_size"])
    return None


# ------------------------------------------------------------------ callgrind's counts

def parse_instr_dump(text: str) -> dict[tuple[str, str], dict[int, int]]:
    """{(object file, function): {address: Ir}} of one callgrind output file written with
    ``--dump-instr=yes --compress-strings=no --compress-pos=no``: self cost only (the cost line
    after a ``calls=`` line is the call's inclusive cost and is skipped)."""
    counts: dict[tuple[str, str], dict[int, int]] = defaultdict(lambda: defaultdict(int))
    ob = fn = ""
    skip_next = False
    for line in text.splitlines():
        if line.startswith("ob="):
            ob = line[3:].strip()
        elif line.startswith("fn="):
            fn = line[3:].strip()
        elif line.startswith("calls="):
            skip_next = True
        elif line.startswith("0x"):
            if skip_next:
                skip_next = False
                continue
            parts = line.split()
            if len(parts) >= 2:
                counts[(ob, fn)][int(parts[0], 16)] += int(parts[1])
    return {k: dict(v) for k, v in counts.items()}


def label_of(text: str) -> str | None:
    m = re.search(r"^desc: Trigger: Client Request: (.+)$", text, re.M)
    return m.group(1).strip() if m else None


def per_op_counts(n1: dict[tuple[str, str], dict[int, int]], n2: dict[tuple[str, str], dict[int, int]],
                  ops: int) -> dict[tuple[str, str], dict[int, float]]:
    """(count in the 2N batch − count in the N batch) / N per instruction, only those that run
    per op (at least half the resolution, 0.5/N)."""
    out: dict[tuple[str, str], dict[int, float]] = {}
    for key in set(n1) | set(n2):
        a, b = n1.get(key, {}), n2.get(key, {})
        per = {addr: (b.get(addr, 0) - a.get(addr, 0)) / ops for addr in set(a) | set(b)}
        per = {k: v for k, v in per.items() if v >= 0.5 / ops}
        if per:
            out[key] = per
    return out


def event_totals(text: str) -> dict[str, float]:
    """{event: total} of one callgrind output file (its ``events:`` and ``totals:``/``summary:``
    lines; Callgrind Format Specification)."""
    names = re.search(r"^events:\s*(.+)$", text, re.M)
    total = re.search(r"^(?:totals|summary):\s*(.+)$", text, re.M)
    if not names or not total:
        return {}
    return {n: float(v) for n, v in zip(names.group(1).split(), total.group(1).split(), strict=False)}


def simulate(binary: Path, bench: str, param: int | None, timeout: float = 600, launcher: list[str] | None = None
             ) -> tuple[dict[tuple[str, str], dict[int, float]], dict[str, float]]:
    """(per-op executions of every instruction the op runs, callgrind's events per op — Ir, its
    simulated cache misses and branch mispredictions: Bcm, Bim, D1mr, D1mw, DLmr, DLmw, …), under
    callgrind with its cache and branch simulation. Raises HotLoopError (valgrind missing or
    failing, no labelled dumps)."""
    if shutil.which("valgrind") is None:
        raise HotLoopError("valgrind not found (apt-get install valgrind)")
    with tempfile.TemporaryDirectory(prefix="cb-hot-") as tmp:
        out = Path(tmp) / "cg.out"
        argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no", "--vgdb=no",
                "--dump-instr=yes", "--dump-line=no", "--compress-strings=no", "--compress-pos=no",
                "--cache-sim=yes", "--branch-sim=yes",
                f"--callgrind-out-file={out}.%p", *(launcher or []), str(binary), "--sim", str(SIM_OPS),
                "--run", bench]
        if param is not None:
            argv += ["--param", str(param)]
        proc = run_child(argv, timeout)
        if proc.timed_out:
            raise HotLoopError(f"callgrind timed out after {timeout:g} s")
        dumps, totals = {}, {}
        for f in Path(tmp).glob("cg.out.*"):
            text = f.read_text(errors="replace")
            if (label := label_of(text)) in ("cb:n1", "cb:n2"):
                dumps[label], totals[label] = parse_instr_dump(text), event_totals(text)
        if len(dumps) != 2:
            tail = [ln for ln in proc.stderr.splitlines() if ln.strip()][-1:]
            raise HotLoopError(f"callgrind wrote no per-op dumps (exit {proc.returncode}"
                               f"{': ' + tail[0] if tail else ''})")
    n1, n2 = totals["cb:n1"], totals["cb:n2"]
    events = {k: round(max(n2[k] - n1.get(k, 0.0), 0.0) / SIM_OPS, 4) for k in n2}
    return per_op_counts(dumps["cb:n1"], dumps["cb:n2"], SIM_OPS), events


def _short(obj: str) -> str:
    return obj.rsplit("/", 1)[-1]


def _taken(insns: list[Insn], executed: dict[int, float], start: int) -> float:
    """How often per op control reaches ``start`` other than by falling into it: its count less
    the count of the instruction before it, when that one falls through (not a jmp or ret)."""
    before = [i for i in insns if i.address < start]
    head = executed.get(start, 0.0)
    if not before or re.match(r"^(jmp|ret|ud2)", before[-1].text):
        return head
    return head - executed.get(before[-1].address, 0.0)


def loops(insns: list[Insn], executed: dict[int, float] | None) -> list[tuple[int, int, Insn]]:
    """(start, end, branch) of every backward branch among ``insns`` (with counts: run per op and
    taken per op: a compare-and-swap's retry branch that never retries is no loop), innermost
    only: no other's range inside its own."""
    lo = insns[0].address if insns else 0
    cands = [(i.target, i.address, i) for i in insns
             if i.target is not None and lo <= i.target <= i.address
             and (executed is None or (executed.get(i.address, 0) > 0
                                       and _taken(insns, executed, i.target) >= 0.5 / SIM_OPS))]
    return [c for c in cands
            if not any(o is not c and c[0] <= o[0] and o[1] <= c[1] and (o[0], o[1]) != (c[0], c[1]) for o in cands)]


def listings_of(counts: dict[tuple[str, str], dict[int, float]], objdump: str = "objdump"
                ) -> dict[tuple[str, str], list[Insn]]:
    """The disassembly of every function the per-op counts name, over the range they executed
    (objects no longer on disk are left out)."""
    out: dict[tuple[str, str], list[Insn]] = {}
    for key, ex in counts.items():
        obj = Path(key[0])
        if obj.is_file():
            out[key] = disassemble(obj, min(ex), max(ex) + 16, objdump)
    return out


def _leaf_callees(counts: dict[tuple[str, str], dict[int, float]], listings: dict[tuple[str, str], list[Insn]],
                  ) -> dict[str, tuple[tuple[str, str], list[Insn]]]:
    """Functions a loop trip can hold inline, by name: every executed instruction run equally
    often (straight-line: no loop, no branch taken one call in some), no call of their own."""
    out: dict[str, tuple[tuple[str, str], list[Insn]]] = {}
    for key, insns in listings.items():
        ex = counts[key]
        run = [i for i in insns if ex.get(i.address, 0) > 0]
        if run and max(ex[i.address] for i in run) - min(ex[i.address] for i in run) < 1e-6 \
                and not any(why_unmodelled(i.text) == "call" for i in run):
            out[key[1]] = (key, run)
    return out


def from_counts(counts: dict[tuple[str, str], dict[int, float]], objdump: str = "objdump",
                listings: dict[tuple[str, str], list[Insn]] | None = None) -> HotLoop:
    """The hot loop among the per-op counts (see the module's docstring), ``listings`` their
    disassembly (listings_of's; made here when None). A call in the loop to a straight-line
    leaf function is priced through it: the callee's instructions take the call's place in the
    trip (its ``ret`` dropped), so a dependency that runs through it is the loop's (a loop calling
    a 50-add chain is 50 cycles a trip, not a 100-cycle call). Raises HotLoopError when no backward
    branch runs per op."""
    total = sum(sum(v.values()) for v in counts.values())
    best: tuple[float, tuple[str, str], int, int, Insn, list[Insn]] | None = None
    listings = listings_of(counts, objdump) if listings is None else listings
    leaves = _leaf_callees(counts, listings)

    def inlined(insns: list[Insn], ex: dict[int, float], start: int, end: int) -> float:
        """Ir per op of the loop's straight-line leaf callees."""
        names = {m.group(1) for i in insns if start <= i.address <= end and ex.get(i.address, 0) > 0
                 and (m := _CALL.match(i.text)) and m.group(1) in leaves}
        return sum(sum(counts[leaves[n][0]].values()) for n in names)

    for key, insns in listings.items():
        ex = counts[key]
        for start, end, _br in loops(insns, ex):
            ir = sum(c for a, c in ex.items() if start <= a <= end) + inlined(insns, ex, start, end)
            if best is None or ir > best[0]:
                best = (ir, key, start, end, _br, insns)
    if best is None:
        raise HotLoopError(f"no loop: the body runs no backward branch per op ({total:g} instructions an op)")
    ir, key, start, end, branch, insns = best
    ex = counts[key]
    trips = ex[branch.address]
    body: list[LoopInstruction] = []
    ir_of: dict[int, float] = {}  # Ir per op of each instruction of the trip (a rep string op: its iterations)
    spliced: set[tuple[str, str]] = set()
    for i in insns:
        if not (start <= i.address <= end and ex.get(i.address, 0) > 0):
            continue
        m = _CALL.match(i.text)
        if m and m.group(1) in leaves:
            ckey, run = leaves[m.group(1)]
            spliced.add(ckey)
            body += [LoopInstruction(c.address, c.text, round(counts[ckey][c.address] / trips, 4),
                                     why_unmodelled(c.text)) for c in run if not re.match(r"^ret", c.text)]
            ir_of.update({c.address: counts[ckey][c.address] for c in run})
            continue
        body.append(LoopInstruction(i.address, i.text, round(ex[i.address] / trips, 4), why_unmodelled(i.text)))
        ir_of[i.address] = ex[i.address]
    outside: list[str] = []
    for k, other in listings.items():
        for i in other:
            c = counts[k].get(i.address, 0)
            if not c:
                continue
            if (what := why_unmodelled(i.text)) and what != "call":
                where = "" if (k == key and start <= i.address <= end) or k in spliced else " outside the loop"
                outside.append(f"{what}: {' '.join(i.text.split()[:2])} in {k[1]} ({_short(k[0])}), "
                               f"{_executions(other, counts[k], i):g}/op{where}, {100 * c / total:.0f}% of the "
                               "op's instructions")
    rest = total - ir
    for i in body:
        if i.unmodelled == "call" and (m := _CALL.match(i.text)):
            outside.insert(0, f"call {m.group(1)}: the op's other {rest:g} instructions are outside the loop")
    unpriced = sum(ir_of[i.address] for i in body if i.unmodelled in NOT_PRICED)
    return HotLoop(function=key[1], obj=key[0], start=start, end=end, instructions=tuple(body), source=CALLGRIND,
                   trips_per_op=trips, ir_per_op=round(total, 4), loop_ir_per_op=round(ir, 4),
                   outside=tuple(dict.fromkeys(outside)), priced_ir_per_op=round(max(ir - unpriced, 0.0), 4))


def _executions(insns: list[Insn], ex: dict[int, float], i: Insn) -> float:
    """Executions per op of ``i``: its count, but a rep string op's counts its iterations, so
    its executions are those of the executed instruction before it (or after it)."""
    if not re.match(r"^rep[a-z]*\s", i.text):
        return ex[i.address]
    k = insns.index(i)
    for j in (k - 1, k + 1):
        if 0 <= j < len(insns) and ex.get(insns[j].address, 0) > 0:
            return ex[insns[j].address]
    return ex[i.address]


def static(binary: Path, bench: str, objdump: str = "objdump") -> HotLoop:
    """The body's innermost backward branch, read from the disassembly (no counts: one trip per
    op assumed). Raises HotLoopError when the body has no symbol or no loop."""
    sym = body_symbol(bench)
    rng = symbol_range(binary, sym)
    if rng is None:
        raise HotLoopError(f"{sym} is not in the runner's symbol table (stripped, or inlined)")
    insns = disassemble(binary, rng[0], rng[1], objdump)
    found = loops(insns, None)
    if not found:
        raise HotLoopError("no loop: the body has no backward branch")
    start, end, _ = max(found, key=lambda c: sum(1 for i in insns if c[0] <= i.address <= c[1]))
    body = [LoopInstruction(i.address, i.text, None, why_unmodelled(i.text)) for i in insns
            if start <= i.address <= end]
    outside = [f"call {m.group(1)}: its instructions are outside the loop" for i in body
               if i.unmodelled == "call" and (m := _CALL.match(i.text))]
    return HotLoop(function=sym, obj=str(binary), start=start, end=end, instructions=tuple(body), source=STATIC,
                   outside=tuple(outside))
