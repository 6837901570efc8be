"""Engines, transactions and migrations, for SQLite (embedded) and PostgreSQL (psycopg 3).

SQLite: WAL so readers never wait for the writer, a 30 s busy timeout, foreign keys on, and
``BEGIN IMMEDIATE`` for write transactions. pysqlite's own implicit BEGIN is switched off and we
emit ours, because a deferred transaction that reads and then writes can fail with "database is
locked" when another writer got there first; an immediate one waits for the lock up front.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
SQLITE_BUSY_TIMEOUT_S = 30
_IMMEDIATE = "compaction_begin_immediate"  # execution option the write engine carries


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine for ``url``; SQLite gets WAL, busy timeout, foreign keys and our own BEGIN."""
    if not is_sqlite(url):
        return create_engine(url, pool_pre_ping=True, **kwargs)
    database = make_url(url).database
    in_memory = database in (None, "", ":memory:")
    if not in_memory:
        Path(str(database)).parent.mkdir(parents=True, exist_ok=True)
    connect_args = {"timeout": SQLITE_BUSY_TIMEOUT_S, "check_same_thread": False}
    if in_memory:
        kwargs.setdefault("poolclass", StaticPool)  # one shared connection, or each gets its own DB
    engine = create_engine(url, connect_args=connect_args, **kwargs)
    _install_sqlite_hooks(engine, wal=not in_memory)
    return engine


def _install_sqlite_hooks(engine: Engine, *, wal: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves, below
        cursor = dbapi_connection.cursor()
        try:
            if wal:
                _switch_to_wal(cursor)
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_S * 1000}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")  # safe with WAL; fsync at checkpoints
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get(_IMMEDIATE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _switch_to_wal(cursor: sqlite3.Cursor) -> None:
    """WAL is stored in the file: the first connection of a new database switches it.

    Switching needs the database to itself, and SQLite refuses at once (SQLITE_BUSY, no busy
    handler) while another process holds a lock, e.g. two processes migrating a new database
    at the same moment. So ask again until the busy timeout; once any connection has switched,
    the file says ``wal`` and nothing needs the lock.
    """
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    while True:
        try:
            if cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                return
            if cursor.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal":
                return
        except sqlite3.OperationalError as exc:
            busy = exc.sqlite_errorname in ("SQLITE_BUSY", "SQLITE_LOCKED")
            if not busy or time.monotonic() >= deadline:
                raise
        if time.monotonic() >= deadline:
            raise sqlite3.OperationalError("could not switch the database to WAL: it stays busy")
        time.sleep(0.02)


class Database:
    """One engine per process. ``read()`` and ``write()`` yield an ORM session in a transaction."""

    def __init__(self, url: str, **engine_kwargs: Any) -> None:
        self.url = url
        self.engine = make_engine(url, **engine_kwargs)
        self._write_engine = self.engine.execution_options(**{_IMMEDIATE: True})

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only transaction, always rolled back."""
        with Session(self.engine, expire_on_commit=False) as session:
            yield session  # closing the session rolls its transaction back

    @contextmanager
    def write(self) -> Iterator[Session]:
        """One write transaction: committed when the block ends, rolled back if it raises."""
        with Session(self._write_engine, expire_on_commit=False) as session, session.begin():
            yield session

    def dispose(self) -> None:
        """Drop pooled connections; call in each forked worker (a socket must not be shared)."""
        self.engine.dispose()


def alembic_config(url: str) -> Config:
    """Programmatic Alembic config: the migrations ship inside this package."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["database_url"] = url  # not via the ini: '%' in a password breaks it
    return config


def migrate(url: str) -> None:
    """Upgrade the database at ``url`` to the newest migration (safe to run concurrently)."""
    engine = make_engine(url)
    try:
        # BEGIN IMMEDIATE on SQLite: a second migrator waits, then finds the schema current.
        with engine.connect().execution_options(**{_IMMEDIATE: True}) as connection:
            config = alembic_config(url)
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
            connection.commit()
    finally:
        engine.dispose()
