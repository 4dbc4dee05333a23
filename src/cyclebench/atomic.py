"""Output files written whole or not at all.

A file cyclebench writes (``--json``, ``-o``, ``--plot``, ``--csv``, ``gen -o``) is first
written to a temporary file in the target's directory, flushed to disk and then renamed over
the target (rename(2): "If newpath already exists, it will be atomically replaced", within one
file system, hence the same directory). On a full disk or any other error the temporary file is
removed and the old file, if there was one, stays as it was; the OSError raised names the
target, so the CLI turns it into one line (cli.py).

Two cases are written in place instead: a target that exists and is not a regular file
(``/dev/null``, ``/dev/stdout``, a FIFO: renaming over it would replace the device node), and
a regular file in a directory where no temporary file may be created (the file writable, its
directory not), where in-place is the only write there is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["replacing", "write_atomic"]


def _target(path: Path) -> tuple[Path, os.stat_result | None]:
    """The file a write of ``path`` really changes (symlinks followed, so a link to a file
    keeps pointing to the new one) and its stat (None: it does not exist)."""
    real = Path(os.path.realpath(path))
    try:
        return real, os.stat(real)
    except FileNotFoundError:
        return real, None


def _named(e: OSError, path: Path) -> OSError:
    """``e`` with ``path`` as its file name (an ENOSPC from write(2) names none)."""
    return OSError(e.errno, e.strerror or str(e), str(path))


def _new_mode() -> int:
    """0666 less the umask: what open(2) would give a new file (mkstemp gives 0600)."""
    umask = os.umask(0o022)  # read by setting; put back at once
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def _in_place(path: Path) -> Iterator[Path]:
    try:
        yield path
    except OSError as e:
        raise _named(e, path) from None


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path (same directory, same suffix, so tools that go by the suffix, like
    matplotlib's savefig, pick the same format) to write instead of ``path``; when the block ends
    without an exception it is flushed to disk and renamed over ``path`` (with the old file's
    mode and, where allowed, owner; 0666 less the umask for a new one). On an exception it is removed and ``path`` is
    untouched. Raises OSError naming ``path``. Not-regular targets: ``path`` itself is given."""
    real, st = _target(path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        with _in_place(path) as p:  # a device or FIFO: written through, never replaced
            yield p
        return
    try:
        fd, name = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp" + real.suffix, dir=real.parent)
    except OSError as e:
        if st is not None and e.errno in (errno.EACCES, errno.EPERM) and os.access(real, os.W_OK):
            with _in_place(path) as p:  # the file is writable, its directory is not: in place is the only way
                yield p
            return
        raise _named(e, path) from None
    tmp = Path(name)
    try:
        try:
            os.fchmod(fd, stat.S_IMODE(st.st_mode) if st is not None else _new_mode())
            if st is not None and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                with contextlib.suppress(PermissionError):  # only root may give a file away
                    os.fchown(fd, st.st_uid, st.st_gid)
        finally:
            os.close(fd)
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())  # the data on disk before the name points to it
        os.replace(tmp, real)
    except OSError as e:
        raise _named(e, path) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` whole or not at all (see :func:`replacing`).
    Raises OSError naming ``path`` (ENOSPC, EACCES, ENOENT for a missing directory, …)."""
    raw = data.encode() if isinstance(data, str) else data
    with replacing(path) as tmp, open(tmp, "wb") as f:
        f.write(raw)
