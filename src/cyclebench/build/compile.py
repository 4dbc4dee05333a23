"""Compile the C engine with benchmark sources into a runner binary, cached.

The engine (``engine/runner.c``, ``engine/registry.c``) is always built with ``-O2`` and
``-Wall -Wextra -Werror``; the user's flags (``--cflags``, ``-I``, ``-D``) apply only to the
benchmark sources, so a flag variant changes the code being measured and never the
measuring code. The cache key covers every byte that can change the binary: engine and
benchmark sources and every file the preprocessor reads for them, system headers and those
found through ``-isystem``, ``CPATH`` or ``C_INCLUDE_PATH`` included (``cc -M``, the list
``-MD`` writes; ``-MM`` leaves system headers out), ``cc --version`` and the compiler binary
the name resolves to, the environment variables the compiler reads (``COMPILER_ENV``), flags
and target.

The cache is trusted only when no other user can have written it: its directory, ``build/``,
an entry and its runner must be owned by the user running cyclebench and writable by no one
else (else UnsafeCache, naming the path). An entry a process is using is held by a shared
flock(2) on its directory; ``prune`` removes only entries it can lock exclusively.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import platformdirs

from cyclebench import __version__
from cyclebench.lifetime import spawn, supervised

ENGINE_SOURCES = ("runner.c", "registry.c", "measure.c", "disturb.c", "loop.c", "scale.c", "simulate.c", "perf.c",
                  "wis.c")
ENGINE_HEADERS = ("cyclebench.h", "timer.h", "registry.h", "json.h", "measure.h", "chain.h", "disturb.h", "scale.h",
                  "simulate.h", "perf.h", "wis.h")
ENGINE_FLAGS = ("-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread")
BENCH_BASE_FLAGS = ("-std=gnu11", "-Wall", "-Wextra", "-pthread")
DEFAULT_CFLAGS = ("-O2",)
COMPILE_TIMEOUT_S = 300
# What the compiler reads from the environment and can change the binary with (gcc manual,
# "Environment Variables Affecting GCC"; clang reads the same include paths). LANG/LC_* set the
# source's multibyte encoding (ccache hashes the same three). TMPDIR only places temporaries.
COMPILER_ENV = ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH", "LIBRARY_PATH",
                "GCC_EXEC_PREFIX", "COMPILER_PATH", "SOURCE_DATE_EPOCH", "GCC_COMPARE_DEBUG",
                "LANG", "LC_ALL", "LC_CTYPE")
# The one engine source BuildSpec.engine_defines reach (the will-it-scale adapter); the others never
# see them, so their objects are shared by every runner built with the same compiler (_engine_objects).
ENGINE_DEFINED = "wis.c"
DEPS_TARGET = b"cyclebench-deps"  # the -MT target of `cc -M`: a name we know, never a path to unescape


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


class UnsafeCache(BuildError):
    """The build cache (or an entry in it) is owned or writable by another user: a runner
    planted there would be run as this user. The message names the path."""


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
    # -D items for the engine's adapter engine/wis.c (ENGINE_DEFINED) alone, never the benchmark's:
    # a will-it-scale test case's name (build/wis.py)
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
    cc_target: str | None = None  # ``cc -dumpmachine`` (compiler_target), for the run's environment
    # the benchmark's other build flags as given (-D, -I, --ldflags): a series' identity (model.build_of)
    defines: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ()
    ldflags: tuple[str, ...] = ()


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


_live: set[subprocess.Popen[bytes]] = set()  # compilers running now, killed when the build is interrupted
_live_lock = threading.Lock()


class Compilers(set[subprocess.Popen[bytes]]):
    """One build's running compilers; ``killed`` once _kill_live swept them (the build was
    interrupted or a source failed): a compiler a pool thread starts after that sweep — its job
    taken just before the pool was shut down, its process not yet registered — is killed as soon
    as it is registered, else the interpreter's exit waited for it (Ctrl-C during a 60,000-function
    build: "interrupted" said, then no exit within 60 s, once in a CI)."""

    killed = False


def _run_bytes(argv: Sequence[str], cwd: Path | None = None, env: dict[str, str] | None = None,
               group: set[subprocess.Popen[bytes]] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run one compiler command, output captured as bytes. The compiler runs in its own session
    (and process group) under lifetime.supervised, so a kill reaches cc1 and as too, not only the
    driver: the whole group dies with cyclebench (SIGKILL included: cc1 ran on after one) and with
    an interrupted build (_kill_live; ``group``: the build's own compilers, which a failed build
    kills, not those of a build beside it)."""
    proc = spawn(supervised(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=cwd,
                 env=env, start_new_session=True)
    with _live_lock:
        _live.add(proc)
        if group is not None:
            group.add(proc)
        late = isinstance(group, Compilers) and group.killed
    if late:
        _kill_group(proc)
    try:
        out, err = proc.communicate(timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
    finally:
        with _live_lock:
            _live.discard(proc)
            if group is not None:
                group.discard(proc)
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)


def _run(argv: Sequence[str], cwd: Path | None = None, env: dict[str, str] | None = None,
         group: set[subprocess.Popen[bytes]] | None = None) -> subprocess.CompletedProcess[str]:
    """_run_bytes with the output decoded, bytes that are not UTF-8 replaced: a compiler
    quoting a Latin-1 source line (``#error café`` in ISO-8859-1) is shown, not a traceback."""
    p = _run_bytes(argv, cwd, env, group)
    return subprocess.CompletedProcess(p.args, p.returncode, p.stdout.decode(errors="replace"),
                                       p.stderr.decode(errors="replace"))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _kill_live(group: set[subprocess.Popen[bytes]] | None = None) -> None:
    """Kill every compiler running now (``group``: those of one build, and any it starts later)."""
    with _live_lock:
        if isinstance(group, Compilers):
            group.killed = True
        live = list(_live if group is None else group)
    for proc in live:
        _kill_group(proc)
    for proc in live:  # reaped before the caller removes their temporary directory
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)


