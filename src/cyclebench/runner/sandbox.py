"""Code from a repository's history run confined (docs/revisions.md, "Sandbox"): `compare --rev`
and `bisect` run each revision's build command and then its benchmark, which is code from every
revision of a history — a contributor's branch, a vendored update, a repository just cloned.
Build systems that run untrusted steps confine them (Bazel's linux-sandbox, Nix's build sandbox);
here bubblewrap (bwrap(1), Debian's ``bubblewrap``) makes the room:

- the whole file system read-only (``--ro-bind / /``), a fresh /dev and /proc, a private /tmp;
- what the step may write bound writable again: the revision's private checkout and its cache
  entry;
- ``$HOME``, the user's work tree and the database's directory hidden: an empty, read-only tmpfs
  over each (``--tmpfs`` then ``--remount-ro``), so a write there fails as on any read-only file
  system;
- no network (``--unshare-net``), its own PID namespace that dies with cyclebench
  (``--unshare-pid --die-with-parent``).

What measuring needs is kept: the process is the same process on the same CPU (the runner pins
itself), with its capabilities (root keeps CAP_SYS_NICE for ``--fifo``), perf events and the
runner protocol's pipes.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BWRAP = "bwrap"
PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Sandbox:
    """A room for one revision's steps: ``writable`` paths (bound read-write), ``readable`` ones
    that may sit under a hidden directory (the runner binary's, in the build cache under $HOME),
    ``hidden`` directories (an empty read-only tmpfs over each existing one), ``network``."""

    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    network: bool = False

    def prefix(self) -> list[str]:
        """The bwrap argv that runs a command confined: ``[*prefix, *argv]``."""
        argv = [BWRAP, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                "--setenv", "TMPDIR", "/tmp"]  # the caller's private TMPDIR is outside: this /tmp is private
        if not self.network:
            argv.append("--unshare-net")
        # what is in /tmp is hidden already by the private /tmp above; hiding /tmp itself again would
        # leave it read-only, and valgrind, compilers and make need a writable TMPDIR (a database in
        # /tmp made callgrind fail to start: "Can't create client cmdline file in /tmp")
        tmp = Path("/tmp").resolve()
        hidden = _outermost([p for p in self.hidden if p.is_dir() and p != Path("/")
                             and not p.resolve().is_relative_to(tmp)])
        for d in hidden:
            argv += ["--tmpfs", str(d)]
        # bound before the tmpfs above them turns read-only: their mount points are made in it
        # (the build cache under ~/.cache)
        for p in self.readable:
            if p.exists():
                argv += ["--ro-bind", str(p), str(p)]
        for p in self.writable:
            if p.exists():
                argv += ["--bind", str(p), str(p)]
        for d in hidden:
            argv += ["--remount-ro", str(d)]
        return [*argv, "--"]


def _outermost(paths: Sequence[Path]) -> list[Path]:
    """The paths none of which is inside another (a tmpfs over a parent hides its children)."""
    resolved = sorted({p.resolve() for p in paths}, key=lambda p: len(p.parts))
    out: list[Path] = []
    for p in resolved:
        if not any(p.is_relative_to(q) for q in out):
            out.append(p)
    return out


@functools.cache
def unavailable() -> str | None:
    """Why no sandbox can be made here (no bwrap, or bwrap refused: user namespaces disabled for
    an unprivileged user), None when one can: a probe runs ``true`` in the room every step gets."""
    if shutil.which(BWRAP) is None:
        return "bwrap is not installed (apt-get install bubblewrap)"
    true = shutil.which("true") or "/bin/true"
    try:
        proc = subprocess.run([*Sandbox(hidden=(Path.home(),)).prefix(), true], capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT_S, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap could not run: {e}"
    if proc.returncode != 0:
        said = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        return f"bwrap refused ({said}; user namespaces may be disabled for uid {os.getuid()})"
    return None
