"""Records that cross rooms: what the runner produced, what a result and a comparison are,
and the order result rows are shown in (suite_order: the store reads them back in it).

Imports nothing of the project (import-linter checks it): every room may use these types,
and none of them knows how they are made, analysed, stored or shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
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


class Chain(TypedDict, total=False):
    """The calibration chains a runner process timed (engine/chain.h, docs/method.md §3), in
    timer ticks: the add chain of ``adds`` and the imul chain of ``imuls`` × ``imul_latency``
    cycles five times at the start and the end (``add_ticks``, ``imul_ticks``: the fastest of
    each), and chains of ``short_adds`` and ``adds`` adds timed alternately for the fixed part
    (``short_ticks``, ``long_ticks``). ``kind``: add, or none where no chain exists."""

    kind: str
    adds: int
    imuls: int
    imul_latency: int
    add_ticks: list[int]
    imul_ticks: list[int]
    short_adds: int
    short_ticks: list[int]
    long_ticks: list[int]


class RunnerResult(TypedDict, total=False):
    """A runner's result line for one benchmark (engine/measure.c; runner/protocol.py), with
    what interleave.merge adds when processes are combined. Per sample (one batch): ``n``
    operations, ``ticks`` of the timer (``unit``: ticks or ns), ``cal`` ticks of the add chain
    timed next to it, ``disturbed`` (1: a context switch or migration), ``pmu_cycles`` (a PMU's
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
    timer_overhead: dict[str, float]
    disturb_source: str
    cpu: int
    chain: Chain
    chains: list[Chain]
    verified: bool
    reason: str | None
    pmu_error: str | None
    fault: str
    n: list[int]
    ticks: list[int]
    cal: list[int]
    disturbed: list[int]
    pmu_cycles: list[int]
    counters: Any
    processes: int
    process_rounds: list[int]
    calibration_rse: float
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
    result: RunnerResult | None = None
    stderr: str = ""
    wall_s: float = 0.0
    lines: list[dict[str, Any]] = field(default_factory=list)


class _Columns(Mapping[str, Any]):
    """A frozen record of a table's row read as a read-only mapping of its columns (``r["x"]``,
    ``r.get("x")``, ``dict(r)``), equal to any mapping of the same items: the readers written
    for rows keep working on records. The columns are the dataclass's fields, in order."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    def __getitem__(self, key: str) -> Any:
        if key not in self.__dataclass_fields__:  # a dict: no scan of the 53 columns per lookup
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.__dataclass_fields__)

    def __len__(self) -> int:
        return len(self.__dataclass_fields__)


@dataclass(frozen=True, eq=False)
class Result(_Columns):
    """One row of the results table, as store/ reads it back: a frozen record (a transformation
    makes a new one: ``dataclasses.replace``), read by attribute (``r.cycles_per_op``) or, as
    the rows stats/ makes before they are stored, as a read-only mapping of its columns
    (``r["per_op"]``, ``r.get("extra")``, ``dict(r)``); equal to any mapping of the same items.

    ``kind`` says which of the six it is (timing | simulated | scaling | stat | emulated |
    profile); which fields are set depends on it. Units: ``unit`` names the unit of
    per_op/ci/min/median (ref-cycles, ticks, ns, Ir, ops/s, or a stat metric's); cycles_* are
    cycles~ (calibrated core cycles); pmu_* the PMU's cycles event; ns_per_op nanoseconds;
    wall_s seconds. ``extra`` is the runner's result line minus the samples, with what the
    analysis added (counters, disturbance, per-process figures, the allocator).
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
    extra: Mapping[str, Any] | None = None
    plan_index: int | None = None  # its item's place in the plan `run` measured (0-based; suite_order)

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Result:
        """The record of a row (a database row, a run file's result): its known columns; others
        (a run file's ``samples``, ``run_to_run``) are not part of it."""
        return cls(**{k: v for k, v in row.items() if k in RESULT_KEYS})

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
    calibration: Mapping[str, Any] | None = None
    env: Mapping[str, Any] | None = None
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

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Run:
        """The record of a runs row (columns it does not know are not part of it)."""
        return cls(**{k: v for k, v in row.items() if k in RUN_KEYS})

    def __repr__(self) -> str:
        return f"Run(#{self.id}, {self.status!r}, host={self.host!r})"


RUN_KEYS: tuple[str, ...] = tuple(f.name for f in fields(Run))


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


@dataclass(frozen=True, eq=False)
class TimedProfileRow(_Columns):
    """One function of a timed flat profile (stats/profile.flat_profile, docs/method.md §10), its
    durations per call in the profile's unit (cycles~ or ns): ``self``/``total`` compensated
    (the probe's cost subtracted; medians over the calls, a parent's total at least its children's),
    ``*_raw`` as recorded, ``self_mean`` gprof's time/calls, ``self_pm``/``total_pm`` what the
    probe may be off by (None without a probe); ``comp_share`` the compensation's share of the
    raw self (``compensated`` when over stats.profile.COMPENSATION_NOTE); ``pct`` the share of
    the profile (calls × max(self, 0)); ``ir_self``/``ir_total`` callgrind's exact instructions
    per call where it could run the program. Stored whole as its result's ``extra``."""

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

    def to_json(self) -> dict[str, object]:
        """The row as stored in ``extra`` (Ir only where callgrind counted it)."""
        return {k: v for k, v in self.items() if v is not None or k not in ("ir_self", "ir_total")}

    @classmethod
    def of(cls, doc: Mapping[str, Any]) -> TimedProfileRow:
        """The row of a stored ``extra``."""
        return cls(**{k: doc.get(k) for k in cls.__dataclass_fields__ if k in doc})


@dataclass(frozen=True, eq=False)
class SimulatedProfileRow(_Columns):
    """One function of a flat profile under callgrind (exact counts, nothing to compensate):
    calls; ``self``/``total`` instructions per call, ``self_ir``/``total_ir`` in all; ``pct``
    its share of the program's own instructions. Stored whole as its result's ``extra``."""

    function: str
    calls: int
    self: float
    total: float
    self_ir: int
    total_ir: int
    pct: float

    def to_json(self) -> dict[str, object]:
        """The row as stored in ``extra``."""
        return dict(self)

    @classmethod
    def of(cls, doc: Mapping[str, Any]) -> SimulatedProfileRow:
        """The row of a stored ``extra``."""
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
    variant and allocator (``extra["allocator"]["name"]``), each in the order it first appears
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
    extra = row.get("extra")
    alloc = extra.get("allocator") if isinstance(extra, Mapping) else None
    name = alloc.get("name") if isinstance(alloc, Mapping) else None
    return bench.split("/", 1)[0], bench, str(row.get("variant") or ""), str(name or "")

class Interval(TypedDict, total=False):
    """One interval line of a scaling runner (engine/scale.c, emit_interval): its index ``i``,
    ``t`` seconds since the start and its length ``dt`` (s), the timer's ``ticks`` over it,
    ``warmup`` (not measured), each task's operations in it (``deltas``) and, with schedstat,
    each task's run and wait time (``run_ns``, ``wait_ns``, ns)."""

    type: str
    i: int
    t: float
    dt: float
    ticks: int
    warmup: bool
    deltas: list[int]
    run_ns: list[int]
    wait_ns: list[int]


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
    intervals: list[Interval] = field(default_factory=list)
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

    def to_dict(self) -> ComparisonJSON:
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
    sequential: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "param": self.param, "unit": self.unit,
                "comparison": self.cmp.to_dict() if self.cmp else None, "note": self.note,
                "sequential": dict(self.sequential) if self.sequential is not None else None}


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


class _VariantKeys(TypedDict):
    """The keys every VariantEntry has (a TypedDict base, as Required[] is Python 3.11's)."""

    label: str
    status: str
    emulated: bool
    baseline: bool


class VariantEntry(_VariantKeys, total=False):
    """One variant of one benchmark in `variants`' summary. Always: ``label``, ``status``
    (model.STATUSES), ``emulated``, ``baseline`` (the first variant, which the others are
    judged against). A measured variant adds its build (``cc``, ``cflags``, ``target``), the
    sizes in bytes (``body_bytes`` of the benchmark's body symbol, the binary's
    ``text/data/bss_bytes``; ``size`` of the benchmark file's own objects and ``binary_size`` of
    the runner: size(1)), ``per_invocation`` (median cost per op of each invocation, in the
    benchmark's unit; NaN: none), the spread of those (stats.repetitions.spread: ``mean``,
    ``stddev_pct`` in %, the 95% t CI ``ci_low``/``ci_high``, ``best``; absent when emulated),
    ``comparison`` against the baseline (None: none reached, ``note`` says why), callgrind's
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
    def from_json(cls, doc: Mapping[str, Any] | None) -> Machine | None:
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
