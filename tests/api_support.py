"""Fixtures for API tests: the real app on a real database and a private Redis broker.

``tests/conftest.py`` imports the fixtures. API tests use their own Redis database number on the
session's private redis-server, emptied per test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import redis
from anyio.from_thread import BlockingPortal, start_blocking_portal
from pydantic import SecretStr
from sqlalchemy import create_engine, select

from worker import keys
from worker.redis_server import RedisServer
from worker.settings import Settings
from worker.store.models import Base

if TYPE_CHECKING:
    from fastapi import FastAPI

API_REDIS_DB = 3
TOKEN = "s3cret-token"


def api_settings(
    database_url: str, broker_url: str | None, tmp_path: Path, **overrides: Any
) -> Settings:
    values: dict[str, Any] = {
        "database_url": database_url,
        "redis_url": broker_url,
        "var_dir": tmp_path / "var",
        "api_token": None,
        "llm_base_url": None,
        "hygiene_threshold": 0.85,
        "min_messages": 4,
        "thrash_strikes": 2,
        "max_auto_compactions_per_hour": 4,
    }
    return Settings(**(values | overrides))


@dataclass
class Api:
    client: httpx.Client
    settings: Settings
    broker: redis.Redis

    def queued_job_ids(self) -> list[str]:
        """Job ids of the compaction messages waiting in the broker's queue."""
        out = []
        for raw in self.broker.lrange(keys.QUEUE, 0, -1):
            headers = json.loads(raw).get("headers", {})
            if headers.get("task") == keys.COMPACT_TASK:
                out.append(headers["id"])
        return out


@pytest.fixture
def broker_url(redis_server: RedisServer) -> Iterator[str]:
    url = redis_server.url.rsplit("/", 1)[0] + f"/{API_REDIS_DB}"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    yield url


class _PortalTransport(httpx.BaseTransport):
    """httpx's ASGI transport driven from synchronous tests through an anyio portal."""

    def __init__(self, app: FastAPI, portal: BlockingPortal) -> None:
        self._asgi = httpx.ASGITransport(app=app)
        self._portal = portal

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()  # a chunked (generator) body arrives here without Content-Length

        async def call() -> tuple[int, httpx.Headers, bytes]:
            # stream= keeps the request's own headers: no Content-Length is added.
            forwarded = httpx.Request(
                request.method, request.url, headers=request.headers, stream=httpx.ByteStream(body)
            )
            response = await self._asgi.handle_async_request(forwarded)
            return response.status_code, response.headers, await response.aread()

        status, headers, content = self._portal.call(call)
        return httpx.Response(status, headers=headers, content=content, request=request)


@contextmanager
def serve(app: FastAPI) -> Iterator[httpx.Client]:
    """The app with its lifespan running, and a client that talks to it in-process."""
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(app.router.lifespan_context(app)),
    ):
        transport = _PortalTransport(app, portal)
        with httpx.Client(transport=transport, base_url="http://testserver") as client:
            yield client


def open_api(settings: Settings, broker_url: str | None) -> Iterator[Api]:
    from api.main import create_app  # imported here: unit test runs need not load FastAPI

    broker = redis.Redis.from_url(broker_url or "redis://127.0.0.1:1/0")
    with serve(create_app(settings)) as client, broker:
        yield Api(client, settings, broker)


@pytest.fixture
def api(database_url: str, broker_url: str, tmp_path: Path) -> Iterator[Api]:
    yield from open_api(api_settings(database_url, broker_url, tmp_path), broker_url)


@pytest.fixture
def authed_api(database_url: str, broker_url: str, tmp_path: Path) -> Iterator[Api]:
    settings = api_settings(database_url, broker_url, tmp_path, api_token=SecretStr(TOKEN))
    yield from open_api(settings, broker_url)


def dump(database_url: str) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """Every row of every table, in primary-key order: equal dumps mean nothing changed."""
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            return [
                (
                    table.name,
                    [
                        tuple(row)
                        for row in conn.execute(select(table).order_by(*table.primary_key))
                    ],
                )
                for table in Base.metadata.sorted_tables
            ]
    finally:
        engine.dispose()
