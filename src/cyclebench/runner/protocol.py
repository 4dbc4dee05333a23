"""The runner protocol: JSON lines on the runner's stdout, and the one classifier that turns
how a child ended (time limit, resource limit, signal, exit) into an Outcome status.
"""

from __future__ import annotations

import json
import signal
from typing import cast

from cyclebench.model import CRASHED, FAILED, TIMEOUT, RunnerLine
from cyclebench.runner.child import Child


def parse_lines(text: str) -> list[RunnerLine]:
    """The JSON objects of the runner's stdout, one a line (engine/runner.c's header), in order;
    blank lines, a torn line and JSON that is not an object are left out. Each is read as a
    model.RunnerLine: a reader narrows on its ``type`` to the record of that line."""
    lines: list[RunnerLine] = []
    for raw in text.splitlines():
        raw = raw.strip()
        if not raw:
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError:
            continue  # a torn last line from a crash; the status says why
        if isinstance(obj, dict):
            lines.append(cast(RunnerLine, obj))
    return lines


def signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def last_stderr_line(stderr: str) -> str:
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""




def classify(child: Child, timeout: float, what: str = "") -> tuple[str, str] | None:
    """(status, reason) when the child's end decides its outcome — a resource limit (failed),
    the time limit (timeout), a signal (crashed, with the last stderr line) — else None: its
    protocol lines decide. ``what`` is appended to the timeout reason (e.g. " under callgrind")."""
    if child.limit:
        return FAILED, child.limit
    if child.timed_out:
        return TIMEOUT, f"timed out after {timeout:g} s{what} (killed)"
    if child.returncode < 0:
        tail = last_stderr_line(child.stderr)
        return CRASHED, f"{signal_name(-child.returncode)}{what}" + (f" ({tail})" if tail else "")
    return None
