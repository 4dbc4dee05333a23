"""Reading Linux pseudo-files below a ``root`` (``/`` or a fixture tree): a missing or unreadable
file is ``None``, never an exception; kernel cpu lists (``0-3,8``); running a program with a
timeout (argv lists). Source: proc(5), the kernel's ``Documentation/admin-guide/kernel-parameters.txt``."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

ROOT = Path("/")


SUBPROCESS_TIMEOUT = 5.0  # seconds, for dmesg and the compiler


_CPU = "sys/devices/system/cpu"


def is_live(root: Path) -> bool:
    """True when ``root`` is the real ``/`` (so os.uname, affinity etc. describe it)."""
    return os.path.realpath(root) == "/"


def read(root: Path, rel: str) -> str | None:
    """Text of ``root/rel`` stripped of surrounding whitespace, or None if unreadable."""
    try:
        return (Path(root) / rel).read_text(errors="replace").strip()
    except (OSError, ValueError):
        return None


def read_int(root: Path, rel: str) -> int | None:
    text = read(root, rel)
    if text is None:
        return None
    try:
        return int(text, 0) if text.lower().startswith("0x") else int(text)
    except ValueError:
        return None


def _to_int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text, 0)
    except ValueError:
        try:
            return int(text)
        except ValueError:
            return None


def parse_cpu_list(text: str | None, last: int | None = None) -> list[int] | None:
    """Parse a kernel cpu list (``"0-3,8,10-15:2/4"``, ``""``) into sorted CPU numbers.

    Syntax from kernel-parameters.txt "cpu lists": ranges ``a-b``, groups ``a-b:used/size``,
    and ``N`` for the last CPU (needs ``last``). ``"(null)"`` (an unset nohz_full on older
    kernels) and ``""`` give ``[]``; a malformed list gives None.
    """
    if text is None:
        return None
    text = text.strip()
    if text in ("", "(null)"):
        return []
    cpus: set[int] = set()
    try:
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            rng, _, group = part.partition(":")
            lo_s, _, hi_s = rng.partition("-")
            lo = _cpu_number(lo_s, last)
            hi = _cpu_number(hi_s, last) if hi_s else lo
            used, size = 1, 1
            if group:
                used_s, _, size_s = group.partition("/")
                used, size = int(used_s), int(size_s)
            if hi < lo or used < 1 or size < used:
                return None
            cpus.update(c for c in range(lo, hi + 1) if (c - lo) % size < used)
    except ValueError:
        return None
    return sorted(cpus)


def _cpu_number(text: str, last: int | None) -> int:
    text = text.strip()
    if text.upper() == "N":
        if last is None:
            raise ValueError("N without a known last CPU")
        return last
    return int(text)


def _cpu_list(root: Path, rel: str) -> list[int] | None:
    return parse_cpu_list(read(root, rel))


def _run(argv: list[str], timeout: float = SUBPROCESS_TIMEOUT) -> str | None:
    """stdout of ``argv`` if it ran and exited 0 within ``timeout`` seconds, else None."""
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, errors="replace", timeout=timeout, check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _cpuinfo_blocks(root: Path, first_only: bool = False) -> Iterator[dict[str, str]]:
    """The ``key : value`` blocks of /proc/cpuinfo, one per processor (streamed, so asking
    for the first block does not make the kernel format all of them)."""
    try:
        f = (Path(root) / "proc/cpuinfo").open(errors="replace")
    except OSError:
        return
    with f:
        block: dict[str, str] = {}
        try:
            for line in f:
                if not line.strip():
                    if block:
                        yield block
                        if first_only:
                            return
                    block = {}
                    continue
                key, sep, value = line.partition(":")
                if sep:
                    block.setdefault(key.strip(), value.strip())
        except OSError:
            return
        if block:
            yield block


def _cpuinfo_first(root: Path) -> dict[str, str] | None:
    return next(_cpuinfo_blocks(root, first_only=True), None)


def _flags(block: dict[str, str] | None) -> list[str] | None:
    """CPU feature flags: x86 ``flags``, arm64 ``Features``; None when neither is there."""
    if block is None:
        return None
    text = block.get("flags", block.get("Features"))
    return None if text is None else text.split()
