"""What a build contains: section and body-symbol sizes (pyelftools), a benchmark body's
disassembly (objdump, the target's for cross builds), instruction classes and diffs."""

from __future__ import annotations

import bisect
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from elftools.common.exceptions import ELFError
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


class Symbols:
    """The function symbols of one ELF file (.symtab, else .dynsym: STT_FUNC and STT_GNU_IFUNC)
    and its PT_LOAD segments, to name a running program's code addresses from /proc/PID/maps
    (proc(5)): a mapping's file offset → the file's virtual address → the symbol that holds it."""

    def __init__(self, path: Path) -> None:
        self.loads: list[tuple[int, int, int]] = []  # (p_offset, p_filesz, p_vaddr)
        found: dict[int, tuple[int, str]] = {}
        with path.open("rb") as f:
            elf = ELFFile(f)
            for seg in elf.iter_segments():
                if seg["p_type"] == "PT_LOAD":
                    self.loads.append((int(seg["p_offset"]), int(seg["p_filesz"]), int(seg["p_vaddr"])))
            for name in (".symtab", ".dynsym"):
                sec = elf.get_section_by_name(name)
                if sec is None or found:
                    continue
                for sym in sec.iter_symbols():
                    if sym["st_info"]["type"] in ("STT_FUNC", "STT_GNU_IFUNC") and sym["st_value"] and sym.name:
                        found.setdefault(int(sym["st_value"]), (int(sym["st_size"]), sym.name))
        self.starts = sorted(found)
        self.sizes = [found[s][0] for s in self.starts]
        self.names = [found[s][1] for s in self.starts]

    def vaddr(self, file_offset: int) -> int | None:
        """The virtual address (as linked) of a file offset in a loaded segment, None outside."""
        for off, size, va in self.loads:
            if off <= file_offset < off + size:
                return file_offset - off + va
        return None

    def name_at(self, vaddr: int) -> str | None:
        """The function holding ``vaddr`` (its start, or inside its st_size), None if none."""
        i = bisect.bisect_right(self.starts, vaddr) - 1
        if i < 0:
            return None
        start, size = self.starts[i], self.sizes[i]
        return self.names[i] if vaddr == start or vaddr < start + size else None


def name_addresses(addresses: Sequence[int], maps: str) -> dict[int, str]:
    """Names of code addresses of a process, from its /proc/PID/maps text (proc(5): ``start-end
    perms offset dev inode path``): each address's mapped file read for its symbols (Symbols).
    An address no symbol holds is named ``0x… (file)``, one in no file mapping ``0x…``."""
    spans: list[tuple[int, int, int, str]] = []
    for line in maps.splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and parts[5].startswith("/"):
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            spans.append((lo, hi, int(parts[2], 16), parts[5].strip()))
    files: dict[str, Symbols | None] = {}
    out: dict[int, str] = {}
    for a in addresses:
        span = next((s for s in spans if s[0] <= a < s[1]), None)
        if span is None:
            out[a] = f"{a:#x}"
            continue
        lo, _, off, path = span
        if path not in files:
            try:
                files[path] = Symbols(Path(path))
            except (OSError, ELFError):
                files[path] = None
        syms = files[path]
        va = syms.vaddr(a - lo + off) if syms is not None else None
        name = syms.name_at(va) if syms is not None and va is not None else None
        out[a] = name or f"{a:#x} ({Path(path).name})"
    return out
