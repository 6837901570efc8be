"""What a worker process holds for all its jobs: settings, database, Redis, the summarizer.

Made on first use and shared by the threads of the pool (each of these is thread-safe). A
forked child (prefork pool) must not reuse its parent's sockets, so it drops them and makes
its own on first use.

``settings.worker_concurrency`` sizes the pools: every thread of the worker may hold a
database connection and an LLM call at once, and none waits for a free one.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from worker.compressor.summarizer import Summarizer
from worker.settings import Settings, get_settings
from worker.store.db import Database, is_sqlite, is_sqlite_file


@dataclass
class Runtime:
    settings: Settings
    db: Database
    redis: redis.Redis
    make_summarizer: Callable[[], Summarizer]
    celery: Any  # the Celery app that sends follow-up tasks (untyped library)
    owns_celery: bool = False  # made for this runtime: closed with it
    _summarizer: Summarizer | None = field(default=None, repr=False)
    _summarizer_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def summarizer(self) -> Summarizer:
        """Made once, on first use, and shared by every job thread of the process."""
        with self._summarizer_lock:
            if self._summarizer is None:
                self._summarizer = self.make_summarizer()
            return self._summarizer

    def close(self) -> None:
        from worker.summarizers import close_summarizer

        if self._summarizer is not None:
            close_summarizer(self._summarizer)
            self._summarizer = None
        self.db.dispose()
        self.redis.close()
        if self.owns_celery:
            self.celery.close()


@dataclass(frozen=True, slots=True)
class RedisTimeouts:
    """How long one exchange with Redis may wait. A Redis that stopped answering (a partition,
    a frozen host) never closes the socket: without these, a call waits forever."""

    connect_s: float
    reply_s: float  # for each command's reply

    def bound_s(self) -> float:
        """The longest one command can take: a connection, then its reply."""
        return self.connect_s + self.reply_s


# Jobs and beat can wait out a slow Redis; a lock renewal still ends well inside the lock's TTL.
WORKER_REDIS = RedisTimeouts(connect_s=5.0, reply_s=10.0)
# The API answers a caller: a cooldown read and a publish together stay within
# API_BROKER_BOUND_S (docs/deploy.md), however many of its requests wait on Redis.
API_REDIS = RedisTimeouts(connect_s=1.0, reply_s=1.0)
API_BROKER_BOUND_S = 5.0


def redis_client(url: str, timeouts: RedisTimeouts = WORKER_REDIS) -> redis.Redis:
    """A client that gives up after ``timeouts``, once: a timed-out command is not retried
    (it would double the wait, and the command may have run)."""
    return redis.Redis.from_url(
        url,
        socket_timeout=timeouts.reply_s,
        socket_connect_timeout=timeouts.connect_s,
        socket_keepalive=True,
        health_check_interval=30,
        retry=Retry(NoBackoff(), 0),
    )


def build_runtime(settings: Settings, *, celery: Any = None) -> Runtime:
    """A runtime on ``settings``' database and broker (``LaunchError`` without a broker URL).

    Args:
        celery: the app to send follow-up tasks with; by default one made for the same broker
            (a worker passes the app it runs, which is on the broker of its environment).
    """
    from worker.celery_app import broker_url, make_celery
    from worker.summarizers import build_summarizer

    url = broker_url(settings)
    return Runtime(
        settings=settings,
        db=Database(settings.database_url, **db_pool(settings)),
        redis=redis_client(url),
        make_summarizer=lambda: build_summarizer(settings),
        celery=celery if celery is not None else make_celery(settings),
        owns_celery=celery is None,
    )


def db_pool(settings: Settings) -> dict[str, Any]:
    """Engine arguments for a worker's database pool: a connection for every worker thread."""
    return pool_options(settings, size=settings.worker_concurrency)


def pool_options(settings: Settings, *, size: int) -> dict[str, Any]:
    """Engine arguments for a pool that keeps ``size`` connections (``Database``'s)."""
    if is_sqlite(settings.database_url) and not is_sqlite_file(settings.database_url):
        return {}  # in-memory SQLite: one shared connection (StaticPool), nothing to size
    return {
        "pool_size": size,
        "max_overflow": settings.database_max_overflow,
        "pool_recycle": settings.database_pool_recycle_s,
        "ping_idle_s": settings.database_ping_idle_s,
    }


_current: Runtime | None = None
_settings: Settings | None = None  # set by the worker command; else the environment's
_current_lock = threading.Lock()


def configure(settings: Settings) -> None:
    """Build this process's runtime from ``settings`` (the worker command's, with its
    ``--concurrency``) instead of the environment's."""
    global _settings
    with _current_lock:
        _settings = settings


def current() -> Runtime:
    """This process's runtime, made on first use from the configured settings."""
    global _current
    with _current_lock:
        if _current is None:
            from worker.celery_app import celery_app

            _current = build_runtime(_settings or get_settings(), celery=celery_app)
        return _current


def install(runtime: Runtime | None) -> None:
    """Use ``runtime`` for this process (tests running tasks in-process; None: forget it)."""
    global _current
    with _current_lock:
        _current = runtime


def shutdown() -> None:
    """Close this process's runtime, if it was ever made (a worker or pool child exiting)."""
    global _current
    with _current_lock:
        if _current is not None:
            _current.close()
        _current = None


def after_fork() -> None:
    """In a forked child: forget the parent's pools without closing the parent's sockets."""
    global _current
    with _current_lock:
        if _current is not None:
            _current.db.dispose(close=False)
        _current = None


def worker_id() -> str:
    """Telemetry's ``worker``: host and process."""
    return f"{socket.gethostname()}/{os.getpid()}"
