"""Revisions of a git repository as runners: resolved, checked out privately, built, cached by
tree (docs/revisions.md).

A revision is read with ``git archive`` of its tree into a directory of cyclebench's cache
(``$CYCLEBENCH_CACHE/revisions/<tree>-<recipe>/src``): git-archive(1) writes no index, no
ref and no work tree of the repository, so the user's checkout, index, HEAD and stash are
never touched, and a dirty work tree does not matter. The repository's optional build
command (``--build``) runs in that directory; its log and outcome are kept beside it
(``build.log``, ``status.json``), so the same tree with the same recipe is never built twice,
a failed build included. Two revisions with the same tree (a revert, a commit that changes
only its message) share one entry. The runner itself is then built by build.compile, which
caches it by content as for every command.

Paths the user gave (``-f`` files, ``-I`` directories, ``--ldflags`` items) that lie inside the
repository, and relative ``--ldflags`` items and ``-L`` directories, are read from each
revision's copy; the others (a benchmark file kept outside the repository) are used as they are.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from cyclebench.build import Binary, BuildError, ToolMissing, build
from cyclebench.build.compile import COMPILER_ENV, cache_root, check_private, compiler_version
from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.options import BuildOptions
from cyclebench.lifetime import owner_tag, spawn, supervised

__all__ = ["Built", "Entry", "Recipe", "Repo", "Revision", "RevisionError", "entries", "prepare", "remove", "sweep"]

BUILD_TIMEOUT_S = 3600.0
GIT_TIMEOUT_S = 300.0
# what a build command reads from the environment besides the compiler's own (COMPILER_ENV):
# the variables make(1)'s built-in rules and most configure scripts take
BUILD_ENV = ("CC", "CFLAGS", "CPPFLAGS", "LDFLAGS", "LDLIBS", "MAKEFLAGS", "PATH")


class RevisionError(ExperimentError):
    """A repository or revision that cannot be used (not a repository, an unknown revision,
    GOOD not an ancestor of BAD): one line for the user."""


@dataclass(frozen=True)
class Revision:
    """One commit: its full and short sha, its tree (the build cache's key), its subject line."""

    sha: str
    short: str
    tree: str
    subject: str


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}  # never take the index lock (git(1))
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(var, None)
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env,
                              timeout=GIT_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise RevisionError("git is not installed (apt-get install git)") from None
    if check and proc.returncode != 0:
        raise RevisionError(f"git {args[0]}: {(proc.stderr.strip().splitlines() or ['failed'])[-1]}")
    return proc


