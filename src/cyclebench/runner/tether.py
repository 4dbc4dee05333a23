"""A process that dies with its callers across ssh (docs/fleet.md): a remote run outlives nothing
that started it.

Ansible runs a remote command without a terminal: when the controller is interrupted or its
ssh connection drops, sshd closes the session but signals nothing to the processes it started
(no pty, no SIGHUP; sshd(8)), so a remote cyclebench would measure on, unseen, and keep the
host busy. A tethered process remembers its ancestors (pid and start time, /proc/PID/stat
fields 4 and 22, proc(5)) and, when one of them is gone — sshd's session process ends with
the connection, the command module's Python with Ansible's worker — sends itself SIGTERM,
which cyclebench handles like Ctrl-C: its runners are killed (they die with it:
lifetime.die_with_parent) and what it stored stays.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

POLL_S = 0.5


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks since boot) of ``pid``, None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), int(fields[19])


def ancestors(pid: int | None = None) -> list[tuple[int, int]]:
    """(pid, start time) of every ancestor of ``pid`` (default: this process) below init."""
    out: list[tuple[int, int]] = []
    st = _stat(pid if pid is not None else os.getpid())
    while st is not None and st[0] > 1:
        parent = _stat(st[0])
        if parent is None:
            break
        out.append((st[0], parent[1]))
        st = parent
    return out


def lost(chain: list[tuple[int, int]]) -> int | None:
    """The first pid of ``chain`` that no longer runs (or is another process now), else None."""
    for pid, start in chain:
        st = _stat(pid)
        if st is None or st[1] != start:
            return pid
    return None


CHAIN_ENV = "CYCLEBENCH_TETHER"


def inherited(value: str | None) -> list[tuple[int, int]]:
    """The chain ``$CYCLEBENCH_TETHER`` carries ('pid:start,...'): recorded by a program that then
    became this process (execve keeps the pid and the parents), before this one's slow start —
    importing cyclebench takes seconds on a loaded host, and an ancestor gone by then would never
    be missed (fleet/bootstrap.py sets it). Unreadable entries are left out."""
    out = []
    for item in (value or "").split(","):
        pid, _, start = item.partition(":")
        if pid.isdigit() and start.isdigit():
            out.append((int(pid), int(start)))
    return out


def tether(poll: float = POLL_S, sig: int = signal.SIGTERM,
           chain: list[tuple[int, int]] | None = None) -> threading.Event:
    """Start a daemon thread that sends this process ``sig`` once an ancestor it has now (or one
    of ``chain``, ancestors recorded earlier) is gone; returns the Event that stops the watch."""
    now = ancestors()
    chain, stop = [*(chain or []), *(a for a in now if a not in (chain or []))], threading.Event()

    def watch() -> None:
        while not stop.wait(poll):
            if lost(chain) is not None:
                os.kill(os.getpid(), sig)
                return

    threading.Thread(target=watch, name="cyclebench-tether", daemon=True).start()
    return stop
