"""Compile the C engine with benchmark sources into a runner binary, cached.

The engine (``engine/runner.c``, ``engine/registry.c``) is always built with ``-O2`` and
``-Wall -Wextra -Werror``; the user's flags (``--cflags``, ``-I``, ``-D``) apply only to the
benchmark sources, so a flag variant changes the code being measured and never the
measuring code. The cache key covers every byte that can change the binary: engine and
benchmark sources and the headers they include (from ``cc -MM``), ``cc --version``, flags
and target.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import platformdirs

from cyclebench import __version__
from cyclebench.lifetime import spawn

ENGINE_SOURCES = ("runner.c", "registry.c", "measure.c", "disturb.c", "loop.c", "scale.c", "simulate.c", "perf.c",
                  "wis.c")
ENGINE_HEADERS = ("cyclebench.h", "timer.h", "registry.h", "json.h", "measure.h", "chain.h", "disturb.h", "scale.h",
                  "simulate.h", "perf.h", "wis.h")
ENGINE_FLAGS = ("-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread")
BENCH_BASE_FLAGS = ("-std=gnu11", "-Wall", "-Wextra", "-pthread")
DEFAULT_CFLAGS = ("-O2",)
COMPILE_TIMEOUT_S = 300


class BuildError(Exception):
    """A benchmark source or the engine did not compile or link.

    ``file`` is the source at fault (None for a link error), ``output`` the compiler's own
    messages, to be shown to the user as they are.
    """

    def __init__(self, summary: str, output: str = "", file: str | None = None) -> None:
        super().__init__(summary)
        self.file = file
        self.output = output


class ToolMissing(BuildError):
    """The compiler (or another build tool) is not installed."""


def engine_dir() -> Path:
    """Directory holding ``cyclebench.h`` and the engine sources (package data)."""
    return Path(str(resources.files("cyclebench") / "engine"))


def suite_sources() -> list[Path]:
    """The built-in suite: one C file per benchmark group, sorted by name."""
    return sorted(Path(str(resources.files("cyclebench") / "suite")).glob("*.c"))


def cache_root() -> Path:
    """``$CYCLEBENCH_CACHE`` or the user's cache dir (``~/.cache/cyclebench``)."""
    env = os.environ.get("CYCLEBENCH_CACHE")
    return Path(env) if env else Path(platformdirs.user_cache_dir("cyclebench"))


@dataclass(frozen=True)
class BuildSpec:
    """What to build. ``cflags`` are split argv items (use ``shlex.split`` on user text)."""

    sources: tuple[Path, ...]
    cc: str = "cc"
    cflags: tuple[str, ...] = DEFAULT_CFLAGS
    include_dirs: tuple[Path, ...] = ()
    defines: tuple[str, ...] = ()
    ldflags: tuple[str, ...] = ()
    werror: bool = False  # the built-in suite is held to -Werror; users' files are not
    target: str | None = None  # None: native; else a key of TARGETS (cc must then be its cross compiler)
    extra_key: tuple[str, ...] = field(default=())
    # -D items for the engine's own sources, never the benchmark's: a will-it-scale test case's
    # name (build/wis.py), for the adapter engine/wis.c
    engine_defines: tuple[str, ...] = ()

    def bench_flags(self) -> list[str]:
        flags = [*BENCH_BASE_FLAGS, "-I", str(engine_dir())]
        if self.werror:
            flags.append("-Werror")
        flags += [f"-I{d}" for d in self.include_dirs]
        flags += [f"-D{d}" for d in self.defines]
        return flags + list(self.cflags)


@dataclass(frozen=True)
class Binary:
    """A built runner: its path and what it was built from (stored with each run)."""

    path: Path
    key: str
    cc: str
    cc_version: str
    cflags: tuple[str, ...]
    sources: tuple[str, ...]
    objects: tuple[Path, ...] = ()  # the user sources' own objects, kept for size(1)-style figures


TARGETS = {"aarch64": "aarch64-linux-gnu"}  # --target name → GNU triplet (Debian cross packages)


def target_triplet(target: str) -> str:
    """GNU triplet of a cross target. Raises BuildError for an unknown target."""
    if target not in TARGETS:
        raise BuildError(f"unknown target '{target}' (known: {', '.join(TARGETS)})")
    return TARGETS[target]


def cross_cc(target: str) -> str:
    """The cross compiler of ``target`` (Debian: gcc-<triplet> provides <triplet>-gcc)."""
    return f"{target_triplet(target)}-gcc"


