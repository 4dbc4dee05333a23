"""The real tools the export tests hand their files to: google/benchmark's compare.py,
benchstat and pyperf. Each is found where `bash dev.sh test` installs it; a test skips, saying
how to install the tool, only when it is not there and cannot be installed here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

GBENCH_COMPARE = Path("/usr/share/benchmark/compare.py")  # Debian's libbenchmark-tools
# the version dev.sh installs (golang.org/x/perf has no tags; this one builds with Go 1.26)
BENCHSTAT_MODULE = "golang.org/x/perf/cmd/benchstat"
BENCHSTAT_VERSION = "v0.0.0-20260908200009-22c9c6c9d4da"


def run(argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)


def gbench_compare() -> list[str]:
    """argv of google/benchmark's tools/compare.py under this Python (it needs scipy), or skip."""
    if not GBENCH_COMPARE.is_file():
        pytest.skip(f"{GBENCH_COMPARE} is not installed: apt-get install libbenchmark-tools "
                    "(bash dev.sh test does, as root)")
    try:
        import scipy  # noqa: F401
    except ImportError:
        pytest.skip("scipy, which compare.py needs, is not installed in this Python")
    return [sys.executable, str(GBENCH_COMPARE)]


def _benchstat_candidates() -> list[Path]:
    out = [Path(sys.executable).parent / "benchstat"]  # dev.sh: GOBIN=.venv/bin
    if os.environ.get("GOBIN"):
        out.append(Path(os.environ["GOBIN"]) / "benchstat")
    out.append(Path.home() / "go" / "bin" / "benchstat")
    which = shutil.which("benchstat")
    if which:
        out.append(Path(which))
    return out


def benchstat(tmp: Path) -> str:
    """The benchstat binary: where dev.sh put it, else `go install`ed into ``tmp``; skip when
    neither works (no Go, or the module proxy cannot be reached), saying why."""
    for c in _benchstat_candidates():
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    go = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").is_file() else None)
    if go is None:
        pytest.skip("benchstat is not installed and there is no Go to install it "
                    f"(go install {BENCHSTAT_MODULE}@{BENCHSTAT_VERSION})")
    env_gobin = tmp / "gobin"
    r = subprocess.run([go, "install", f"{BENCHSTAT_MODULE}@{BENCHSTAT_VERSION}"], capture_output=True, text=True,
                       timeout=600, check=False, env={**os.environ, "GOBIN": str(env_gobin)})
    if r.returncode != 0 or not (env_gobin / "benchstat").is_file():
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
        pytest.skip(f"benchstat cannot be installed here (go install {BENCHSTAT_MODULE}: {tail[0]})")
    return str(env_gobin / "benchstat")


def pyperf_available() -> None:
    """Skip unless pyperf (the `test` extra) is importable."""
    pytest.importorskip("pyperf", reason="pyperf is not installed: pip install -e '.[test]' (bash dev.sh test does)")
