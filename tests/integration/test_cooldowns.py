from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
import redis
from pydantic import ValidationError

from api.cli import settings_problems
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


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("COMPACTION_COOLDOWN_DEFAULT_S", "0"),
        ("COMPACTION_COOLDOWN_PROTOCOL_S", "0"),
        ("COMPACTION_COOLDOWN_NO_PROVIDER_S", "0"),
        ("COMPACTION_COOLDOWN_TIMEOUT_LADDER_S", "[60, 0, 300]"),
    ],
)
def test_a_zero_cooldown_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    # Redis refuses SET ... PX 0, so a zero cooldown failed the job instead of falling back.
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValidationError) as caught:
        Settings()
    assert settings_problems(caught.value).startswith(f"{variable}:")
    assert "greater than or equal to 1" in settings_problems(caught.value)


@pytest.mark.parametrize("error_class", ["server_error", "protocol_error", "no_provider", "auth"])
def test_the_shortest_cooldowns_are_stored_and_expire(
    client: redis.Redis, error_class: str
) -> None:
    s = Settings(
        cooldown_default_s=1,
        cooldown_protocol_s=1,
        cooldown_no_provider_s=1,
        cooldown_timeout_ladder_s=[1],
    )
    endpoint = f"http://llm-{uuid.uuid4()}"
    cooldown = record_failure(
        client, settings=s, session_id=endpoint, endpoint=endpoint, error_class=error_class
    )
    assert 0 < cooldown.remaining_s() <= 1
    assert active_cooldown(client, session_id=endpoint, endpoint=endpoint) is not None
    time.sleep(1.1)
    assert active_cooldown(client, session_id=endpoint, endpoint=endpoint) is None
