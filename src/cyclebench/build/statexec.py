"""The launcher of `cyclebench stat` (engine/statexec.c): its own small binary, compiled once
per source and compiler and cached (runner.exec runs it)."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from cyclebench.build.compile import BuildError, _run, build_dir, check_private, compiler_version, engine_dir

LAUNCHER_SOURCE = "statexec.c"
LAUNCHER_FLAGS = ("-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror")


def build_statexec(cc: str = "cc") -> Path:
    """The launcher binary, compiled once per source and compiler into
    ``cache_root()/statexec-<hash>/statexec``. Raises ToolMissing / BuildError."""
    src = engine_dir() / LAUNCHER_SOURCE
    version = compiler_version(cc)
    h = hashlib.sha256(src.read_bytes() + f"\0{version}\0{' '.join(LAUNCHER_FLAGS)}".encode()).hexdigest()[:16]
    root = build_dir()  # the cache's root checked private (UnsafeCache): this binary runs as us
    assert root is not None
    out_dir = root.parent / f"statexec-{h}"
    exe = out_dir / "statexec"
    if os.path.lexists(out_dir) and os.path.lexists(exe):
        check_private(out_dir)
        check_private(exe)
    if exe.is_file() and os.access(exe, os.X_OK):
        return exe
    tmp = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=".tmp-statexec-"))
    try:
        proc = _run([cc, *LAUNCHER_FLAGS, str(src), "-o", str(tmp / "statexec")])
        if proc.returncode != 0:
            raise BuildError(f"{src}: does not compile", proc.stderr.strip(), file=str(src))
        try:
            tmp.rename(out_dir)  # atomic publish
        except OSError:
            if not exe.is_file():  # not a concurrent builder that won
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return exe
