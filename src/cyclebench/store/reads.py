"""Stored runs and results read without SQLAlchemy: a SQLite file at the newest schema read through
the standard library's sqlite3 (the driver SQLAlchemy drives SQLite with). Importing SQLAlchemy and
opening its engine was most of `cyclebench runs -n 100`: 0.53 → 0.22 s CPU on 100 runs
(bench/startup.py); and, with its writes (store/writes.py), ~0.3 s of every `run` and `compare`.

``open_head`` is the one place that decides: a plain ``sqlite:///path`` (urls.plain_sqlite) whose
file sqlite3 opens (never creating it) and finds cyclebench's at the newest revision, whole (migrate's
``state_of``, ``at_head`` and ``damage``, as SQLAlchemy's open judges it). Anything else —
PostgreSQL, a schema to upgrade, a foreign, damaged or unreadable file — is None, and Store opens
it through SQLAlchemy as it always did, with the same errors.

``Reads`` gives the rows SQLAlchemy's selects give on SQLite (store.db's list_runs, get_run,
results_of): the same SQL, the columns in the schema's order, the JSON columns through
rows.lenient_json (a number stored bare as itself), the boolean as SQLAlchemy reads it; Store
makes the records from them either way (Store._run_out: status, damaged columns, redaction;
rows.result_of).
"""

from __future__ import annotations

import datetime as dt
import numbers
import os
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from cyclebench.store import columns, migrate, urls
from cyclebench.store.errors import StoreError
from cyclebench.store.rows import lenient_json


def _select_all(table: str) -> str:
    """SELECT of every column of ``table`` in the schema's order (SQLAlchemy's ``select(table)``)."""
    return f"SELECT {', '.join(f'{table}.{c}' for c in columns.HEAD_COLUMNS[table])} FROM {table}"


_SELECT = _select_all("runs")
# a results row's columns; ``extra`` without the calibration chains' raw readings (columns.RAW_EXTRA),
# computed by SQLite as store.db's _extra_without_raw has SQLAlchemy compute it
_RESULTS = _select_all("results")
_RESULTS_LIGHT = _RESULTS.replace("results.extra,", "CASE WHEN (json_valid(results.extra) = 1) THEN json_remove("
                                  f"results.extra, {', '.join(repr(f'$.{k}') for k in columns.RAW_EXTRA)}) "
                                  "ELSE results.extra END AS extra,")
_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table'"


def _regexp(pattern: str, value: str | None) -> bool | None:
    """SQLite's REGEXP as SQLAlchemy provides it (X REGEXP Y calls regexp(Y, X))."""
    return None if value is None else re.search(pattern, value) is not None


def _json(value: Any) -> Any:
    """A JSON column's value as SQLAlchemy's JSON type on SQLite reads it."""
    if value is None:
        return None
    try:
        return lenient_json(value)
    except TypeError:
        if isinstance(value, numbers.Number):
            return value
        raise


def _boolean(value: Any) -> bool | None:
    """A Boolean column's value as SQLAlchemy reads it from SQLite (an integer; anything true is True)."""
    return None if value is None else bool(value)


def connect(path: str, *, threads: bool = False) -> sqlite3.Connection:
    """``path`` opened as store.db._sqlite_connect sets a connection up: the busy timeout before
    anything else (``timeout``), no implicit transaction; with SQLAlchemy's REGEXP. ``mode=rw``:
    never created, and read-only where the file is; not ``mode=ro``, under which the last
    connection to a WAL database cannot remove its -wal and -shm files and left them beside it
    (in a site's directory, which `report` then refused). Reads run only SELECTs on it; store/writes.py
    writes through one. ``threads``: usable from any thread of the process (the caller serializes
    its use), as a Store's writes are from its heartbeat thread."""
    con = sqlite3.connect(f"file://{quote(os.path.abspath(path))}?mode=rw", uri=True,
                          timeout=migrate.SQLITE_BUSY_MS / 1000, isolation_level=None, check_same_thread=not threads)
    con.create_function("regexp", 2, _regexp, deterministic=True)
    return con


def sqlalchemy_words(e: sqlite3.Error) -> str:
    """A driver error's first line as SQLAlchemy words it: a message does not depend on the reader."""
    return f"({type(e).__module__}.{type(e).__name__}) {e}".splitlines()[0]


def _filters(host: str | None, since: dt.date | None, labels: Mapping[str, str] | None,
             bench_regex: str | None) -> tuple[str, list[Any]]:
    """list_runs' filters as a WHERE clause (empty: none) and its parameters."""
    where: list[str] = []
    params: list[Any] = []
    if host is not None:
        where.append("(runs.host = ? OR runs.host_id = ?)")
        params += [host, host]
    if since is not None:
        where.append("runs.started_at >= ?")
        params.append(since.isoformat())
    for key, value in (labels or {}).items():  # each pair of the object: a JSON path cannot quote every key
        where.append('(EXISTS (SELECT 1 FROM json_each(runs.labels) AS pair WHERE pair."key" = ? '
                     "AND pair.value = ?))")
        params += [key, value]
    if bench_regex is not None:
        where.append("runs.id IN (SELECT results.run_id FROM results WHERE results.bench REGEXP ?)")
        params.append(bench_regex)
    return (f" WHERE {' AND '.join(where)}" if where else ""), params