def kill_compilers() -> None:
    """Kill every compiler a build of this process runs now: builds run side by side (threads)
    and interrupted, which go on to their end otherwise."""
    _kill_live()


def compiler_version(cc: str) -> str:
    """First line of ``cc --version``. Raises ToolMissing when ``cc`` is not installed.

    Remembered in the build cache (``.cc-version-*``) per compiler file, as found on PATH and
    resolved through its links, while that file's inode, size, mtime and ctime stay: `cc
    --version` is a process of ~20 ms, two thirds of a build that finds its runner cached."""
    found = shutil.which(cc)
    if found is None:
        raise ToolMissing(f"compiler '{cc}' not found: install it (e.g. apt-get install gcc) or pass --cc")
    memo = _version_memo(cc, found)
    if memo is not None and (known := memo_load(memo)) is not None:
        return known.decode(errors="replace")
    proc = _run([cc, "--version"])
    if proc.returncode != 0:
        raise ToolMissing(f"compiler '{cc}' does not run: {proc.stderr.strip()[:200]}")
    version = proc.stdout.splitlines()[0] if proc.stdout else cc
    if memo is not None:
        memo_store(memo, version.encode())
    return version


def compiler_target(cc: str) -> str | None:
    """``cc -dumpmachine``: the GNU triplet ``cc`` builds for (e.g. x86_64-linux-gnu), or None when
    it cannot say. Remembered as compiler_version remembers the version (``.cc-target-*``): a run's
    environment records it (env.sysinfo.compiler_info), and the process took ~7 ms of every run's
    start."""
    found = shutil.which(cc)
    memo = _version_memo(cc, found, "target") if found is not None else None
    if memo is not None and (known := memo_load(memo)) is not None:
        return known.decode(errors="replace")
    try:
        proc = _run([cc, "-dumpmachine"])
    except OSError:
        return None
    target = proc.stdout.strip().splitlines()[0].strip() if proc.returncode == 0 and proc.stdout.strip() else None
    if target and memo is not None:
        memo_store(memo, target.encode())
    return target


