"""Counter events: names → perf_event_attr encodings, and parsing of group reads.

Names (docs/design.md, "Counters, real or simulated"): the generic perf names below always
(perf_event_open(2) constants: PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE, PERF_TYPE_HW_CACHE);
`pfm4.py` adds every PMU-specific name libpfm4 knows when it is installed. The runner never sees
a name: it gets `type:config[:config1[:config2]]` encodings in groups, and prints the raw read()
buffers of each group, which :func:`parse_group_read` turns into counts — so the PMU path is
tested here, without a PMU, on recorded buffers.

Group read layout (read_format = PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED |
TOTAL_TIME_RUNNING, perf_event_open(2) "Reading results"):
    u64 nr; u64 time_enabled; u64 time_running; u64 value[nr];
time_running == 0 means the group was never on the PMU: *not counted*, never zero;
running < enabled means it was multiplexed: counts are scaled by enabled/running and marked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cyclebench.counters import pfm4
from cyclebench.counters.event import (
    PERF_TYPE_HARDWARE,
    PERF_TYPE_HW_CACHE,
    PERF_TYPE_RAW,
    PERF_TYPE_SOFTWARE,
    Event,
    EventError,
)
from cyclebench.model import EventCounts, Repetition

HARDWARE = {
    "cycles": 0, "cpu-cycles": 0, "instructions": 1, "cache-references": 2, "cache-misses": 3,
    "branches": 4, "branch-instructions": 4, "branch-misses": 5, "bus-cycles": 6,
    "stalled-cycles-frontend": 7, "stalled-cycles-backend": 8, "ref-cycles": 9,
}
SOFTWARE = {
    "cpu-clock": 0, "task-clock": 1, "page-faults": 2, "faults": 2, "context-switches": 3, "cs": 3,
    "cpu-migrations": 4, "migrations": 4, "minor-faults": 5, "major-faults": 6, "alignment-faults": 7,
    "emulation-faults": 8,
}
_CACHE_IDS = {"L1-dcache": 0, "L1-icache": 1, "LLC": 2, "dTLB": 3, "iTLB": 4, "branch": 5, "node": 6}
_CACHE_OPS = {"load": 0, "store": 1, "prefetch": 2}
_CACHE_RESULTS = {"": 0, "access": 0, "miss": 1}

# Events whose count is in nanoseconds rather than a number of occurrences.
TIME_EVENTS = {"cpu-clock", "task-clock"}


def _cache_event(name: str) -> Event | None:
    m = re.fullmatch(r"(L1-dcache|L1-icache|LLC|dTLB|iTLB|branch|node)-(load|store|prefetch)(?:e?s)?-?(miss|misses|)",
                     name)
    if not m:
        return None
    result = "miss" if m.group(3).startswith("miss") else ""
    config = _CACHE_IDS[m.group(1)] | (_CACHE_OPS[m.group(2)] << 8) | (_CACHE_RESULTS[result] << 16)
    return Event(name, PERF_TYPE_HW_CACHE, config)


def generic(name: str) -> Event | None:
    """The generic perf name `name`, or None."""
    if name in HARDWARE:
        return Event(name, PERF_TYPE_HARDWARE, HARDWARE[name])
    if name in SOFTWARE:
        return Event(name, PERF_TYPE_SOFTWARE, SOFTWARE[name])
    m = re.fullmatch(r"r([0-9a-fA-F]+)", name)
    if m:
        return Event(name, PERF_TYPE_RAW, int(m.group(1), 16))
    return _cache_event(name)


def generic_names() -> list[str]:
    """Every generic name, canonical spellings first (aliases left out)."""
    names = [n for n in HARDWARE if n not in ("cpu-cycles", "branch-instructions")]
    names += [n for n in SOFTWARE if n not in ("faults", "cs", "migrations")]
    for cache in _CACHE_IDS:
        for op in ("loads", "stores"):
            for suffix in ("", "-misses"):
                names.append(f"{cache}-{op}{suffix}")
    names.append("L1-icache-load-misses")
    return names


def resolve(name: str) -> Event:
    """Generic name, raw rNNNN, or (when libpfm4 is installed) any PMU-specific name.
    Raises EventError with a one-line hint."""
    ev = generic(name)
    if ev is not None:
        return ev
    ev = pfm4.encode(name)
    if ev is not None:
        return ev
    hint = "" if pfm4.available() else " (libpfm4 is not installed: only generic names; apt-get install libpfm4)"
    raise EventError(f"unknown event '{name}'{hint}; see cyclebench counters list")


def parse_events(spec: str) -> list[list[Event]]:
    """perf's -e syntax: comma-separated events; `{a,b}` makes a group read together.
    Events outside braces each form their own group."""
    groups: list[list[Event]] = []
    for m in re.finditer(r"\{([^}]*)\}|([^,{}]+)", spec):
        if m.group(1) is not None:
            names = [n.strip() for n in m.group(1).split(",") if n.strip()]
            if not names:
                raise EventError("empty event group {}")
            groups.append([resolve(n) for n in names])
        elif m.group(2).strip():
            groups.append([resolve(m.group(2).strip())])
    if not groups or re.search(r"[{}]", re.sub(r"\{[^}]*\}", "", spec)):
        raise EventError(f"cannot parse event list '{spec}'")
    return groups


def groups_argv(groups: Sequence[Sequence[Event]]) -> list[str]:
    """The runner's --events argument: groups separated by ';', events by ','."""
    return ["--events", ";".join(",".join(e.encoding for e in g) for g in groups)]


