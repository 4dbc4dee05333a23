"""The database (db: SQLAlchemy, SQLite or PostgreSQL, schema by Alembic) and the lossless
run file (runfile)."""

from cyclebench.store.db import RESULT_FIELDS, RUN_FIELDS, RunGone, Store, StoreError, default_url, guess_kind
from cyclebench.store.liveness import ABANDONED, run_status
from cyclebench.store.urls import redact_argv

__all__ = ["ABANDONED", "RESULT_FIELDS", "RUN_FIELDS", "RunGone", "Store", "StoreError", "default_url", "guess_kind",
           "redact_argv", "run_status"]