def _version_memo(cc: str, found: str, what: str = "version") -> Path | None:
    """Where ``cc``'s version (or another of its answers, ``what``) is remembered: named by the name
    given and the file it runs now (the links followed), so a compiler replaced or relinked is asked
    again; None when the build cache cannot be used."""
    try:
        real = os.path.realpath(found)
        st = os.stat(real)
        d = build_dir()
    except (OSError, UnsafeCache):
        return None
    if d is None:
        return None
    who = f"{cc}\0{found}\0{real}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}"
    return d / f".cc-{what}-{hashlib.sha256(who.encode()).hexdigest()[:24]}"


def parse_make_deps(text: bytes) -> list[bytes]:
    """Prerequisites of the make rules ``cc -M -MT cyclebench-deps`` writes, as file-system
    bytes. Undoes gcc's quoting (libcpp/mkdeps.cc, ``munge``): a blank preceded by 2N+1
    backslashes is N backslashes and the blank, by 2N backslashes N backslashes ending the
    name; ``$$`` is ``$``; ``\\#`` is ``#``; backslash-newline continues the rule."""
    deps: list[bytes] = []
    for line in text.replace(b"\\\n", b" ").split(b"\n"):
        if not line.startswith(DEPS_TARGET + b":"):
            continue
        rest, i, cur = line[len(DEPS_TARGET) + 1:], 0, bytearray()
        while i < len(rest):
            c = rest[i:i + 1]
            if c == b"\\":
                j = i
                while j < len(rest) and rest[j:j + 1] == b"\\":
                    j += 1
                n, nxt = j - i, rest[j:j + 1]
                if nxt in (b" ", b"\t"):
                    cur += b"\\" * (n // 2)
                    if n % 2:
                        cur += nxt
                        j += 1
                elif nxt == b"#":
                    cur += b"\\" * (n - 1) + b"#"
                    j += 1
                else:
                    cur += b"\\" * n
                i = j
            elif c == b"$" and rest[i + 1:i + 2] == b"$":
                cur += b"$"
                i += 2
            elif c in (b" ", b"\t"):
                if cur:
                    deps.append(bytes(cur))
                    cur.clear()
                i += 1
            else:
                cur += c
                i += 1
        if cur:
            deps.append(bytes(cur))
    return deps


def _read_files(cc: str, flags: Sequence[str], sources: Sequence[Path]) -> list[bytes] | None:
    """Every file the preprocessor reads for ``sources`` (``cc -M``: system headers and those
    of -isystem, CPATH, C_INCLUDE_PATH included), as file-system bytes; None when it fails
    (the compile that follows reports the real error)."""
    proc = _run_bytes([cc, "-M", "-MT", DEPS_TARGET.decode(), *flags, *map(str, sources)])
    return parse_make_deps(proc.stdout) if proc.returncode == 0 else None


def _toolchain(cc: str) -> bytes:
    """The compiler binary ``cc`` resolves to on $PATH (its real path, size and mtime: what
    ccache's default compiler_check compares) and the environment it reads (COMPILER_ENV)."""
    parts = []
    where = shutil.which(cc)
    if where:
        real = os.path.realpath(where)
        with contextlib.suppress(OSError):
            st = os.stat(real)
            parts.append(os.fsencode(real) + f"\0{st.st_size}\0{st.st_mtime_ns}".encode())
    for name in COMPILER_ENV:
        value = os.environb.get(name.encode())
        if value is not None:
            parts.append(name.encode() + b"=" + value)
    return b"\0".join(parts)


def _engine_flags(spec: BuildSpec, source: str | None = None) -> list[str]:
    """The flags of engine ``source`` (None: those every engine source shares, without engine_defines)."""
    defines = spec.engine_defines if source == ENGINE_DEFINED else ()
    return [*ENGINE_FLAGS, "-I", str(engine_dir()), *(f"-D{d}" for d in defines)]


def _engine_reads(spec: BuildSpec, cc_version: str, engine: list[Path]) -> list[bytes]:
    """_read_files of the engine's sources, remembered in the cache per engine, compiler,
    environment and flags (``cc -M`` of its nine files took 250–300 ms of every cache hit on
    this 2-core VM under load, 5× the rest of the key). The files it names are hashed on every
    build all the same; what it cannot see is a header newly created earlier on the include
    path than the one the list names, until the compiler, environment or engine changes.
    Without engine_defines: wis.c, which they reach, includes the same files whatever they are."""
    h = hashlib.sha256(cc_version.encode() + b"\0" + _toolchain(spec.cc) + b"\0"
                       + b"\0".join(os.fsencode(a) for a in _engine_flags(spec)))
    for f in engine:
        h.update(f.read_bytes())
    bdir = build_dir()
    assert bdir is not None
    memo = bdir / f".engine-reads-{h.hexdigest()[:24]}"
    kept = memo_load(memo)
    if kept is not None:
        return kept.split(b"\0")
    read = _read_files(spec.cc, _engine_flags(spec), [engine_dir() / n for n in ENGINE_SOURCES])
    if read is None:
        return [b"cc -M failed"]
    memo_store(memo, b"\0".join(read))
    return read


def memo_load(memo: Path) -> bytes | None:
    """A file the build cache remembers (a `cc -M` list, a compiler's version, a runner's
    calibration): its bytes; None when there is none (UnsafeCache when another user could have
    written it)."""
    with contextlib.suppress(OSError):
        check_private(memo)
        return memo.read_bytes()
    return None


def memo_store(memo: Path, data: bytes) -> None:
    """Write ``memo`` whole (a rename: a reader beside it sees the old bytes or the new ones; no
    fsync: a memo lost to a crash is only made again); a cache it cannot write only costs the
    next use the work it remembers."""
    with contextlib.suppress(OSError):
        tmp = memo.with_name(f"{memo.name}.{os.getpid()}.{threading.get_ident()}")
        tmp.write_bytes(data)
        tmp.rename(memo)


# the flags that name a directory the preprocessor searches (gcc manual, "Options for Directory Search")
_SEARCH_FLAGS = ("-I", "-isystem", "-iquote", "-idirafter")


def _searched_dirs(flags: Sequence[str], sources: Sequence[Path], read: Sequence[bytes]) -> list[bytes]:
    """The directories a new header could appear in and change what ``cc -M`` lists: each
    source's own, every directory a search flag names and the directory of every file it read."""
    dirs = [os.fsencode(Path(s).resolve().parent) for s in sources]
    for i, a in enumerate(flags):
        for f in _SEARCH_FLAGS:
            if a == f and i + 1 < len(flags):
                dirs.append(os.fsencode(flags[i + 1]))
            elif a.startswith(f) and len(a) > len(f):
                dirs.append(os.fsencode(a[len(f):]))
    dirs += [os.path.dirname(f) for f in read]
    return sorted(set(dirs))


def _reads_digest(read: Sequence[bytes], dirs: Sequence[bytes]) -> bytes:
    """What a remembered ``cc -M`` list rests on: the content of every file it names and the
    modification time of every directory searched (a file created in one changes it)."""
    h = hashlib.sha256()
    for f in read:
        try:
            with open(f, "rb") as fh:
                h.update(f + b"\0" + hashlib.sha256(fh.read()).digest())
        except OSError:
            h.update(f + b"\0missing")
    for d in dirs:
        try:
            h.update(d + b"\0" + str(os.stat(d).st_mtime_ns).encode())
        except OSError:
            h.update(d + b"\0missing")
    return h.digest()


def _bench_reads(spec: BuildSpec, cc_version: str) -> list[bytes] | None:
    """_read_files of the benchmark's sources, remembered in the cache per compiler, environment,
    flags and sources (``cc -M`` of the suite's sources took ~190 ms of every cache hit on this
    2-vCPU VM, most of a `run` that found its runner built: 0.56 → 0.35 s in-process).
    The list is used again only while every file it names has the same content and every
    directory searched (_searched_dirs) the same modification time: a header edited to include
    another, or a header created beside the sources or in a -I directory, runs ``cc -M`` again.
    What it cannot see, as _engine_reads: a header newly created in a system directory that no
    file of the list lives in, earlier on the path than the one the list names."""
    flags = spec.bench_flags()
    h = hashlib.sha256(cc_version.encode() + b"\0" + _toolchain(spec.cc) + b"\0"
                       + b"\0".join(os.fsencode(a) for a in flags))
    for src in spec.sources:
        h.update(b"\0source\0" + os.fsencode(src) + b"\0" + os.fsencode(Path(src).resolve()))
        h.update(hashlib.sha256(Path(src).read_bytes()).digest())
    bdir = build_dir()
    assert bdir is not None
    memo = bdir / f".bench-reads-{h.hexdigest()[:24]}"
    kept = memo_load(memo)
    if kept is not None:
        digest, _, listed = kept.partition(b"\n")
        read = listed.split(b"\0") if listed else []
        if digest == _reads_digest(read, _searched_dirs(flags, spec.sources, read)).hex().encode():
            return read
    read = _read_files(spec.cc, flags, spec.sources)
    if read is None:
        return None
    digest = _reads_digest(read, _searched_dirs(flags, spec.sources, read)).hex().encode()
    memo_store(memo, digest + b"\n" + b"\0".join(read))
    return read


def included_files(spec: BuildSpec) -> list[Path]:
    """Every file a build of ``spec`` reads: its sources, every header the preprocessor opens for
    them (``cc -M``, as the cache key sees them; [] when that fails) and the engine's own files."""
    files = [engine_dir() / n for n in (*ENGINE_SOURCES, *ENGINE_HEADERS)]
    files += list(spec.sources)
    files += [Path(os.fsdecode(f)) for f in _read_files(spec.cc, spec.bench_flags(), spec.sources) or []]
    return files


def _hash_files(h: hashlib._Hash, files: Sequence[bytes], seen: set[bytes]) -> None:
    """Each of ``files`` not in ``seen`` (added to it) into ``h``: its name and its content's digest."""
    for f in files:
        if f in seen:
            continue
        seen.add(f)
        h.update(b"\0file\0" + f + b"\0")
        try:
            with open(f, "rb") as fh:
                h.update(hashlib.sha256(fh.read()).digest())
        except OSError:
            h.update(b"\0missing")


def _engine_digest(spec: BuildSpec, cc_version: str, seen: set[bytes]) -> bytes:
    """What every engine object depends on but its own flags: this cyclebench, the compiler, the
    environment it reads, the target, and every file the engine's sources read (system headers
    too), each added to ``seen``."""
    h = hashlib.sha256(f"cyclebench {__version__}\0{cc_version}\0{spec.target}\0".encode())
    h.update(b"\0toolchain\0" + _toolchain(spec.cc))
    engine = [engine_dir() / n for n in (*ENGINE_SOURCES, *ENGINE_HEADERS)]
    _hash_files(h, [os.fsencode(f) for f in engine] + _engine_reads(spec, cc_version, engine), seen)
    return h.digest()


def _cache_key(spec: BuildSpec, cc_version: str, engine: bytes, seen: set[bytes]) -> str:
    """The runner's key: the engine's digest (_engine_digest, whose files are in ``seen``), the
    benchmark's flags and every file its sources read."""
    h = hashlib.sha256(b"objects kept\0" + engine)
    h.update(b"\0".join(os.fsencode(a) for a in spec.bench_flags() + list(spec.ldflags) + list(spec.extra_key)))
    if spec.engine_defines:
        h.update(("\0engine\0" + "\0".join(spec.engine_defines)).encode())
    # the sources' paths as given reach the binary (__FILE__ in CB_BENCH: --list names the file)
    files = [os.fsencode(src) for src in spec.sources]
    read = _bench_reads(spec, cc_version)
    if read is None:  # the compile fails too, and says why
        h.update(b"\0cc -M failed")
    _hash_files(h, files + (read or []), seen)
    return h.hexdigest()[:24]


def _engine_object(bdir: Path, engine: bytes, spec: BuildSpec, source: str) -> Path:
    """Where the build cache keeps engine ``source``'s object for the engine digest ``engine``.
    Nine engine sources took ~1 s of CPU (~1.5 s alone) in every new runner; one test run builds
    hundreds of runners (120 for will-it-scale's corpus alone) from the same engine."""
    h = hashlib.sha256(engine + b"\0" + source.encode() + b"\0")
    h.update(b"\0".join(os.fsencode(a) for a in _engine_flags(spec, source)))
    return bdir / f".engine-{h.hexdigest()[:24]}.o"


def _user(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def check_private(path: Path, follow: bool = False) -> None:
    """Raise UnsafeCache unless ``path`` is owned by this user and writable by no one else
    (``follow``: a symbolic link to such a place is fine, for the cache's root only). A file
    another user could write or own in the cache is a program they choose, run as this user."""
    st = os.stat(path) if follow else os.lstat(path)
    me = os.geteuid()
    if stat.S_ISLNK(st.st_mode):
        why = f"is a symbolic link (owned by {_user(st.st_uid)})"
    elif st.st_uid != me:
        why = f"is owned by {_user(st.st_uid)}, not by {_user(me)}"
    elif st.st_mode & 0o022:
        why = f"is writable by other users ({stat.filemode(st.st_mode)})"
    else:
        return
    raise UnsafeCache(f"refusing the build cache: {path} {why}; set CYCLEBENCH_CACHE to a directory of your own")


def build_dir(create: bool = True) -> Path | None:
    """``cache_root()/build``, checked private (check_private) from the cache's root down and
    created 0700 when missing (``create``; else None when there is none). Raises UnsafeCache."""
    root = cache_root()
    d = root / "build"
    if create:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            d.mkdir(mode=0o700)
    elif not root.exists():
        return None
    check_private(root, follow=True)
    if not create and not os.path.lexists(d):
        return None
    check_private(d)
    return d


# entry directory → an fd holding a shared flock on it while this process may run its runner
# (to its end: a run uses its runner until it exits); `cache clean` removes only what it can lock
_held: dict[Path, int] = {}


def cached_artifact(prefix: str, key: str, filename: str, make: Callable[[Path], None]) -> Path:
    """A small tool of the engine's own, built once per ``key`` (a digest of its sources, compiler
    and flags) into ``cache_root()/<prefix>-<key>/<filename>``: ``make(tmp)`` writes ``filename``
    into a fresh directory that is then published whole by an atomic rename (a concurrent builder
    that won is used as it is). The cache's root and the entry are checked private (UnsafeCache):
    what is built runs as this user. BuildError from ``make`` propagates."""
    root = build_dir()
    assert root is not None
    out_dir = root.parent / f"{prefix}-{key}"
    path = out_dir / filename
    if os.path.lexists(out_dir) and os.path.lexists(path):
        check_private(out_dir)
        check_private(path)
    if path.is_file():
        return path
    tmp = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f".tmp-{prefix}-"))
    try:
        make(tmp)
        try:
            tmp.rename(out_dir)  # atomic publish
        except OSError:
            if not path.is_file():  # not a concurrent builder that won
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def _hold(entry: Path, fd: int | None = None) -> bool:
    """Hold ``entry`` in use (a shared flock on its directory, on ``fd`` if given). Waits for a
    clean that holds it exclusively; False when that clean removed it meanwhile."""
    if entry in _held:
        return True
    try:
        fd = os.open(entry, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC) if fd is None else fd
    except OSError:
        return False
    fcntl.flock(fd, fcntl.LOCK_SH)
    try:
        same = os.path.samestat(os.fstat(fd), os.stat(entry)) and (entry / "runner").is_file()
    except OSError:
        same = False
    if not same:
        os.close(fd)
        return False
    _held[entry] = fd
    return True


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
    seen: set[bytes] = set()
    engine = _engine_digest(spec, cc_version, seen)
    key = _cache_key(spec, cc_version, engine, seen)
    bdir = build_dir()
    assert bdir is not None
    out_dir = bdir / key
    binary = out_dir / "runner"
    kept = [out_dir / "objects" / f"{i:03d}-{src.stem}.o" for i, src in enumerate(spec.sources)]
    info = Binary(binary, key, spec.cc, cc_version, spec.cflags, tuple(str(s) for s in spec.sources), tuple(kept),
                  compiler_target(spec.cc), spec.defines, tuple(str(d) for d in spec.include_dirs), spec.ldflags)
    if _reuse(out_dir):
        return info
    prune_daily()

    tmp = Path(tempfile.mkdtemp(dir=bdir, prefix=".tmp-"))
    tmp_fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    fcntl.flock(tmp_fd, fcntl.LOCK_SH)  # an hour-old half build is swept only if no builder holds it
    # the compilers' temporaries (cc*.s, cc*.o) go in the build's own directory, removed with it:
    # a compile killed because another source failed left them in $TMPDIR
    (tmp / "cctmp").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp / "cctmp")}
    published = False
    try:
        sources = [engine_dir() / name for name in ENGINE_SOURCES] + list(spec.sources)
        objs = [tmp / f"{i:03d}-{src.stem}.o" for i, src in enumerate(sources)]
        jobs: list[tuple[int, list[str]]] = []
        shared: dict[int, Path] = {}  # engine objects compiled here, for the cache
        for i, name in enumerate(ENGINE_SOURCES):
            cached = _engine_object(bdir, engine, spec, name)
            try:  # a hard link: a clean removing the cached object meanwhile leaves this build its own
                check_private(cached)
                os.link(cached, objs[i])
                os.utime(cached)  # last use, for pruning
                continue
            except (OSError, UnsafeCache):
                with contextlib.suppress(OSError):
                    objs[i].unlink()
            jobs.append((i, [spec.cc, *_engine_flags(spec, name), "-c"]))
            shared[i] = cached
        jobs += [(len(ENGINE_SOURCES) + i, [spec.cc, *spec.bench_flags(), "-c"]) for i in range(len(spec.sources))]

        mine = Compilers()  # this build's compilers (others may build beside it)

        def compile_one(job: tuple[int, list[str]]) -> tuple[Path, subprocess.CompletedProcess[str]]:
            i, argv = job
            return sources[i], _run([*argv, str(sources[i]), "-o", str(objs[i])], env=env, group=mine)

        from concurrent.futures import ThreadPoolExecutor  # a build that compiles: 5 ms a cached one does without

        pool = ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)))
        try:
            for src, proc in pool.map(compile_one, jobs):
                if proc.returncode != 0:
                    raise BuildError(f"{src}: does not compile", proc.stderr.strip(), file=str(src))
        except BaseException:  # Ctrl-C, SIGTERM or a failed source: no compile outlives the build
            pool.shutdown(wait=False, cancel_futures=True)
            _kill_live(mine)
            raise
        pool.shutdown()
        for i, cached in shared.items():  # published whole (a rename), readable by others, writable by no one else
            with contextlib.suppress(OSError):
                os.chmod(objs[i], 0o644)
                part = cached.with_name(f"{cached.name}.{os.getpid()}.{threading.get_ident()}")
                os.link(objs[i], part)
                os.rename(part, cached)
        # -ldl: dlsym/dladdr (runner --features names the malloc in use) live in libc only since glibc 2.34
        link = _run([spec.cc, "-pthread", *map(str, objs), "-o", str(tmp / "runner"), *spec.ldflags, "-lm", "-ldl"],
                    env=env)
        if link.returncode != 0:
            raise BuildError("link failed", link.stderr.strip())
        os.chmod(tmp / "runner", 0o755)  # never group-writable (umask 002): check_private would refuse it
        (tmp / "objects").mkdir()
        for i, obj in enumerate(objs):
            if i < len(ENGINE_SOURCES):
                obj.unlink()
            else:  # the user's objects stay: variants reports their own text/data/bss (size(1))
                obj.rename(tmp / "objects" / kept[i - len(ENGINE_SOURCES)].name)
        shutil.rmtree(tmp / "cctmp", ignore_errors=True)
        for _attempt in range(2):
            try:
                tmp.rename(out_dir)  # atomic publish; the flock goes with the directory
                published = _hold(out_dir, tmp_fd)
                break
            except OSError as e:
                if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                    raise
                if _reuse(out_dir):  # a concurrent builder won
                    break
                # an entry without a usable runner (removed by hand): replaced, unless in use
                if out_dir in _held:
                    os.close(_held.pop(out_dir))
                if not _remove_unused(out_dir):
                    raise
        else:
            raise BuildError(f"{out_dir}: cannot publish the runner (replaced twice while building)")
    finally:
        if not published:
            os.close(tmp_fd)
        shutil.rmtree(tmp, ignore_errors=True)
    return info