@dataclass(frozen=True)
class GroupRead:
    """One parsed group read: raw values, times in ns, and what they mean."""

    values: tuple[int, ...]
    enabled: int
    running: int

    @property
    def counted(self) -> bool:
        return self.running > 0

    @property
    def multiplexed(self) -> bool:
        return 0 < self.running < self.enabled

    def scaled(self) -> tuple[float, ...] | None:
        """Counts scaled to the whole enabled time (perf's estimate); None when not counted."""
        if not self.counted:
            return None
        f = self.enabled / self.running if self.running < self.enabled else 1.0
        return tuple(v * f for v in self.values)


def parse_group_read(buf: Sequence[int], nr_expected: int | None = None) -> GroupRead:
    """Parse one PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING read buffer
    given as its u64 words. Raises ValueError on a short or inconsistent buffer."""
    if len(buf) < 3:
        raise ValueError(f"group read of {len(buf)} words: header needs 3")
    nr, enabled, running = int(buf[0]), int(buf[1]), int(buf[2])
    if len(buf) != 3 + nr or (nr_expected is not None and nr != nr_expected):
        raise ValueError(f"group read has {len(buf)} words for nr={nr}" +
                         (f" (expected {nr_expected} events)" if nr_expected is not None else ""))
    return GroupRead(tuple(int(v) for v in buf[3:]), enabled, running)


def split_reads(words: Sequence[int], nevents: Sequence[int]) -> list[list[int]]:
    """One sample's concatenated group reads → one word list per group."""
    out, i = [], 0
    for n in nevents:
        out.append(list(words[i : i + 3 + n]))
        i += 3 + n
    return out


