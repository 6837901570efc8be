"""Shared fixtures: token counter, a private redis-server, hypothesis profiles."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

# A real local OpenAI chat-completions server with scripted answers (tests/support/fake_openai.py).
from tests.support.fake_openai import fake_openai  # noqa: F401
from worker.compressor.tokens import TokenCounter
from worker.encodings import counter_for_model
from worker.redis_server import RedisServer

# CI runs thousands of generated transcripts per property; a local run stays quick.
settings.register_profile(
    "ci", max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=150, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "dev")


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    return counter_for_model("gpt-4")


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A private redis-server for the whole test session (never the machine's shared one)."""
    with RedisServer(tmp_path_factory.mktemp("redis"), appendonly=False) as server:
        yield server
