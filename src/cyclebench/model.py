"""Records that cross rooms: what the runner produced, what a result and a comparison are,
and the order result rows are shown in (suite_order: the store reads them back in it).

Imports nothing of the project (import-linter checks it): every room may use these types,
and none of them knows how they are made, analysed, stored or shown.

Annotations here are evaluated (no ``from __future__ import annotations``; the few names used
before their class are quoted): every command imports this module, and a TypedDict turns each
string annotation into a ForwardRef, compiling it: 443 compiles, and the module's import took
50 ms (median of 50) instead of 38 on an AMD EPYC Zen 3 guest.
"""

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import Field, asdict, dataclass, field, fields
from typing import Any, ClassVar, TypedDict, TypeVar

# Outcome statuses, in the order a reader cares about them.
OK, DISTURBED, INVALID, SKIPPED, FAILED, CRASHED, TIMEOUT, ERROR = (
    "ok", "disturbed", "invalid", "skipped", "failed", "crashed", "timeout", "error",
)
STATUSES = (OK, DISTURBED, INVALID, SKIPPED, FAILED, CRASHED, TIMEOUT, ERROR)
# Statuses that make a command exit 1. Not DISTURBED: the benchmark ran and its figures are
# kept (most batches shared the CPU with another program, see stats.result.disturbed_note);
# it is shown marked and left out of verdicts, and the machine, not the code, is at fault.
FAILED_STATUSES = (INVALID, FAILED, CRASHED, TIMEOUT, ERROR)

# The kinds of rows in the results table (a column since schema 3; guessed from the unit and the
# stored JSON before). profile: one function of a `cyclebench profile` (per call, not per op; its
# row is the result's ``profile``).
TIMING, SIMULATED, SCALING, STAT, EMULATED, PROFILE = "timing", "simulated", "scaling", "stat", "emulated", "profile"
KINDS = (TIMING, SIMULATED, SCALING, STAT, EMULATED, PROFILE)

# A run's purpose: why it was measured (conbench's "run reason"), the runs table's ``purpose``
# (migration 0009). A series holds runs of one purpose (series_key): a revision a bisect built
# from a repository's history is not a point in the nightly series of the same benchmark.
RUN, REVISION, VARIANTS, COMPARE, FLEET = "run", "revision", "variants", "compare", "fleet"
PURPOSES = (RUN, REVISION, VARIANTS, COMPARE, FLEET)
# Ordinary measurements, the ones a benchmark's history follows by default: `run` (labelled or
# not; scale, stat, profile, will-it-scale test cases too) and the same run made by a fleet job.
ORDINARY = (RUN, FLEET)
# Set by `cyclebench fleet`'s agent on a host: the runs its command opens are the fleet's.
PURPOSE_ENV = "CYCLEBENCH_PURPOSE"


def infer_purpose(command: Sequence[str] | None, labels: Mapping[str, str] | None) -> str:
    """The purpose of a run stored before runs had one (or read from a run file without it),
    told from its command line and labels as the commands made them: a bisect labels its runs
    ``bisect``, ``compare --rev`` ``rev`` and ``base``; ``variants`` and ``compare --allocator``
    are builds side by side; ``compare A B`` pairs two benchmarks; anything else is a run."""
    labels = labels if isinstance(labels, Mapping) else {}
    argv = [str(a) for a in command] if isinstance(command, (list, tuple)) else []
    sub = next((a for a in argv[1:] if not a.startswith("-")), "")
    if "bisect" in labels or ("rev" in labels and "base" in labels) or sub == "bisect" or (
            sub == "compare" and any(a == "--rev" or a.startswith("--rev=") for a in argv)):
        return REVISION
    if sub == "variants" or (sub == "compare" and any(a.startswith("--allocator") for a in argv)):
        return VARIANTS
    if sub == "compare":
        return COMPARE
    return RUN


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


class Chain(TypedDict, total=False):
    """The calibration chains a runner process timed (engine/chain.h, docs/method.md §3), in
    timer ticks: the add chain of ``adds`` and the imul chain of ``imuls`` × ``imul_latency``
    cycles five times each, alternately, at the start and the end (``add_ticks``, ``imul_ticks``:
    every reading; runs stored before they were kept hold the fastest of each five), and chains
    of ``short_adds`` and ``adds`` adds timed alternately for the fixed part (``short_ticks``,
    ``long_ticks``), and of ``imul_block`` and ``imuls`` imuls for the imul chain's
    (``imul_short_ticks``, ``imul_long_ticks``; runs stored before 2026-12-02 have none).
    ``kind``: add, or none where no chain exists."""

    kind: str
    adds: int
    imuls: int
    imul_latency: int
    add_ticks: list[int]
    imul_ticks: list[int]
    short_adds: int
    short_ticks: list[int]
    long_ticks: list[int]
    imul_block: int
    imul_short_ticks: list[int]
    imul_long_ticks: list[int]


class TimerOverhead(TypedDict):
    """The timer pair's own cost, in timer ticks: the fastest and the median of many pairs."""

    min: float
    median: float


class Sched(TypedDict):
    """The scheduling policy (SCHED_FIFO, SCHED_OTHER, …: sched(7)) and priority a benchmark
    really ran under (engine/measure.c, ``emit_sched``)."""

    policy: str
    priority: int


class ResultCounters(TypedDict, total=False):
    """A result line's ``counters`` (-e; engine/measure.c): per group the error that kept it
    from opening (None: it opened), its number of events, and per sample the raw group reads;
    ``series`` (per event, per sample: None where not counted) and ``status`` (per event) are
    what runner.engine.decode_counters adds (counters.per_sample_counts)."""

    open_errors: list[str | None]
    nevents: list[int]
    reads: list[list[int]]
    series: list[list[float] | None]
    status: list[str]


class RunnerLine(TypedDict, total=False):
    """Any JSON line of the runner's protocol (engine/runner.c's header; runner/protocol.py reads
    them): its ``type`` (result | skip | fail | error | bench | calibration | features | probe |
    scale_start | interval | scale_end | task_crash) and, on the lines about one request (a
    benchmark at a parameter: engine/measure.c's ``cb_emit_head``), its ``bench``, ``param``
    and ``reason`` (skip, fail, error: why). The other keys depend on the type: the records
    below name each line's; a reader narrows on ``type`` first."""

    type: str
    bench: str
    param: int | None
    reason: str | None


class BenchLine(TypedDict, total=False):
    """``runner --list``: one registered benchmark (``group/name``), its parameters (None: it
    takes none), its CB_REQUIRE gate, its source file and line, whether it has a verify hook."""

    type: str
    name: str
    group: str
    params: list[int] | None
    require: str | None
    file: str
    line: int
    has_verify: bool


class CalibrationLine(TypedDict, total=False):
    """``runner --calibrate`` (engine/runner.c): the timer (``timer``; ``unit`` ticks or ns),
    whether RDTSCP exists, the invariant-TSC bit (-1: not x86), the TSC rate from CPUID leaf 0x15
    and the base frequency from leaf 0x16 (Intel SDM vol. 3 §18.7.3; 0: not given), arm64's
    CNTFRQ_EL0 (Hz), the timer's rate measured against CLOCK_MONOTONIC_RAW (Hz) over
    ``measured_over_ns``, the timer pair's cost, and an injected ``fault`` (selftest). Stored as
    a run's ``calibration`` with the rate chosen (``rate_hz``, Hz) and its source (``rate_source``:
    stats.clock.timer_rate) added by experiments.session.open_run, and ``age_s``: seconds since the
    runner measured it, when a run reused its sitting's calibration (absent: measured for the run)."""

    type: str
    timer: str
    unit: str
    rdtscp: bool
    invariant_tsc: int
    cpuid_tsc_hz: float
    cpuid_base_mhz: float
    arch_timer_hz: float
    measured_hz: float
    measured_over_ns: int
    timer_overhead: TimerOverhead
    fault: str
    rate_hz: float
    rate_source: str
    age_s: float


