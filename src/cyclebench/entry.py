"""The ``cyclebench`` program (pyproject's console script, and ``python -m cyclebench``): the CLI
of cli.py behind what no command can catch itself.

* Ctrl-C while Python imports the CLI (numpy, scipy, SQLAlchemy, rich, click: 0.7 s to 2 s on
  a 2-core VM, longer under load) ends in one line and exit 130 (128 + SIGINT, as a shell
  reports it), not a 55-line KeyboardInterrupt traceback: this module imports nothing heavy
  before its ``try``.
* stdout closed (``>&-``): refused at once in one line, exit 2, before anything is opened, so
  fd 1 is never reused by the database or a compiler's output. A closed stdin or stderr gets
  /dev/null for the same reason.
* stdout that cannot be written (``>/dev/full``, a full disk, a quota): one line on stderr, exit 2;
  what was measured before is already in the database.
* stdout a pipe whose reader has gone (``cyclebench show 1 | head -3``): a normal end, exit 0 and
  nothing more said, as a filter of coreutils ends on SIGPIPE (pipe(7): EPIPE). click and rich
  would each turn the BrokenPipeError into exit 1, so it is raised as StdoutClosed, neither's.
"""

# no `from __future__ import annotations`: it imports the __future__ module, the one import before the
# handler below that Python has not made already, where a Ctrl-C was once a traceback (annotations
# here are valid at run time from 3.10 on)
import _signal  # signal's C half: `import signal` imports enum, milliseconds in which a Ctrl-C was a traceback
import os
import sys


def _interrupted_early(_signum: int, _frame: object) -> None:
    """Ctrl-C before a command runs (this module's own imports, once 20 ms into `runs` here; the
    CLI's imports; click's parsing, where click itself would print "Aborted!" and exit 1): one
    line and 130 at once (nothing is open yet, nothing to flush). cli's invoke puts Python's
    KeyboardInterrupt back when the command starts, so what it measured is kept and said."""
    os.write(2, b"cyclebench: interrupted\n")
    os._exit(130)


_interrupted_early.cyclebench_early = True  # type: ignore[attr-defined]  # how cli knows it (no import back)


# the program itself only (its console script, or python -m cyclebench), never a library's importer
if (os.path.basename(sys.argv[0]) == "cyclebench" or sys.argv[0].endswith(os.path.join("cyclebench", "__main__.py"))) \
        and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, _interrupted_early)

import contextlib  # noqa: E402
import errno  # noqa: E402
import gc  # noqa: E402
import io  # noqa: E402
import signal  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any, NoReturn  # noqa: E402

INTERRUPTED = 130  # 128 + SIGINT


class StdoutError(OSError):
    """A write to stdout failed (ENOSPC, EIO, EDQUOT, …): told apart from any other OSError."""


class StdoutClosed(Exception):
    """The reader of stdout has gone (EPIPE): not an OSError, so that neither click nor rich
    turns it into exit 1 on the way out."""


class _Stdout(io.FileIO):
    """fd 1, its write errors raised as StdoutError, EPIPE as StdoutClosed (a failed flush
    leaves no trace to ask later)."""

    def write(self, b: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        try:
            return super().write(b)  # type: ignore[return-value]
        except OSError as e:
            if e.errno == errno.EPIPE:
                raise StdoutClosed() from None
            raise StdoutError(e.errno, e.strerror) from None


def _say(message: str) -> None:
    """One line on stderr, without importing anything (rich may not be imported yet)."""
    with contextlib.suppress(OSError):  # stderr gone too: the exit status still says it
        os.write(2, f"cyclebench: {message}\n".encode(errors="replace"))


def _exit(code: int, message: str) -> NoReturn:
    _say(message)
    sys.exit(code)


def _stdout_failed(e: OSError) -> NoReturn:
    sys.stdout = None  # type: ignore[assignment]  (nothing to flush at exit: no "Exception ignored")
    _exit(2, f"error: cannot write to stdout: {e.strerror} (results already measured are in the database)")


def _stdout_closed() -> NoReturn:
    """The reader went: what was left to print is dropped (nothing to flush at exit) and fd 1
    becomes /dev/null, so nothing written later (a child's output) meets EPIPE again."""
    sys.stdout = None  # type: ignore[assignment]
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    sys.exit(0)


def _standard_fds() -> bool:
    """Give a closed fd 0, 1 or 2 /dev/null, so the next file opened (the database, a build's
    output) never becomes a standard stream; True when stdout was closed."""
    closed = False
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed |= fd == 1
            new = os.open(os.devnull, os.O_RDWR)  # the lowest free fd: this one
            if new != fd:
                os.dup2(new, fd)
                os.close(new)
    return closed


def _watch_stdout() -> None:
    """sys.stdout writing through _Stdout, as it was (encoding, errors, line buffering)."""
    old = sys.stdout
    if old is None:
        return
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(_Stdout(1, "w", closefd=False)), encoding=old.encoding,
                                  errors=old.errors, line_buffering=old.line_buffering,
                                  write_through=getattr(old, "write_through", False))


