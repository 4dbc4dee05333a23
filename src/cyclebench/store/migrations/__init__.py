"""Alembic migrations of the results database (run by cyclebench.store.migrate, no alembic.ini).

``versions/`` holds one script per schema revision; ``rev1`` is the schema of revision 0001
(as c7ecbb2 created it), frozen: later schema changes are new revisions, never edits here.

To write a new revision (developers only): change the tables in ``store/db.py``, then
``alembic -c /dev/null -x url=sqlite:////tmp/x.db revision -m "what" --autogenerate`` is not
needed: copy the last script in versions/, bump ``revision``/``down_revision`` and write the
operations by hand in batch mode (``op.batch_alter_table``), which SQLite needs; then update
``HEAD`` in ``store/migrate.py`` (a test checks both, and that the migrated schema equals
``db.metadata``).
"""
