from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis

from worker.cooldowns import active_cooldown, cooldown_seconds, record_failure, record_success
from worker.redis_server import RedisServer
from worker.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture
def client(redis_server: RedisServer) -> Iterator[redis.Redis]:
    with redis.Redis.from_url(redis_server.url) as client:
        yield client


def test_cooldown_lengths_follow_error_class() -> None:
    s = Settings()
    assert cooldown_seconds("protocol_error", settings=s) == 30
    assert cooldown_seconds("empty_summary", settings=s) == 30
    assert cooldown_seconds("server_error", settings=s) == 60
    assert cooldown_seconds("no_provider", settings=s) == 600
    assert [cooldown_seconds("timeout", settings=s, timeout_streak=n) for n in (1, 2, 3, 4, 9)] == [
        60,
        120,
        300,
        600,
        600,
    ]
    assert cooldown_seconds("rate_limited", settings=s, retry_after_s=7) == 7


def test_timeouts_climb_the_ladder_per_endpoint(client: redis.Redis) -> None:
    s, endpoint = Settings(), f"http://llm-{uuid.uuid4()}"
    first = record_failure(
        client, settings=s, session_id="a", endpoint=endpoint, error_class="timeout"
    )
    second = record_failure(
        client, settings=s, session_id="b", endpoint=endpoint, error_class="timeout"
    )
    assert 55 < first.remaining_s() <= 60
    assert 115 < second.remaining_s() <= 120
    record_success(client, session_id="b", endpoint=endpoint)
    third = record_failure(
        client, settings=s, session_id="b", endpoint=endpoint, error_class="timeout"
    )
    assert third.remaining_s() <= 60


def test_provider_wide_failure_cools_every_session_on_the_endpoint(client: redis.Redis) -> None:
    s, endpoint = Settings(), f"http://llm-{uuid.uuid4()}"
    record_failure(client, settings=s, session_id="one", endpoint=endpoint, error_class="auth")
    other = active_cooldown(client, session_id="other", endpoint=endpoint)
    assert other is not None and other.scope == "endpoint" and other.error_class == "auth"
    assert active_cooldown(client, session_id="other", endpoint=endpoint + "/x") is None


def test_session_failure_stays_on_that_session(client: redis.Redis) -> None:
    s, endpoint = Settings(), f"http://llm-{uuid.uuid4()}"
    record_failure(
        client, settings=s, session_id="s1", endpoint=endpoint, error_class="server_error"
    )
    assert active_cooldown(client, session_id="s1", endpoint=endpoint) is not None
    assert active_cooldown(client, session_id="s2", endpoint=endpoint) is None
    record_success(client, session_id="s1", endpoint=endpoint)
    assert active_cooldown(client, session_id="s1", endpoint=endpoint) is None
