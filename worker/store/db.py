"""Engines, transactions and migrations, for SQLite (embedded) and PostgreSQL (psycopg 3).

SQLite: WAL so readers never wait for the writer, a 30 s busy timeout, foreign keys on, and
``BEGIN IMMEDIATE`` for write transactions. pysqlite's own implicit BEGIN is switched off and we
emit ours, because a deferred transaction that reads and then writes can fail with "database is
locked" when another writer got there first; an immediate one waits for the lock up front.

A process's own writers queue for SQLite's one write lock on a mutex of the ``Database``, and
take it the moment the writer before them commits. Left to SQLite, a writer that finds the
lock taken sleeps in its busy handler in growing steps (up to 100 ms) and is not woken when
the lock is freed: with 16 concurrent writers in one API process, p99 was 0.4-2 s. Writers in
other processes (workers, beat) still meet in SQLite's busy handler.

Reads on SQLite have a pool of their own: a writer waiting out the busy timeout holds its
connection all that time, and with the database locked by another process every pooled
connection ended up with a waiting writer, so reads queued behind them for 15-24 s.

PostgreSQL: a pooled connection is checked (``SELECT 1``) before use only when it sat idle in the
pool for ``ping_idle_s``: a busy pool pays no round trip per transaction, and a server restart
or a cut during a quiet spell is still found before a request uses the connection. A connection
that breaks while in use fails its transaction (the API answers 503, nothing stored) and makes
the pool replace every connection opened before the break, so the next request gets a new one.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import InvalidatePoolError, OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
SQLITE_BUSY_TIMEOUT_S = 30
# A WAL reader takes no lock a writer holds; it meets a busy database only for moments (a
# checkpoint resetting the log, recovery of the WAL index after a crash).
SQLITE_READ_BUSY_TIMEOUT_S = 5
_IMMEDIATE = "compaction_begin_immediate"  # execution option the write engine carries
_IDLE_SINCE = "compaction_idle_since"  # connection record info: when it was returned to the pool
# SQLite: the busy timeout of one write transaction (execution option), and of a connection
# (its info) when it is not the engine's.
_BUSY_MS = "compaction_busy_timeout_ms"


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def is_sqlite_file(url: str) -> bool:
    return is_sqlite(url) and make_url(url).database not in (None, "", ":memory:")


def make_engine(
    url: str,
    *,
    busy_timeout_s: float = SQLITE_BUSY_TIMEOUT_S,
    ping_idle_s: float = 0.0,
    **kwargs: Any,
) -> Engine:
    """An engine for ``url``; SQLite gets WAL, busy timeout, foreign keys and our own BEGIN.

    Args:
        ping_idle_s: a server database's connection is checked before use once it sat idle
            this long; 0 checks it at every checkout.
    """
    if not is_sqlite(url):
        if ping_idle_s <= 0:
            return create_engine(url, pool_pre_ping=True, **kwargs)
        engine = create_engine(url, **kwargs)
        _install_idle_ping(engine, ping_idle_s)
        return engine
    in_memory = not is_sqlite_file(url)
    if not in_memory:
        Path(str(make_url(url).database)).parent.mkdir(parents=True, exist_ok=True)
    connect_args = {"timeout": busy_timeout_s, "check_same_thread": False}
    if in_memory:
        kwargs.setdefault("poolclass", StaticPool)  # one shared connection, or each gets its own DB
    engine = create_engine(url, connect_args=connect_args, **kwargs)
    _install_sqlite_hooks(engine, wal=not in_memory, busy_timeout_s=busy_timeout_s)
    return engine


def _install_sqlite_hooks(engine: Engine, *, wal: bool, busy_timeout_s: float) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves, below
        cursor = dbapi_connection.cursor()
        try:
            if wal:
                _switch_to_wal(cursor)
            cursor.execute(f"PRAGMA busy_timeout={round(busy_timeout_s * 1000)}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")  # safe with WAL; fsync at checkpoints
        finally:
            cursor.close()

    default_ms = round(busy_timeout_s * 1000)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        options = conn.get_execution_options()
        busy_ms = options.get(_BUSY_MS, default_ms)
        if conn.info.get(_BUSY_MS, default_ms) != busy_ms:
            conn.exec_driver_sql(f"PRAGMA busy_timeout={busy_ms}")
            conn.info[_BUSY_MS] = busy_ms
        conn.exec_driver_sql("BEGIN IMMEDIATE" if options.get(_IMMEDIATE, False) else "BEGIN")


def _install_idle_ping(engine: Engine, idle_s: float) -> None:
    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_connection: Any, record: Any) -> None:
        record.info[_IDLE_SINCE] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _on_checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.pop(_IDLE_SINCE, None)
        if since is None or time.monotonic() - since < idle_s:
            return  # new, or back in the pool a moment ago
        try:
            engine.dialect.do_ping(dbapi_connection)
        except engine.dialect.loaded_dbapi.Error as exc:
            if not engine.dialect.is_disconnect(exc, dbapi_connection, None):
                raise
            # The pool replaces this connection and every one opened before it, and retries.
            raise InvalidatePoolError(str(exc)) from exc


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


_UNNOTICED_WAIT_S = 0.01  # a shorter wait for the turn leaves the busy timeout as it is


class Database:
    """One per process. ``read()`` and ``write()`` yield an ORM session in a transaction.

    Args:
        busy_timeout_s: SQLite only: how long a write waits for another writer's lock.
        engine_kwargs: for ``make_engine`` (pool sizes, ``ping_idle_s``), given to each engine.
    """

    def __init__(
        self, url: str, *, busy_timeout_s: float = SQLITE_BUSY_TIMEOUT_S, **engine_kwargs: Any
    ) -> None:
        self.url = url
        self.engine = make_engine(url, busy_timeout_s=busy_timeout_s, **engine_kwargs)
        self._busy_timeout_s = busy_timeout_s
        self._writer = threading.Lock() if is_sqlite(url) else None
        self._write_engine = self.engine.execution_options(**{_IMMEDIATE: True})
        # SQLite: reads never wait for a connection that a writer holds while the database is
        # locked. PostgreSQL keeps one pool: its connections are a server-wide budget.
        self._read_engine = self.engine
        if is_sqlite_file(url):
            read_timeout_s = min(busy_timeout_s, SQLITE_READ_BUSY_TIMEOUT_S)
            self._read_engine = make_engine(url, busy_timeout_s=read_timeout_s, **engine_kwargs)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only transaction, always rolled back."""
        with Session(self._read_engine, expire_on_commit=False) as session:
            yield session  # closing the session rolls its transaction back

    @contextmanager
    def write(self) -> Iterator[Session]:
        """One write transaction: committed when the block ends, rolled back if it raises."""
        with (
            self._one_writer() as engine,
            Session(engine, expire_on_commit=False) as session,
            session.begin(),
        ):
            yield session

    @contextmanager
    def _one_writer(self) -> Iterator[Engine]:
        """SQLite: this process's turn at the write lock; yields the engine to write with.

        The busy timeout bounds the whole wait: the turn is waited for up to it (then the error
        SQLite itself gives, "database is locked"), and what is left of it is how long the
        transaction then waits for a writer in another process.
        """
        if self._writer is None:
            yield self._write_engine
            return
        started = time.monotonic()
        if not self._writer.acquire(timeout=self._busy_timeout_s):
            locked = sqlite3.OperationalError("database is locked")
            raise OperationalError("BEGIN IMMEDIATE", None, locked)
        try:
            waited_s = time.monotonic() - started
            if waited_s < _UNNOTICED_WAIT_S:
                yield self._write_engine
            else:
                left_ms = max(1, round((self._busy_timeout_s - waited_s) * 1000))
                yield self._write_engine.execution_options(**{_BUSY_MS: left_ms})
        finally:
            self._writer.release()

    def dispose(self, *, close: bool = True) -> None:
        """Drop pooled connections. In a forked child pass ``close=False``: the parent's
        connections are forgotten, not closed (a socket or SQLite handle must not be shared)."""
        if not close and self._writer is not None:
            self._writer = threading.Lock()  # the parent's may have been held when it forked
        self.engine.dispose(close=close)
        if self._read_engine is not self.engine:
            self._read_engine.dispose(close=close)


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
        # Every migration runs in this one transaction: left to itself, alembic commits after
        # each migration on SQLite (it takes its DDL for non-transactional), and a second
        # migrator that got the lock in between ran the next migration twice.
        with (
            engine.connect().execution_options(**{_IMMEDIATE: True}) as connection,
            connection.begin(),
        ):
            config = alembic_config(url)
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    finally:
        engine.dispose()
