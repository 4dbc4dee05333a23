"""Counters: names, the group-read parser on recorded buffers, and -e on this machine.

Here the parts that need no compiler (parsers, statistics, fixture trees); the rest, which
builds and runs the engine, is in tests/engine or tests/commands under the same name."""

from __future__ import annotations

import pytest

from cyclebench import counters
from cyclebench.counters import pfm4
from cyclebench.stats.result import derived


def test_event_syntax_and_names() -> None:
    groups = counters.parse_events("task-clock,{cycles,instructions},L1-icache-load-misses")
    assert [[e.name for e in g] for g in groups] == [["task-clock"], ["cycles", "instructions"],
                                                      ["L1-icache-load-misses"]]
    icache = groups[2][0]
    assert (icache.type, icache.config) == (counters.PERF_TYPE_HW_CACHE, 1 | (0 << 8) | (1 << 16))
    assert counters.resolve("r00c0").config == 0xC0
    with pytest.raises(counters.EventError, match="unknown event 'nope'"):
        counters.parse_events("nope")
    with pytest.raises(counters.EventError):
        counters.parse_events("{cycles")


def test_group_reads_recorded_buffers() -> None:
    # two samples of a 2-event group: enabled/running keep accumulating across resets
    nevents, ok = [2], [None]
    full = [[2, 1000, 1000, 50, 7], [2, 3000, 3000, 110, 15]]
    series, status = counters.per_sample_counts(full, nevents, ok)
    assert series == [[50, 110], [7, 15]] and status == ["counted", "counted"]
    # multiplexed: the second sample ran 1000 of its 2000 ns: counts scale ×2
    mux = [[2, 1000, 1000, 50, 7], [2, 3000, 2000, 60, 8]]
    series, status = counters.per_sample_counts(mux, nevents, ok)
    assert series == [[50, 120], [7, 16]] and status[0].startswith("multiplexed (counted 67%")
    # never on the PMU: "not counted", never 0
    none = [[2, 1000, 0, 0, 0], [2, 2000, 0, 0, 0]]
    series, status = counters.per_sample_counts(none, nevents, ok)
    assert series == [None, None] and status == ["not counted", "not counted"]
    # a group that could not be opened
    series, status = counters.per_sample_counts([[0, 0, 0, 0, 0]], nevents, ["No such file or directory"])
    assert status == ["not supported: No such file or directory"] * 2
    with pytest.raises(ValueError):
        counters.parse_group_read([3, 1, 1, 5])  # nr=3 but one value


def test_derived_metrics() -> None:
    d = derived({"cycles": 100.0, "instructions": 250.0, "branches": 50.0, "branch-misses": 5.0,
                          "L1-icache-load-misses": 2.5})
    assert d["IPC"] == 2.5 and d["branch-miss rate"] == 0.1 and d["L1-icache-load-misses MPKI"] == 10.0


@pytest.mark.skipif(not pfm4.available(), reason="libpfm4 not installed (apt-get install libpfm4)")
def test_libpfm4_names() -> None:
    evs = pfm4.events()
    assert evs, "libpfm4 detected no PMU"
    pmu, names = next((p, n) for p, n in evs.items() if n)
    encoded = [pfm4.encode(f"{pmu}::{name}") for name, _ in names]
    assert any(e is not None for e in encoded)
    assert pfm4.encode("no_such_event_at_all") is None
