"""Database URLs: which ones cyclebench accepts, and how they are shown without their password.

Only SQLite (``sqlite:///path``) and PostgreSQL (``postgresql://user@host/db``, driven by
psycopg 3) are supported; any other dialect is refused in one line before SQLAlchemy tries
to import a driver. A password is never printed, stored or exported: ``display`` renders a
URL with ``***`` in its place, ``redact_argv`` does the same to a stored command line.

SQLAlchemy (~0.2 s to import) parses them, imported when a URL needs it: a plain
``sqlite:///path`` is read by ``plain_sqlite`` alone (store/reads.py), and a command line
without an ``@`` holds no password to mask.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

POSTGRES_HINT = "pip install 'cyclebench[postgres]'"
SUPPORTED = ("sqlite", "postgresql")

# scheme://user:password@  — a password in anything that looks like a URL with credentials
_CREDENTIALS = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s]*:)(?P<pw>[^@\s]*)(?P<at>@)")


class UrlError(ValueError):
    """A database URL cyclebench cannot use (malformed, or an unsupported dialect)."""


def redact(text: str) -> str:
    """``text`` with the password of any ``scheme://user:password@`` in it replaced by ``***``."""
    return _CREDENTIALS.sub(lambda m: f"{m['head']}***{m['at']}" if m["pw"] else m[0], text)


def display(url: str | URL) -> str:
    """A URL as it may be shown to the user, stored or exported: its password masked."""
    from sqlalchemy.engine import URL, make_url
    from sqlalchemy.exc import ArgumentError

    if isinstance(url, URL):
        return url.render_as_string(hide_password=True)
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return redact(url)


def parse(raw: str) -> URL:
    """The SQLAlchemy URL to connect to; raises UrlError (its message without the URL) for a
    malformed or unsupported one.
    ``postgresql://`` (SQLAlchemy's default driver would be psycopg2) is driven by psycopg 3;
    another driver named in the URL (``postgresql+psycopg2://``, ``sqlite+pysqlcipher://``) is
    refused: the schema and the tests know psycopg 3 and Python's sqlite3 only."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        url = make_url(raw)
    except (ArgumentError, ValueError):
        raise UrlError("not a database URL (expected sqlite:///path or postgresql://user@host/db)") from None
    backend = url.get_backend_name()
    if backend not in SUPPORTED:
        raise UrlError(f"unsupported database '{backend}': cyclebench stores results in SQLite (sqlite:///path) "
                       "or PostgreSQL (postgresql://user@host/db)")
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    elif backend == "postgresql" and url.get_driver_name() != "psycopg":
        raise UrlError(f"unsupported PostgreSQL driver '{url.get_driver_name()}': cyclebench drives PostgreSQL with "
                       "psycopg 3 (postgresql://user@host/db or postgresql+psycopg://…)")
    elif backend == "sqlite" and url.get_driver_name() != "pysqlite":
        raise UrlError(f"unsupported SQLite driver '{url.get_driver_name()}': use sqlite:///path")
    return url


_PLAIN_SQLITE = "sqlite:///"


def plain_sqlite(raw: str) -> tuple[str, str] | None:
    """The file a plain ``sqlite:///path`` URL names and the URL as ``display`` shows it, read
    without SQLAlchemy: what ``parse`` and ``sqlite_path`` give for it. None for any other URL
    (a query, a ``%`` escape, ``file:`` URIs, in memory, another dialect or driver)."""
    if not raw.startswith(_PLAIN_SQLITE):
        return None
    path = raw[len(_PLAIN_SQLITE):]
    if not path or "?" in path or "%" in path or path == ":memory:" or path.startswith("file:"):
        return None
    return path, _PLAIN_SQLITE + quote(path, safe=" +/")  # URL.render_as_string's quoting of the database


def sqlite_path(url: URL) -> str | None:
    """The file of a SQLite URL; None for other dialects, in-memory databases and ``file:`` URIs."""
    if url.get_backend_name() != "sqlite":
        return None
    db = url.database or ""
    return None if db in ("", ":memory:") or db.startswith("file:") else db


def sqlite_in_memory(url: URL) -> bool:
    """Whether a SQLite URL names a database in memory, gone when the process ends:
    ``sqlite://``, ``sqlite:///:memory:``, ``file::memory:`` or a ``file:`` URI with
    ``mode=memory`` (sqlite.org/inmemorydb.html, sqlite.org/uri.html)."""
    if url.get_backend_name() != "sqlite":
        return False
    db = url.database or ""
    return (db in ("", ":memory:") or db.startswith("file::memory:")
            or (db.startswith("file:") and ("mode=memory" in db or url.query.get("mode") == "memory")))


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line as it may be stored: the password of ``--db URL`` / ``--db=URL`` (and of
    any other argument shaped like ``scheme://user:password@…``) replaced by ``***``."""
    args = [str(a) for a in argv]
    out = []
    for i, arg in enumerate(args):
        if arg.startswith("--db="):
            out.append("--db=" + _mask(arg.removeprefix("--db=")))
        elif i > 0 and args[i - 1] == "--db":
            out.append(_mask(arg))
        else:
            out.append(redact(arg))
    return out


def _mask(value: str) -> str:
    """A --db value with its password masked; anything else as written."""
    if "@" not in value:  # no password (make_url finds one only before an "@"): no SQLAlchemy
        return redact(value)
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        url = make_url(value)
    except (ArgumentError, ValueError):
        return redact(value)
    return url.render_as_string(hide_password=True) if url.password is not None else redact(value)