def _unraisable(default: Callable[[Any], object]) -> None:
    """A Ctrl-C that lands where Python cannot raise it (importlib's module-lock callback while
    an import runs, a __del__) is "Exception ignored" with a traceback, and lost: it is raised
    again 1 ms later from SIGALRM, once the hook has returned, in ordinary code (exit 130, one
    line); raised in the hook, it would be ignored again. Anything else goes to ``default``,
    Python's own."""

    def again(*_: object) -> None:
        raise KeyboardInterrupt

    def unraisable(u: object) -> None:
        if isinstance(getattr(u, "exc_value", None), KeyboardInterrupt):
            signal.signal(signal.SIGALRM, again)
            signal.setitimer(signal.ITIMER_REAL, 0.001)
            return
        default(u)

    sys.unraisablehook = unraisable


class _OneBlasThread:
    """A meta path finder: numpy's core extension loaded with OPENBLAS_NUM_THREADS=1 when the
    user set no value, and the variable gone again once it is loaded. Its OpenBLAS (a library
    the extension links) starts a thread per CPU as it loads, and they spin waiting for work:
    `python -c "import numpy"` took 0.09 s wall and 0.17 s of CPU here (2-vCPU AMD EPYC guest),
    0.09 s of CPU with one thread; `compare` of +30 cycles 0.81 → 0.65 s of CPU (docs/architecture.md,
    "Imports where used"). cyclebench multiplies no matrices. Children (a runner, a command `stat`
    times) never see the variable: what they run is the user's."""

    VAR = "OPENBLAS_NUM_THREADS"
    CORE = ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath")  # numpy 2, numpy 1

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in self.CORE or self.VAR in os.environ:
            return None
        from importlib.machinery import ExtensionFileLoader, PathFinder

        spec = PathFinder.find_spec(name, path, target)
        if spec is None or type(spec.loader) is not ExtensionFileLoader:
            return spec
        var = self.VAR

        class Loader(ExtensionFileLoader):
            def create_module(self, spec: Any) -> Any:  # dlopen(3): OpenBLAS's constructor reads the variable
                os.environ[var] = "1"
                try:
                    return super().create_module(spec)
                finally:
                    os.environ.pop(var, None)

        spec.loader = Loader(spec.loader.name, spec.loader.path)
        return spec


def _from_ctrl_c(e: BaseException) -> bool:
    """A Ctrl-C that Python raised again as the cause of another exception: Python 3.11 wraps
    what a descriptor's __set_name__ raises in RuntimeError (a Ctrl-C landing while a class body
    of the standard library, ipaddress's, is made during an import). PEP 487; 3.12 no longer wraps."""
    seen: set[int] = set()
    cause: BaseException | None = e
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__
    return False


def _interrupted() -> NoReturn:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C does not interrupt the message
    with contextlib.suppress(OSError, ValueError):
        if sys.stdout is not None:
            sys.stdout.flush()  # what was printed before stays printed
    _exit(INTERRUPTED, "interrupted")


def main() -> None:
    """Run the CLI; exit 130 on Ctrl-C at any moment, 2 when stdout is closed or cannot be written."""
    try:
        _unraisable(sys.unraisablehook)
        if _standard_fds():
            _exit(2, "error: stdout is closed: give it a file or /dev/null (cyclebench ... >/dev/null)")
        _watch_stdout()
        # Importing the CLI and what a command needs (SQLAlchemy, rich: some 10^5 objects) at the
        # default threshold of 700 allocations runs the cyclic collector dozens of times, full
        # passes included: 60 ms of `cyclebench runs`' 0.40 s here (bench/startup.py). Every
        # 10,000 allocations, it costs a few ms; cyclebench makes few reference cycles.
        gc.set_threshold(10_000, 10, 10)
        sys.meta_path.insert(0, _OneBlasThread())
        from cyclebench.cli import main as cli

        cli(prog_name="cyclebench")
    except KeyboardInterrupt:
        _interrupted()
    except StdoutError as e:
        _stdout_failed(e)
    except StdoutClosed:
        _stdout_closed()
    except Exception as e:  # after the two above: both are Exceptions
        if not _from_ctrl_c(e):
            raise
        _interrupted()
    finally:
        # Python's finalization runs the cyclic collector again and again while it tears the modules
        # down, over every object left: 0.13-0.2 s after a `compare` of 0.8 s here, 0.05 s after `runs`.
        # One collection now finalizes what only a collection frees (a database connection in a
        # cycle: its WAL checkpointed, -wal and -shm removed); frozen after it, the rest is freed by
        # reference count as before and the later collections skip it (gc.freeze)
        try:
            gc.collect()
            gc.freeze()
        except KeyboardInterrupt:  # Ctrl-C in those 30 ms: still one line and 130
            _interrupted()
        try:
            if sys.stdout is not None:
                sys.stdout.flush()
        except StdoutError as e:
            _stdout_failed(e)
        except StdoutClosed:
            _stdout_closed()
