"""The store's errors, apart from the database module: a command catches them without importing
SQLAlchemy (~0.2 s) until it opens a database (docs/architecture.md, "Imports where used")."""


class StoreError(Exception):
    """The database cannot be opened or written (bad URL, missing driver, foreign or newer
    database, permissions…). Its message is one line and never holds a password."""


class RunGone(StoreError):
    """The run being stored into is no longer in the database: deleted while it ran
    (`cyclebench delete --force`), and the results it had stored with it."""
