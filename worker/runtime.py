"""What a worker process holds for all its jobs: settings, database, Redis, the summarizer.

Made on first use and shared by the threads of the pool (each of these is thread-safe). A
forked child (prefork pool) must not reuse its parent's sockets, so it drops them and makes
its own on first use.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis

from worker.compressor.summarizer import Summarizer
from worker.settings import Settings, get_settings
from worker.store.db import Database


@dataclass
class Runtime:
    settings: Settings
    db: Database
    redis: redis.Redis
    make_summarizer: Callable[[], Summarizer]
    celery: Any  # the Celery app that sends follow-up tasks (untyped library)
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


def redis_client(url: str) -> redis.Redis:
    # Timeouts: a broker that vanished without closing the socket must not hang a job forever.
    return redis.Redis.from_url(
        url, socket_timeout=10, socket_connect_timeout=5, health_check_interval=30
    )


def build_runtime(settings: Settings) -> Runtime:
    from worker.celery_app import broker_url, celery_app
    from worker.summarizers import build_summarizer

    return Runtime(
        settings=settings,
        db=Database(settings.database_url),
        redis=redis_client(broker_url(settings)),
        make_summarizer=lambda: build_summarizer(settings),
        celery=celery_app,
    )


_current: Runtime | None = None
_current_lock = threading.Lock()


def current() -> Runtime:
    """This process's runtime, made from the environment's settings on first use."""
    global _current
    with _current_lock:
        if _current is None:
            _current = build_runtime(get_settings())
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
