"""Who and what made a run, beyond the machine's state that sysinfo captures: the revision of the
user's benchmark files and whether they differ from it, the boot a run belongs to, and the run's
identity as the ``runs`` columns that can be filtered on (`cyclebench runs`).

Sources: git(1) ``describe --dirty``, ``status --porcelain``; proc(5) and the kernel's
``Documentation/admin-guide/sysctl/kernel.rst`` (``random/boot_id``: a UUID drawn at boot)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from cyclebench.env.sysfs import ROOT, read

GIT_TIMEOUT = 5.0  # seconds, each git call


@dataclass(frozen=True)
class CodeRevision:
    """The revision of the measured sources: ``rev`` as ``git describe --always --dirty`` gives
    it (ending in ``-dirty`` exactly when ``dirty``), None outside a repository (or without git);
    ``dirty`` None when unknown."""

    rev: str | None = None
    dirty: bool | None = None


def _git(cwd: Path, *args: str) -> str | None:
    """stdout of ``git -C cwd args`` (stripped), or None when git is missing, fails or takes
    over GIT_TIMEOUT s."""
    try:
        proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def code_identity(sources: Sequence[Path]) -> CodeRevision:
    """The revision of the repository holding the first of ``sources``, and whether the
    measured files differ from it. Dirty when the work tree has changes to tracked files
    (``describe --dirty``: anywhere in the repository, as a header may be included from
    anywhere), or when a measured source is untracked, ignored, or outside that repository —
    the revision alone would then not give back what was measured."""
    if not sources:
        return CodeRevision()
    files = [Path(s).resolve() for s in sources]
    where = files[0].parent
    rev = _git(where, "describe", "--always", "--dirty")
    if not rev:
        return CodeRevision()
    dirty = rev.endswith("-dirty")
    top = _git(where, "rev-parse", "--show-toplevel")
    if top is None:
        return CodeRevision(rev, dirty or None)
    top_path = Path(top).resolve()
    inside = [os.path.relpath(f, top_path) for f in files if f.is_relative_to(top_path)]
    if len(inside) < len(files):
        dirty = True
    if inside and not dirty:
        status = _git(top_path, "status", "--porcelain", "--untracked-files=all", "--ignored=matching", "--",
                      *inside)
        dirty = bool(status)
    if dirty and not rev.endswith("-dirty"):
        rev += "-dirty"
    return CodeRevision(rev, dirty)


def code_revision(sources: Sequence[Path]) -> str | None:
    """``git describe --always --dirty`` of the first source's repository, ``-dirty`` also when
    a measured source is not in the revision (code_identity), or None (no git, not a
    repository, or git took over 5 s)."""
    return code_identity(sources).rev


def boot_id(root: Path = ROOT) -> str | None:
    """The kernel's boot id (``/proc/sys/kernel/random/boot_id``, a UUID drawn at each boot), or
    None where it cannot be read: two runs with one boot id ran without a reboot between them."""
    return read(Path(root), "proc/sys/kernel/random/boot_id") or None


def _text(value: Any, n: int) -> str | None:
    """A string cut to a column's ``n`` characters; None for anything else or empty."""
    return value[:n] if isinstance(value, str) and value else None


class RunIdentity(TypedDict):
    """A run's identity columns (the ``runs`` table, migration 0004): see :func:`columns`."""

    kernel_release: str | None
    kernel_version: str | None
    boot_id: str | None
    microcode: str | None
    compiler: str | None
    code_rev: str | None
    code_dirty: bool | None


def columns(env: Mapping[str, Any], compiler: str | None, code: CodeRevision) -> RunIdentity:
    """The identity of a run as its ``runs`` columns (store.db; migration 0004), from the
    environment ``env`` (sysinfo.capture), the ``compiler`` that built it (the first line of
    ``cc --version``; None when nothing was built) and the sources' revision: ``kernel_release``
    and ``kernel_version`` (uname -r / -v), ``boot_id``, ``microcode`` (/proc/cpuinfo, e.g.
    "0xa0011d1"), ``compiler``, ``code_rev``, ``code_dirty``. Strings are cut to their columns.
    ``env`` is read defensively (a stored one may be damaged; migration 0004 keeps a copy of
    this function for stored ones), so any mapping will do."""
    kernel = env.get("kernel") if isinstance(env.get("kernel"), Mapping) else {}
    cpu = env.get("cpu_info") if isinstance(env.get("cpu_info"), Mapping) else {}
    return {
        "kernel_release": _text(kernel.get("release"), 255),
        "kernel_version": _text(kernel.get("version"), 255),
        "boot_id": _text(env.get("boot_id"), 64),
        "microcode": _text(cpu.get("microcode"), 40),
        "compiler": _text(compiler, 255),
        "code_rev": _text(code.rev, 80),
        "code_dirty": code.dirty,
    }
