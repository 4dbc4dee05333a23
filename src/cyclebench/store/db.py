"""The results database (SQLAlchemy Core; SQLite by default, PostgreSQL by URL).

Tables: ``runs`` (one per command: environment, calibration, status), ``results`` (one
per benchmark × parameter × variant: estimators, status, reason) and ``samples`` (the raw
batch timings, so any result can be re-analysed). Each result is committed as soon as it
exists: an interrupted or crashed session keeps everything it finished.

Default location: ``$CYCLEBENCH_DB`` or ``~/.local/share/cyclebench/results.db`` (WAL
journal, so a reader never blocks the run writing it).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import platformdirs
from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Engine,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.exc import SQLAlchemyError

T = TypeVar("T")
SCHEMA_VERSION = 2  # 2: cycles~, net and disturbance columns (added in place by _add_missing_columns)

metadata = MetaData()

runs = Table(
    "runs", metadata,
    Column("id", Integer, primary_key=True),
    Column("started_at", String(40), nullable=False),
    Column("finished_at", String(40)),
    Column("status", String(20), nullable=False),  # running | complete | interrupted | failed
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
    # core cycles estimated by the add-chain calibration (unit "cycles~"), DESIGN.md §4
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
    Column("extra", JSON),  # the runner's result line minus the samples
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


class StoreError(Exception):
    """The database cannot be opened or written (bad URL, permissions, newer schema)."""


def default_url() -> str:
    env = os.environ.get("CYCLEBENCH_DB")
    if env:
        return env if "://" in env else f"sqlite:///{Path(env).expanduser()}"
    path = Path(platformdirs.user_data_dir("cyclebench")) / "results.db"
    return f"sqlite:///{path}"


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.close()


def _add_missing_columns(conn: Any) -> None:
    """Bring an older database up to date: schema changes so far only add nullable columns,
    which ALTER TABLE … ADD COLUMN does in place on SQLite and PostgreSQL alike."""
    insp = inspect(conn)
    for table in metadata.sorted_tables:
        have = {c["name"] for c in insp.get_columns(table.name)}
        for col in table.columns:
            if col.name not in have:
                ddl = col.type.compile(dialect=conn.dialect)
                conn.execute(text(f'ALTER TABLE {table.name} ADD COLUMN "{col.name}" {ddl}'))


def _guard(fn: Callable[..., T]) -> Callable[..., T]:
    """Database errors while a run is going become StoreError: one line for the user,
    and everything committed before stays."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except SQLAlchemyError as e:
            raise StoreError(f"database error: {str(e).splitlines()[0]}") from e

    return wrapper


class Store:
    """Open (creating if needed) the database at ``url`` (None: default_url())."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_url()
        try:
            if self.url.startswith("sqlite:///"):
                Path(self.url.removeprefix("sqlite:///")).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self.engine: Engine = create_engine(self.url)
            if self.engine.dialect.name == "sqlite":
                event.listen(self.engine, "connect", _sqlite_pragmas)
            metadata.create_all(self.engine)
            with self.engine.begin() as conn:
                row = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).first()
                if row is None:
                    conn.execute(insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
                elif int(row[0]) > SCHEMA_VERSION:
                    raise StoreError(f"database {self.url} has schema {row[0]}, newer than this cyclebench")
                else:
                    # additive changes need no version bump: any column this cyclebench knows and
                    # the file lacks is added (cheap: one PRAGMA per table)
                    _add_missing_columns(conn)
                    if int(row[0]) < SCHEMA_VERSION:
                        conn.execute(
                            update(meta).where(meta.c.key == "schema_version").values(value=str(SCHEMA_VERSION)))
        except (SQLAlchemyError, OSError, ValueError) as e:
            raise StoreError(f"cannot open database {self.url}: {str(e).splitlines()[0]}") from e

    # ---- writing ----
    @_guard
    def begin_run(self, **fields: Any) -> int:
        """Insert a run in status 'running'; returns its id."""
        values = {"started_at": now(), "status": "running", **fields}
        with self.engine.begin() as conn:
            return int(conn.execute(insert(runs).values(**values)).inserted_primary_key[0])

    @_guard
    def update_run(self, run_id: int, **fields: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(runs).where(runs.c.id == run_id).values(**fields))

    def finish_run(self, run_id: int, status: str) -> None:
        self.update_run(run_id, status=status, finished_at=now())

    @contextlib.contextmanager
    def finishing(self, run_id: int) -> Iterator[None]:
        """Around a run's measurements: Ctrl-C marks the run 'interrupted', any other
        exception 'failed', and both propagate; results stored before stay. The caller
        marks it 'complete' (after its summary) when the block ends normally."""
        try:
            yield
        except KeyboardInterrupt:
            self.finish_run(run_id, "interrupted")
            raise
        except BaseException:
            self.finish_run(run_id, "failed")
            raise

    @_guard
    def add_result(self, run_id: int, fields: dict[str, Any], sample_rows: Sequence[Sequence[int | None]] = ()) -> int:
        """Insert one result and its raw samples [(iters, ticks[, cal, disturbed]), ...] in one transaction."""
        values = {k: fields.get(k) for k in RESULT_FIELDS}
        values["variant"] = values.get("variant") or ""
        values["created_at"] = values.get("created_at") or now()
        with self.engine.begin() as conn:
            rid = int(conn.execute(insert(results).values(run_id=run_id, **values)).inserted_primary_key[0])
            if sample_rows:
                conn.execute(
                    insert(samples),
                    [{"result_id": rid, "idx": i, "iters": int(row[0]), "ticks": int(row[1]),
                      "cal": row[2] if len(row) > 2 else None, "disturbed": row[3] if len(row) > 3 else None,
                      "pmu": row[4] if len(row) > 4 else None}
                     for i, row in enumerate(sample_rows)],
                )
        return rid

    # ---- reading ----
    @_guard
    def get_run(self, run_id: int) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(runs).where(runs.c.id == run_id)).mappings().first()
        return dict(row) if row else None

    @_guard
    def last_run_id(self) -> int | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(runs.c.id).order_by(runs.c.id.desc()).limit(1)).first()
        return int(row[0]) if row else None

    @_guard
    def list_runs(self, limit: int = 20) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(runs).order_by(runs.c.id.desc()).limit(limit)).mappings().all()
        return [dict(r) for r in rows]

    @_guard
    def results(self, run_id: int) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(results).where(results.c.run_id == run_id).order_by(results.c.id)
            ).mappings().all()
        return [dict(r) for r in rows]

    @_guard
    def samples(self, result_id: int) -> list[tuple[int, int, int | None, int | None, int | None]]:
        """Raw samples of a result, in measurement order: (iters, ticks, cal, disturbed, pmu)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(samples.c.iters, samples.c.ticks, samples.c.cal, samples.c.disturbed, samples.c.pmu)
                .where(samples.c.result_id == result_id).order_by(samples.c.idx)
            ).all()
        return [(int(a), int(b), c, d, e) for a, b, c, d, e in rows]
