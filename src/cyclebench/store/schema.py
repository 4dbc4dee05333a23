"""The database schema at the newest Alembic revision (store/migrations): ``runs`` (one per
command: environment, calibration, status, where and whether it still runs), ``results`` (one per
benchmark × parameter × variant: its kind, estimators, status, reason), ``samples`` (the raw batch
timings, so any result can be re-analysed) and ``meta``. A new column is a migration too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from sqlalchemy import JSON, BigInteger, Boolean, Column, Float, ForeignKey, Integer, MetaData, String, Table, Text

metadata = MetaData()

runs = Table(
    "runs", metadata,
    Column("id", Integer, primary_key=True),
    Column("started_at", String(40), nullable=False),
    Column("finished_at", String(40)),
    Column("status", String(20), nullable=False),  # running | complete | interrupted | failed | abandoned
    Column("command", JSON),  # argv of the cyclebench invocation
    Column("host", String(255)),
    Column("cpu_model", String(255)),
    Column("cpu", Integer),  # the CPU the runner was pinned to
    Column("tool_version", String(40)),
    Column("code_rev", String(80)),  # git revision of the measured sources, when in a repository
    Column("build", JSON),  # compiler, flags, sources, cache key
    Column("calibration", JSON),  # timer, its rate and the rate's source, its cost
    Column("env", JSON),  # sysinfo.capture()
    Column("summary", JSON),  # results of the command beyond rows, e.g. compare verdicts
    # where it runs and whether it still does (store.liveness): a hash of the machine-id, the
    # measuring process, and the last time it said it was alive (every HEARTBEAT_EVERY s)
    Column("host_id", String(64)),
    Column("pid", Integer),
    Column("heartbeat_at", String(40)),
    # when that process started (/proc/PID/stat field 22, clock ticks after boot; migration 0006):
    # a pid that lives but started at another time is another process
    Column("pid_start", BigInteger),
    # what the user called it (--label key=value) and the replicate group it belongs to
    # (`run --runs N`: the group's first run id), both from migration 0003
    Column("labels", JSON),
    Column("group_id", Integer, index=True),
    # who and what made it, as columns to filter on (env.identity.columns; migration 0004): uname -r
    # and -v, the boot it ran in, the CPU's microcode, the compiler (first line of `cc --version`;
    # None when nothing was built), and whether the measured sources differ from code_rev
    Column("kernel_release", String(255)),
    Column("kernel_version", String(255)),
    Column("boot_id", String(64)),
    Column("microcode", String(40)),
    Column("compiler", String(255)),
    Column("code_dirty", Boolean),
    # why it was measured (model.PURPOSES: run | revision | variants | compare | fleet; migration 0009):
    # a series holds one purpose (model.series_key)
    Column("purpose", String(20)),
)

results = Table(
    "results", metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("bench", String(255), nullable=False, index=True),
    Column("param", BigInteger),
    Column("variant", String(255), nullable=False, default=""),
    Column("status", String(20), nullable=False),  # see runner.Outcome
    Column("reason", Text),
    Column("unit", String(20)),  # unit of the per-op figures: ref-cycles | ticks | ns
    Column("per_op", Float),
    Column("ci_low", Float),
    Column("ci_high", Float),
    Column("intercept", Float),
    Column("median", Float),
    Column("median_ci_low", Float),
    Column("median_ci_high", Float),
    Column("min", Float),
    Column("mad", Float),
    Column("mean", Float),
    Column("cv", Float),
    Column("rcv", Float),  # robust CV: scaled MAD / median
    Column("confidence", Float),
    Column("method", String(20)),  # how per_op and its CI were estimated (stats.py)
    Column("rounds", Integer),
    Column("ns_per_op", Float),
    # core cycles estimated by the add-chain calibration (unit "cycles~"), docs/method.md §3
    Column("cycles_per_op", Float),
    Column("cycles_ci_low", Float),
    Column("cycles_ci_high", Float),
    Column("cycles_min", Float),
    Column("cycles_rcv", Float),
    Column("core_ghz", Float),  # median core clock during the samples
    Column("ratio_rcv", Float),  # stability of the core/timer ratio (robust CV)
    Column("chain_agreement", Float),  # imul-chain clock / add-chain clock
    Column("n_disturbed", Integer),  # samples dropped: a context switch or migration hit them
    Column("n_trimmed", Integer),  # samples dropped: the slow side of their round (stats.slow_side)
    # the PMU's cycles event per op, where a PMU exists (unit "cycles"), and cycles~ / cycles
    Column("pmu_cycles_per_op", Float),
    Column("pmu_ci_low", Float),
    Column("pmu_ci_high", Float),
    Column("pmu_agreement", Float),
    # net of the loop's own cost (loop/empty measured in the same run), CI widened in quadrature
    Column("net_per_op", Float),
    Column("net_ci_low", Float),
    Column("net_ci_high", Float),
    Column("cycles_net", Float),
    Column("cycles_net_ci_low", Float),
    Column("cycles_net_ci_high", Float),
    Column("n_samples", Integer),
    Column("outliers", Integer),
    Column("timer_overhead", Float),  # median ticks of a back-to-back start/stop pair
    Column("wall_s", Float),
    Column("created_at", String(40), nullable=False),
    Column("extra", JSON),  # the record's typed parts (model.Result): store/rows.py writes and reads it
    Column("kind", String(20)),  # timing | simulated | scaling | stat | emulated | profile (model.KINDS)
    # its item's place in the plan `run` measured (migration 0007; NULL: by id), model.suite_order
    Column("plan_index", Integer),
)

samples = Table(
    "samples", metadata,
    Column("result_id", Integer, ForeignKey("results.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("idx", Integer, nullable=False),
    Column("iters", BigInteger, nullable=False),
    Column("ticks", BigInteger, nullable=False),
    Column("cal", BigInteger),  # ticks of the calibration add chain timed next to this batch
    Column("disturbed", Integer),  # 1: a context switch or migration happened around the batch
    Column("pmu", BigInteger),  # PMU cycles counted around the batch (None without a PMU)
)

meta = Table("meta", metadata, Column("key", String(40), primary_key=True), Column("value", String(255)))

RESULT_FIELDS = tuple(c.name for c in results.columns if c.name not in ("id", "run_id"))
RUN_FIELDS = tuple(c.name for c in runs.columns if c.name != "id")


class RunRow(TypedDict, total=False):
    """A row of ``runs`` as it is written (its columns but ``id``: RUN_FIELDS), typed as
    model.Run reads it back: times as ISO 8601 text, ``command`` the argv (passwords masked),
    ``build``/``calibration``/``env``/``summary`` the JSON its command stored."""

    started_at: str
    finished_at: str | None
    status: str | None
    command: list[str] | None
    host: str | None
    cpu_model: str | None
    cpu: int | None
    tool_version: str | None
    code_rev: str | None
    build: Mapping[str, Any] | None
    calibration: Mapping[str, Any] | None
    env: Mapping[str, Any] | None
    summary: Mapping[str, Any] | None
    host_id: str | None
    pid: int | None
    heartbeat_at: str | None
    pid_start: int | None
    labels: Mapping[str, str] | None
    group_id: int | None
    kernel_release: str | None
    kernel_version: str | None
    boot_id: str | None
    microcode: str | None
    compiler: str | None
    code_dirty: bool | None
    purpose: str | None


class ResultRow(TypedDict, total=False):
    """A row of ``results`` as it is written (its columns but ``id`` and ``run_id``:
    RESULT_FIELDS), typed and in units as model.Result reads it back."""

    bench: str
    param: int | None
    variant: str | None
    status: str
    reason: str | None
    unit: str | None
    per_op: float | None
    ci_low: float | None
    ci_high: float | None
    intercept: float | None
    median: float | None
    median_ci_low: float | None
    median_ci_high: float | None
    min: float | None
    mad: float | None
    mean: float | None
    cv: float | None
    rcv: float | None
    confidence: float | None
    method: str | None
    rounds: int | None
    ns_per_op: float | None
    cycles_per_op: float | None
    cycles_ci_low: float | None
    cycles_ci_high: float | None
    cycles_min: float | None
    cycles_rcv: float | None
    core_ghz: float | None
    ratio_rcv: float | None
    chain_agreement: float | None
    n_disturbed: int | None
    n_trimmed: int | None
    pmu_cycles_per_op: float | None
    pmu_ci_low: float | None
    pmu_ci_high: float | None
    pmu_agreement: float | None
    net_per_op: float | None
    net_ci_low: float | None
    net_ci_high: float | None
    cycles_net: float | None
    cycles_net_ci_low: float | None
    cycles_net_ci_high: float | None
    n_samples: int | None
    outliers: int | None
    timer_overhead: float | None
    wall_s: float | None
    created_at: str | None
    extra: Mapping[str, Any] | None  # a record's typed parts (store.rows.row_of)
    kind: str | None
    plan_index: int | None


# Fleet jobs in the controller's database (`cyclebench fleet`, store/fleet.py; migration 0005)
fleet_jobs = Table(
    "fleet_jobs", metadata,
    Column("id", Integer, primary_key=True),
    Column("started_at", String(40), nullable=False),
    Column("finished_at", String(40)),
    Column("status", String(20), nullable=False),  # running | complete | interrupted | failed
    Column("inventory", Text),
    Column("command", JSON),  # the cyclebench command run on every host (argv after --)
    Column("mode", String(20)),  # bundles (JSON back to the controller) | direct (hosts write --db)
)

fleet_hosts = Table(
    "fleet_hosts", metadata,
    Column("id", Integer, primary_key=True),
    Column("job_id", Integer, ForeignKey("fleet_jobs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("host", String(255), nullable=False, index=True),  # the inventory name
    Column("status", String(20), nullable=False),  # ok | unreachable | check failed | busy | failed | interrupted
    Column("reason", Text),
    Column("finished_at", String(40)),
    Column("check", JSON),  # `cyclebench check --json` there, plus the fleet's own findings
    Column("run_ids", JSON),  # the runs it made, as ids in this database
    Column("machine", JSON),  # the machine's own hostname, host id (hashed machine-id), boot id
)

# A static model's prediction of a result's hot loop (`--predict`, `explain`; predict/, docs/method.md §12;
# migration 0008): one row per benchmark × parameter × variant × tool, the run's rows deleted with it
predictions = Table(
    "predictions", metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("bench", String(255), nullable=False),
    Column("param", BigInteger),
    Column("variant", String(255), nullable=False, default=""),
    Column("tool", String(20), nullable=False),  # llvm-mca | OSACA (prediction.TOOLS)
    Column("status", String(20), nullable=False),  # ok | missing | unsupported | no loop | failed
    Column("reason", Text),
    Column("tool_version", String(40)),
    Column("mcpu", String(40)),  # the tool's name of the CPU model it used
    Column("cpu_model", String(255)),  # the CPU's model name (/proc/cpuinfo)
    Column("cycles_per_iter", Float),  # the tool's cycles per loop trip
    Column("trips_per_op", Float),  # loop trips per operation (callgrind; NULL: 1 assumed)
    Column("cycles_per_op", Float),  # cycles_per_iter × trips (1 when unknown)
    Column("throughput", Float),  # port-pressure bound per trip
    Column("lcd", Float),  # loop-carried dependency bound per trip (OSACA)
    Column("coverage", Float),  # share of the op's executed instructions priced (callgrind; migration 0010)
    Column("detail", JSON),  # why that CPU model, the loop (where, source, assembly), not modelled, notes
    Column("created_at", String(40), nullable=False),
)
PREDICTION_FIELDS = tuple(c.name for c in predictions.columns if c.name not in ("id", "run_id"))
