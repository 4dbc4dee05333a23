"""The hot loop as an assembly file both models read (AT&T, as objdump prints it): branch
targets inside the loop become labels, those outside (a call's callee, the loop's exit) one
label after it, and prefixes that change nothing for a model (``data16``, ``cs``, ``notrack``,
``bnd``: objdump's padding and CET forms) are dropped."""

from __future__ import annotations

import re

from cyclebench.prediction import HotLoop

_TARGET = re.compile(r"^((?:j[a-z]+|loop[a-z]*|call[q]?)\s+)([0-9a-f]+)\s+<[^>]*>$")
_PREFIX = re.compile(r"^((?:data16|cs|ds|notrack|bnd)\s+)+")
OUT = ".Lcb_out"


def label(addr: int) -> str:
    return f".Lcb_{addr:x}"


def loop_source(loop: HotLoop) -> tuple[str, list[int]]:
    """(the loop as an assembly file, the file's line number of each loop instruction, 1-based)."""
    targets = set()
    for i in loop.instructions:
        m = _TARGET.match(i.text)
        if m:
            targets.add(int(m.group(2), 16))
    lines: list[str] = []
    numbers: list[int] = []
    for i in loop.instructions:
        if i.address in targets:
            lines.append(f"{label(i.address)}:")
        text = _PREFIX.sub("", i.text)
        m = _TARGET.match(text)
        if m:
            addr = int(m.group(2), 16)
            inside = loop.start <= addr <= loop.end and addr in {x.address for x in loop.instructions}
            text = m.group(1) + (label(addr) if inside else OUT)
        lines.append(text)
        numbers.append(len(lines))
    lines.append(f"{OUT}:")
    return "\n".join(lines) + "\n", numbers