class Repo:
    """A git repository on disk, read with git's plumbing only (rev-parse, rev-list, log,
    archive: nothing that writes its index, refs or work tree)."""

    def __init__(self, path: Path) -> None:
        if not path.is_dir():
            raise RevisionError(f"{path}: no such directory")
        proc = _git(path, "rev-parse", "--show-toplevel", check=False)
        if proc.returncode != 0:
            raise RevisionError(f"{path} is not in a git repository")
        self.root = Path(proc.stdout.strip()).resolve()

    def resolve(self, rev: str) -> Revision:
        """The commit ``rev`` names (anything git rev-parse takes). RevisionError when none."""
        if not rev or rev.startswith("-"):
            raise RevisionError(f"'{rev}' is not a revision")
        proc = _git(self.root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}",
                    check=False)
        if proc.returncode != 0:
            raise RevisionError(f"'{rev}' is not a commit of {self.root}")
        return self.revision(proc.stdout.strip())

    def revision(self, sha: str) -> Revision:
        out = _git(self.root, "log", "-1", "--format=%H%x00%h%x00%T%x00%s", sha).stdout.rstrip("\n")
        full, short, tree, subject = out.split("\0", 3)
        return Revision(full, short, tree, subject)

    def message(self, sha: str) -> str:
        """The whole commit message (and its author and date) as git log prints it."""
        return _git(self.root, "log", "-1", "--format=Author: %an <%ae>%nDate:   %ad%n%n%B", sha).stdout.rstrip()

    def depth(self, sha: str) -> int | None:
        """How many commits ``sha`` has behind it, itself counted (git rev-list --count): an order
        of commits that outlives the repository, which a history of revisions is sorted by; None
        where git cannot count it (an object the repository lacks)."""
        proc = _git(self.root, "rev-list", "--count", "--end-of-options", sha, check=False)
        return int(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip().isdigit() else None

    def is_ancestor(self, a: str, b: str) -> bool:
        return _git(self.root, "merge-base", "--is-ancestor", a, b, check=False).returncode == 0

    def first_parent(self, good: str, bad: str) -> list[str]:
        """The commits after ``good`` up to ``bad`` along bad's first parents, oldest first
        (git rev-list --first-parent --ancestry-path). RevisionError when ``good`` is not on
        that line."""
        shas = _git(self.root, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}").stdout.split()
        if shas and _git(self.root, "rev-parse", f"{shas[0]}^1", check=False).stdout.strip() != good:
            raise RevisionError(f"{good[:12]} is not on the first-parent line of {bad[:12]}: use --all-parents")
        return shas

    def bisect_candidates(self, bad: str, goods: Sequence[str]) -> list[str]:
        """The commits still in question between ``goods`` and ``bad``, best bisection point
        first: git's own bisect machinery (git rev-list --bisect-all, which git bisect uses to
        pick its next commit), for a range with merges."""
        lines = _git(self.root, "rev-list", "--bisect-all", bad, "--not", *goods).stdout.splitlines()
        return [ln.split()[0] for ln in lines if ln.strip()]

    def merge_base(self, a: str, b: str) -> str | None:
        """The best common ancestor of ``a`` and ``b`` (git merge-base), None when there is none
        here (unrelated histories, or a shallow clone cut above it)."""
        proc = _git(self.root, "merge-base", "--end-of-options", a, b, check=False)
        return proc.stdout.strip() or None if proc.returncode == 0 else None

    def is_shallow(self) -> bool:
        """Whether this is a shallow clone (git rev-parse --is-shallow-repository)."""
        return _git(self.root, "rev-parse", "--is-shallow-repository", check=False).stdout.strip() == "true"

    def exists(self, rev: str) -> bool:
        """Whether ``rev`` names a commit here."""
        return _git(self.root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}",
                    check=False).returncode == 0

    def show(self, sha: str, path: str) -> str | None:
        """The text of ``path`` in commit ``sha`` (git show), None when the commit has no such file."""
        proc = _git(self.root, "show", f"{sha}:{path}", check=False)
        return proc.stdout if proc.returncode == 0 else None

    def count(self, bad: str, goods: Sequence[str]) -> int:
        """Commits reachable from ``bad`` and from none of ``goods``."""
        return int(_git(self.root, "rev-list", "--count", bad, "--not", *goods).stdout.strip() or 0)


@dataclass(frozen=True)
class Confinement:
    """How a revision's code runs (docs/revisions.md, "Sandbox"): in a sandbox (``on``:
    runner.sandbox) with ``hidden`` directories ($HOME, the user's work tree, the database's)
    empty and read-only, its build command stopped after ``build_timeout`` seconds; ``why`` it
    is not confined when not on (``--no-sandbox``, or runner.sandbox.unavailable's reason)."""

    on: bool = False
    hidden: tuple[Path, ...] = ()
    build_timeout: float = BUILD_TIMEOUT_S
    why: str = "no sandbox asked for"

    @property
    def recorded(self) -> str:
        """What a run that measured revisions stores of it (model.Revisions ``confinement``):
        ``bwrap`` when confined, else ``unconfined: WHY``."""
        return "bwrap" if self.on else f"unconfined: {self.why}"

    def sandbox(self, writable: Sequence[Path], readable: Sequence[Path] = ()) -> list[str]:
        """The launcher prefix of a step that may write ``writable`` (and read ``readable`` even
        under a hidden directory); [] when not confined."""
        if not self.on:
            return []
        from cyclebench.runner.sandbox import Sandbox

        return Sandbox(writable=tuple(writable), readable=tuple(readable), hidden=self.hidden).prefix()


@dataclass(frozen=True)
class Recipe:
    """How a revision becomes a runner: the user's build options, the paths of which inside the
    repository are read from each revision's copy, an optional build command run there first
    (argv, no shell), and how both run (``confine``)."""

    options: BuildOptions
    command: tuple[str, ...] = ()
    confine: Confinement = Confinement()
    then: tuple[tuple[str, ...], ...] = ()  # more build commands, each run when the one before succeeded
    runner: bool = True  # False: the build commands alone (a Google Benchmark target: its executable is theirs)

    def key(self) -> str:
        """What the build command's output depends on besides the tree: its argv (and the
        commands after it), the compiler and the environment it reads (BUILD_ENV, COMPILER_ENV).
        '' without a command."""
        if not self.command:
            return ""
        h = hashlib.sha256("\0".join(self.command).encode())
        for more in self.then:
            h.update(b"\0\0" + "\0".join(more).encode())
        if self.confine.on:  # a build that failed confined (no network) may build unconfined: not one entry
            h.update(b"\0sandboxed")
        for var in (*BUILD_ENV, *COMPILER_ENV):
            h.update(f"\0{var}={os.environ.get(var, '')}".encode())
        try:
            h.update(compiler_version(os.environ.get("CC") or self.options.cc).encode())
        except BuildError:
            h.update(b"no compiler")
        return h.hexdigest()[:12]

    def spec_options(self, repo: Repo, src: Path) -> BuildOptions:
        """The build options with every path inside ``repo`` (and every relative --ldflags path)
        moved into the revision's copy ``src``."""
        def inside(p: Path) -> Path:
            try:
                return src / p.resolve().relative_to(repo.root)
            except ValueError:
                return p

        def link(item: str) -> str:
            if item.startswith("-L") and len(item) > 2:
                p = Path(item[2:])
                return "-L" + str(inside(p) if p.is_absolute() else src / p)
            if item.startswith("-"):
                return item
            p = Path(item)
            return str(inside(p) if p.is_absolute() else src / p)

        o = self.options
        return replace(o, files=tuple(inside(f) for f in o.files),
                       include_dirs=tuple(inside(d) for d in o.include_dirs),
                       ldflags=tuple(link(x) for x in o.ldflags))


