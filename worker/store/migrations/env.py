"""Alembic environment: always online, on the connection ``worker.store.db.migrate`` passes in."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from worker.store.models import Base, modelled

# Any constant works; it only has to be the same in every process that migrates.
_PG_MIGRATION_LOCK = 7_262_431_905


def run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite cannot ALTER most things
        compare_type=True,
        include_name=modelled,  # SQLite's FTS5 tables are migration-made, not modelled
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # The API and every worker migrate at start: one at a time, the others then find
            # the schema already current.
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_PG_MIGRATION_LOCK})")
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError(
        "offline (SQL script) migrations are not supported; use `compaction migrate`"
    )
run_migrations(context.config.attributes["connection"])
