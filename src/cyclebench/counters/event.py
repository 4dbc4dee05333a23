"""One counter event and its perf_event_attr encoding (perf_event_open(2)); no parsing here."""

from __future__ import annotations

from dataclasses import dataclass

PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE, PERF_TYPE_TRACEPOINT, PERF_TYPE_HW_CACHE, PERF_TYPE_RAW = 0, 1, 2, 3, 4


class EventError(ValueError):
    """An event name nobody knows, or a malformed -e list."""


@dataclass(frozen=True)
class Event:
    """One event: its name as the user wrote it and its perf_event_attr encoding."""

    name: str
    type: int
    config: int
    config1: int = 0
    config2: int = 0

    @property
    def encoding(self) -> str:
        return f"{self.type}:{self.config:#x}:{self.config1:#x}:{self.config2:#x}"

    @property
    def is_hardware(self) -> bool:
        return self.type not in (PERF_TYPE_SOFTWARE, PERF_TYPE_TRACEPOINT)