# ``runner --features`` (engine/runner.c): each CPU feature the CB_REQUIRE gates know → 1, 0 or
# -1 (unknown), and ``malloc``: the file whose malloc the runner calls (dladdr(3)). The names hold
# dots, hence the functional form.
FeaturesLine = TypedDict("FeaturesLine", {
    "type": str, "x86_64": int, "aarch64": int, "sse2": int, "sse4.2": int, "avx": int, "avx2": int,
    "avx512f": int, "bmi2": int, "erms": int, "fsrm": int, "cx16": int, "rdtscp": int, "invariant_tsc": int,
    "lse": int, "malloc": str,
}, total=False)


class ProbeLine(TypedDict):
    """``runner --probe``: per counter group, the error that kept it from opening (None: it opens)."""

    type: str
    open_errors: list[str | None]


class ScaleChain(Chain, total=False):
    """A will-it-scale run's calibration chain (engine/scale.c, ``emit_chain``): a Chain and the
    CPU it was timed on."""

    cpu: int


class ScaleStart(TypedDict, total=False):
    """Scaling mode's first line (engine/scale.c, ``emit_start``): ``tasks`` in ``mode`` (threads
    | processes), the ``batch`` of operations between two counter updates (``batch_per_op_ns``
    ns an op when sized), the ``interval`` (s), ``warmup_intervals`` and ``intervals`` to run,
    the counter block's size (bytes), the timer's ``unit``, the tasks' ``cpus`` and the
    sampler's (None: not pinned), whether schedstat is read (``schedstat``); a will-it-scale test
    case's ``wis`` description and the calibration chain before (``chain_before``)."""

    type: str
    bench: str
    param: int | None
    tasks: int
    mode: str
    batch: int
    batch_per_op_ns: float
    interval: float
    warmup_intervals: int
    intervals: int
    block_bytes: int
    unit: str
    cpus: list[int]
    sampler_cpus: list[int] | None
    schedstat: bool
    wis: dict[str, str]
    chain_before: ScaleChain


class ScaleEnd(TypedDict, total=False):
    """Scaling mode's last line (engine/scale.c, ``emit_end``): intervals done, seconds sampled,
    the sampler's own CPU seconds and involuntary switches, whether a task crashed (and why),
    each task's total operations, verify results (None: no hook or not done) and reasons, and a
    will-it-scale run's chain after (``chain_after``)."""

    type: str
    bench: str
    param: int | None
    tasks: int
    mode: str
    intervals_done: int
    sampled_s: float
    sampler_cpu_s: float
    sampler_involuntary_switches: int
    crashed: bool
    crash_reason: str | None
    total_ops: list[int]
    verified: list[bool | None]
    reasons: list[str | None]
    chain_after: ScaleChain


class TaskCrash(TypedDict, total=False):
    """A task that died during a scaling run (engine/scale.c, ``emit_crash``): which (None: one
    of a will-it-scale host's threads), its signal (0: none) or exit status (-1: signalled),
    when (s since the start) and a one-line reason."""

    type: str
    task: int | None
    signal: int
    exit: int
    t: float
    reason: str


class RunnerResult(TypedDict, total=False):
    """A runner's result line for one benchmark (engine/measure.c; runner/protocol.py), with
    what interleave.merge adds when processes are combined. Per sample (one batch): ``n``
    operations, ``ticks`` of the timer (``unit``: ticks or ns), ``cal`` ticks of the add chain
    timed next to it, ``disturbed`` (engine/disturb.h's bits: 1 preempted, 2 migrated, 4 an
    interrupt taken on its CPU during the batch), ``pmu_cycles`` (a PMU's
    cycles event, where one exists) and ``counters`` (perf groups' reads, -e). ``ladder``
    batch sizes per round, ``rounds`` run; ``timer_overhead`` the timer pair's cost (min,
    median ticks); ``chain`` this process's calibration chains (``chains``: one per process,
    merged); ``process_rounds`` rounds per merged process; times in ns."""

    type: str
    bench: str
    param: int | None
    unit: str
    timer: str
    n_base: int
    rounds: int
    ladder: int
    seed: int
    sizing_ns: int
    warmup_ns: int
    measured_ns: int
    total_iters: int
    timer_overhead: TimerOverhead
    disturb_source: str
    cpu: int
    irqs: int | None  # interrupts counted on its CPU during the timed batches; None: not counted
    irq_source: str  # how they were counted, or "none: " and why not
    chain: Chain
    chains: list[Chain]
    verified: bool
    reason: str | None
    pmu_error: str | None
    fault: str
    sched: Sched
    # under callgrind (engine/simulate.c: ``n`` holds the two batch sizes; runner/callgrind.py adds
    # the events per op and the cache geometry simulated, ``unit`` Ir)
    labels: list[str]
    callgrind_header: bool
    events: dict[str, float]
    cache: dict[str, list[int]]
    n: list[int]
    ticks: list[int]
    cal: list[int]
    cal_imul: list[int] | None  # ticks of the imul chain timed after each batch, after the add chain
    disturbed: list[int]
    pmu_cycles: list[int]
    counters: ResultCounters
    processes: int
    process_rounds: list[int]
    invocations: int


class Repetition(TypedDict, total=False):
    """One run of a whole command under the stat launcher (engine/statexec.c; runner/exec.py):
    ``type`` stat, or exec_error with ``errno`` and ``error`` when it could not start; its
    ``exit`` status or the ``signal`` that killed it (a name), ``wall_ns``, ``user_us`` and
    ``sys_us`` times, ``maxrss_kb``; the counter groups' raw reads (``groups``: per group the
    number of events, time enabled, time running, then each value, in ns/counts),
    ``open_errors`` (per group, None when it opened), ``inherit`` (children counted) and
    ``user_only`` per group. Under callgrind also ``events`` (simulated totals by name over
    ``processes`` processes) and ``valgrind_log`` (its last lines when nothing was simulated);
    ``rep``: its 0-based index, set by experiments.stat."""

    type: str
    exit: int | None
    signal: str | None
    wall_ns: int
    user_us: int
    sys_us: int
    maxrss_kb: int
    groups: list[list[int]]
    open_errors: list[str | None]
    inherit: bool
    user_only: list[bool]
    errno: int
    error: str
    events: dict[str, int]
    processes: int
    valgrind_log: list[str]
    rep: int


@dataclass(frozen=True)
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
    result: RunnerResult | None = None
    stderr: str = ""
    wall_s: float = 0.0
    lines: list[RunnerLine] = field(default_factory=list)


