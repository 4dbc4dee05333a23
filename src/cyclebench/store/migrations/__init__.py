"""Alembic migrations of the results database (run by cyclebench.store.migrate, no alembic.ini).

``versions/`` holds one script per schema revision; ``rev1`` is the schema of revision 0001
(as c7ecbb2 created it), frozen: later schema changes are new revisions, never edits here.

A new revision (developers): change the tables in ``store/db.py``; copy the last script in
``versions/`` (or start from ``script.py.mako``), set ``revision``/``down_revision``, write
the operations in batch mode (``with op.batch_alter_table(...)``: SQLite cannot ALTER most
things in place) and any backfill with a frozen copy of the logic it needs; append the
revision to ``KNOWN`` in ``store/migrate.py``. Tests check that ``KNOWN`` is the scripts'
chain and that a migrated database equals ``db.metadata``.
"""