def objdump_for(target: str | None) -> str:
    """objdump able to read binaries of ``target`` (None: native)."""
    tool = f"{target_triplet(target)}-objdump" if target else "objdump"
    if shutil.which(tool) is None:
        pkg = f"binutils-{target_triplet(target).replace('_', '-')}" if target else "binutils"
        raise ToolMissing(f"'{tool}' not found: install it (apt-get install {pkg})")
    return tool


def launcher_for(target: str | None) -> list[str]:
    """argv prefix that runs a ``target`` binary here: [] natively, qemu-user for a cross
    target (``-L`` points it at the target's libc). Raises ToolMissing without qemu-user."""
    if not target:
        return []
    qemu = f"qemu-{target}"
    if shutil.which(qemu) is None:
        raise ToolMissing(f"'{qemu}' not found: install qemu-user (apt-get install qemu-user)")
    return [qemu, "-L", f"/usr/{target_triplet(target)}"]


_live: set[subprocess.Popen[str]] = set()  # compilers running now, killed when the build is interrupted
_live_lock = threading.Lock()


def _run(argv: Sequence[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run one compiler command, output captured. The compiler dies with cyclebench (a kill
    mid-build left cc1 running: the pool's thread that forks it waits for it, so
    PR_SET_PDEATHSIG fires only when cyclebench goes) and with an interrupted build (_kill_live)."""
    proc = spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, cwd=cwd)
    with _live_lock:
        _live.add(proc)
    try:
        out, err = proc.communicate(timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    finally:
        with _live_lock:
            _live.discard(proc)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _kill_live() -> None:
    with _live_lock:
        for proc in _live:
            proc.kill()


def compiler_version(cc: str) -> str:
    """First line of ``cc --version``. Raises ToolMissing when ``cc`` is not installed."""
    if shutil.which(cc) is None:
        raise ToolMissing(f"compiler '{cc}' not found: install it (e.g. apt-get install gcc) or pass --cc")
    proc = _run([cc, "--version"])
    if proc.returncode != 0:
        raise ToolMissing(f"compiler '{cc}' does not run: {proc.stderr.strip()[:200]}")
    return proc.stdout.splitlines()[0] if proc.stdout else cc


def _dependencies(spec: BuildSpec, src: Path) -> list[Path]:
    """Headers a source includes outside the system dirs (``cc -MM``); [] when it fails
    (the compile that follows will then report the real error)."""
    proc = _run([spec.cc, "-MM", *spec.bench_flags(), str(src)])
    if proc.returncode != 0:
        return []
    text = proc.stdout.replace("\\\n", " ")
    deps = text.split(":", 1)[1].split() if ":" in text else []
    return [Path(d) for d in deps]


def included_files(spec: BuildSpec) -> list[Path]:
    """Every file a build of ``spec`` reads outside the system dirs: its sources, the headers they
    include (``cc -MM``, as the cache key sees them) and the engine's own files."""
    files = [engine_dir() / n for n in (*ENGINE_SOURCES, *ENGINE_HEADERS)]
    for src in spec.sources:
        files += [src, *_dependencies(spec, src)]
    return files


def _cache_key(spec: BuildSpec, cc_version: str) -> str:
    h = hashlib.sha256()
    h.update(f"cyclebench {__version__}\0{cc_version}\0{spec.target}\0objects kept\0".encode())
    h.update("\0".join(spec.bench_flags() + list(spec.ldflags) + list(spec.extra_key)).encode())
    if spec.engine_defines:
        h.update(("\0engine\0" + "\0".join(spec.engine_defines)).encode())
    files = [engine_dir() / n for n in (*ENGINE_SOURCES, *ENGINE_HEADERS)]
    for src in spec.sources:
        files.append(src)
        files += _dependencies(spec, src)
    for f in files:
        h.update(b"\0file\0" + str(f.name).encode() + b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()[:24]


def build(spec: BuildSpec) -> Binary:
    """Build (or reuse from the cache) the runner for ``spec``.

    Returns a Binary whose ``path`` is executable. Raises FileNotFoundError for a missing
    source, ToolMissing for a missing compiler, BuildError with the compiler's messages for
    a source that does not compile or a failed link.
    """
    for src in spec.sources:
        if not src.is_file():
            raise FileNotFoundError(f"benchmark source not found: {src}")
    if spec.target and shutil.which(spec.cc) is None:
        pkg = f"gcc-{target_triplet(spec.target)}"
        raise ToolMissing(f"cross compiler '{spec.cc}' not found: install it (apt-get install {pkg})")
    cc_version = compiler_version(spec.cc)
    key = _cache_key(spec, cc_version)
    out_dir = cache_root() / "build" / key
    binary = out_dir / "runner"
    kept = [out_dir / "objects" / f"{i:03d}-{src.stem}.o" for i, src in enumerate(spec.sources)]
    info = Binary(binary, key, spec.cc, cc_version, spec.cflags, tuple(str(s) for s in spec.sources), tuple(kept))
    if binary.is_file() and os.access(binary, os.X_OK):
        with contextlib.suppress(OSError):
            os.utime(out_dir)  # last use, for pruning
        return info
    prune_daily()

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=".tmp-"))
    try:
        jobs: list[tuple[Path, list[str]]] = []
        for name in ENGINE_SOURCES:
            jobs.append((engine_dir() / name, [spec.cc, *ENGINE_FLAGS, "-I", str(engine_dir()),
                                               *(f"-D{d}" for d in spec.engine_defines), "-c"]))
        for src in spec.sources:
            jobs.append((src, [spec.cc, *spec.bench_flags(), "-c"]))
        objs = [tmp / f"{i:03d}-{src.stem}.o" for i, (src, _) in enumerate(jobs)]

        def compile_one(i: int) -> tuple[Path, subprocess.CompletedProcess[str]]:
            src, argv = jobs[i]
            return src, _run([*argv, str(src), "-o", str(objs[i])])

        pool = ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)))
        try:
            for src, proc in pool.map(compile_one, range(len(jobs))):
                if proc.returncode != 0:
                    raise BuildError(f"{src}: does not compile", proc.stderr.strip(), file=str(src))
        except BaseException:  # Ctrl-C, SIGTERM or a failed source: no compile outlives the build (audit #163)
            pool.shutdown(wait=False, cancel_futures=True)
            _kill_live()
            raise
        pool.shutdown()
        # -ldl: dlsym/dladdr (runner --features names the malloc in use) live in libc only since glibc 2.34
        link = _run([spec.cc, "-pthread", *map(str, objs), "-o", str(tmp / "runner"), *spec.ldflags, "-lm", "-ldl"])
        if link.returncode != 0:
            raise BuildError("link failed", link.stderr.strip())
        (tmp / "objects").mkdir()
        for i, obj in enumerate(objs):
            if i < len(ENGINE_SOURCES):
                obj.unlink()
            else:  # the user's objects stay: variants reports their own text/data/bss (size(1))
                obj.rename(tmp / "objects" / kept[i - len(ENGINE_SOURCES)].name)
        try:
            tmp.rename(out_dir)  # atomic publish
        except OSError:
            if not binary.is_file():  # not a concurrent builder that won: a real failure
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return info


