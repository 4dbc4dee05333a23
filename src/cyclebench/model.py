"""Records that cross rooms: what the runner produced, what a result and a comparison are.

Imports nothing of the project (import-linter checks it): every room may use these types,
and none of them knows how they are made, analysed, stored or shown.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

# Outcome statuses, in the order a reader cares about them.
OK, DISTURBED, INVALID, SKIPPED, FAILED, CRASHED, TIMEOUT, ERROR = (
    "ok", "disturbed", "invalid", "skipped", "failed", "crashed", "timeout", "error",
)
STATUSES = (OK, DISTURBED, INVALID, SKIPPED, FAILED, CRASHED, TIMEOUT, ERROR)
# Statuses that make a command exit 1. Not DISTURBED: the benchmark ran and its figures are
# kept (most batches shared the CPU with another program, see stats.result.disturbed_note);
# it is shown marked and left out of verdicts, and the machine, not the code, is at fault.
FAILED_STATUSES = (INVALID, FAILED, CRASHED, TIMEOUT, ERROR)

# The kinds of rows in the results table (a column since schema 3; guessed from unit/extra before).
# profile: one function of a `cyclebench profile` (per call, not per op; its row in extra).
TIMING, SIMULATED, SCALING, STAT, EMULATED, PROFILE = "timing", "simulated", "scaling", "stat", "emulated", "profile"
KINDS = (TIMING, SIMULATED, SCALING, STAT, EMULATED, PROFILE)


@dataclass(frozen=True)
class BenchInfo:
    """One registered benchmark, from ``runner --list``."""

    name: str
    group: str
    params: tuple[int, ...] | None
    require: str | None
    file: str
    line: int
    has_verify: bool


@dataclass(frozen=True)
class Item:
    """One unit of work: a benchmark at one parameter (None: it takes none)."""

    bench: str
    param: int | None

    @property
    def label(self) -> str:
        return self.bench if self.param is None else f"{self.bench}[{self.param}]"


@dataclass
class Outcome:
    """What one runner invocation produced for one item.

    ``status`` is one of ok, invalid (verify failed), skipped (feature gate or setup),
    failed (setup, runner-reported failure or a resource limit), crashed (signal), timeout,
    error (``disturbed`` is a result's, never an Outcome's: stats.result sets it when most
    batches were preempted or migrated). ``result`` is the runner's result line (samples in
    ``n``/``ticks``) when there is one; ``stderr`` is the tail of the process's stderr; ``wall_s`` seconds.
    """

    bench: str
    param: int | None
    status: str
    reason: str | None = None
    result: dict[str, Any] | None = None
    stderr: str = ""
    wall_s: float = 0.0
    lines: list[dict[str, Any]] = field(default_factory=list)


class Result(TypedDict, total=False):
    """One row of the results table, as stats/ makes it, store/ keeps it and report/ shows it.

    ``kind`` says which of the five it is (timing | simulated | scaling | stat | emulated);
    which fields are set depends on it. Units: ``unit`` names the unit of per_op/ci/min/median
    (ref-cycles, ticks, ns, Ir, ops/s, or a stat metric's); cycles_* are cycles~ (calibrated
    core cycles); pmu_* the PMU's cycles event; ns_per_op nanoseconds; wall_s seconds.
    """

    id: int
    run_id: int
    kind: str
    bench: str
    param: int | None
    variant: str
    status: str  # one of STATUSES
    reason: str | None
    unit: str
    per_op: float
    ci_low: float
    ci_high: float
    intercept: float
    median: float
    median_ci_low: float
    median_ci_high: float
    min: float
    mad: float
    mean: float
    cv: float
    rcv: float  # robust CV: scaled MAD / median
    confidence: float
    method: str
    rounds: int
    ns_per_op: float
    cycles_per_op: float
    cycles_ci_low: float
    cycles_ci_high: float
    cycles_min: float
    cycles_rcv: float
    core_ghz: float
    ratio_rcv: float
    chain_agreement: float
    n_disturbed: int
    n_trimmed: int
    pmu_cycles_per_op: float
    pmu_ci_low: float
    pmu_ci_high: float
    pmu_agreement: float
    net_per_op: float
    net_ci_low: float
    net_ci_high: float
    cycles_net: float
    cycles_net_ci_low: float
    cycles_net_ci_high: float
    n_samples: int
    outliers: int
    timer_overhead: float
    wall_s: float
    created_at: str
    extra: dict[str, Any]

@dataclass
class ScaleRun:
    """What one runner invocation in scaling mode (one benchmark, mode and task count)
    produced: its start, interval and end lines, the first task crash, the hypervisor's
    steal on the tasks' CPUs (share of their time), wall seconds, the stderr tail and the
    idle share of all CPUs."""

    bench: str
    param: int | None
    mode: str
    tasks: int
    status: str = OK
    reason: str | None = None
    start: dict[str, Any] | None = None
    intervals: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    crash: dict[str, Any] | None = None
    steal: float | None = None
    wall_s: float = 0.0
    stderr: str = ""
    idle: float | None = None  # share of the machine's CPU time idle during the run (/proc/stat, as will-it-scale)


@dataclass(frozen=True)
class Comparison:
    """B − A per op, in the unit of the slopes given (e.g. cycles~)."""

    median_a: float
    median_b: float
    diff: float
    ci_low: float
    ci_high: float
    rel: float  # diff / median_a
    p: float
    pairs: int
    margin: float
    verdict: str  # "slower" (B costs more), "faster", or "~"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Series:
    """One benchmark under `scale` in one mode: a summary per task count, in task order."""

    bench: str
    param: int | None
    mode: str
    points: list[dict[str, Any]] = field(default_factory=list)  # summaries, each with status/reason
    variant: str = ""  # e.g. the allocator linked in (scale --allocator)

    @property
    def label(self) -> str:
        variant = f" [{self.variant}]" if self.variant else ""
        return f"{self.bench}{'' if self.param is None else f'[{self.param}]'}{variant} ({self.mode})"