@dataclass(frozen=True)
class Reads:
    """A cyclebench SQLite file at the newest schema, read with sqlite3 alone (one reading
    connection a call: nothing is held open, nothing to carry across a fork)."""

    path: str  # the file
    url: str  # its URL as urls.display shows it

    def list_runs(self, limit: int | None, *, host: str | None = None, since: dt.date | None = None,
                  labels: Mapping[str, str] | None = None, bench_regex: str | None = None,
                  by_start: bool = False) -> list[dict[str, Any]]:
        """The runs rows store.db's Store.list_runs selects (its filters, ``bench`` as its regular
        expression), the last stored first (``by_start``: the last started first, the last stored
        first among equal starts), each a column → value dict in the schema's order. Raises
        StoreError on a database error, worded as SQLAlchemy's."""
        where, params = _filters(host, since, labels, bench_regex)
        order = "runs.started_at DESC, runs.id DESC" if by_start else "runs.id DESC"
        sql = f"{_SELECT}{where} ORDER BY {order}"
        if limit is not None and limit >= 0:
            sql += " LIMIT ?"
            params.append(limit)
        return self._rows("runs", sql, params)

    def count_runs(self, *, host: str | None = None, since: dt.date | None = None,
                   labels: Mapping[str, str] | None = None, bench_regex: str | None = None) -> int:
        """How many runs list_runs(None) with these filters gives."""
        where, params = _filters(host, since, labels, bench_regex)
        return int(self._select(f"SELECT count(*) FROM runs{where}", params)[0][0])

    def get_run(self, run_id: int) -> dict[str, Any] | None:
        """Run ``run_id``'s row as list_runs gives it; None when there is none."""
        got = self._rows("runs", _SELECT + " WHERE runs.id = ?", [run_id])
        return got[0] if got else None

    def last_run_id(self) -> int | None:
        """The newest run's id (the highest); None in an empty database."""
        got = self._select("SELECT runs.id FROM runs ORDER BY runs.id DESC LIMIT 1", [])
        return int(got[0][0]) if got else None

    def predictions(self, run_id: int) -> list[dict[str, Any]]:
        """Run ``run_id``'s predictions rows, in the order they were stored (store/predictions.py's
        of_run), ``detail`` decoded."""
        return self._rows("predictions", _select_all("predictions") + " WHERE predictions.run_id = ? "
                          "ORDER BY predictions.id", [run_id])

    def results_of(self, run_ids: Sequence[int], *, raw: bool = True) -> list[dict[str, Any]]:
        """The results rows of runs ``run_ids`` as store.db's Store.results_of selects them, in the
        order they were stored (results.id): each a column → value dict, ``extra`` decoded (without
        the calibration chains' raw readings unless ``raw``). Raises StoreError, worded as SQLAlchemy's."""
        if not run_ids:
            return []
        sql = (f"{_RESULTS if raw else _RESULTS_LIGHT} WHERE results.run_id IN ({', '.join('?' * len(run_ids))}) "
               "ORDER BY results.id")
        return self._rows("results", sql, list(run_ids))

    def _rows(self, table: str, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        """The rows of a SELECT of ``table``'s columns in the schema's order, each a column → value
        dict as SQLAlchemy reads it (its JSON columns decoded, its booleans bool)."""
        names, json_columns, booleans = columns.HEAD_COLUMNS[table], columns.JSON[table], columns.BOOLEAN[table]
        out = []
        for values in self._select(sql, params):
            row = dict(zip(names, values, strict=True))
            for k in json_columns:
                row[k] = _json(row[k])
            for k in booleans:
                row[k] = _boolean(row[k])
            out.append(row)
        return out

    def _select(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """The rows of one SELECT, on a connection of its own. Raises StoreError on a database
        error, worded as SQLAlchemy's."""
        try:
            con = connect(self.path)
            try:
                return con.execute(sql, params).fetchall()
            finally:
                con.close()
        except sqlite3.Error as e:
            raise StoreError(f"database error: {sqlalchemy_words(e)}") from e


def open_head(raw: str) -> Reads | None:
    """The Reads of database URL ``raw`` when it is a plain SQLite file at the newest schema,
    whole (see the module's docstring), else None: SQLAlchemy's open takes it, and says what is
    wrong with it."""
    plain = urls.plain_sqlite(raw)
    if plain is None:
        return None
    path, url = plain
    try:
        p = Path(path)
        if not p.is_file() or p.stat().st_size == 0:
            return None
        con = connect(path)
        try:
            tables = {name for (name,) in con.execute(_TABLES)}
            st = migrate.state_of(tables, lambda sql: con.execute(sql).fetchall())
            if not migrate.at_head(st) or migrate.damage(url, lambda t: _columns(con, t) if t in tables else None):
                return None
        finally:
            con.close()
    except (sqlite3.Error, OSError):  # e.g. a WAL file whose -shm a read-only connection cannot make
        return None
    return Reads(path, url)


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in con.execute(f'PRAGMA table_info("{table}")')}