class _Columns(Mapping[str, Any]):
    """A frozen record of a table's row read as a read-only mapping of its columns (``r["x"]``,
    ``r.get("x")``, ``dict(r)``), equal to any mapping of the same items: the readers written
    for rows keep working on records. The columns are the dataclass's fields, in order."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def __getitem__(self, key: str) -> Any:
        if key not in self.__dataclass_fields__:  # a dict: no scan of a record's fields per lookup
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.__dataclass_fields__)

    def __len__(self) -> int:
        return len(self.__dataclass_fields__)


@dataclass(frozen=True)
class PerOp:
    """One figure per operation with its 95% CI: ``value``, ``ci_low``, ``ci_high`` (None when no
    CI was computed) in ``unit`` (ref-cycles — TSC ticks —, ns, cycles~ — calibrated core
    cycles —, cycles — the PMU's event —, Ir, …; docs/method.md). A Result's figures read as
    these (``Result.timer``, ``cycles``, ``pmu``, ``net``, ``net_cycles``, ``best``)."""

    value: float
    ci_low: float | None
    ci_high: float | None
    unit: str

    @property
    def half(self) -> float | None:
        """Half the CI's width (the ± printed); None without a CI."""
        return None if self.ci_low is None or self.ci_high is None else (self.ci_high - self.ci_low) / 2


def _per_op(value: float | None, low: float | None, high: float | None, unit: str | None) -> PerOp | None:
    return None if value is None else PerOp(value, low, high, unit or "")


@dataclass(frozen=True, eq=False)
class Result(_Columns):
    """One row of the results table, as store/ reads it back: a frozen record (a transformation
    makes a new one: ``dataclasses.replace``), read by attribute (``r.cycles_per_op``) or, as
    the rows stats/ makes before they are stored, as a read-only mapping of its fields
    (``r["per_op"]``, ``r.get("counters")``, ``dict(r)``); equal to any mapping of the same items.

    ``kind`` says which of the six it is (timing | simulated | scaling | stat | emulated |
    profile); which fields are set depends on it. Units: ``unit`` names the unit of
    per_op/ci/min/median (ref-cycles, ticks, ns, Ir, ops/s, or a stat metric's); cycles_* are
    cycles~ (calibrated core cycles); pmu_* the PMU's cycles event; ns_per_op nanoseconds;
    wall_s seconds.

    After the columns, the typed parts (store/rows.py keeps them in the table's ``extra`` JSON
    column, with the keys it always had, and reads them back). The record of what was measured,
    one per kind: ``line`` (timing, made from a runner: its result line minus the samples),
    ``wis`` (timing, a will-it-scale test case's cost), ``gbench`` (timing, a Google Benchmark
    executable's benchmark), ``simulated``, ``stat``, ``scale`` (scaling), ``profile``,
    ``emulated``. Then what the analysis added: ``disturbance`` (a
    disturbed result's batches), ``per_process`` (each runner process's own estimate),
    ``calibration_rse`` (the cycles~ clock's relative standard error), ``counters`` (-e: each
    event per op, derived metrics), ``allocator`` (the one linked in), ``partial`` (fewer
    processes than planned), ``per_invocation`` (variants, compare --rev: each invocation's
    median cost per op, in the unit), ``revision`` (compare --rev: the side's commit) and
    ``run_to_run`` (this host's spread between replicate runs: set for the tables, not by a
    measurement). None: not part of this row.
    """

    id: int | None = None
    run_id: int | None = None
    kind: str | None = None
    bench: str = ""
    param: int | None = None
    variant: str = ""
    status: str = OK  # one of STATUSES
    reason: str | None = None
    unit: str | None = None
    per_op: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    intercept: float | None = None
    median: float | None = None
    median_ci_low: float | None = None
    median_ci_high: float | None = None
    min: float | None = None
    mad: float | None = None
    mean: float | None = None
    cv: float | None = None
    rcv: float | None = None  # robust CV: scaled MAD / median
    confidence: float | None = None
    method: str | None = None
    rounds: int | None = None
    ns_per_op: float | None = None
    cycles_per_op: float | None = None
    cycles_ci_low: float | None = None
    cycles_ci_high: float | None = None
    cycles_min: float | None = None
    cycles_rcv: float | None = None
    core_ghz: float | None = None
    ratio_rcv: float | None = None
    chain_agreement: float | None = None
    n_disturbed: int | None = None
    n_trimmed: int | None = None
    pmu_cycles_per_op: float | None = None
    pmu_ci_low: float | None = None
    pmu_ci_high: float | None = None
    pmu_agreement: float | None = None
    net_per_op: float | None = None
    net_ci_low: float | None = None
    net_ci_high: float | None = None
    cycles_net: float | None = None
    cycles_net_ci_low: float | None = None
    cycles_net_ci_high: float | None = None
    n_samples: int | None = None
    outliers: int | None = None
    timer_overhead: float | None = None
    wall_s: float | None = None
    created_at: str | None = None
    plan_index: int | None = None  # its item's place in the plan `run` measured (0-based; suite_order)
    # what was measured, one per kind (the class docstring)
    line: RunnerResult | None = None
    wis: "WisCost | None" = None
    simulated: "Simulated | None" = None
    stat: "StatMetric | None" = None
    scale: "ScaleRecord | None" = None
    profile: "ProfileRow | None" = None
    emulated: "Emulated | None" = None
    gbench: "GbenchCost | None" = None
    # what the analysis added
    disturbance: "Disturbance | None" = None
    per_process: "PerProcess | None" = None
    calibration_rse: float | None = None
    counters: "Counters | None" = None
    allocator: "AllocatorInfo | None" = None
    partial: str | None = None
    per_invocation: tuple[float, ...] | None = None
    revision: str | None = None
    run_to_run: "RunToRun | None" = None
    # the stored columns a reader found damaged (JSON that does not decode, text in a number's
    # column) and read as None: store/ sets it, every reader says it in one line
    damaged: tuple[str, ...] = ()

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> "Result":
        """The record of a mapping of its fields (``dict(r)`` of a record; a record is itself):
        its known fields, others are not part of it. A stored row (its ``extra`` JSON column) is
        store/'s to read (store.rows.result_of)."""
        if isinstance(row, Result):
            return row
        return cls(**{k: v for k, v in row.items() if k in RESULT_KEYS})

    # the figures as typed values, each with its CI and unit (the columns stay flat: store/)
    @property
    def timer(self) -> PerOp | None:
        """Per op in the timer's unit (``unit``: ref-cycles, ns, Ir, …); None: not measured."""
        return _per_op(self.per_op, self.ci_low, self.ci_high, self.unit)

    @property
    def cycles(self) -> PerOp | None:
        """Calibrated core cycles per op (cycles~); None without a calibrated clock."""
        return _per_op(self.cycles_per_op, self.cycles_ci_low, self.cycles_ci_high, "cycles~")

    @property
    def pmu(self) -> PerOp | None:
        """The PMU's cycles event per op; None where no PMU counted (a VM without one)."""
        return _per_op(self.pmu_cycles_per_op, self.pmu_ci_low, self.pmu_ci_high, "cycles")

    @property
    def net(self) -> PerOp | None:
        """Per op net of the loop's own cost (loop/empty), in the timer's unit; None: not asked."""
        return _per_op(self.net_per_op, self.net_ci_low, self.net_ci_high, self.unit)

    @property
    def net_cycles(self) -> PerOp | None:
        """cycles~ per op net of the loop's own cost; None: not asked or no calibrated clock."""
        return _per_op(self.cycles_net, self.cycles_net_ci_low, self.cycles_net_ci_high, "cycles~")

    def figure(self, unit: str) -> PerOp | None:
        """The result's one per-op figure in ``unit`` (cycles~, or the timer's unit), as every
        view reads it; None when it has none in that unit. A design that estimates a side's cost
        another way (a paired comparison's medians) shows this one beside its own Δ."""
        if unit == "cycles~":
            return self.cycles
        got = self.timer
        return got if got is not None and got.unit == unit else None

    @property
    def best(self) -> PerOp | None:
        """The figure runs and hosts are compared by: cycles~ when the result has it, else
        the timer's (history, compare --by host, run --plot)."""
        return self.cycles if self.cycles_per_op is not None else self.timer

    @property
    def processes(self) -> int | None:
        """How many runner processes the figures pool (the runner line's, or a test case's
        cost's); None: not said."""
        part = self.line if self.line is not None else self.wis if self.wis is not None else self.gbench
        got = part.get("processes") if part is not None else None
        return got if isinstance(got, int) else None

    def __repr__(self) -> str:
        return f"Result({self.bench!r}, param={self.param!r}, variant={self.variant!r}, status={self.status!r})"


RESULT_KEYS: tuple[str, ...] = tuple(f.name for f in fields(Result))


@dataclass(frozen=True, eq=False)
class Run(_Columns):
    """One row of the runs table as store/ reads it back: a frozen record, read by attribute or,
    like Result, as a read-only mapping of its columns. ``status`` is as it stands when read
    (running | complete | interrupted | failed | abandoned); ``command`` the argv, passwords
    redacted; ``build``, ``calibration``, ``env`` and ``summary`` the JSON the command stored
    (its compiler and flags; its timer and the timer's rate; sysinfo.capture(); what it
    produced beyond result rows, e.g. compare's verdicts and how its table was shown)."""

    id: int | None = None
    started_at: str | None = None
    finished_at: str | None = None
    status: str | None = None
    command: Sequence[str] | None = None
    host: str | None = None
    cpu_model: str | None = None
    cpu: int | None = None
    tool_version: str | None = None
    code_rev: str | None = None
    build: Mapping[str, Any] | None = None
    calibration: CalibrationLine | None = None
    env: "Environment | None" = None
    summary: Mapping[str, Any] | None = None
    host_id: str | None = None
    pid: int | None = None
    heartbeat_at: str | None = None
    pid_start: int | None = None
    labels: Mapping[str, str] | None = None
    group_id: int | None = None
    kernel_release: str | None = None
    kernel_version: str | None = None
    boot_id: str | None = None
    microcode: str | None = None
    compiler: str | None = None
    code_dirty: bool | None = None
    purpose: str | None = None  # why it was measured (PURPOSES); None: stored before (purpose_of infers it)
    damaged: tuple[str, ...] = ()  # columns found damaged and read as None (Result.damaged)

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> "Run":
        """The record of a runs row (columns it does not know are not part of it)."""
        return cls(**{k: v for k, v in row.items() if k in RUN_KEYS})

    def __repr__(self) -> str:
        return f"Run(#{self.id}, {self.status!r}, host={self.host!r})"


RUN_KEYS: tuple[str, ...] = tuple(f.name for f in fields(Run))


def purpose_of(run: Mapping[str, Any]) -> str:
    """A run's purpose (PURPOSES): as stored, else inferred from its command and labels
    (infer_purpose)."""
    got = run.get("purpose")
    return got if isinstance(got, str) and got in PURPOSES else infer_purpose(run.get("command"), run.get("labels"))


def host_of(run: Mapping[str, Any]) -> str:
    """The host a run is shown and followed under: its name, else its host id ("?" without either)."""
    return str(run.get("host") or run.get("host_id") or "?")


def measurement_of(row: Mapping[str, Any]) -> str:
    """What kind of measurement a result row is, finer than its ``kind`` where figures of one
    kind still differ: ``timing``, ``counters`` (timed with perf events read around every batch,
    which cost time of their own), ``callgrind`` (simulated Ir), ``scale threads`` / ``scale
    processes``, ``stat``, ``emulated``, ``profile``."""
    kind = row.get("kind") or TIMING
    if kind == SIMULATED:
        return "callgrind"
    if kind == SCALING:
        scale = row.get("scale")
        mode = scale.get("mode") if isinstance(scale, Mapping) else None
        return f"scale {mode}" if mode else "scale"
    if kind == TIMING and row.get("counters"):
        return "counters"
    return str(kind)


def source_digest(run: Mapping[str, Any], bench: str) -> str | None:
    """The digest of the benchmark file that defines ``bench`` in ``run``'s build (the sha256
    prefix open_run keeps for every source, ``build.digests``): its only source, else the one
    named after the benchmark's group (the suite's ``syscall.c`` holds ``syscall/*``), else one
    digest of all its sources; None: stored before digests were kept, or nothing was built."""
    build = run.get("build")
    digests = build.get("digests") if isinstance(build, Mapping) else None
    if not isinstance(digests, Mapping) or not digests:
        return None
    if len(digests) == 1:
        return str(next(iter(digests.values())))
    group = bench.split("/", 1)[0]
    named = [d for path, d in digests.items() if str(path).rsplit("/", 1)[-1].rsplit(".", 1)[0] == group]
    if len(named) == 1:
        return str(named[0])
    import hashlib

    return hashlib.sha256("".join(f"{p}={d};" for p, d in sorted(digests.items())).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class SeriesKey:
    """What makes stored results points of one series, the one identity every reader of the
    past uses (history, --fail-on-regression, the site's histories and open regressions, stored
    `compare`, `explain`): the host, benchmark, parameter and variant; the measurement
    (measurement_of) and its unit; the benchmark file's digest (a changed benchmark starts a
    new series, as asv versions a benchmark by its code; the library under test, the compiler and
    the kernel stay in it: their changes are what a history is for); the run's purpose
    (PURPOSES); the benchmark's build (build_of: its flags and the allocator linked in: -O1 and
    -O2 are two series, where a compiler is one series marked where it changes). ``digest`` or
    ``build`` None: not known (a run stored before they were kept), which joins the series of
    any (``matches``)."""

    host: str
    bench: str
    param: int | None
    variant: str
    measurement: str
    unit: str
    digest: str | None
    purpose: str
    build: str | None = None

    def matches(self, other: "SeriesKey") -> bool:
        """Whether ``other`` is a point of this series: every field equal, the digests equal or
        one of them unknown."""
        return self.differs(other) is None

    def differs(self, other: "SeriesKey") -> str | None:
        """The first field in which ``other`` is of another series (host, bench, param, variant,
        measurement, unit, purpose, digest, build); None: the same series."""
        for name in ("host", "bench", "param", "variant", "measurement", "unit", "purpose"):
            if getattr(self, name) != getattr(other, name):
                return name
        for name in ("digest", "build"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine is not None and theirs is not None and mine != theirs:
                return name
        return None


def _named(flag: str) -> str:
    """A flag with its path cut to the last name: ``/tmp/x/src/libwork.a`` → ``libwork.a``,
    ``-L/opt/lib/`` → ``-Llib``; a flag without a ``/`` as it is."""
    if "/" not in flag:
        return flag
    prefix = flag[:2] if flag.startswith("-") and not flag.startswith("-/") else ""
    return prefix + flag[len(prefix):].rstrip("/").rsplit("/", 1)[-1]


def build_of(run: Mapping[str, Any], row: Mapping[str, Any]) -> str | None:
    """The benchmark's build as a series tells builds apart: its flags (``--cflags``, then ``-D``,
    ``-I`` and ``--ldflags`` as given) and the allocator linked in (``+ jemalloc``), one string;
    None where not known (a run stored without its build) or where the variant names the build
    (`variants`: the run's build is its baseline's)."""
    build = run.get("build")
    if not isinstance(build, Mapping) or purpose_of(run) == VARIANTS:
        return None
    flags = [*(build.get("cflags") or ()), *(f"-D{d}" for d in build.get("defines") or ()),
             # a path by its name (an include directory, a library): a revision's build has it in a
             # worktree of its own (…/revisions/<tree>/src/libwork.a), which no other build shares
             *(f"-I{_named(str(d))}" for d in build.get("include_dirs") or ()),
             *(_named(str(f)) for f in build.get("ldflags") or ())]
    alloc = row.get("allocator")
    name = alloc.get("name") if isinstance(alloc, Mapping) else None
    return " ".join(map(str, flags)) + (f" + {name}" if name else "")


def series_key(run: Mapping[str, Any], row: Mapping[str, Any]) -> SeriesKey:
    """The series of a stored result ``row`` of ``run`` (SeriesKey). The unit is the row's
    measured one (ref-cycles, ns, Ir, ops/s…); which figure a history follows in it, cycles~ or
    the timer's, is the history's (experiments.history.points_from)."""
    measurement = row.get("measurement")  # a slim row that carries it (the site's LightResult)
    return SeriesKey(host=host_of(run), bench=str(row.get("bench") or ""), param=row.get("param"),
                     variant=str(row.get("variant") or ""),
                     measurement=str(measurement) if measurement else measurement_of(row),
                     unit=str(row.get("unit") or ""),
                     digest=source_digest(run, str(row.get("bench") or "")), purpose=purpose_of(run),
                     build=build_of(run, row))


@dataclass(frozen=True, eq=False)
class Point(_Columns):
    """One run's figure in a benchmark's history (experiments/history.points_from): the run's id,
    start time (ISO 8601) and labels; its estimate with its 95% CI in the series' unit
    (cycles~, else a timer unit: the series says which); the benchmark's parameter."""

    run: int
    started_at: str | None
    labels: Mapping[str, str]
    estimate: float
    ci_low: float | None
    ci_high: float | None
    param: int | None
    compiler: str | None = None  # the run's compiler (cc --version's first line): marked where it changes
    revision: str | None = None  # the result's commit (compare --rev, bisect, ci): a revision series's points


@dataclass(frozen=True, eq=False)
class TimedProfileRow(_Columns):
    """One function of a timed flat profile (stats/profile.flat_profile, docs/method.md §10), its
    durations per call in the profile's unit (cycles~ or ns): ``self``/``total`` compensated
    (the probe's cost subtracted; medians over the calls, a parent's total at least its children's),
    ``*_raw`` as recorded, ``self_mean`` gprof's time/calls, ``self_pm``/``total_pm`` what the
    probe may be off by (None without a probe); ``comp_share`` the compensation's share of the
    raw self (``compensated`` when over stats.profile.COMPENSATION_NOTE); ``pct`` the share of
    the profile (calls × max(self, 0)); ``ir_self``/``ir_total`` callgrind's exact instructions
    per call where it could run the program; ``callees`` the functions it calls, each with its
    calls per call of this one (total = max(self, 0) + Σ callees' calls per call × their total,
    for a function that does not call itself); ``untrustworthy`` why its figure is not to be
    trusted (its calls disagree with themselves: the host changed under it), None where it holds.
    A profile result's ``profile``."""

    function: str
    calls: int
    self_raw: float
    self: float
    self_mean: float
    self_pm: float | None
    total_raw: float
    total: float
    total_pm: float | None
    comp_share: float
    compensated: bool
    pct: float = 0.0
    ir_self: float | None = None
    ir_total: float | None = None
    callees: Mapping[str, float] | None = None
    untrustworthy: str | None = None

    def to_json(self) -> dict[str, object]:
        """The row as JSON, as stored (Ir only where callgrind counted it; callees where known; why
        the figure is not to be trusted where it is not)."""
        return {k: (dict(v) if k == "callees" and v is not None else v) for k, v in self.items()
                if v is not None or k not in ("ir_self", "ir_total", "callees", "untrustworthy")}

    @classmethod
    def of(cls, doc: Mapping[str, Any]) -> "TimedProfileRow":
        """The row of its stored JSON."""
        return cls(**{k: doc.get(k) for k in cls.__dataclass_fields__ if k in doc})


@dataclass(frozen=True, eq=False)
class SimulatedProfileRow(_Columns):
    """One function of a flat profile under callgrind (exact counts, nothing to compensate):
    calls; ``self``/``total`` instructions per call, ``self_ir``/``total_ir`` in all; ``pct``
    its share of the program's own instructions. A profile result's ``profile``."""

    function: str
    calls: int
    self: float
    total: float
    self_ir: int
    total_ir: int
    pct: float

    def to_json(self) -> dict[str, object]:
        """The row as JSON, as stored."""
        return dict(self)

    @classmethod
    def of(cls, doc: Mapping[str, Any]) -> "SimulatedProfileRow":
        """The row of its stored JSON."""
        return cls(**{k: doc.get(k) for k in cls.__dataclass_fields__})


ProfileRow = TimedProfileRow | SimulatedProfileRow


def profile_row(doc: Mapping[str, Any]) -> ProfileRow:
    """A stored flat-profile row as its record: simulated when it has ``self_ir``."""
    return SimulatedProfileRow.of(doc) if "self_ir" in doc else TimedProfileRow.of(doc)


R = TypeVar("R", bound=Mapping[str, Any])


def suite_order(rows: Iterable[R]) -> list[R]:
    """Result rows in the suite's order, whatever order they finished or were stored in
    (docs/exports.md, "Order"): by group (``bench`` up to its first ``/``), then benchmark, each
    in the order of its first row in the plan; then parameter ascending (None first); then
    variant and allocator (``allocator["name"]``), each in the order it first appears
    (the first, compare's and variants' baseline, stays first). The plan is ``plan_index`` where
    a row has it (`run` stores it: its passes finish rows out of order), then the rows without
    one in the order given (``store.results``: by id). A scaling row's ``param`` is its task
    count, a point of a series: it orders after the variant (the mode). Returns a new list; the
    input is not changed, equal keys keep their plan order."""
    rows = list(rows)
    def planned(i: int) -> tuple[bool, int, int]:
        at = rows[i].get("plan_index")
        return (at is None, at or 0, i)

    plan = sorted(range(len(rows)), key=planned)
    ranks: tuple[dict[Any, int], ...] = ({}, {}, {}, {})  # group, benchmark, variant, allocator → first place
    for i in plan:
        for rank, value in zip(ranks, _order_names(rows[i]), strict=True):
            rank.setdefault(value, len(rank))
    place = {i: n for n, i in enumerate(plan)}

    def key(i: int) -> tuple[Any, ...]:
        r = rows[i]
        group, bench, variant, allocator = _order_names(r)
        param, point = (None, r.get("param")) if r.get("kind") == SCALING else (r.get("param"), None)
        return (ranks[0][group], ranks[1][bench], param is not None, param or 0, ranks[2][variant],
                ranks[3][allocator], point is not None, point or 0, place[i])

    return [rows[i] for i in sorted(range(len(rows)), key=key)]


def _order_names(row: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """(group, benchmark, variant, allocator name) of a result row, for suite_order."""
    bench = str(row.get("bench") or "")
    alloc = row.get("allocator")
    name = alloc.get("name") if isinstance(alloc, Mapping) else None
    return bench.split("/", 1)[0], bench, str(row.get("variant") or ""), str(name or "")

class Interval(TypedDict, total=False):
    """One interval line of a scaling runner (engine/scale.c, emit_interval): its index ``i``,
    ``t`` seconds since the start and its length ``dt`` (s), the timer's ``ticks`` over it,
    ``warmup`` (not measured), each task's operations in it (``deltas``) and, with schedstat,
    each task's run and wait time (``run_ns``, ``wait_ns``, ns) and whether it was runnable at
    the interval's end (``runnable``, 0/1: a wait is charged only once the task runs again)."""

    type: str
    i: int
    t: float
    dt: float
    ticks: int
    warmup: bool
    deltas: list[int]
    run_ns: list[int]
    wait_ns: list[int]
    runnable: list[int]


def kept_off(iv: Interval, task: int) -> bool:
    """Task ``task`` (its index in the interval's lists) was runnable at the end of interval
    ``iv`` yet ran 0 ns and counted nothing in it: kept off its CPU the whole interval, its wait
    not yet charged (schedstat charges it when the task runs again: sched_info_arrive,
    Documentation/scheduler/sched-stats.rst). False for intervals without schedstat or from
    before engine/scale.c read the task's state. The one rule for a will-it-scale task's status
    (runner/scaling) and for the intervals a scaling result keeps (stats/scaling)."""
    ready, run, ops = iv.get("runnable"), iv.get("run_ns"), iv.get("deltas")
    if not (ready and run and ops) or task >= min(len(ready), len(run), len(ops)):
        return False
    return bool(ready[task] and not run[task] and not ops[task])


@dataclass(frozen=True)
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
    start: ScaleStart | None = None
    intervals: tuple[Interval, ...] = ()
    end: ScaleEnd | None = None
    crash: TaskCrash | None = None
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

    def to_dict(self) -> "ComparisonJSON":
        """The fields as a JSON object (``compare --json``), keys as named here."""
        return ComparisonJSON(median_a=self.median_a, median_b=self.median_b, diff=self.diff, ci_low=self.ci_low,
                              ci_high=self.ci_high, rel=self.rel, p=self.p, pairs=self.pairs, margin=self.margin,
                              verdict=self.verdict)


class ComparisonJSON(TypedDict):
    """A Comparison as JSON (Comparison.to_dict): the same fields, the same units."""

    median_a: float
    median_b: float
    diff: float
    ci_low: float
    ci_high: float
    rel: float
    p: float
    pairs: int
    margin: float
    verdict: str


class SequentialLook(TypedDict, total=False):
    """One look of a sequential comparison (stats.sequential.Look; docs/method.md): the share of
    the budget spent, the difference and its SE, the boundary |Z|, the repeated CI (low, high),
    the decision it made (compare) or the pairs it had (compare --rev, bisect)."""

    fraction: float
    diff: float
    se: float
    boundary: float
    low: float
    high: float
    decision: str
    pairs: int


class Sequential(TypedDict, total=False):
    """A sequential comparison's looks and its terms (experiments.compare; experiments.revpair's
    relative_row): seconds spent of the ``budget`` (s), α for this pair, the equivalence margin
    (None: none asked) and, for revisions, how the verdict margin was chosen."""

    looks: list[SequentialLook]
    seconds: float
    budget: float
    alpha: float
    equivalence: float | None
    margin_rule: str


class ComparisonRowJSON(TypedDict):
    """A ComparisonRow as JSON (ComparisonRow.to_dict): its comparison as ComparisonJSON (None:
    no verdict), the sequential design's looks as they came (None: the fixed design)."""

    a: str
    b: str
    param: int | None
    unit: str
    comparison: ComparisonJSON | None
    note: str
    sequential: Sequential | None


@dataclass(frozen=True)
class ComparisonRow:
    """One line of a comparison: A, B, the parameter, the unit of the medians, the Comparison
    (None: no verdict, ``note`` says why) and, for the sequential design, its looks (None: the
    fixed design, p-values Holm-adjusted over the command). Made by experiments/compare and
    the comparison of stored runs, printed by report/console, exported by report/export."""

    a: str
    b: str
    param: int | None
    unit: str
    cmp: Comparison | None
    note: str = ""
    sequential: Sequential | None = None

    def to_dict(self) -> ComparisonRowJSON:
        """The row as a JSON object (``compare --json``, the exports)."""
        return {"a": self.a, "b": self.b, "param": self.param, "unit": self.unit,
                "comparison": self.cmp.to_dict() if self.cmp else None, "note": self.note,
                "sequential": Sequential(**self.sequential) if self.sequential is not None else None}


class ScalePoint(TypedDict, total=False):
    """One task count's summary under `scale` (stats.scaling.summarize, combine, add_speedup,
    pass_speedup; docs/method.md), with the run's ``status``, ``reason`` and ``notes``. Counts:
    ``tasks`` in ``mode`` on ``cpus_used`` CPUs (0: not pinned), intervals total, measured
    (after warm-up), kept and disturbed (a task waited more than stats.scaling.WAIT_LIMIT of one
    for its CPU), ``disturbed_kept`` when too few were left to drop them. Throughput in ops/s:
    ``total_*`` over the kept intervals (``total_cv``: their CV), ``per_task`` each task's
    median, ``task_*`` over tasks, ``fairness`` slowest/fastest task; cost in ns per op
    (``ns_per_op_cpu`` per CPU-second of the tasks, ``ns_per_op_wall``); ``cpu_rate_median``
    ops per CPU-second. Against 1 task: ``speedup`` (and its band), ``efficiency`` = speed-up /
    tasks, ``cpu_efficiency``; with several passes the pass ratios (``pass_speedups``, their
    median ``pass_speedup``, ``totals_speedup``, ``passes_disagree``). ``steal`` and the
    machine's ``idle_pct`` (shares, %), ``wait_pct`` (% of the intervals waiting), the
    sampler's CPU seconds and % of the sampled time, its ``batch`` and the tasks' and
    sampler's CPUs (engine/scale.c's start line); will-it-scale's test case ``description``."""

    tasks: int
    mode: str
    cpus_used: int
    oversubscribed: bool
    intervals_total: int
    intervals_measured: int
    intervals_kept: int
    intervals_disturbed: int
    disturbed_kept: bool
    steal: float | None
    idle_pct: float | None
    wait_pct: float
    sampler_cpu_s: float
    sampler_cpu_pct: float
    batch: int
    task_cpus: list[int]
    sampler_cpus: list[int] | None
    total_median: float
    total_min: float
    total_max: float
    total_cv: float | None
    per_task: list[float]
    task_min: float
    task_median: float
    task_max: float
    fairness: float | None
    task_cv: float
    ns_per_op_cpu: float | None
    cpu_rate_median: float | None
    ns_per_op_wall: float | None
    ns_per_op: float | None
    speedup: float
    speedup_min: float
    speedup_max: float
    efficiency: float
    efficiency_min: float
    efficiency_max: float
    cpu_efficiency: float
    attempts: int
    passes: int
    pass_totals: list[float | None]
    pass_speedups: list[float]
    totals_speedup: float
    pass_speedup: float
    passes_disagree: bool
    description: str | None
    status: str
    reason: str | None
    notes: list[str]


@dataclass(frozen=True)
class Series:
    """One benchmark under `scale` in one mode: a summary per task count, in task order."""

    bench: str
    param: int | None
    mode: str
    points: tuple[ScalePoint, ...] = ()  # summaries, each with status/reason
    variant: str = ""  # e.g. the allocator linked in (scale --allocator)

    @property
    def label(self) -> str:
        variant = f" [{self.variant}]" if self.variant else ""
        return f"{self.bench}{'' if self.param is None else f'[{self.param}]'}{variant} ({self.mode})"


# What `variants` stores in its run's ``summary.variants`` and writes with --json
# (experiments/variants.summary): one BenchEntry per benchmark, one VariantEntry per variant.
class SizeFigures(TypedDict):
    """size(1)'s Berkeley figures in bytes (build.elf.berkeley_sizes): text, data, bss, dec = their sum."""

    text: int
    data: int
    bss: int
    dec: int


class AllocatorInfo(TypedDict):
    """The allocator a runner calls (build.allocators.describe): its name, the file its malloc
    resolved to (None: a runner too old to say) and that file's package version."""

    name: str
    library: str | None
    version: str | None


# The typed parts of a Result (its class docstring): JSON-shaped records, as store/rows.py keeps
# them in the results table's ``extra`` column (one part's keys, then what the analysis added).
class Simulated(TypedDict, total=False):
    """What callgrind simulated for a result of kind simulated (runner.callgrind.result_fields):
    ``simulated`` (true), the ``backend`` (callgrind), every event per operation (``events``,
    Ir first), the cache geometry simulated (``cache``: level → size in bytes, ways, line
    bytes) and the two batch sizes the per-op figures are the difference of (``n``)."""

    simulated: bool
    backend: str
    events: dict[str, float]
    cache: dict[str, list[int]]
    n: list[int]


class StatMetric(TypedDict, total=False):
    """One metric of `stat` (stats.repetitions.result_rows): ``stat`` (true: store.rows.guess_kind),
    the ``backend``, ``simulated`` (a callgrind event), the ``metric``'s name, its ``values`` per
    repetition (None: not counted there), ``max``, ``stddev``, ``sem`` (MetricSummary), its
    ``notes``, ``derived``, the ``command`` (argv) and ``different_work`` (1-based repetitions,
    same_work); on the first row only, every repetition's launcher record (``repetitions``)
    and the ``exit`` summary (exit_summary)."""

    stat: bool
    backend: str
    simulated: bool
    metric: str
    values: list[float | None]
    max: float | None
    stddev: float | None
    sem: float | None
    notes: list[str]
    derived: bool
    command: list[str]
    different_work: list[int]
    repetitions: list[Repetition]
    exit: str


class ScaleRecord(ScalePoint, total=False):
    """One task count of `scale` as its scaling result keeps it (stats.scaling.row_fields): the
    summary's keys (ScalePoint; ``status`` and ``reason`` are the result's own columns, not
    kept here), the benchmark's own parameter (``bench_param``), the table's ``notes``, the
    runner's start and end lines, its first task crash and its interval lines; a will-it-scale
    test case's ``description`` (experiments.scale)."""

    bench_param: int | None
    start: ScaleStart | None
    end: ScaleEnd | None
    crash: TaskCrash | None
    intervals: list[Interval]


class WisCost(TypedDict, total=False):
    """The cost of one operation of a will-it-scale test case at one task (stats.scaling.op_cost,
    experiments.wis): 1 task in ``mode``, over ``processes`` runner processes of ``interval``
    seconds' intervals; its throughput (``ops_per_s``, the median interval's), the share of the
    intervals the task waited for its CPU (``wait_pct``, %), the test case's ``description``,
    the CPU, each process's interval lines; where cycles~ came from (``cycles_source``), the
    core clock per tick before and after each process (``chain_clock``), why cycles~ is
    doubtful when it is (``cycles_doubtful``); the test case's source ``file``."""

    tasks: int
    mode: str
    processes: int
    interval: float | None
    ops_per_s: float | None
    wait_pct: float | None
    description: str | None
    cpu: int | None
    intervals: list[list[Interval]]
    cycles_source: str
    chain_clock: list[list[float | None]]
    cycles_doubtful: str
    file: str


class GbenchCost(TypedDict, total=False):
    """A Google Benchmark executable's benchmark as `run --gbench` stores it (experiments.gbench):
    the ``executable`` and its library's ``library_version`` ("1.7": one that prints none), the
    ``processes`` (one invocation each, pinned to ``cpu``, ``min_time`` seconds, selecting this
    benchmark alone), per invocation the library's ``iterations``, its real and cpu time per
    iteration (``real_ns``, ``cpu_ns``), the ``threads`` (->Threads(n)), which of the two times
    the row's figures are and why (``figure``: experiments.gbench.figures), the median of each
    user counter over the invocations (``user_counters``: items_per_second, bytes_per_second and
    the benchmark's own), where cycles~ came from (``cycles_source``: the core clock in each
    invocation's own process) or why there is none (``no_clock``), and each invocation's core
    clock (``core_ghz``, GHz). The lists are over every invocation that ended OK, in order."""

    executable: str
    library_version: str
    processes: int
    cpu: int | None
    min_time: float
    iterations: list[int]
    real_ns: list[float]
    cpu_ns: list[float]
    threads: int
    figure: str
    user_counters: dict[str, float]
    cycles_source: str
    no_clock: str
    core_ghz: list[float | None]


class Emulated(TypedDict):
    """An emulated variant's result (variants under qemu-user: no figure): ``emulated`` (true)
    and whether its verify hook passed (None: no hook or not run)."""

    emulated: bool
    verified: bool | None


class CounterEntry(TypedDict, total=False):
    """One requested event of a result's ``counters``: its ``status`` (ok, not counted, …) and,
    when it was counted in every batch, its slope ``per_op`` (events per operation) with the 95%
    CI ``ci_low``/``ci_high`` (stats.estimators.estimate)."""

    status: str
    per_op: float
    ci_low: float
    ci_high: float


class Counters(TypedDict):
    """A result's ``counters`` (-e; stats.result.counter_fields): each requested event by name,
    and the metrics derived from their per-op counts (stats.result.derived: IPC, MPKI,
    branch-miss rate)."""

    events: dict[str, CounterEntry]
    derived: dict[str, float]


class Disturbance(TypedDict):
    """A disturbed result's ``disturbance`` (stats.result.disturbance): batches in all, and how
    many were disturbed, preempted, migrated."""

    batches: int
    disturbed: int
    preempted: int
    migrated: int


class PerProcess(TypedDict, total=False):
    """A result's ``per_process`` (stats.result.two_level): each runner process's own median, in
    the timer's unit (``per_op``) and in cycles~ (``cycles_per_op``), in process order."""

    per_op: list[float]
    cycles_per_op: list[float]


class RunToRun(TypedDict):
    """This host's run-to-run spread of the benchmark: the sd of its run estimates pooled over
    earlier replicate groups and its degrees of freedom (experiments.history.host_spread)."""

    sd: float
    df: int


class _VariantKeys(TypedDict):
    """The keys every VariantEntry has (a TypedDict base, as Required[] is Python 3.11's)."""

    label: str
    status: str
    emulated: bool
    baseline: bool


class PerOpJSON(TypedDict):
    """A PerOp as JSON: ``value`` and its 95% CI ``ci_low``/``ci_high`` (None: none computed)."""

    value: float
    ci_low: float | None
    ci_high: float | None


class VariantEntry(_VariantKeys, total=False):
    """One variant of one benchmark in `variants`' summary. Always: ``label``, ``status``
    (model.STATUSES), ``emulated``, ``baseline`` (the first variant, which the others are
    judged against). A measured variant adds its build (``cc``, ``cflags``, ``target``), the
    sizes in bytes (``body_bytes`` of the benchmark's body symbol, the binary's
    ``text/data/bss_bytes``; ``size`` of the benchmark file's own objects and ``binary_size`` of
    the runner: size(1)), ``per_invocation`` (median cost per op of each invocation, in the
    benchmark's unit; NaN: none), the spread of those (stats.repetitions.spread: ``mean``,
    ``stddev_pct`` in %, the 95% t CI ``ci_low``/``ci_high``, ``best``; absent when emulated),
    ``per_op``: its stored result's per-op figure and 95% CI in the benchmark's unit (Result.figure;
    the one history and show give it, where ``mean`` is the invocations' mean; absent in runs
    stored before it was), ``comparison`` against the baseline (None: none reached, ``note`` says why), callgrind's
    events per op (``simulated``), the -e events per op (``counters``), ``different_work`` (a
    note from Ir), the ``allocator`` linked in; with --disasm the body's instructions
    (``disasm``), their counts by class (``classes``) and the functions called (``calls``).
    A skipped variant has only the four keys, ``reason`` and ``mean`` = None."""

    cc: str
    cflags: list[str]
    target: str | None
    reason: str | None
    body_bytes: int | None
    text_bytes: int | None
    data_bytes: int | None
    bss_bytes: int | None
    per_invocation: list[float] | None
    comparison: ComparisonJSON | None
    simulated: dict[str, float] | None
    note: str | None
    size: SizeFigures | None
    binary_size: SizeFigures | None
    different_work: str | None
    mean: float | None
    stddev_pct: float | None
    ci_low: float | None
    ci_high: float | None
    best: float | None
    per_op: PerOpJSON | None
    counters: dict[str, float | None] | None
    allocator: AllocatorInfo | None
    disasm: list[str]
    classes: dict[str, int]
    calls: list[str]


class BenchEntry(TypedDict):
    """One benchmark in `variants`' summary: its name and parameter, the unit of its variants'
    figures (the timer's, cycles~ where the add chain was timed; "" when none was measured) and
    its variants, the baseline first, skipped ones last."""

    bench: str
    param: int | None
    unit: str
    variants: list[VariantEntry]


# The fleet (docs/fleet.md): what a host's job came to, as the controller stores and shows it.
# A host's row: ok | unreachable | check failed | busy | failed | interrupted; a job's: running |
# complete | interrupted | failed (store/schema.py's fleet_hosts and fleet_jobs).
FLEET_HOST_STATUSES = ("ok", "unreachable", "check failed", "busy", "failed", "interrupted")


class CheckFinding(TypedDict, total=False):
    """One finding of ``cyclebench check --json`` as a host wrote it (env.check.Finding.to_dict),
    or one of the fleet's own (name, status ``OK``/``FATAL``, detail): JSON from the host, kept
    with the host's fleet row as it came."""

    name: str
    status: str
    detail: str
    fix: str | None
    fix_writes: list[list[str]]
    revert_writes: list[list[str]]


@dataclass(frozen=True, kw_only=True)
class Machine:
    """The machine an inventory name reached: its own hostname, host id (hashed machine-id), boot
    id and CPU model; None where the host did not say (a job refused before its agent started
    names the hostname alone: fleet/bootstrap.py)."""

    hostname: str | None = None
    host_id: str | None = None
    boot_id: str | None = None
    cpu_model: str | None = None

    @classmethod
    def from_json(cls, doc: Mapping[str, Any] | None) -> "Machine | None":
        """The record of a JSON object (agent.json's ``machine``, the stored column); None for
        None or an empty object. Keys it does not know are left out."""
        if not doc:
            return None
        return cls(**{f.name: (None if doc.get(f.name) is None else str(doc[f.name])) for f in fields(cls)})

    def to_json(self) -> dict[str, str]:
        """The JSON object: the fields the host said, the unknown (None) left out."""
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True, kw_only=True)
class FleetHost:
    """One host's outcome in a fleet job: its inventory name, ``status`` (FLEET_HOST_STATUSES),
    why (None when ok), the check's findings there (None when none came back), the ids of its
    runs in the controller's database, the machine, and ``results``: how many result rows those
    runs hold (counted when they land; not stored)."""

    host: str
    status: str
    reason: str | None = None
    check: tuple[CheckFinding, ...] | None = None
    run_ids: tuple[int, ...] = ()
    machine: Machine | None = None
    results: int = 0


@dataclass(frozen=True, kw_only=True)
class FleetHostRow:
    """A host's stored row of one fleet job (store/fleet.py): the outcome's stored fields, when it
    was recorded (ISO 8601 UTC), and its job's command (argv after ``cyclebench``), status and
    start."""

    job_id: int
    host: str
    status: str
    reason: str | None
    finished_at: str | None
    check: tuple[CheckFinding, ...] | None
    run_ids: tuple[int, ...]
    machine: Machine | None
    command: tuple[str, ...]
    job_status: str
    job_started_at: str


class EventCounts(TypedDict):
    """One counter event over the whole runs of a command (counters.events.per_run_counts): its
    name, its unit ("ms" for the time events, read in ns; else "count"), one value per run (None:
    not counted there, scaled for multiplexing otherwise), why each run without a read had none,
    the enabled and running ns summed over the runs that read it, whether it counted user space
    only (perf_event_open(2): exclude_kernel)."""

    name: str
    unit: str
    values: list[float | None]
    errors: list[str]
    enabled: int
    running: int
    user_only: bool


# The machine a run measured on: env.sysinfo.capture() and its parts, stored as JSON in the runs
# table's ``env`` column (store/schema.py) and in the run file, and read back by `check`, `show`,
# the exports and the site. Each part reads Linux pseudo-files (proc(5); the kernel's
# Documentation/ABI/testing/sysfs-devices-system-cpu): a field is None where the file is missing
# or unreadable. Every key is always written; old runs may lack the later ones, so readers .get().


class CpuInfo(TypedDict):
    """The CPU's identity and features (env.sysinfo.cpu_info: the first block of /proc/cpuinfo;
    on arm64 vendor is the implementer's name, family/model/stepping the CPU architecture, part
    and revision, flags the Features), the number of present CPUs and the online ones."""

    model_name: str | None
    vendor: str | None
    family: int | None
    model: int | None
    stepping: int | None
    microcode: str | None
    flags: list[str] | None
    logical_cpus: int | None
    online: list[int] | None


class Topology(TypedDict):
    """Where a CPU sits (env.sysinfo.cpu_topology; /sys/devices/system/cpu/cpuN/topology): its SMT
    siblings (itself included), core, package, die and NUMA node, and the machine's SMT state
    (cpu/smt/active, control)."""

    cpu: int
    smt_siblings: list[int] | None
    core_id: int | None
    package_id: int | None
    die_id: int | None
    numa_node: int | None
    smt_active: bool | None
    smt_control: str | None


class Frequency(TypedDict):
    """A CPU's frequency scaling (env.sysinfo.frequency_info; the kernel's admin-guide/pm/
    cpufreq.rst, intel_pstate.rst, amd-pstate.rst): cpufreq driver and governor, the policy's
    limits and current frequency (scaling_*), the hardware's (cpuinfo_*) and base frequency, all
    kHz; energy_performance_preference, the p-state driver's status, intel_pstate's no_turbo,
    the boost switch and whether turbo is on (derived from the two)."""

    driver: str | None
    governor: str | None
    min_khz: int | None
    max_khz: int | None
    cur_khz: int | None
    hw_min_khz: int | None
    hw_max_khz: int | None
    base_khz: int | None
    epp: str | None
    pstate_status: str | None
    no_turbo: int | None
    boost: int | None
    turbo: bool | None


class Tsc(TypedDict):
    """Whether the TSC is usable as a clock (env.sysinfo.tsc_info): cpuinfo's flags (None: no x86
    flags; constant_tsc and nonstop_tsc together are the invariant TSC, Intel SDM vol. 3 §18.17)
    and the kernel's current and available clocksources."""

    constant_tsc: bool | None
    nonstop_tsc: bool | None
    tsc_known_freq: bool | None
    tsc_reliable: bool | None
    rdtscp: bool | None
    clocksource: str | None
    available_clocksources: list[str] | None


class Pmu(TypedDict):
    """Whether hardware counters can be used (env.sysinfo.pmu_info): perf_event_paranoid
    (perf_event_open(2)), whether a hardware PMU exists, its device and caps/pmu_name, every
    /sys/bus/event_source device, nmi_watchdog (1: it holds one counter)."""

    perf_event_paranoid: int | None
    hardware_pmu: bool
    pmu: str | None
    pmu_name: str | None
    event_sources: list[str] | None
    nmi_watchdog: int | None


class Compiler(TypedDict):
    """Which compiler ``cc`` is (env.sysinfo.compiler_info): the command as given, its path on
    PATH, the first line of ``cc --version``, ``cc -dumpmachine``'s target."""

    cc: str
    path: str | None
    version: str | None
    target: str | None


class KernelInfo(TypedDict):
    """The kernel (env.kernel.kernel_info): release, version and machine (uname(2)), the command
    line, the CPUs isolated from the scheduler and in nohz_full mode as in effect
    (/sys/devices/system/cpu/{isolated,nohz_full}, else as asked; [] none, None unknown),
    isolcpus's flags, and what the command line asks for (kernel-parameters.txt)."""

    release: str | None
    version: str | None
    machine: str | None
    cmdline: str | None
    isolcpus: list[int] | None
    isolcpus_flags: list[str]
    nohz_full: list[int] | None
    cmdline_isolcpus: list[int] | None
    cmdline_nohz_full: list[int] | None


class Load(TypedDict):
    """/proc/loadavg (env.kernel.load_info; proc(5)): run-queue averages over 1, 5 and 15
    minutes, the runnable scheduling entities now and all of them; None when unreadable."""

    load1: float | None
    load5: float | None
    load15: float | None
    running: int | None
    total: int | None


class BusyThread(TypedDict):
    """A thread that last ran on the measured CPU and is runnable (env.kernel.busy_on_cpu)."""

    pid: int
    tid: int
    comm: str


class PythonInfo(TypedDict):
    """The Python that ran cyclebench (platform(3)-style: version, implementation, executable)."""

    version: str
    implementation: str
    executable: str


class ScaleSettings(TypedDict):
    """`scale`'s settings, kept in its run's environment (experiments.scale): task counts, modes,
    seconds of a run, of an interval and of warm-up, the task CPUs, the batch target (ns; None:
    sized by the engine), the wait limit (share of an interval), retries and passes."""

    tasks: list[int]
    modes: list[str]
    duration: float
    interval: float
    warmup: float
    cpus: list[int]
    batch_ns: int | None
    wait_limit: float
    retries: int
    passes: int


class WisSettings(TypedDict):
    """`run` of will-it-scale test cases (experiments.wis): the mode (threads | processes), the
    runner processes, and the seconds of a run, of an interval and of warm-up."""

    mode: str
    processes: int
    duration: float
    interval: float
    warmup: float


class GbenchSettings(TypedDict):
    """`run --gbench` (experiments.gbench): the executable, its library's version, the filter
    (the library's --benchmark_filter regex; None: all), invocations per benchmark and the
    minimum time of each (s)."""

    executable: str
    library_version: str
    filter: str | None
    processes: int
    min_time: float


class Revisions(TypedDict, total=False):
    """The revisions a sitting built (experiments.revcompare, experiments.bisect; docs/revisions.md):
    the repository, A and B's commits (compare --rev, ci) or every side's (bisect), the build
    command, and how the revisions' code was built and run (``confinement``: ``bwrap``, in a
    bubblewrap sandbox, or ``unconfined: REASON`` — ``--no-sandbox``, bwrap missing or refused;
    absent from runs stored before it was recorded); ``depths``: each side's commit depth, the order
    history sorts a revision series by (absent from runs stored before it was kept)."""

    repo: str
    a: str
    b: str
    sides: list[str]
    build: list[str]
    confinement: str
    depths: dict[str, int]  # each side's commits behind it, itself counted (git rev-list --count)


class EnvExtra(TypedDict, total=False):
    """What a design adds to its run's environment (experiments.session.open_run's env_extra)."""

    scale: ScaleSettings
    wis: WisSettings
    gbench: GbenchSettings
    revisions: Revisions


class Environment(EnvExtra, total=False):
    """A run's environment (env.sysinfo.capture, on the CPU ``cpu``), as stored: the parts above,
    the hypervisor's name (None: bare metal), the hostname, boot id (env.identity.boot_id), the
    installed cyclebench's version, when it was captured (Unix time, s) and how long it took (s);
    experiments.session.open_run adds `cyclebench check`'s findings and its design's EnvExtra.
    total=False: runs stored before a key existed lack it."""

    cpu: int
    topology: Topology
    cpu_info: CpuInfo
    frequency: Frequency
    kernel: KernelInfo
    hypervisor: str | None
    tsc: Tsc
    pmu: Pmu
    load: Load
    busy: list[BusyThread]
    compiler: Compiler
    python: PythonInfo
    hostname: str | None
    boot_id: str | None
    cyclebench_version: str | None
    captured_at: float
    capture_s: float
    check: list[CheckFinding]
