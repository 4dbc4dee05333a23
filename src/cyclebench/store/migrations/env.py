"""Alembic environment: cyclebench.store.migrate passes the connection (already inside the
transaction that holds the schema lock) in ``config.attributes["connection"]``.

For development only, ``alembic`` may be run by hand against a URL:
``alembic -x url=sqlite:////tmp/x.db -c <an ini with script_location = …/migrations> upgrade head``.
"""

from __future__ import annotations

from typing import Any

from alembic import context
from sqlalchemy import create_engine

from cyclebench.store.schema import metadata


def run(connection: Any) -> None:
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("cyclebench migrations run online only (they read and backfill rows)")

_conn = context.config.attributes.get("connection")
if _conn is not None:
    run(_conn)
else:
    _url = context.get_x_argument(as_dictionary=True).get("url") or context.config.get_main_option("sqlalchemy.url")
    with create_engine(_url).begin() as _c:
        run(_c)
