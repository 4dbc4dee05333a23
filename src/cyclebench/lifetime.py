"""Children die with cyclebench: the one preexec_fn every child process gets (the runner, perf,
valgrind, statexec, the compiler), so SIGKILL or the OOM killer of the CLI leaves nothing spinning
(audit D1: a hung benchmark ran on at 100% of its pinned CPU; D15/case 170: cc1 after a kill
mid-build). Imports nothing of the project: every room may use it.
"""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Callable
from typing import Any

_PR_SET_PDEATHSIG = 1
_libc: Any = None


def die_with_parent() -> Callable[[], None]:
    """A ``preexec_fn`` that makes the child get SIGKILL when this process dies, whatever kills
    it (SIGKILL and the OOM killer included: no handler runs then). prctl(2) PR_SET_PDEATHSIG
    fires when the forking *thread* exits; run_child waits in that thread, so it outlives the
    child. The getppid check closes the race of a parent that died before prctl ran."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    prctl, parent = _libc.prctl, os.getpid()

    def pre() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(137)

    return pre
