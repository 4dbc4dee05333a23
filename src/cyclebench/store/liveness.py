"""Is a run marked 'running' still running? One whose process died must not stay 'running'
forever.

A run records where it runs (``host_id``, ``pid``, ``pid_start``: when that process started)
and beats (``heartbeat_at``, refreshed by the process that measures it). A reader decides,
without writing. On the run's own host the process itself answers: the run is ``abandoned``
exactly when its pid is gone or now belongs to another process (a different start time in
/proc/PID/stat) — a process stopped by SIGSTOP or Ctrl-Z, or starved on a loaded machine,
beats no more yet is alive and will go on. Pids of another host mean nothing here: for those
(e.g. a shared PostgreSQL) a last sign of life older than ``STALE_AFTER`` seconds is the rule.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import platformdirs

RUNNING, ABANDONED = "running", "abandoned"
HEARTBEAT_EVERY = 15.0  # seconds between two heartbeats of a running run
STALE_AFTER = 60.0  # seconds without a heartbeat after which a running run is abandoned

_MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")


def parse_time(value: str | None) -> dt.datetime | None:
    """A stored ISO timestamp (UTC when it carries no zone); None if absent or unreadable."""
    if not value:
        return None
    try:
        t = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)


def run_status(run: Mapping[str, Any], *, now: dt.datetime, host_id: str | None,
               pid_alive: Callable[[int, int | None], bool], stale_after: float = STALE_AFTER) -> str:
    """The status to show for ``run`` (a runs row): its stored status unless it is 'running'
    and its process is gone. On this host (``host_id`` equal, a pid stored) that is all that
    counts: ``pid_alive(pid, pid_start)`` False — however old its heartbeat, since a stopped
    process (SIGSTOP, Ctrl-Z) resumes where it was. Elsewhere: a last sign of life (heartbeat,
    else start) older than ``stale_after`` s. Pure: ``now``, this host's id and the process test
    are given."""
    status = run.get("status")
    if status != RUNNING:
        return str(status)
    pid = run.get("pid")
    if host_id is not None and run.get("host_id") == host_id and isinstance(pid, int):
        start = run.get("pid_start")
        return RUNNING if pid_alive(pid, start if isinstance(start, int) else None) else ABANDONED
    last = parse_time(run.get("heartbeat_at")) or parse_time(run.get("started_at"))
    if last is None or (now - last).total_seconds() > stale_after:
        return ABANDONED
    return RUNNING


def last_sign_of_life(run: Mapping[str, Any]) -> str | None:
    return run.get("heartbeat_at") or run.get("started_at")


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (field 3, the state, first); None
    if unreadable. The name is in parentheses and may itself hold ") ": cut at the last one."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2:].split()


def process_start(pid: int) -> int | None:
    """When process ``pid`` started: field 22 of /proc/PID/stat, in clock ticks after boot
    (proc(5)); None where there is no /proc. Together with the boot it names one process: a pid
    is reused, a (pid, start) pair is not within a boot."""
    fields = _stat_fields(pid)
    try:
        return int(fields[19]) if fields is not None else None  # fields[0] is field 3
    except (IndexError, ValueError):
        return None


def pid_alive(pid: int, start: int | None = None) -> bool:
    """Whether process ``pid`` exists on this host (a zombie counts as gone) and, when ``start``
    is given, is the process that started then (process_start) and not a later one given the
    same pid. A stopped process (state T) is alive."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    except OSError:
        return False
    fields = _stat_fields(pid)
    if fields is None:
        return True  # no /proc: the pid's existence is all there is to know
    if fields[:1] in (["Z"], ["X"]):
        return False
    return start is None or process_start(pid) == start


def _machine_id() -> str:
    for f in _MACHINE_ID_FILES:
        try:
            value = Path(f).read_text().strip()
        except OSError:
            continue
        if value:
            return value
    return _generated_id()


def _generated_id() -> str:
    """A random id kept in the user's data directory, for hosts without a machine-id."""
    path = Path(platformdirs.user_data_dir("cyclebench")) / "host-id"
    try:
        value = path.read_text().strip()
        if value:
            return value
    except OSError:
        pass
    value = uuid.uuid4().hex
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".host-id.{os.getpid()}")
        tmp.write_text(value + "\n")
        os.link(tmp, path)  # the first writer wins; everyone then reads its id
        tmp.unlink()
    except FileExistsError:
        tmp.unlink(missing_ok=True)
        return path.read_text().strip() or value
    except OSError:
        return value  # unwritable: an id for this process only (its pids are then never trusted elsewhere)
    return value


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


_HOST_ID: str | None = None


def host_id() -> str:
    """This host's id as stored in runs.host_id: stable across reboots, the same for every
    process that shares a pid namespace on this machine (a container gets its own: pids are
    only compared where they mean the same process). A hash: the machine-id is not exported."""
    global _HOST_ID
    if _HOST_ID is None:
        raw = f"cyclebench:{_machine_id()}:{_pid_namespace()}"
        _HOST_ID = hashlib.sha256(raw.encode()).hexdigest()[:32]
    return _HOST_ID
