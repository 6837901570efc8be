"""A Celery app made without a broker URL talks to nothing: it fails with the error a component
started without COMPACTION_REDIS_URL gets, instead of reaching a default address where some
other Redis (127.0.0.1:6379) or RabbitMQ (Celery's default, amqp://localhost) may listen.

Nothing here may connect anywhere: every app either has no broker or a private one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from worker import keys
from worker.broker import NO_BROKER_URL
from worker.celery_app import make_celery
from worker.errors import LaunchError
from worker.redis_server import RedisServer
from worker.runtime import build_runtime
from worker.settings import Settings, get_settings
from worker.sweeps import in_broker


@pytest.fixture
def no_redis_url(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Settings]:
    """This process's settings without COMPACTION_REDIS_URL and with an empty var/."""
    monkeypatch.delenv("COMPACTION_REDIS_URL", raising=False)
    monkeypatch.setenv("COMPACTION_VAR_DIR", str(tmp_path / "var"))
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


def test_an_app_without_a_broker_url_refuses_to_send(no_redis_url: Settings) -> None:
    app = make_celery(no_redis_url)
    try:
        assert app.conf.broker_url == NO_BROKER_URL
        with pytest.raises(LaunchError, match=r"^COMPACTION_REDIS_URL is not set: run `compaction"):
            app.send_task(keys.COMPACT_TASK, args=["job"], queue=keys.QUEUE)
        with pytest.raises(LaunchError, match="COMPACTION_REDIS_URL is not set"):
            app.control.ping(timeout=0.5)
    finally:
        app.close()


def test_a_runtime_without_a_broker_url_is_refused(no_redis_url: Settings) -> None:
    with pytest.raises(LaunchError, match="COMPACTION_REDIS_URL is not set"):
        build_runtime(no_redis_url)


def test_a_runtime_sends_with_an_app_on_its_own_broker(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    # The process's own settings have no broker at all (or another one): the runtime's app
    # must not be the module-level one.
    settings = Settings(
        redis_url=redis_server.url, database_url=f"sqlite:///{tmp_path / 'c.db'}", var_dir=tmp_path
    )
    rt = build_runtime(settings)
    try:
        assert rt.celery.conf.broker_url == redis_server.url
        rt.celery.send_task(keys.COMPACT_TASK, args=["j-1"], task_id="j-1", queue=keys.QUEUE)
        assert in_broker(rt.redis, "j-1")
    finally:
        rt.redis.delete(keys.QUEUE)
        rt.close()
