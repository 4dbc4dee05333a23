"""A writing command's rows stored without SQLAlchemy: a SQLite file at the newest schema written
through the standard library's sqlite3, as store/reads.py reads it. SQLAlchemy's import and engine
were ~0.3 s of `compare`'s 0.72 s (docs/architecture.md, "Imports where used"), and every `run`
paid them too.

``Writes`` is made for a file reads.open_head vouched for (cyclebench's, at the newest revision,
whole). It stores what SQLAlchemy's Core stores on SQLite, value for value and storage class for
storage class (a test writes the same runs both ways and compares every column with ``typeof``):

* a JSON column (columns.JSON) through ``json.dumps``, ``None`` included: SQLAlchemy's JSON type
  stores Python ``None`` as the JSON text ``null`` (its ``none_as_null`` is False);
* a Boolean (columns.BOOLEAN) as 0 or 1;
* everything else as given (sqlite3's adapters, which SQLAlchemy's SQLite dialect uses too).

Each write is one ``BEGIN IMMEDIATE`` transaction, as store.db's ``_write`` makes it, on a connection
set up as store.db._sqlite_connect sets SQLAlchemy's (the busy timeout first, foreign keys on): a
result whose run was deleted meanwhile fails its foreign key (sqlite3.IntegrityError). One
connection per process, shared by the Store's threads (its heartbeat) under a lock; close() ends it,
and the last connection to close takes the -wal and -shm files away, as SQLAlchemy's pool did.
Errors are sqlite3's: the Store words them (store.db._guard).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from cyclebench.store import columns, liveness, reads


def _stored(table: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` (column → value) as SQLAlchemy's types bind them on SQLite (the module's
    docstring). Raises KeyError for a column the table does not have, as SQLAlchemy's insert
    raises for an unknown one (its CompileError)."""
    have = columns.HEAD_COLUMNS[table]
    out = {}
    for k, v in values.items():
        if k not in have:
            raise KeyError(f"{table} has no column {k!r}")
        if k in columns.JSON[table]:
            v = json.dumps(v)
        elif k in columns.BOOLEAN[table] and v is not None:
            v = int(bool(v))
        out[k] = v
    return out


def _names(row: Mapping[str, Any]) -> str:
    return ", ".join(f'"{k}"' for k in row)


def sample_values(result_id: int, rows: Sequence[Sequence[int | None]]) -> list[dict[str, Any]]:
    """The samples table's rows of result ``result_id``: per batch (iters, ticks[, cal, disturbed,
    pmu]), in measurement order (``idx``)."""
    return [{"result_id": result_id, "idx": i, "iters": int(row[0]), "ticks": int(row[1]),
             "cal": row[2] if len(row) > 2 else None, "disturbed": row[3] if len(row) > 3 else None,
             "pmu": row[4] if len(row) > 4 else None}
            for i, row in enumerate(rows)]


class Writes:
    """The writes of a Store to a file at the newest schema (``path``), with sqlite3 alone."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._con: sqlite3.Connection | None = None
        self._pid = 0

    def _connection(self) -> sqlite3.Connection:
        """The process's connection, made on first use; a child forked with one makes its own
        (a connection must not cross a fork, sqlite.org/howtocorrupt.html §2.6). Made for use from
        every thread, serialized by ``_lock``: sqlite3's default refused the heartbeat thread
        ("SQLite objects created in a thread can only be used in that same thread"), and a run on
        an existing database never beat."""
        if self._con is None or self._pid != os.getpid():
            con = reads.connect(self.path, threads=True)
            con.execute("PRAGMA foreign_keys=ON")
            self._con, self._pid = con, os.getpid()
        return self._con

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction holding the write lock from its start (BEGIN IMMEDIATE): committed
        when the block ends, rolled back when it raises."""
        with self._lock:
            con = self._connection()
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            if self._con is not None and self._pid == os.getpid():
                self._con.close()
            self._con = None

    @staticmethod
    def insert(con: sqlite3.Connection, table: str, values: Mapping[str, Any]) -> int:
        """Insert one row into ``table``; its id (the rowid SQLite gave it)."""
        row = _stored(table, values)
        cur = con.execute(f"INSERT INTO {table} ({_names(row)}) VALUES ({', '.join('?' * len(row))})"
                          if row else f"INSERT INTO {table} DEFAULT VALUES", list(row.values()))
        assert cur.lastrowid is not None
        return int(cur.lastrowid)

    @staticmethod
    def insert_many(con: sqlite3.Connection, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert rows that share their columns (the first row's) into ``table``."""
        if not rows:
            return
        stored = [_stored(table, r) for r in rows]
        names = list(stored[0])
        con.executemany(f"INSERT INTO {table} ({_names(stored[0])}) VALUES ({', '.join('?' * len(names))})",
                        [[r[k] for k in names] for r in stored])

    def add_run(self, values: Mapping[str, Any]) -> int:
        """Insert a runs row; its id."""
        with self.transaction() as con:
            return self.insert(con, "runs", values)

    def update_run(self, run_id: int, values: Mapping[str, Any], *, also: str = "",
                   params: Sequence[Any] = ()) -> int:
        """Set columns of run ``run_id`` where ``also`` (an SQL condition on its row, with
        ``params``) holds too; the number of rows changed (0 or 1)."""
        row = _stored("runs", values)
        if not row:
            return 0
        sets = ", ".join(f'"{k}" = ?' for k in row)
        where = "id = ?" + (f" AND ({also})" if also else "")
        with self.transaction() as con:
            return con.execute(f"UPDATE runs SET {sets} WHERE {where}", [*row.values(), run_id, *params]).rowcount

    def add_results(self, run_id: int, results: Sequence[tuple[Mapping[str, Any], Sequence[Sequence[int | None]]]]
                    ) -> list[int]:
        """Insert results (each a results row but its run id, and its samples) in one transaction;
        their ids, in order."""
        ids = []
        with self.transaction() as con:
            for values, samples in results:
                rid = self.insert(con, "results", {"run_id": run_id, **values})
                self.insert_many(con, "samples", sample_values(rid, samples))
                ids.append(rid)
        return ids

    def has_run(self, run_id: int) -> bool:
        with self._lock:
            return self._connection().execute("SELECT id FROM runs WHERE id = ?", (run_id,)).fetchone() is not None

    def sweep(self, abandoned: Callable[[Mapping[str, Any]], bool]) -> list[int]:
        """Mark the 'running' runs that ``abandoned(row)`` says are gone 'abandoned', finished at
        their last sign of life, in one transaction; a run that beat meanwhile is left alone (its
        heartbeat_at no longer the one read). Their ids (store.db's Store.reconcile)."""
        done = []
        names = ("id", "status", "started_at", "host_id", "pid", "pid_start", "heartbeat_at")
        with self.transaction() as con:
            rows = [dict(zip(names, r, strict=True)) for r in
                    con.execute(f"SELECT {', '.join(names)} FROM runs WHERE status = ?", (liveness.RUNNING,))]
            for r in rows:
                if not abandoned(r):
                    continue
                # IS: equal, NULL to NULL included (SQLite's IS operator)
                n = con.execute("UPDATE runs SET status = ?, finished_at = ? WHERE id = ? AND status = ? "
                                "AND heartbeat_at IS ?", [liveness.ABANDONED, liveness.last_sign_of_life(r), r["id"],
                                                         liveness.RUNNING, r["heartbeat_at"]]).rowcount
                if n:
                    done.append(int(r["id"]))
        return done