def per_sample_counts(reads: Sequence[Sequence[int]], nevents: Sequence[int],
                      open_errors: Sequence[str | None]) -> tuple[list[list[float] | None], list[str]]:
    """Per-event count series over the samples, scaled for multiplexing, and a status per event.

    reads: per sample, the runner's concatenated group reads. The enabled/running times of a
    group keep running across resets (only values reset), so each sample is scaled by its own
    increments of them. Returns (series per event — None when not counted —, status per event:
    "counted", "multiplexed (counted x% of the time)", "not counted", or "not supported: <why>").
    """
    series: list[list[float] | None] = []
    status: list[str] = []
    for gi, n in enumerate(nevents):
        if open_errors[gi]:
            series += [None] * n
            status += [f"not supported: {open_errors[gi]}"] * n
            continue
        vals: list[list[float]] = [[] for _ in range(n)]
        prev_en = prev_run = 0
        run_total = en_total = 0
        counted = True
        for words in reads:
            g = parse_group_read(split_reads(words, nevents)[gi], n)
            d_en, d_run = g.enabled - prev_en, g.running - prev_run
            prev_en, prev_run = g.enabled, g.running
            en_total += d_en
            run_total += d_run
            if d_run <= 0:
                counted = False
                break
            f = d_en / d_run if d_run < d_en else 1.0
            for e in range(n):
                vals[e].append(g.values[e] * f)
        if not counted or not reads:
            series += [None] * n
            status += ["not counted"] * n
            continue
        series += vals
        frac = run_total / en_total if en_total else 1.0
        status += [f"multiplexed (counted {100 * frac:.0f}% of the time)" if frac < 0.999 else "counted"] * n
    return series, status


def per_run_counts(runs: Sequence[Repetition], groups: Sequence[Sequence[Event]]) -> list[EventCounts]:
    """Per-event counts over whole runs of a command (the stat launcher's records: per group
    its raw read in ``groups``, its ``open_errors`` and ``user_only``), each read scaled for
    multiplexing. One dict per event, in group order: name; unit ("ms" for TIME_EVENTS, read
    in ns, else "count"); values, one per run (None: not counted there); errors, why for each
    run without a read of the event's group; enabled and running ns summed over the runs that
    read it; user_only (model.EventCounts). Raises ValueError on a short or inconsistent buffer."""
    out: list[EventCounts] = []
    for gi, group in enumerate(groups):
        vals: list[list[float | None]] = [[] for _ in group]
        errors: list[str] = []
        enabled = running = 0
        user_only = False
        for r in runs:
            err = (r.get("open_errors") or [None] * len(groups))[gi]
            words = r["groups"][gi] if gi < len(r.get("groups", [])) else []
            if err or not words:
                errors.append(err or "no group read")
                for v in vals:
                    v.append(None)
                continue
            g = parse_group_read(words, len(group))
            user_only |= bool((r.get("user_only") or [False] * len(groups))[gi])
            enabled += g.enabled
            running += g.running
            scaled = g.scaled()
            for ei in range(len(group)):
                vals[ei].append(None if scaled is None else scaled[ei])
        for ei, ev in enumerate(group):
            values, unit = vals[ei], "count"
            if ev.name in TIME_EVENTS:  # nanoseconds
                values, unit = [None if v is None else v / 1e6 for v in values], "ms"
            out.append(EventCounts(name=ev.name, unit=unit, values=values, errors=errors, enabled=enabled,
                                   running=running, user_only=user_only))
    return out


def catalogue() -> list[tuple[str, Event]]:
    """(source, event) for every name we know: the generic perf names, then every libpfm4
    event of the PMUs it detects here (source = the PMU's name)."""
    out: list[tuple[str, Event]] = []
    for name in generic_names():
        ev = generic(name)
        if ev is not None:
            out.append(("generic: software" if ev.type == PERF_TYPE_SOFTWARE else "generic: hardware", ev))
    for pmu, evs in pfm4.events().items():
        if pmu in ("perf", "perf_raw"):
            continue  # libpfm4's copy of the generic names
        for name, _desc in evs:
            ev = pfm4.encode(f"{pmu}::{name}")
            if ev is not None:
                out.append((pmu, ev))
    return out


def probe_all(runner: object, events: Sequence[Event], chunk: int = 8) -> list[str | None]:
    """Try to open every event alone (tried, not assumed): None where it opens, else why."""
    errors: list[str | None] = []
    for i in range(0, len(events), chunk):
        errors += runner.probe([[e] for e in events[i : i + chunk]])  # type: ignore[attr-defined]
    return errors
