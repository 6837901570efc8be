"""A job in flight outlasts an outage of the database or Redis and ends succeeded.

The job runs in-process (its summarizer waits for the test); the database and Redis are real,
reached through a proxy the test cuts or freezes (``tests/support/faultproxy.py``), or a real
Redis that refuses writes. A summary in hand is never thrown away for a step that failed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import make_url

from tests.support.faultproxy import FaultProxy
from tests.support.worker_fixtures import (
    BlockingSummarizer,
    RaisingSummarizer,
    close_runtime,
    in_background,
    private_redis,
    runtime_for,
    sample_messages,
    seed_job,
    seed_session,
    settings,
)
from worker import cooldowns
from worker.compaction import run_job
from worker.compressor.errors import SummarizerServerError
from worker.redis_server import RedisServer
from worker.runtime import Runtime
from worker.settings import Settings
from worker.store import jobs, sessions

pytestmark = pytest.mark.integration
__all__ = ["private_redis", "settings"]  # fixtures, imported for pytest

WORKER = "test-host/1"


@pytest.fixture
def redis_proxy(private_redis: RedisServer) -> Iterator[FaultProxy]:
    with FaultProxy(private_redis.port) as proxy:
        yield proxy


def outage_settings(settings: Settings, **update: Any) -> Settings:
    # A short lock TTL, so an outage of a few seconds outlasts the lock several times over.
    return settings.model_copy(update={"lock_ttl_s": 1.5, **update})


def run_through(
    rt: Runtime, summarizer: BlockingSummarizer, outage: Any, *, seconds: float
) -> dict[str, Any]:
    """Start a job, let ``outage()`` happen while its summarizer runs, answer, wait: its
    telemetry once it finished (the outage is ended by the caller's ``heal``)."""
    session_id = seed_session(rt.db, messages=sample_messages())
    job_id = seed_job(rt.db, session_id)
    thread, box = in_background(run_job, rt, job_id, worker=WORKER)
    assert summarizer.started.wait(30)
    heal = outage()
    summarizer.release.set()
    time.sleep(seconds)
    heal()
    thread.join(60)
    assert not thread.is_alive(), "the job did not finish after the outage"
    assert "error" not in box, box.get("error")
    telemetry: dict[str, Any] = box["result"]
    return telemetry


def assert_compacted_once(rt: Runtime, telemetry: dict[str, Any]) -> None:
    assert telemetry["status"] == "succeeded", telemetry
    assert telemetry["attempt"] == 1, telemetry  # no second claim, no second summary
    session = sessions.get_session(rt.db, session_id=telemetry["session_id"])
    assert session.compaction_count == 1
    assert session.message_count == telemetry["messages_after"]


@pytest.mark.parametrize("fault", ["cut", "freeze"], ids=["redis-gone", "redis-frozen"])
def test_a_job_outlasts_redis_away_for_longer_than_its_lock(
    settings: Settings, redis_proxy: FaultProxy, fault: str
) -> None:
    summarizer = BlockingSummarizer()
    through = outage_settings(settings, redis_url=redis_proxy.url_for(str(settings.redis_url)))
    rt = runtime_for(through, summarizer)
    try:

        def outage() -> Any:
            getattr(redis_proxy, fault)()  # cut: refused; freeze: silence (a partition)
            return redis_proxy.heal

        assert_compacted_once(rt, run_through(rt, summarizer, outage, seconds=6))
    finally:
        close_runtime(rt)


def test_a_job_outlasts_redis_being_wiped(settings: Settings) -> None:
    # Its lock vanishes with everything else; nobody else can have run the session meanwhile.
    summarizer = BlockingSummarizer()
    rt = runtime_for(outage_settings(settings), summarizer)
    try:

        def outage() -> Any:
            rt.redis.flushall()
            return lambda: None

        assert_compacted_once(rt, run_through(rt, summarizer, outage, seconds=2))
    finally:
        close_runtime(rt)


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)  # SQLite has no network
def test_a_job_outlasts_the_database_going_away(settings: Settings) -> None:
    url = make_url(settings.database_url)
    with FaultProxy(url.port or 5432, str(url.host)) as proxy:
        summarizer = BlockingSummarizer()
        through = outage_settings(settings, database_url=proxy.url_for(settings.database_url))
        rt = runtime_for(through, summarizer)
        try:

            def outage() -> Any:
                proxy.cut()
                return proxy.heal

            assert_compacted_once(rt, run_through(rt, summarizer, outage, seconds=8))
        finally:
            close_runtime(rt)


def test_a_summary_is_kept_when_the_cooldown_cannot_be_recorded(settings: Settings) -> None:
    # The summarizer fails (the fallback stands in) and Redis refuses writes just then (out of
    # memory): the cooldown is lost, the compaction is not.
    class FailsWhileRedisIsFull(RaisingSummarizer):
        def summarize(self, request: Any) -> Any:
            rt.redis.config_set("maxmemory", 1)
            return super().summarize(request)

    rt = runtime_for(settings, FailsWhileRedisIsFull(SummarizerServerError("502", status=502)))
    try:
        session_id = seed_session(rt.db, messages=sample_messages())
        telemetry = run_job(rt, seed_job(rt.db, session_id), worker=WORKER)
        rt.redis.config_set("maxmemory", 0)
        assert telemetry["fallback_used"] is True and telemetry["error_class"] == "server_error"
        assert_compacted_once(rt, telemetry)
        endpoint = cooldowns.endpoint_id(settings)
        assert cooldowns.active_cooldown(rt.redis, session_id=session_id, endpoint=endpoint) is None
        assert jobs.get_job(rt.db, job_id=telemetry["id"]).status == "succeeded"
    finally:
        rt.redis.config_set("maxmemory", 0)
        close_runtime(rt)
