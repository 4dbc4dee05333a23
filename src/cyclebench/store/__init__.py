"""The database (db: SQLAlchemy, SQLite or PostgreSQL) and the lossless run file (runfile)."""

from cyclebench.store.db import RESULT_FIELDS, Store, StoreError, default_url

__all__ = ["RESULT_FIELDS", "Store", "StoreError", "default_url"]
