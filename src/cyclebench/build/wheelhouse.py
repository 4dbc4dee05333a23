"""The wheelhouse a fleet installs from (docs/fleet.md): ``pip wheel`` of this cyclebench and every
dependency, built once per controller and cyclebench content, so hosts install exactly the
controller's cyclebench with ``pip install --no-index --find-links`` (labs are often offline,
and tests do not download per host).

Cached under ``cache_root()/wheelhouse/<key>``; ``key`` is the version plus a hash of the
package's files when cyclebench runs from a source tree (a changed checkout is a new key),
the version alone when it was installed from a wheel (then pip fetches ``cyclebench==V``).
The wheels fit hosts with the controller's Python (major.minor) and CPU architecture
(numpy and scipy are binary); pip(1) ``wheel``, ``install --no-index --find-links``.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import cyclebench
from cyclebench.build.compile import cache_root
from cyclebench.lifetime import spawn

PIP_TIMEOUT_S = 1800.0
EXTRAS = "postgres"  # psycopg: hosts writing straight into a PostgreSQL (`fleet run --direct`)
_HASHED = ("*.py", "*.c", "*.h", "*.yml", "*.mako", "*.toml")


class WheelhouseError(Exception):
    """pip could not build the wheelhouse (no index reachable, no compiler for an sdist…)."""


@dataclass(frozen=True)
class Wheelhouse:
    """``path``: the directory of wheels; ``archive``: the same wheels in one tar (one file to
    copy and checksum per host, not one a wheel); ``key``: what it was built from; ``wheel``:
    the file name of cyclebench's own wheel in it; ``target``: the Python and machine it fits."""

    path: Path
    archive: Path
    key: str
    wheel: str
    target: str


def source_root() -> Path | None:
    """The source tree cyclebench runs from (pyproject.toml beside src/cyclebench), or None."""
    root = Path(cyclebench.__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "src" / "cyclebench").is_dir() else None


def content_key(root: Path | None) -> str:
    """``<version>`` or ``<version>-<12 hex of sha256 over the tree's package files>``."""
    version = cyclebench.__version__
    if root is None:
        return version
    h = hashlib.sha256()
    files = [root / "pyproject.toml", *(p for pat in _HASHED for p in (root / "src" / "cyclebench").rglob(pat))]
    for p in sorted(set(files)):
        if "__pycache__" not in p.parts:
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return f"{version}-{h.hexdigest()[:12]}"


def clean_copy(root: Path, dest: Path) -> Path:
    """The files a wheel is built from (pyproject.toml, README.md, src/) copied to ``dest``:
    setuptools builds a source tree in its own ``build/lib``, where a module deleted from src/
    stays and goes into every later wheel (a removed migration did, and the hosts' cyclebench
    then refused its own databases as newer than itself)."""
    dest.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (root / name).is_file():
            shutil.copy2(root / name, dest / name)
    shutil.copytree(root / "src", dest / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return dest


def target() -> str:
    """The Python and machine these wheels fit, e.g. ``cp311-x86_64``."""
    return f"cp{sys.version_info.major}{sys.version_info.minor}-{platform.machine()}"


def wheelhouse(cache: Path | None = None) -> Wheelhouse:
    """The wheelhouse of this cyclebench, built with ``pip wheel`` on first use (minutes: numpy,
    scipy, matplotlib are downloaded or taken from pip's cache) and reused after. Raises
    WheelhouseError with pip's last lines when pip fails."""
    root = source_root()
    key = content_key(root)
    base = (cache or cache_root()) / "wheelhouse"
    path = base / f"{key}-{target()}"
    if not (path / ".complete").is_file():
        tmp = base / f".{path.name}.{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        spec = f"{clean_copy(root, tmp / 'src')}[{EXTRAS}]" if root is not None else \
            f"cyclebench[{EXTRAS}]=={cyclebench.__version__}"
        argv = [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--wheel-dir",
                str(tmp), spec]
        try:
            proc = spawn(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            try:
                output, _ = proc.communicate(timeout=PIP_TIMEOUT_S)
            except BaseException:
                proc.kill()
                proc.wait()
                raise
            if proc.returncode != 0:
                last = " / ".join(line.strip() for line in output.strip().splitlines()[-3:])
                raise WheelhouseError(f"pip wheel {spec} failed (exit {proc.returncode}): {last}")
            shutil.rmtree(tmp / "src", ignore_errors=True)
            with tarfile.open(tmp / "wheels.tar", "w") as tar:  # wheels are zips: no compression
                for whl in sorted(tmp.glob("*.whl")):
                    tar.add(whl, arcname=whl.name)
            (tmp / ".complete").write_text(key + "\n")
            shutil.rmtree(path, ignore_errors=True)
            tmp.rename(path)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    wheels = sorted(path.glob("cyclebench-*.whl"))
    if not wheels:
        raise WheelhouseError(f"no cyclebench wheel in {path}")
    return Wheelhouse(path, path / "wheels.tar", key, wheels[-1].name, target())
