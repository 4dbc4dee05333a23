"""Memory allocators as build variants (after Evans, "Memory allocation performance",
docs/references.md#malloc-profiling-freebsd-2008).

Each allocator is linked into its own runner — the same sources, one binary each — so its
``malloc``/``free`` are the ones the benchmark calls; no LD_PRELOAD is needed because
cyclebench builds every runner it measures. Whether the link took is checked at run time:
the runner reports the file whose ``malloc`` the dynamic linker resolved (``runner
--features``, dlsym(RTLD_DEFAULT)), and a mismatch is an error, not a silent glibc result.

Where an allocator's development files are missing, ``missing`` says which Debian package
to install; the command then shows a ``skipped`` row instead of failing the others.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cyclebench.model import AllocatorInfo


@dataclass(frozen=True)
class Allocator:
    """A malloc implementation: its link library (None: the C library's own), the Debian
    package with that library's development files, and the file name its malloc lives in."""

    name: str
    lib: str | None
    dev_package: str
    marker: str  # a substring of the resolved malloc's file name (libc.so.6, libjemalloc.so.2, ...)

    def ldflags(self) -> tuple[str, ...]:
        """Link flags putting this allocator first in the lookup order. --no-as-needed: a
        toolchain that links --as-needed by default (Ubuntu) would drop a library whose symbols
        the objects also find in libc."""
        if self.lib is None:
            return ()
        return ("-Wl,--push-state,--no-as-needed", f"-l{self.lib}", "-Wl,--pop-state")


ALLOCATORS: dict[str, Allocator] = {a.name: a for a in (
    Allocator("glibc", None, "libc6-dev", "libc.so"),
    Allocator("jemalloc", "jemalloc", "libjemalloc-dev", "libjemalloc"),
    Allocator("mimalloc", "mimalloc", "libmimalloc-dev", "libmimalloc"),
    Allocator("tcmalloc", "tcmalloc", "libgoogle-perftools-dev", "libtcmalloc"),
)}


def parse(text: str) -> list[Allocator]:
    """``"glibc,jemalloc"`` → those allocators, in that order (the first is the baseline).
    Raises ValueError naming an unknown or repeated one and the known ones."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ValueError("no allocator named")
    for n in names:
        if n not in ALLOCATORS:
            raise ValueError(f"unknown allocator '{n}' (known: {', '.join(ALLOCATORS)})")
    if len(set(names)) != len(names):
        raise ValueError("an allocator is named twice")
    return [ALLOCATORS[n] for n in names]


def _query(argv: list[str]) -> str | None:
    """stdout of a quick query command, None when it cannot run or fails."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def _library_path(cc: str, lib: str) -> Path | None:
    """The shared library ``-l<lib>`` links against, as the compiler finds it
    (``cc -print-file-name``: it prints the bare name when the library is not found)."""
    name = f"lib{lib}.so"
    path = _query([cc, f"-print-file-name={name}"])
    return Path(path) if path and path != name and os.path.exists(path) else None


def missing(alloc: Allocator, cc: str = "cc") -> str | None:
    """Why ``alloc`` cannot be linked with ``cc`` here (with the package to install), or None."""
    if alloc.lib is None or _library_path(cc, alloc.lib) is not None:
        return None
    return f"{alloc.name} is not installed: apt-get install {alloc.dev_package}"


def _package_version(path: Path) -> str | None:
    """Debian package and version owning ``path`` (dpkg-query -S, then -W), None off Debian."""
    if shutil.which("dpkg-query") is None:
        return None
    owner = _query(["dpkg-query", "-S", str(path)]) or _query(["dpkg-query", "-S", str(path.resolve())])
    if not owner:
        return None
    pkg = owner.split(":", 1)[0].split(",")[0].strip()
    ver = _query(["dpkg-query", "-W", "-f=${Version}", pkg])
    return f"{pkg} {ver}" if ver else pkg


def describe(alloc: Allocator, malloc_file: str | None) -> AllocatorInfo:
    """What is stored with each result: the allocator's name, the file its malloc resolved to
    in the runner (``runner --features``) and that file's package and version."""
    path = Path(malloc_file) if malloc_file else None
    return {"name": alloc.name, "library": malloc_file,
            "version": _package_version(path) if path is not None else None}


def check_resolved(alloc: Allocator, malloc_file: str | None) -> str | None:
    """An error when the runner's malloc is not ``alloc``'s (a link that did not take)."""
    if malloc_file is None:
        return None  # a runner too old to say: nothing to check against
    if alloc.marker not in os.path.basename(malloc_file):
        return f"--allocator {alloc.name}: the runner's malloc comes from {malloc_file}, not {alloc.name}"
    return None
