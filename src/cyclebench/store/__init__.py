"""The database (db: SQLAlchemy, SQLite or PostgreSQL, schema by Alembic) and the lossless
run file (runfile).

Importing the package imports no SQLAlchemy (~0.2 s): its errors are here, and the names of
the database module are loaded on first use (PEP 562's module ``__getattr__``), so a command
that only catches StoreError, or names Store in its annotations, starts without it
(docs/architecture.md, "Imports where used"). The database module imports it where it is used:
`runs` on a SQLite file at the newest schema never does (store/reads.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cyclebench.store.errors import RunGone, StoreError

if TYPE_CHECKING:
    from cyclebench.store.db import Store, default_url, guess_kind
    from cyclebench.store.liveness import ABANDONED, run_status
    from cyclebench.store.schema import RESULT_FIELDS, RUN_FIELDS
    from cyclebench.store.urls import redact_argv

__all__ = ["ABANDONED", "RESULT_FIELDS", "RUN_FIELDS", "RunGone", "Store", "StoreError", "default_url", "guess_kind",
           "redact_argv", "run_status"]

_DB = ("Store", "default_url", "guess_kind")
_SCHEMA = ("RESULT_FIELDS", "RUN_FIELDS")  # SQLAlchemy's tables
_LIVENESS = ("ABANDONED", "run_status")


def __getattr__(name: str) -> Any:
    """A name of the database module (or schema, liveness, urls) imported when first read; then an
    ordinary global of the package. The imports are written out, so import-linter sees them."""
    if name in _DB:
        from cyclebench.store import db as module
    elif name in _SCHEMA:
        from cyclebench.store import schema as module
    elif name in _LIVENESS:
        from cyclebench.store import liveness as module
    elif name == "redact_argv":
        from cyclebench.store import urls as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value
