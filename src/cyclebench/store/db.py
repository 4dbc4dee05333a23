"""The results database (SQLAlchemy Core; SQLite by default, PostgreSQL by URL).

Tables: ``runs`` (one per command: environment, calibration, status, where and whether it
still runs), ``results`` (one per benchmark × parameter × variant: its kind, estimators,
status, reason) and ``samples`` (the raw batch timings, so any result can be re-analysed).
Each result is committed as soon as it exists: an interrupted or crashed session keeps
everything it finished.

The schema is versioned by Alembic (``store/migrations``, applied on open by
``store/migrate``); store/schema.py holds the tables at the newest revision.

SQLAlchemy is imported where it is used: on a SQLite file at the newest schema a read-only open
lists runs through store/reads.py without it (`cyclebench runs`), and a writing command's open
stores its runs and results through store/writes.py (`compare`, `run`); either makes its engine on
first use of anything else.

Default location: ``$CYCLEBENCH_DB`` or ``~/.local/share/cyclebench/results.db`` (WAL
journal, so a reader never blocks the run writing it).
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import functools
import os
import signal
import sqlite3
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import platformdirs

from cyclebench.model import FLEET, KINDS, PURPOSE_ENV, PURPOSES, RUN, Result, Run, infer_purpose, suite_order
from cyclebench.store import columns, liveness, migrate, reads, urls
from cyclebench.store.errors import RunGone, StoreError
from cyclebench.store.rows import guess_kind, lenient_json, result_of, row_of, sound
from cyclebench.store.writes import Writes, sample_values

if TYPE_CHECKING:
    from sqlalchemy import ColumnElement, Connection, Engine, Select
    from sqlalchemy.engine import URL

    from cyclebench.store.schema import ResultRow

T = TypeVar("T")

def _purpose(run: Mapping[str, Any]) -> str:
    """The purpose a run is stored with: as given (model.PURPOSES), else what its command line
    and labels tell (model.infer_purpose); ``$CYCLEBENCH_PURPOSE`` (a fleet's agent sets it)
    makes an ordinary run the fleet's."""
    given = run.get("purpose")
    purpose = given if isinstance(given, str) and given in PURPOSES else infer_purpose(run.get("command"),
                                                                                      run.get("labels"))
    return FLEET if purpose == RUN and os.environ.get(PURPOSE_ENV) == FLEET else purpose




def default_url() -> str:
    env = os.environ.get("CYCLEBENCH_DB")
    if env:
        return env if "://" in env else f"sqlite:///{Path(env).expanduser()}"
    path = Path(platformdirs.user_data_dir("cyclebench")) / "results.db"
    return f"sqlite:///{path}"


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


_REGEX_SPECIAL = frozenset("\\.^$*+?()[]{}|/-")  # escaped with a backslash: literal in Python re and PostgreSQL


def _literal(ch: str) -> str:
    return "\\" + ch if ch in _REGEX_SPECIAL or (ch.isascii() and not ch.isalnum() and ch not in "_ ") else ch


def bench_regex(pattern: str) -> str:
    """The anchored regular expression of a benchmark glob as `run -b` reads it (fnmatchcase:
    ``*``, ``?``, ``[seq]``, ``[!seq]``; a pattern without ``/`` also selects its group,
    ``pattern/*``), written so that Python's re (SQLite's REGEXP, which SQLAlchemy provides)
    and PostgreSQL's ``~`` read it alike: case-sensitive, punctuation escaped."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        i += 1
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[":
            j = i + (i < n and pattern[i] == "!")
            j += j < n and pattern[j] == "]"
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:  # no closing bracket: a literal "[", as fnmatch reads it
                out.append("\\[")
                continue
            body = pattern[i:j]
            i = j + 1
            negate = body.startswith("!")
            body = body[1:] if negate else body
            members = "".join("\\" + c if c in "\\^[]" else c for c in body)
            out.append(f"[{'^' if negate else ''}{members}]")
        else:
            out.append(_literal(ch))
    rx = "".join(out)
    return f"^(?:{rx}|{rx}/.*)$" if "/" not in pattern else f"^{rx}$"


def _sqlite_connect(dbapi_conn: Any, _record: Any) -> None:
    # cyclebench emits BEGIN itself (below): sqlite3's legacy mode would not for DDL or SELECT.
    # busy_timeout first: everything after it may wait for another process.
    dbapi_conn.isolation_level = None
    dbapi_conn.execute(f"PRAGMA busy_timeout={migrate.SQLITE_BUSY_MS}")
    dbapi_conn.execute("PRAGMA foreign_keys=ON")


def _sqlite_begin(conn: Connection) -> None:
    # IMMEDIATE for writes (the write lock is taken up front, so a transaction that reads
    # then writes never fails on a snapshot another writer made stale); DEFERRED to read
    conn.exec_driver_sql("BEGIN " + conn.get_execution_options().get("cyclebench_begin", "DEFERRED"))


def _database_errors() -> tuple[type[Exception], ...]:
    """sqlite3's errors, and SQLAlchemy's once it is imported (a store that read and wrote through
    store/reads.py and store/writes.py alone never imports it)."""
    exc = sys.modules.get("sqlalchemy.exc")
    return (sqlite3.Error,) if exc is None else (exc.SQLAlchemyError, sqlite3.Error)


def _integrity_errors() -> tuple[type[Exception], ...]:
    """A constraint that failed (a result whose run is gone), as sqlite3 or SQLAlchemy raise it."""
    exc = sys.modules.get("sqlalchemy.exc")
    return (sqlite3.IntegrityError,) if exc is None else (exc.IntegrityError, sqlite3.IntegrityError)


def _guard(fn: Callable[..., T]) -> Callable[..., T]:
    """Database errors while a run is going become StoreError: one line for the user,
    and everything committed before stays."""

    @functools.wraps(fn)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> T:
        try:
            return fn(self, *args, **kwargs)
        except _database_errors() as e:  # sqlite3's worded as SQLAlchemy words it: one message either way
            words = reads.sqlalchemy_words(e) if isinstance(e, sqlite3.Error) else str(e).splitlines()[0]
            raise StoreError(self._scrub(f"database error: {words}")) from e
        except OverflowError as e:  # an int beyond 64 bits bound by sqlite3
            raise StoreError(f"a value does not fit the database: {e}") from e

    return wrapper


def _quiet_psycopg() -> None:
    """psycopg logs what it cannot report (a pipeline it cannot end once the server is gone:
    "error ignored terminating <psycopg.Pipeline [BAD] …>") as warnings, which Python's last
    resort handler prints on stderr before cyclebench's own line about the same failure. A
    handler of its own that drops them (the error itself still reaches cyclebench); a user who
    configured logging keeps their handlers."""
    import logging  # PostgreSQL's only: ~4 ms of a SQLite reader's start

    log = logging.getLogger("psycopg")
    if not any(isinstance(h, logging.NullHandler) for h in log.handlers):
        log.addHandler(logging.NullHandler())


_HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP held while a database is created or its schema upgraded, then
    delivered to the handlers they would have met. Raised inside SQLAlchemy or Alembic, an
    interrupt invalidated the connection mid-transaction: 3 of 120 SIGTERMs 0–50 ms after a new
    database appeared ended in "Cannot operate on a closed database" or an AssertionError
    traceback instead of exit 130. The schema commits or rolls back as one transaction either
    way; holding costs at most the upgrade's time (~0.75 s for a new file on this VM)."""
    if threading.current_thread() is not threading.main_thread():  # handlers are the main thread's
        yield
        return
    pending: list[tuple[int, Any]] = []
    before = {sig: signal.getsignal(sig) for sig in _HELD}
    for sig in _HELD:
        signal.signal(sig, lambda signum, frame: pending.append((signum, frame)))
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        if pending:
            signum, frame = pending[0]
            handler = before[signum]
            if callable(handler):
                handler(signum, frame)  # e.g. KeyboardInterrupt, or the CLI's Terminated
            elif handler != signal.SIG_IGN:
                signal.raise_signal(signum)  # default disposition: end as the signal would have


class _Heartbeat:
    """A daemon thread refreshing a run's heartbeat_at until stopped (or the process ends)."""

    def __init__(self, store: Store, run_id: int, every: float) -> None:
        self.stop_event = threading.Event()
        self.store_ref = weakref.ref(store)
        self.run_id, self.every = run_id, every
        self.thread = threading.Thread(target=self._loop, name=f"cyclebench-heartbeat-{run_id}", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stop_event.wait(self.every):
            store = self.store_ref()
            if store is None:
                return
            try:
                if not store.heartbeat(self.run_id):
                    return  # finished (or gone) elsewhere
            except Exception:  # a busy or vanished database: try again next time
                pass
            del store

    def stop(self) -> None:
        self.stop_event.set()


_BEATING: weakref.WeakSet[Store] = weakref.WeakSet()


@atexit.register
def _stop_all_heartbeats() -> None:
    for store in list(_BEATING):
        store._stop_heartbeats()


class Store:
    """The database at ``url`` (None: default_url()), at the newest schema.

    ``create=True`` (writing commands) creates the database if there is none; ``create=False``
    (read-only commands: runs, show, export) raises StoreError "no cyclebench database at …"
    instead, creating neither file nor directory. Either way a database that is not
    cyclebench's is refused untouched, and an older cyclebench database is upgraded.

    A SQLite file already at the newest schema (reads.open_head decides) is opened without
    SQLAlchemy (~0.3 s to import and open here): list_runs, get_run, results and results_of read
    it with sqlite3 (store/reads.py); a writer's runs and results (begin_run, heartbeat,
    update_run, add_result(s), reconcile) go into it through sqlite3 (store/writes.py), as
    SQLAlchemy would have stored them. The engine is made, as any other open makes it, on first
    use of anything else. Anything reads.open_head does not vouch for (a new file, an older schema,
    PostgreSQL) opens through SQLAlchemy at once.
    """

    heartbeat_every = liveness.HEARTBEAT_EVERY
    stale_after = liveness.STALE_AFTER

    def __init__(self, url: str | None = None, *, create: bool = True) -> None:
        raw = url or default_url()
        self._raw = raw
        self._heartbeats: dict[int, _Heartbeat] = {}
        self._host_id: str | None = None
        self._password: str | None = None
        self._engine: Engine | None = None
        head = reads.open_head(raw)
        if head is None and create and (plain := urls.plain_sqlite(raw)) is not None:
            with _signals_held():
                made = migrate.make_fresh_sqlite(plain[0])
            head = reads.open_head(raw) if made else None
        self._reads = head
        self._writes = Writes(head.path) if create and head is not None else None
        if head is not None:
            self.url = head.url
            return
        self._engine = self._connect(raw, create)

    @property
    def engine(self) -> Engine:
        """SQLAlchemy's engine, the database at the newest schema: made on open, or on first use
        after an open that store/reads.py vouched for. Raises StoreError as the open would have."""
        if self._engine is None:
            self._engine = self._connect(self._raw, create=False)
        return self._engine

    def _connect(self, raw: str, create: bool) -> Engine:
        """The engine of URL ``raw``, its schema brought to the newest revision (see the class)."""
        self.url = urls.display(raw)  # for messages and exports: never the password
        try:
            self._url: URL = urls.parse(raw)
        except urls.UrlError as e:
            raise StoreError(f"cannot open database {self.url}: {e}") from None
        self._password = self._url.password
        path = urls.sqlite_path(self._url)
        where = path if path is not None else self.url
        if path is None and urls.sqlite_in_memory(self._url):
            if not create:  # a new, empty one: nothing to read
                raise StoreError(f"no cyclebench database at {self.url}")
            raise StoreError(f"--db {self.url} is a database in memory: what is stored would vanish at exit; "
                             "give a file (sqlite:///path)")
        if path is not None:
            p = Path(path)
            if p.is_dir():
                raise StoreError(f"cannot open database {self.url}: {path} is a directory")
            if p.exists() and not p.is_file():  # /dev/null, a FIFO: SQLite would write PATH-journal beside it
                raise StoreError(f"cannot open database {self.url}: {path} is not a regular file")
            if not create and (not p.is_file() or p.stat().st_size == 0):
                raise StoreError(f"no cyclebench database at {path}")
            if create:
                try:
                    p.parent.mkdir(parents=True, exist_ok=True)
                except OSError as e:
                    raise StoreError(f"cannot open database {self.url}: {e.strerror}: {p.parent}") from None
                if not p.exists() and not os.access(p.parent, os.W_OK | os.X_OK):
                    raise StoreError(f"cannot open database {self.url}: cannot create a file in {p.parent} "
                                     "(not writable)")
        with _signals_held():
            return self._open(create, where)

    def _open(self, create: bool, where: str) -> Engine:
        """Create the engine and bring the schema to the newest revision (see _connect)."""
        from sqlalchemy import create_engine, event
        from sqlalchemy.exc import SQLAlchemyError

        try:
            # a JSON column that does not decode reads as DamagedJSON, not an exception (rows.sound)
            engine = create_engine(self._url, json_deserializer=lenient_json)
        except ImportError as e:
            raise StoreError(self._missing_driver(e)) from None
        except (SQLAlchemyError, ValueError, TypeError) as e:
            raise StoreError(self._scrub(f"cannot open database {self.url}: {str(e).splitlines()[0]}")) from e
        if engine.dialect.name == "sqlite":
            event.listen(engine, "connect", _sqlite_connect)
            event.listen(engine, "begin", _sqlite_begin)
        else:
            _quiet_psycopg()
        try:
            migrate.prepare(engine, create=create, where=where)
        except migrate.SchemaError as e:
            engine.dispose()
            raise StoreError(str(e)) from None
        except ImportError as e:
            engine.dispose()
            raise StoreError(self._missing_driver(e)) from None
        except (SQLAlchemyError, sqlite3.Error, OSError, ValueError) as e:
            engine.dispose()
            raise StoreError(self._scrub(f"cannot open database {self.url}: {str(e).splitlines()[0]}")) from e
        return engine

    def _missing_driver(self, e: ImportError) -> str:
        if self._url.get_backend_name() == "postgresql":
            return (f"cannot open database {self.url}: PostgreSQL needs the psycopg driver, which is not "
                    f"installed ({e.name or e}): {urls.POSTGRES_HINT}")
        return f"cannot open database {self.url}: driver {e.name or e} is not installed"

    def _scrub(self, message: str) -> str:
        """A message with no password in it (drivers may echo the connection string)."""
        message = urls.redact(message)
        if self._password:
            message = message.replace(str(self._password), "***")
        return message

    def close(self) -> None:
        """Stop heartbeats and release connections (the object stays usable: it reconnects).
        Signals are held meanwhile: one raised inside the pool's close was logged by SQLAlchemy
        as "Exception closing connection" with a traceback."""
        self._stop_heartbeats()
        if self._writes is not None:
            self._writes.close()
        if self._engine is None:  # read and written through store/reads.py and store/writes.py alone
            return
        with _signals_held():
            self._engine.dispose()

    @contextlib.contextmanager
    def _write(self) -> Iterator[Connection]:
        """A write transaction (on SQLite, holding the write lock from its start)."""
        with self.engine.connect() as conn:
            conn.execution_options(cyclebench_begin="IMMEDIATE")
            with conn.begin():
                yield conn

    @property
    def reads(self) -> reads.Reads | None:
        """The standard library's reader of a SQLite file at the newest schema (store/reads.py);
        None where SQLAlchemy reads (PostgreSQL, a file opened before an upgrade)."""
        return self._reads

    @property
    def file(self) -> Path | None:
        """The SQLite database's file; None for a server's (PostgreSQL)."""
        if self._reads is not None:  # a file store/reads.py vouched for (and writes to, opened to write)
            return Path(self._reads.path)
        path = urls.sqlite_path(self._url)
        return Path(path) if path is not None else None

    @property
    def host_id(self) -> str:
        if self._host_id is None:
            self._host_id = liveness.host_id()
        return self._host_id

    # ---- writing ----
    @_guard
    def begin_run(self, **fields: Any) -> int:
        """Insert a run in status 'running' (this host, this process, beating now); returns
        its id. The command line is stored with any --db password masked. While the run is
        'running' in this process a background thread refreshes its heartbeat every
        ``heartbeat_every`` s, until finish_run (or the process ends)."""
        t = now()
        values = {"started_at": t, "status": liveness.RUNNING, "host_id": self.host_id, "pid": os.getpid(),
                  "pid_start": liveness.process_start(os.getpid()), "heartbeat_at": t, **fields}
        if values.get("command") is not None:
            values["command"] = urls.redact_argv(values["command"])
        values["purpose"] = _purpose(values)
        if self._writes is not None:
            run_id = self._writes.add_run(values)
        else:
            from sqlalchemy import insert

            from cyclebench.store.schema import runs

            with self._write() as conn:
                run_id = int(conn.execute(insert(runs).values(**values)).inserted_primary_key[0])
        if values["status"] == liveness.RUNNING and self.heartbeat_every:
            self._heartbeats[run_id] = _Heartbeat(self, run_id, self.heartbeat_every)
            _BEATING.add(self)
        return run_id

    @_guard
    def heartbeat(self, run_id: int) -> bool:
        """Say run ``run_id`` is alive (now); False if it is no longer 'running'. A run of this
        very process that another host wrote off as 'abandoned' (its heartbeat stopped while the
        process was stopped, e.g. SIGSTOP) is 'running' again: it is."""
        beat = {"heartbeat_at": now(), "status": liveness.RUNNING, "finished_at": None}
        if self._writes is not None:
            mine_sql = "status = ? OR (status = ? AND host_id = ? AND pid = ?)"
            return bool(self._writes.update_run(run_id, beat, also=mine_sql, params=(
                liveness.RUNNING, liveness.ABANDONED, self.host_id, os.getpid())))
        from sqlalchemy import update

        from cyclebench.store.schema import runs

        mine = (runs.c.status == liveness.ABANDONED) & (runs.c.host_id == self.host_id) & (runs.c.pid == os.getpid())
        with self._write() as conn:
            n = conn.execute(update(runs).where(runs.c.id == run_id, (runs.c.status == liveness.RUNNING) | mine)
                             .values(**beat)).rowcount
        return bool(n)

    def _stop_heartbeats(self, run_id: int | None = None) -> None:
        for rid in [run_id] if run_id is not None else list(self._heartbeats):
            hb = self._heartbeats.pop(rid, None)
            if hb is not None:
                hb.stop()

    @_guard
    def update_run(self, run_id: int, **fields: Any) -> None:
        if fields.get("status", liveness.RUNNING) != liveness.RUNNING:
            self._stop_heartbeats(run_id)
        if fields.get("command") is not None:
            fields["command"] = urls.redact_argv(fields["command"])
        if self._writes is not None:
            self._writes.update_run(run_id, fields)
            return
        from sqlalchemy import update

        from cyclebench.store.schema import runs

        with self._write() as conn:
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

    @staticmethod
    def _result_values(fields: Mapping[str, Any]) -> ResultRow:
        """The result's columns as they are inserted: a record's as store.rows.row_of gives them
        (its parts in ``extra``), a mapping's as given (``extra`` its JSON); absent ones None,
        ``variant`` "", ``created_at`` now, ``kind`` guessed (guess_kind). Raises StoreError
        for an unknown kind."""
        values = row_of(fields) if isinstance(fields, Result) else cast("ResultRow", {
            k: fields.get(k) for k in columns.RESULT_FIELDS})
        values["variant"] = values.get("variant") or ""
        values["created_at"] = values.get("created_at") or now()
        values["kind"] = values.get("kind") or guess_kind(values)
        if values["kind"] not in KINDS:
            raise StoreError(f"unknown result kind {values['kind']!r} (one of {', '.join(KINDS)})")
        return values

    @staticmethod
    def _insert_result(conn: Connection, run_id: int, values: ResultRow,
                       sample_rows: Sequence[Sequence[int | None]]) -> int:
        from sqlalchemy import insert

        from cyclebench.store.schema import results, samples

        rid = int(conn.execute(insert(results).values(run_id=run_id, **values)).inserted_primary_key[0])
        if sample_rows:
            conn.execute(insert(samples), sample_values(rid, sample_rows))
        return rid

    @_guard
    def add_result(self, run_id: int, fields: Mapping[str, Any],
                   sample_rows: Sequence[Sequence[int | None]] = ()) -> int:
        """Insert one result (a record, or a mapping of its columns) and its raw samples
        [(iters, ticks[, cal, disturbed, pmu]), ...] in one transaction. ``kind`` (model.KINDS) is
        guessed from the unit and the stored JSON when not given."""
        values = self._result_values(fields)
        try:
            if self._writes is not None:
                return self._writes.add_results(run_id, [(values, sample_rows)])[0]
            with self._write() as conn:
                return self._insert_result(conn, run_id, values, sample_rows)
        except _integrity_errors():
            if self._has_run(run_id):
                raise
            raise RunGone(f"run #{run_id} was deleted from {self.url} while it ran (delete --force), with the "
                          "results it had stored: nothing of it is kept") from None

    def record(self, run_id: int, fields: Mapping[str, Any], sample_rows: Sequence[Sequence[int | None]] = ()
               ) -> Result:
        """add_result, and the record of what was stored (its id and run id set): what a design
        hands on to be printed, exported or judged."""
        rid = self.add_result(run_id, fields, sample_rows)
        if isinstance(fields, Result):
            return replace(fields, id=rid, run_id=run_id)
        return result_of({**fields, "id": rid, "run_id": run_id})

    @_guard
    def add_results(self, run_id: int, rows: Sequence[Mapping[str, Any]]) -> list[int]:
        """Insert several results without samples (e.g. a profile's functions, hundreds at a
        time) in ONE transaction: all of them or none. Returns their ids, in order."""
        prepared = [self._result_values(fields) for fields in rows]
        try:
            if self._writes is not None:
                return self._writes.add_results(run_id, [(values, ()) for values in prepared])
            with self._write() as conn:
                return [self._insert_result(conn, run_id, values, ()) for values in prepared]
        except _integrity_errors():
            if self._has_run(run_id):
                raise
            raise RunGone(f"run #{run_id} was deleted from {self.url} while it ran (delete --force)") from None

    def _has_run(self, run_id: int) -> bool:
        if self._writes is not None:
            return self._writes.has_run(run_id)
        from sqlalchemy import select

        from cyclebench.store.schema import runs

        with self.engine.connect() as conn:
            return conn.execute(select(runs.c.id).where(runs.c.id == run_id)).first() is not None

    @_guard
    def insert_run(self, run: Mapping[str, Any],
                   rows: Sequence[tuple[Mapping[str, Any], Sequence[Sequence[int | None]]]]) -> int:
        """Insert a whole run — its row as given (status included) and its results with their
        samples — in ONE transaction: all of it is stored, or nothing (import)."""
        from sqlalchemy import insert

        from cyclebench.store.schema import RUN_FIELDS, runs

        values = {k: run.get(k) for k in RUN_FIELDS}
        values["status"] = values.get("status") or "complete"
        if values.get("command") is not None:
            values["command"] = urls.redact_argv(values["command"])
        values["purpose"] = _purpose(values)
        prepared = [(self._result_values(fields), smp) for fields, smp in rows]
        with self._write() as conn:
            run_id = int(conn.execute(insert(runs).values(**values)).inserted_primary_key[0])
            for fields, smp in prepared:
                self._insert_result(conn, run_id, fields, smp)
        return run_id

    @_guard
    def reconcile(self) -> list[int]:
        """Mark the runs that read as abandoned (liveness.run_status) 'abandoned' in the
        database, finished at their last sign of life; returns their ids. For writing
        commands; a run that beats meanwhile is left alone."""
        if self._writes is not None:
            return self._writes.sweep(lambda r: self._status(r) == liveness.ABANDONED)
        from sqlalchemy import select, update

        from cyclebench.store.schema import runs

        done = []
        with self._write() as conn:
            rows = conn.execute(select(runs.c.id, runs.c.status, runs.c.started_at, runs.c.host_id, runs.c.pid,
                                       runs.c.pid_start, runs.c.heartbeat_at)
                                .where(runs.c.status == liveness.RUNNING)).mappings().all()
            for r in rows:
                if self._status(r) != liveness.ABANDONED:
                    continue
                cond = [runs.c.id == r["id"], runs.c.status == liveness.RUNNING]
                cond.append(runs.c.heartbeat_at.is_(None) if r["heartbeat_at"] is None
                            else runs.c.heartbeat_at == r["heartbeat_at"])
                n = conn.execute(update(runs).where(*cond).values(
                    status=liveness.ABANDONED, finished_at=liveness.last_sign_of_life(r))).rowcount
                if n:
                    done.append(int(r["id"]))
        return done

    # ---- reading ----
    def _status(self, run: Mapping[str, Any]) -> str:
        return liveness.run_status(run, now=dt.datetime.now(dt.timezone.utc), host_id=self.host_id,
                                   pid_alive=liveness.pid_alive, stale_after=self.stale_after)

    def _run_out(self, row: Mapping[str, Any]) -> Run:
        """A runs row as read: status as it stands now (abandoned when its process is gone),
        command without passwords (rows stored before redaction existed). A damaged column reads
        as None, named in ``damaged``: one that does not decode (rows.sound), and a JSON column of
        another shape than its commands write (an object; the command a list), which SQLite keeps
        when written by hand (`show` of a run whose calibration was 2.5 ended in a traceback)."""
        fields = dict(row)
        bad = sound(fields, columns.INTEGER["runs"], columns.JSON["runs"])
        shapes = {k: (list if k == "command" else dict) for k in columns.JSON["runs"]}
        odd = tuple(k for k, shape in shapes.items() if fields.get(k) is not None and not isinstance(fields[k], shape))
        for k in odd:
            fields[k] = None
        bad += odd
        command = fields.get("command")
        return Run.of({**fields, "status": self._status(fields), "damaged": bad,
                       "command": urls.redact_argv(command) if isinstance(command, list) else command})

    @_guard
    def get_run(self, run_id: int) -> Run | None:
        """The run (status as it stands now, see _run_out), or None — also for an id no
        database could hold (e.g. 10**23)."""
        if not -(2**63) <= run_id < 2**63:
            return None
        if self._reads is not None:
            row: Mapping[str, Any] | None = self._reads.get_run(run_id)
        else:
            from sqlalchemy import select

            from cyclebench.store.schema import runs

            with self.engine.connect() as conn:
                row = conn.execute(select(runs).where(runs.c.id == run_id)).mappings().first()
        return self._run_out(row) if row else None

    @_guard
    def last_run_id(self) -> int | None:
        """The newest run's id (the highest); None in an empty database."""
        if self._reads is not None:
            return self._reads.last_run_id()
        from sqlalchemy import select

        from cyclebench.store.schema import runs

        with self.engine.connect() as conn:
            row = conn.execute(select(runs.c.id).order_by(runs.c.id.desc()).limit(1)).first()
        return int(row[0]) if row else None

    def _label_is(self, key: str, value: str) -> ColumnElement[bool]:
        """runs.labels holds ``key`` with the string ``value`` (any key: bound, never spliced)."""
        from sqlalchemy import exists, func, literal, select

        from cyclebench.store.schema import runs

        if self.engine.dialect.name == "sqlite":  # a JSON path cannot quote every key: look at each pair
            each = func.json_each(runs.c.labels).table_valued("key", "value")
            return exists(select(literal(1)).select_from(each).where(each.c.key == key, each.c.value == value))
        return runs.c.labels[key].as_string() == value  # PostgreSQL: labels ->> key (NULL for a non-object)

    @_guard
    def list_runs(self, limit: int | None = 20, *, host: str | None = None, since: dt.date | None = None,
                  labels: Mapping[str, str] | None = None, bench: str | None = None,
                  by_start: bool = False) -> list[Run]:
        """The last ``limit`` runs stored (None or negative: all), the last first, among those that
        pass every filter given (all in SQL): ``host`` (its host name or host id), ``since``
        (started on that UTC date or later), ``labels`` (each key holds its value), ``bench``
        (a result whose benchmark matches the glob as `run -b` does: bench_regex). ``by_start``:
        the last ``limit`` started, the last started first (an imported run where it started).
        Read through store/reads.py when the store was opened so (see the class), the same rows
        either way."""
        if self._reads is not None:
            found = self._reads.list_runs(limit, host=host, since=since, labels=labels,
                                          bench_regex=None if bench is None else bench_regex(bench), by_start=by_start)
            return [self._run_out(r) for r in found]
        from sqlalchemy import select

        from cyclebench.store.schema import runs

        q = self._runs_where(select(runs), host, since, labels, bench)
        q = q.order_by(*([runs.c.started_at.desc()] if by_start else []), runs.c.id.desc())
        if limit is not None and limit >= 0:
            q = q.limit(limit)
        with self.engine.connect() as conn:
            rows = conn.execute(q).mappings().all()
        return [self._run_out(r) for r in rows]

    @_guard
    def count_runs(self, *, host: str | None = None, since: dt.date | None = None,
                   labels: Mapping[str, str] | None = None, bench: str | None = None) -> int:
        """How many runs list_runs(None) with these filters gives (`runs`: "20 of 29 runs")."""
        if self._reads is not None:
            return self._reads.count_runs(host=host, since=since, labels=labels,
                                          bench_regex=None if bench is None else bench_regex(bench))
        from sqlalchemy import func, select

        from cyclebench.store.schema import runs

        q = self._runs_where(select(func.count()).select_from(runs), host, since, labels, bench)
        with self.engine.connect() as conn:
            return int(conn.execute(q).scalar_one())

    def _runs_where(self, q: Select[Any], host: str | None, since: dt.date | None, labels: Mapping[str, str] | None,
                    bench: str | None) -> Select[Any]:
        """``q`` with list_runs' filters."""
        from sqlalchemy import or_, select

        from cyclebench.store.schema import results, runs

        if host is not None:
            q = q.where(or_(runs.c.host == host, runs.c.host_id == host))
        if since is not None:
            q = q.where(runs.c.started_at >= since.isoformat())  # ISO strings in UTC sort as times
        for key, value in (labels or {}).items():
            q = q.where(self._label_is(key, value))
        if bench is not None:
            q = q.where(runs.c.id.in_(select(results.c.run_id).where(results.c.bench.regexp_match(bench_regex(bench)))))
        return q

    @_guard
    def delete_runs(self, run_ids: Sequence[int]) -> tuple[int, int, int]:
        """Delete runs ``run_ids`` with their results and samples, in one transaction (all or
        nothing); ids not in the database are passed over. Returns the numbers of runs,
        results and samples deleted. Whether a run may go (still running?) is the caller's
        decision."""
        from sqlalchemy import delete, select

        from cyclebench.store.schema import results, runs, samples

        ids = sorted({int(i) for i in run_ids if -(2**63) <= int(i) < 2**63})
        if not ids:
            return 0, 0, 0
        with self._write() as conn:
            of_runs = select(results.c.id).where(results.c.run_id.in_(ids))
            n_samples = conn.execute(delete(samples).where(samples.c.result_id.in_(of_runs))).rowcount
            n_results = conn.execute(delete(results).where(results.c.run_id.in_(ids))).rowcount
            n_runs = conn.execute(delete(runs).where(runs.c.id.in_(ids))).rowcount
        return n_runs, n_results, n_samples

    @_guard
    def results(self, run_id: int) -> list[Result]:
        """The run's result records in the suite's order (model.suite_order), whatever order
        they were stored in."""
        return self.results_of([run_id])[int(run_id)]

    @_guard
    def results_of(self, run_ids: Sequence[int], *, raw: bool = True) -> dict[int, list[Result]]:
        """The results of several runs in one query: run id → its rows in the suite's order (as
        results; absent ids: []). ``raw=False``: each runner line without the calibration
        chains' raw readings (columns.RAW_EXTRA), left out by the database itself — what every table
        shows, at a fraction of the bytes to decode (`cyclebench report` reads thousands of runs)."""
        out: dict[int, list[Result]] = {int(r): [] for r in run_ids}
        if not out:
            return out
        rows: Sequence[Mapping[str, Any]]
        if self._reads is not None:
            rows = self._reads.results_of(list(out), raw=raw)
        else:
            from sqlalchemy import select

            from cyclebench.store.schema import results

            cols: list[Any] = [c for c in results.columns if raw or c.name != "extra"]
            if not raw:
                cols.append(self._extra_without_raw().label("extra"))
            with self.engine.connect() as conn:
                rows = conn.execute(
                    select(*cols).where(results.c.run_id.in_(list(out))).order_by(results.c.id)
                ).mappings().all()
        for r in rows:
            out[int(r["run_id"])].append(result_of(r))
        return {rid: suite_order(got) for rid, got in out.items()}

    def _extra_without_raw(self) -> ColumnElement[Any]:
        """results.extra less the columns.RAW_EXTRA keys, computed by SQLite (json_remove keeps the other
        keys in their order: the counters' columns follow it). PostgreSQL could only through
        jsonb, which reorders keys: there extra is read whole."""
        from sqlalchemy import JSON, case, func, type_coerce

        from cyclebench.store.schema import results

        if self.engine.dialect.name == "sqlite":  # a damaged extra as it is: json_remove would fail the query
            return type_coerce(case((func.json_valid(results.c.extra) == 1,
                                     func.json_remove(results.c.extra, *(f"$.{k}" for k in columns.RAW_EXTRA))),
                                    else_=results.c.extra), JSON)
        return results.c.extra

    @_guard
    def samples(self, result_id: int) -> list[tuple[int, int, int | None, int | None, int | None]]:
        """Raw samples of a result, in measurement order: (iters, ticks, cal, disturbed, pmu)."""
        from sqlalchemy import select

        from cyclebench.store.schema import samples

        with self.engine.connect() as conn:
            rows = conn.execute(
                select(samples.c.iters, samples.c.ticks, samples.c.cal, samples.c.disturbed, samples.c.pmu)
                .where(samples.c.result_id == result_id).order_by(samples.c.idx)
            ).all()
        return [(int(a), int(b), c, d, e) for a, b, c, d, e in rows]
