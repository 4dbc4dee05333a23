"""The system tools cyclebench's commands run, and which this machine lacks (``cyclebench check``'s
``tools`` finding). The table is ``tools.tsv`` beside this file, the one `bash dev.sh run` reads to
install them with apt; each row names the package on Debian and on Ubuntu (perf is
``linux-tools-*`` there) and the commands that need it."""

from __future__ import annotations

import functools
import os
import platform
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

TABLE = Path(__file__).with_name("tools.tsv")
SCOPES = ("run", "test")
_LD_CACHE = Path("/etc/ld.so.cache")


@dataclass(frozen=True)
class Tool:
    """One row of tools.tsv: ``probe`` (a command, a lib*.so to link, a lib*.so.N to load, or
    ``llvm-mca``: any llvm-mca[-N]), the packages that install it on Debian and on Ubuntu, its
    ``scope`` (run: the commands need it; test: only the tests) and what needs it (``needed_by``)."""

    probe: str
    debian: tuple[str, ...]
    ubuntu: tuple[str, ...]
    scope: str
    needed_by: str

    def packages(self, distro: str | None, newest_llvm: Callable[[], str | None] | None = None) -> tuple[str, ...]:
        """The packages to install on ``distro`` (os-release's ID, ``ubuntu`` or anything else: the
        Debian names), ``$KERNEL`` replaced by ``uname -r`` and ``llvm-*`` by apt's newest llvm-N
        (``newest_llvm``; plain ``llvm`` without one)."""
        names = self.ubuntu if distro == "ubuntu" and self.ubuntu else self.debian
        kernel = platform.release()
        out = []
        for n in names:
            if n == "llvm-*":
                n = (newest_llvm or newest_apt_llvm)() or "llvm"
            out.append(n.replace("$KERNEL", kernel))
        return tuple(out)


def table(path: Path = TABLE) -> list[Tool]:
    """The rows of tools.tsv in order. Raises OSError when it cannot be read, ValueError on a row
    without its five tab-separated fields."""
    rows = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 5 or fields[3] not in SCOPES:
            raise ValueError(f"{path}: not a row of five fields with a scope of {SCOPES}: {line!r}")
        probe, debian, ubuntu, scope, needed = fields
        rows.append(Tool(probe, tuple(debian.split()), () if ubuntu == "-" else tuple(ubuntu.split()), scope, needed))
    return rows


def distro(root: Path = Path("/")) -> str | None:
    """os-release(5)'s ID (``debian``, ``ubuntu``, …; an Ubuntu derivative's ID_LIKE names ubuntu:
    ``ubuntu``), None without the file."""
    try:
        text = (root / "etc/os-release").read_text()
    except OSError:
        return None
    fields = dict(re.findall(r'^([A-Z_]+)="?([^"\n]*)"?$', text, flags=re.M))
    like = fields.get("ID_LIKE", "").split()
    ident = fields.get("ID")
    return "ubuntu" if ident != "debian" and "ubuntu" in like else ident


@functools.cache
def newest_apt_llvm() -> str | None:
    """apt's newest ``llvm-N`` package with a candidate version (None without apt or one)."""
    if shutil.which("apt-cache") is None:
        return None
    try:
        names = subprocess.run(["apt-cache", "pkgnames", "llvm-"], capture_output=True, text=True, timeout=30,
                               check=False).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        return None
    versions = sorted((int(m.group(1)) for n in names if (m := re.fullmatch(r"llvm-(\d+)", n))), reverse=True)
    return f"llvm-{versions[0]}" if versions else None


def _link_dirs() -> tuple[Path, ...]:
    """The directories the compiler looks in for -l (``cc -print-search-dirs``' libraries), () without cc."""
    try:
        out = subprocess.run(["cc", "-print-search-dirs"], capture_output=True, text=True, timeout=30,
                             check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ()
    m = re.search(r"^libraries: =(.*)$", out, flags=re.M)
    return tuple(Path(d) for d in m.group(1).split(":") if d) if m else ()


def _loader_has(name: str) -> bool:
    """The dynamic loader's cache (ld.so.cache, as ``ldconfig -p`` lists it) names ``name``."""
    try:
        return name.encode() in _LD_CACHE.read_bytes()
    except OSError:
        return False


def present(tool: Tool, link_dirs: Sequence[Path] | None = None) -> bool:
    """Whether ``tool``'s probe is found here: a command on PATH (any llvm-mca[-N] for llvm-mca),
    a link library in ``link_dirs`` (default: the compiler's), a loader library in its cache."""
    p = tool.probe
    if p == "llvm-mca":
        return shutil.which(p) is not None or any(shutil.which(f"llvm-mca-{v}") for v in range(14, 30))
    if re.fullmatch(r"lib.*\.so", p):
        return any((d / p).exists() for d in (_link_dirs() if link_dirs is None else link_dirs))
    if re.fullmatch(r"lib.*\.so\.\d+", p):
        return _loader_has(p)
    return (Path(p).exists() and os.access(p, os.X_OK)) if p.startswith("/") else shutil.which(p) is not None


def missing(scopes: Sequence[str] = ("run",), rows: Sequence[Tool] | None = None) -> list[Tool]:
    """The rows of ``scopes`` whose probe is not found here, in the table's order."""
    rows = table() if rows is None else rows
    dirs = _link_dirs() if any(re.fullmatch(r"lib.*\.so", t.probe) for t in rows) else ()
    return [t for t in rows if t.scope in scopes and not present(t, dirs)]
