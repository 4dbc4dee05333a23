"""The database (db: SQLAlchemy, SQLite or PostgreSQL, schema by Alembic) and the lossless
run file (runfile).

Importing the package imports no SQLAlchemy (~0.15 s): its errors are here, and the names of
the database module are loaded on first use (PEP 562's module ``__getattr__``), so a command
that only catches StoreError, or names Store in its annotations, starts without it
(docs/architecture.md, "Imports where used").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cyclebench.store.errors import RunGone, StoreError

if TYPE_CHECKING:
    from cyclebench.store.db import RESULT_FIELDS, RUN_FIELDS, Store, default_url, guess_kind
    from cyclebench.store.liveness import ABANDONED, run_status
    from cyclebench.store.urls import redact_argv

__all__ = ["ABANDONED", "RESULT_FIELDS", "RUN_FIELDS", "RunGone", "Store", "StoreError", "default_url", "guess_kind",
           "redact_argv", "run_status"]

# name → the module that holds it, imported when the name is first read
_LAZY = {"Store": "db", "RESULT_FIELDS": "db", "RUN_FIELDS": "db", "default_url": "db", "guess_kind": "db",
         "ABANDONED": "liveness", "run_status": "liveness", "redact_argv": "urls"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value  # read once: the next lookup is an ordinary global
    return value