def _reuse(out_dir: Path) -> bool:
    """True when ``out_dir`` holds a runner this user built and nobody else could have changed,
    now held in use by this process. Raises UnsafeCache for an entry or runner another user
    owns or can write."""
    if not os.path.lexists(out_dir):
        return False
    check_private(out_dir)
    binary = out_dir / "runner"
    if not os.path.lexists(binary):
        return False
    check_private(binary)
    if not (binary.is_file() and os.access(binary, os.X_OK) and _hold(out_dir)):
        return False
    with contextlib.suppress(OSError):
        os.utime(out_dir)  # last use, for pruning
    return True


# Each distinct source/flag set is ~72 KB (23 entries piled up in one session of tests); entries
# unused this long go, and a .tmp-* left by a build killed mid-way goes after an hour.
PRUNE_AFTER_DAYS = 30
TMP_AFTER_S = 3600


@dataclass(frozen=True)
class CacheEntry:
    path: Path
    bytes: int
    last_used: float  # epoch seconds (the entry directory's mtime, touched on every use)
    partial: bool  # a .tmp-* directory of a build that never finished


def _size(d: Path) -> int:
    total = 0
    for f in d.rglob("*"):
        with contextlib.suppress(OSError):  # removed meanwhile by a clean or a failed build
            total += f.lstat().st_size if f.is_file() else 0
    return total