@dataclass(frozen=True)
class Built:
    """A revision built: its runner binary, or why it has none (``reason``, the log kept in
    ``log``); ``cached``: the build command's outcome came from the cache."""

    revision: Revision
    directory: Path
    binary: Binary | None
    reason: str | None
    log: Path
    cached: bool
    seconds: float


def revisions_dir() -> Path:
    """The private directory revisions are checked out and built in (under the build cache's
    root, owned by this user and writable by no one else: build.compile.check_private)."""
    d = cache_root() / "revisions"
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    check_private(d)
    return d


@dataclass(frozen=True)
class Entry:
    """One checkout in the revisions cache: its path, size in bytes, when it was last made or
    used (mtime), and whether it is half made (no status.json: its process was killed)."""

    path: Path
    bytes: int
    last_used: float
    partial: bool


def _lock_of(entry: Path) -> int | None:
    """The entry's lock (flock(2), the one prepare holds while it makes or reads the entry),
    taken without waiting; None when a live process holds it."""
    try:
        fd = os.open(str(entry) + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def entries() -> list[Entry]:
    """Every checkout of the revisions cache, oldest use first."""
    root = cache_root() / "revisions"
    found = []
    for d in sorted(root.iterdir()) if root.is_dir() else []:
        if d.is_dir() and not d.is_symlink():
            status = d / "status.json"
            with contextlib.suppress(OSError):  # removed meanwhile (another cyclebench's sweep)
                found.append(Entry(d, _size(d), (status if status.is_file() else d).stat().st_mtime,
                                   not status.is_file()))
    return sorted(found, key=lambda e: e.last_used)


def _size(d: Path) -> int:
    """Bytes of the files under ``d`` (links not followed; a file gone meanwhile counts 0)."""
    total = 0
    for top, _dirs, files in os.walk(d):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(top, name)).st_size
    return total


def remove(entry: Entry) -> bool:
    """Remove ``entry`` unless a live process holds it: True when removed. Its lock file stays:
    a process waiting on it must meet the same file as the next one to open it."""
    fd = _lock_of(entry.path)
    if fd is None:
        return False
    try:
        shutil.rmtree(entry.path, ignore_errors=True)
    finally:
        os.close(fd)
    return True


def sweep() -> list[Path]:
    """The half-made checkouts no live process is making (a build killed, a power cut) removed."""
    return [e.path for e in entries() if e.partial and remove(e)]


