"""Is a run marked 'running' still running? (audit D6)

A run records where it runs (``host_id``, ``pid``) and beats (``heartbeat_at``, refreshed by
the process that measures it). A reader decides, without writing: a run whose last sign of
life is older than ``STALE_AFTER`` seconds, or whose process is gone on this very host, is
``abandoned`` (killed, power lost, a full disk…). Pids of another host mean nothing here:
for those (e.g. a shared PostgreSQL) only the heartbeat counts.
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
               pid_alive: Callable[[int], bool], stale_after: float = STALE_AFTER) -> str:
    """The status to show for ``run`` (a runs row): its stored status unless it is 'running'
    and its process is gone: on this host (``host_id`` equal) a pid that ``pid_alive`` says is
    dead, anywhere a last sign of life (heartbeat, else start) older than ``stale_after`` s.
    Pure: ``now``, this host's id and the pid test are given."""
    status = run.get("status")
    if status != RUNNING:
        return str(status)
    pid = run.get("pid")
    if host_id is not None and run.get("host_id") == host_id and isinstance(pid, int) and not pid_alive(pid):
        return ABANDONED
    last = parse_time(run.get("heartbeat_at")) or parse_time(run.get("started_at"))
    if last is None or (now - last).total_seconds() > stale_after:
        return ABANDONED
    return RUNNING


def last_sign_of_life(run: Mapping[str, Any]) -> str | None:
    return run.get("heartbeat_at") or run.get("started_at")


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (a zombie counts as gone)."""
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
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2:][:1] not in ("Z", "X")


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