def cache_entries() -> list[CacheEntry]:
    """Every entry of the build cache, oldest use first. Raises UnsafeCache (check_private)."""
    root = build_dir(create=False)
    out = []
    for d in root.iterdir() if root is not None else []:
        with contextlib.suppress(OSError):
            if d.is_dir() and not d.is_symlink():
                out.append(CacheEntry(d, _size(d), d.stat().st_mtime, d.name.startswith(".tmp-")))
    return sorted(out, key=lambda e: e.last_used)


@dataclass(frozen=True)
class Pruned:
    removed: tuple[CacheEntry, ...] = ()
    in_use: tuple[CacheEntry, ...] = ()  # held by a running cyclebench: kept


def prune(older_than_days: float = PRUNE_AFTER_DAYS, everything: bool = False) -> Pruned:
    """Remove entries unused for ``older_than_days`` (all with ``everything``) and abandoned
    partial builds older than an hour, except those a live process holds (a run measuring with
    that runner, a build in progress): removing its runner mid-run killed the run."""
    now = time.time()
    removed: list[CacheEntry] = []
    in_use: list[CacheEntry] = []
    for e in cache_entries():
        age = now - e.last_used
        if not (everything or age > older_than_days * 86400 or (e.partial and age > TMP_AFTER_S)):
            continue
        gone = _remove_unused(e.path)
        if gone is not None:
            (removed if gone else in_use).append(e)
    root = build_dir(create=False)
    # engine objects (a build links its own copy first), remembered analyses (.memo-*: predict/osaca.py) and
    # `cc -M` lists (_engine_reads, _bench_reads: made again when missing), compilers' versions
    globs = (".engine-*.o*", ".memo-*", ".engine-reads-*", ".bench-reads-*", ".cc-version-*")
    for memo in [f for g in globs for f in root.glob(g)] if root is not None else []:
        with contextlib.suppress(OSError):
            if everything or now - memo.stat().st_mtime > older_than_days * 86400:
                memo.unlink()
    return Pruned(tuple(removed), tuple(in_use))


def _remove_unused(entry: Path) -> bool | None:
    """Remove ``entry`` unless a live process holds it (flock(2) exclusive, non-blocking):
    True when removed, False when in use, None when it was already gone."""
    try:
        fd = os.open(entry, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        shutil.rmtree(entry, ignore_errors=True)
        return True
    finally:
        os.close(fd)


def prune_daily() -> None:
    """prune() at most once a day, on a build (a stamp file records the last time)."""
    stamp = cache_root() / "build" / ".pruned"
    try:
        if stamp.exists() and time.time() - stamp.stat().st_mtime < 86400:
            return
        stamp.touch()
    except OSError:
        return
    prune()
