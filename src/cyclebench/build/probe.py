"""The probe of `cyclebench profile` (engine/probe.c with the calibration bodies of
engine/probe_cal.c): a shared library a -finstrument-functions build gets through LD_PRELOAD,
compiled once per source and compiler and cached like the stat launcher (build/statexec.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from cyclebench.build.compile import BuildError, _run, cached_artifact, compiler_version, engine_dir

PROBE_LIBRARY = "libcbprobe.so"
PROBE_FLAGS = ("-std=gnu11", "-O2", "-fPIC", "-Wall", "-Wextra", "-Werror")
# the calibration bodies are instrumented like the program's functions; the hooks are not
CALIBRATION_FLAGS = ("-finstrument-functions",)


def build_probe(cc: str = "cc") -> Path:
    """The probe library, compiled once per source and compiler into
    ``cache_root()/probe-<hash>/libcbprobe.so``. Raises ToolMissing / BuildError."""
    e = engine_dir()
    sources = [e / "probe.c", e / "probe_cal.c", e / "probe.h", e / "timer.h"]
    version = compiler_version(cc)
    h = hashlib.sha256(b"".join(s.read_bytes() for s in sources)
                       + f"\0{version}\0{' '.join(PROBE_FLAGS + CALIBRATION_FLAGS)}".encode()).hexdigest()[:16]

    def make(tmp: Path) -> None:
        steps = [[cc, *PROBE_FLAGS, "-c", str(e / "probe.c"), "-o", str(tmp / "probe.o")],
                 [cc, *PROBE_FLAGS, *CALIBRATION_FLAGS, "-c", str(e / "probe_cal.c"), "-o", str(tmp / "cal.o")],
                 [cc, "-shared", str(tmp / "probe.o"), str(tmp / "cal.o"), "-o", str(tmp / PROBE_LIBRARY), "-lpthread"]]
        for argv in steps:
            proc = _run(argv)
            if proc.returncode != 0:
                raise BuildError(f"{e / 'probe.c'}: does not compile", proc.stderr.strip(), file=str(e / "probe.c"))
        for o in ("probe.o", "cal.o"):
            (tmp / o).unlink()
    return cached_artifact("probe", h, PROBE_LIBRARY, make)