# Each distinct source/flag set is ~72 KB (audit D15: 23 entries after one audit); entries
# unused this long go, and a .tmp-* left by a build killed mid-way goes after an hour.
PRUNE_AFTER_DAYS = 30
TMP_AFTER_S = 3600


@dataclass(frozen=True)
class CacheEntry:
    path: Path
    bytes: int
    last_used: float  # epoch seconds (the entry directory's mtime, touched on every use)
    partial: bool  # a .tmp-* directory of a build that never finished


def cache_entries() -> list[CacheEntry]:
    """Every entry of the build cache, oldest use first."""
    root = cache_root() / "build"
    out = []
    for d in root.iterdir() if root.is_dir() else []:
        if not d.is_dir():
            continue
        size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
        out.append(CacheEntry(d, size, d.stat().st_mtime, d.name.startswith(".tmp-")))
    return sorted(out, key=lambda e: e.last_used)


def prune(older_than_days: float = PRUNE_AFTER_DAYS, everything: bool = False) -> list[CacheEntry]:
    """Remove entries unused for ``older_than_days`` (all with ``everything``) and abandoned
    partial builds older than an hour. Returns what was removed."""
    now = time.time()
    gone = []
    for e in cache_entries():
        age = now - e.last_used
        if everything or age > older_than_days * 86400 or (e.partial and age > TMP_AFTER_S):
            shutil.rmtree(e.path, ignore_errors=True)
            gone.append(e)
    return gone


def prune_daily() -> None:
    """prune() at most once a day, on a build (a stamp file records the last time)."""
    stamp = cache_root() / "build" / ".pruned"
    try:
        if stamp.exists() and time.time() - stamp.stat().st_mtime < 86400:
            return
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    except OSError:
        return
    prune()
