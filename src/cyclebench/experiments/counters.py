"""`counters sweep`'s design: every countable event (or every raw code of a range) tried on one
benchmark, a group of events per runner invocation, each event's count per op.

Evans's "try all counters" (docs/references.md#malloc-profiling-freebsd-2008): the events worth
looking at are found by counting all of them, not guessed. A group of ``group_size`` events is
read together in one invocation of 8 rounds (fewer events a group: no multiplexing, perf_event_open(2)).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from cyclebench.build import BuildError
from cyclebench.build import build as build_binary
from cyclebench.counters.event import Event
from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.options import BuildOptions, RunnerOptions
from cyclebench.experiments.progress import SILENT, Progress
from cyclebench.runner import Runner
from cyclebench.runner.plan import MeasureOptions

# Each group's invocation: 8 rounds of 20 ms (sweeping 200 events in groups of 1 takes ~40 s).
SWEEP_OPTIONS = MeasureOptions(min_time=0.02, repeat=8, warmup=0.005)


@dataclass(frozen=True)
class SweptEvent:
    """One event of a sweep: its name, its encoding (the raw config, or the perf name's), whether
    it could be opened here (else ``error``, perf_event_open's reason) and its count per op
    (None: not countable, or counted nothing usable)."""

    event: str
    encoding: str
    countable: bool
    error: str | None
    per_op: float | None

    def to_json(self) -> dict[str, object]:
        """The event as `counters sweep --json` writes it (the keys are the fields)."""
        return asdict(self)


@dataclass(frozen=True)
class Sweep:
    """A whole sweep: the benchmark and parameter it ran (the first one when none was given),
    whether the events were raw codes, and every event tried, in the catalogue's order."""

    bench: str
    param: int | None
    raw: bool
    events: tuple[SweptEvent, ...]

    @property
    def countable(self) -> int:
        """How many of the events could be opened here."""
        return sum(e.countable for e in self.events)

    def shown(self, min_per_op: float) -> list[SweptEvent]:
        """The events that counted at least ``min_per_op`` per op, largest first."""
        return sorted((e for e in self.events if e.per_op is not None and abs(e.per_op) >= min_per_op),
                      key=lambda e: -abs(e.per_op or 0.0))


def suite_runner(build: BuildOptions | None = None, pin: RunnerOptions | None = None) -> Runner:
    """The runner of the build asked for (the built-in suite by default), on the CPU asked for or
    the quietest one. Raises ExperimentError when it does not build (the compiler's first line)."""
    from cyclebench.env import sysinfo

    build, pin = build or BuildOptions(), pin or RunnerOptions()
    try:
        binary = build_binary(build.spec())
    except BuildError as e:
        raise ExperimentError(str(e)) from None
    cpu = pin.cpu if pin.cpu is not None else sysinfo.choose_cpu()
    return Runner(binary.path, cpu, fifo=pin.fifo, max_rss=pin.max_rss)


def raw_events(text: str, umask: int) -> list[Event]:
    """The codes of ``text`` (``0x00-0xff``, ``0x3c,0xc0``) as events of this CPU's own PMU, each
    with ``umask``, encoded from the PMU's sysfs format (counters/raw.py). Raises ExperimentError
    for a bad range or when no core PMU is exposed (a VM without PMU passthrough)."""
    from cyclebench.counters import EventError, raw

    try:
        codes = raw.parse_range(text)
        pmu = raw.core_pmu()
        if pmu is None:
            raise EventError(f"--raw needs the CPU's own PMU, and none is exposed here (no cpu or armv8 PMU "
                             f"under /{raw.DEVICES}: a VM without PMU passthrough); without --raw the named "
                             "software events are swept")
        return raw.raw_events(pmu, codes, umask)
    except EventError as e:
        raise ExperimentError(str(e)) from None


@dataclass(frozen=True)
class Probed:
    """The events of a sweep opened once on ``bench`` (``param``: the one given, else its first):
    ``errors[i]`` is perf_event_open's reason ``events[i]`` cannot be counted here, or None."""

    bench: str
    param: int | None
    raw: bool
    events: tuple[Event, ...]
    errors: tuple[str | None, ...]

    @property
    def countable(self) -> list[Event]:
        return [e for e, x in zip(self.events, self.errors, strict=True) if x is None]

    def invocations(self, group_size: int) -> int:
        """Runner invocations a sweep of the countable events in groups of ``group_size`` takes."""
        return -(-len(self.countable) // group_size)


def probe(runner: Runner, bench: str, param: int | None, events: Sequence[Event] | None) -> Probed:
    """Open every event of ``events`` (None: the catalogue of named events, counters/events.py)
    once. Raises ExperimentError for a benchmark the runner does not have."""
    from cyclebench import counters

    names = {b.name: b for b in runner.list()}
    if bench not in names:
        raise ExperimentError(f"unknown benchmark '{bench}' (see cyclebench run --list)")
    if names[bench].params and param is None:
        param = names[bench].params[0]
    cat = tuple(events) if events is not None else tuple(e for _, e in counters.catalogue())
    return Probed(bench, param, events is not None, cat, tuple(counters.probe_all(runner, cat)))


def sweep(runner: Runner, probed: Probed, group_size: int, progress: Progress = SILENT) -> Sweep:
    """Count the countable events of ``probed`` ``group_size`` at a time, one runner invocation
    (SWEEP_OPTIONS) a group, ``progress.step`` after each. Raises ExperimentError for an
    invocation that ends without a result (its status and reason)."""
    import numpy as np

    from cyclebench.stats.result import counter_fields

    countable, found = probed.countable, dict[str, float]()
    for i in range(0, len(countable), group_size):
        group = countable[i : i + group_size]
        o = runner.run(probed.bench, probed.param, SWEEP_OPTIONS, SWEEP_OPTIONS.timeout(), [group])
        progress.step(",".join(e.name for e in group))
        if o.result is None:
            raise ExperimentError(f"{probed.bench}: {o.status}: {o.reason}")
        n = np.asarray(o.result["n"], dtype=float)
        cf = counter_fields(o.result, [group], n, o.result.get("ladder"), np.ones(len(n), dtype=bool), 0)
        found.update((k, v["per_op"]) for k, v in cf["events"].items() if "per_op" in v)
    return Sweep(probed.bench, probed.param, probed.raw,
                 tuple(SweptEvent(e.name, e.encoding, x is None, x, found.get(e.name))
                       for e, x in zip(probed.events, probed.errors, strict=True)))
