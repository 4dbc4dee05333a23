"""The launcher of `cyclebench stat` (engine/statexec.c): its own small binary, compiled once
per source and compiler and cached (runner.exec runs it)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from cyclebench.build.compile import BuildError, _run, cached_artifact, compiler_version, engine_dir

LAUNCHER_SOURCE = "statexec.c"
LAUNCHER_FLAGS = ("-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror")


def build_statexec(cc: str = "cc") -> Path:
    """The launcher binary, compiled once per source and compiler into
    ``cache_root()/statexec-<hash>/statexec``. Raises ToolMissing / BuildError."""
    src = engine_dir() / LAUNCHER_SOURCE
    version = compiler_version(cc)
    h = hashlib.sha256(src.read_bytes() + f"\0{version}\0{' '.join(LAUNCHER_FLAGS)}".encode()).hexdigest()[:16]

    def make(tmp: Path) -> None:
        proc = _run([cc, *LAUNCHER_FLAGS, str(src), "-o", str(tmp / "statexec")])
        if proc.returncode != 0:
            raise BuildError(f"{src}: does not compile", proc.stderr.strip(), file=str(src))
    return cached_artifact("statexec", h, "statexec", make)
