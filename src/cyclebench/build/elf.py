"""What a build contains: section and body-symbol sizes (pyelftools), a benchmark body's
disassembly (objdump, the target's for cross builds), instruction classes and diffs."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from elftools.elf.elffile import ELFFile

from cyclebench.build.compile import objdump_for
from cyclebench.model import SizeFigures

# Instruction classes counted in a body (x86-64 and aarch64 mnemonics).
CLASSES: dict[str, re.Pattern[str]] = {
    "atomic": re.compile(r"^(lock\b|xchg|cmpxchg|xadd|ldaxr|ldxr|stlxr|stxr|ldaxp|stlxp|cas|ldadd|ldclr|ldeor"
                         r"|ldset|ldsmax|ldsmin|ldumax|ldumin|swp)"),
    "fence": re.compile(r"^(mfence|lfence|sfence|dmb|dsb|isb)\b"),
    "rep-string": re.compile(r"^rep[a-z]*\s+(movs|stos|cmps|scas|lods)"),
    "simd": re.compile(r"%[xyz]mm\d|\b[vq]\d+(\.\w+)?\b"),
    "call": re.compile(r"^(call|bl)\b"),
}



def body_symbol(bench: str) -> str:
    group, name = bench.split("/", 1)
    return f"cb_body_{group}_{name}"


def elf_sizes(path: Path) -> dict[str, int]:
    """Sizes in bytes: ".text", ".data", ".bss" sections and every cb_body_* function symbol
    (st_size from .symtab; 0 when the binary is stripped)."""
    sizes: dict[str, int] = {}
    with path.open("rb") as f:
        elf = ELFFile(f)
        for name in (".text", ".data", ".bss"):
            sec = elf.get_section_by_name(name)
            sizes[name] = int(sec["sh_size"]) if sec is not None else 0
        symtab = elf.get_section_by_name(".symtab")
        if symtab is not None:
            for sym in symtab.iter_symbols():
                if sym.name.startswith("cb_body_") and sym["st_info"]["type"] == "STT_FUNC":
                    sizes[sym.name] = int(sym["st_size"])
    return sizes


def berkeley_sizes(paths: Sequence[Path]) -> SizeFigures | None:
    """text, data, bss and dec of ELF files summed, as GNU size(1) prints them in its default
    (Berkeley) format: text = allocated read-only sections (code, .rodata, .eh_frame…), data =
    allocated writable ones with contents, bss = allocated without contents (SHT_NOBITS); dec =
    their sum. None when a file is missing (a build cached before objects were kept)."""
    out = {"text": 0, "data": 0, "bss": 0}
    for path in paths:
        if not path.is_file():
            return None
        with path.open("rb") as f:
            for sec in ELFFile(f).iter_sections():
                flags = int(sec["sh_flags"])
                if not flags & 0x2:  # SHF_ALLOC
                    continue
                kind = "bss" if sec["sh_type"] == "SHT_NOBITS" else "data" if flags & 0x1 else "text"  # SHF_WRITE
                out[kind] += int(sec["sh_size"])
    text, data, bss = out["text"], out["data"], out["bss"]
    return {"text": text, "data": data, "bss": bss, "dec": text + data + bss}


def disassemble(path: Path, target: str | None, bench: str) -> list[str]:
    """The body's instructions, addresses and encodings dropped (so builds diff cleanly).
    Raises ToolMissing without the right objdump."""
    proc = subprocess.run(
        [objdump_for(target), "-d", "--no-show-raw-insn", f"--disassemble={body_symbol(bench)}", str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    out = []
    for line in proc.stdout.splitlines():
        m = re.match(r"^\s+[0-9a-f]+:\s+(.*)$", line)
        if m:
            ins = re.sub(r"\s+//.*$|\s+#\s.*$", "", m.group(1))  # objdump's comments (aarch64 //, x86 #)
            ins = re.sub(r"\b[0-9a-f]+ <", "<", ins)  # branch targets: symbol+offset only
            out.append(re.sub(r"\s+", " ", ins).strip())
    return out


def classify(instructions: Sequence[str]) -> dict[str, int]:
    counts = {k: 0 for k in CLASSES}
    for ins in instructions:
        for k, pat in CLASSES.items():
            if pat.search(ins):
                counts[k] += 1
    counts["total"] = len(instructions)
    return counts


def helper_calls(instructions: Sequence[str]) -> list[str]:
    """Names of functions the body calls (e.g. __aarch64_cas8_acq_rel for outline atomics)."""
    names = []
    for ins in instructions:
        m = re.match(r"^(?:call|bl)\s+.*<([^>+]+)", ins)
        if m and m.group(1) not in names:
            names.append(m.group(1))
    return names