def _checkout(repo: Repo, rev: Revision, dest: Path) -> None:
    """``git archive`` of the revision's tree unpacked into ``dest`` (created)."""
    dest.mkdir(parents=True)
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    proc = spawn(["git", "-C", str(repo.root), "archive", "--format=tar", rev.sha], stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    try:
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
            tar.extractall(dest, filter="data")
    except tarfile.TarError as e:
        proc.kill()
        raise RevisionError(f"git archive {rev.short}: {e}") from None
    finally:
        proc.stdout.close()
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        code = proc.wait()
    if code != 0:
        raise RevisionError(f"git archive {rev.short}: {err.strip() or f'exit {code}'}")


class BuildTimeout(Exception):
    """The build command ran past --build-timeout (its whole tree is gone): the message says so."""


def _run_build(command: Sequence[str], cwd: Path, log: Path, confine: Confinement, entry: Path,
               append: bool = False) -> str | None:
    """Run the build command in ``cwd`` under the group supervisor (lifetime.supervised: make's
    children die with cyclebench), confined (``confine``: it may write ``entry`` only), output to
    ``log`` (after what it holds, with ``append``). None on success, else the reason;
    BuildTimeout past ``confine.build_timeout``."""
    if shutil.which(command[0], path=os.environ.get("PATH")) is None and not (cwd / command[0]).is_file():
        raise ToolMissing(f"--build: '{command[0]}' not found")
    with open(log, "ab" if append else "wb") as fh:
        fh.write(("$ " + " ".join(command) + "\n").encode())
        fh.flush()
        argv = [*confine.sandbox([entry]), *command]
        t0 = time.monotonic()
        proc = spawn(supervised(argv), cwd=cwd, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = proc.wait(confine.build_timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()  # the supervisor ends the build's whole process group (and the sandbox with it)
            proc.wait()
            raise BuildTimeout(f"the build command ran past --build-timeout {confine.build_timeout:g} s "
                               f"and was stopped ({time.monotonic() - t0:.1f} s)") from None
        except BaseException:
            proc.terminate()
            proc.wait()
            raise
    if code == 0:
        return None
    lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines()[1:] if ln.strip()]
    # the compiler's first error says more than make's last line ("Error 1")
    said = next((ln for ln in lines if any(w in ln.lower() for w in ("error", "cannot ", "read-only file system",
                                                                        "permission denied"))),
                lines[-1] if lines else "")
    where = (" (in a sandbox: no network, $HOME, the work tree and the database hidden; --no-sandbox builds "
             "without it)") if confine.on else ""
    return f"the build command exited {code}" + (f": {said[:200]}" if said else "") + where


def prepare(repo: Repo, rev: Revision, recipe: Recipe) -> Built:
    """The revision checked out (cached by tree) and built: the build command (its outcome
    cached too) and then the runner (build.compile's cache). A revision that does not build
    comes back with its ``reason`` and its log; ToolMissing and RevisionError propagate."""
    t0 = time.monotonic()
    key = recipe.key()
    sweep()
    entry = revisions_dir() / (rev.tree + (f"-{key}" if key else ""))
    lock = os.open(str(entry) + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another cyclebench preparing the same tree waits for it
        status_file, log, src = entry / "status.json", entry / "build.log", entry / "src"
        cached = status_file.is_file()
        if not cached:
            shutil.rmtree(entry, ignore_errors=True)  # half made by a process that was stopped
            try:
                entry.mkdir(mode=0o700)
                (entry / "owner").write_text(owner_tag() + "\n")  # who is making it, for a reader
                _checkout(repo, rev, src)
                try:
                    reason = _run_build(recipe.command, src, log, recipe.confine, entry) if recipe.command else None
                    for more in recipe.then if recipe.command else ():
                        if reason is None:
                            reason = _run_build(more, src, log, recipe.confine, entry, append=True)
                except BuildTimeout as e:  # not cached (another limit may build it): the half-made checkout goes
                    shutil.rmtree(src, ignore_errors=True)
                    return Built(rev, entry, None, str(e), log, False, time.monotonic() - t0)
                if not recipe.command:
                    log.write_text("(no build command)\n")
                status_file.write_text(json.dumps({"sha": rev.sha, "tree": rev.tree, "command": list(recipe.command),
                                                   "then": [list(c) for c in recipe.then],
                                                   "reason": reason}) + "\n")
            except BaseException as e:  # a full disk, Ctrl-C: no half-made checkout stays
                shutil.rmtree(entry, ignore_errors=True)
                if isinstance(e, OSError):
                    raise RevisionError(f"cannot check out {rev.short} into {entry.parent}: "
                                        f"{e.strerror or e}") from None
                raise
        reason = json.loads(status_file.read_text()).get("reason")
        binary = None
        if reason is None and recipe.runner:
            opts = recipe.spec_options(repo, src)
            missing = [f for f in opts.files if not f.is_file()]
            if missing:
                reason = f"{missing[0].relative_to(src) if missing[0].is_relative_to(src) else missing[0]}: " \
                         "not in this revision"
            else:
                spec = opts.spec()
                libs = [Path(x) for x in spec.ldflags if not x.startswith("-") and Path(x).is_file()]
                spec = replace(spec, extra_key=(*spec.extra_key, *(_digest(p) for p in libs)))
                try:
                    binary = build(spec)
                except ToolMissing:
                    raise
                except BuildError as e:
                    reason = str(e)
                    with open(log, "a") as fh:
                        fh.write(f"\n$ cyclebench's runner build\n{e}\n{e.output}\n")
                except FileNotFoundError as e:
                    reason = str(e)
        return Built(rev, entry, binary, reason, log, cached, time.monotonic() - t0)
    finally:
        os.close(lock)


def _digest(path: Path) -> str:
    """sha256 of a file the runner links (a library the build command made): the runner cache
    keys on link flags as text, so the library's bytes join its key."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]
