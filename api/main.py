"""The FastAPI application: ``create_app(settings)``.

Route functions are plain ``def``: FastAPI runs them in its thread pool, so database and broker
calls never block the event loop. The probes are the exception (see api/routes/health.py): they
must answer while that pool is busy. Every Redis wait of a request is bounded (API_REDIS in
worker/runtime.py), so a Redis that stops answering costs a request seconds, not minutes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from api.auth import BearerAuthMiddleware
from api.deps import ApiContext
from api.docs import install_docs
from api.errors import install_error_handlers
from api.limits import BodyLimitMiddleware
from api.metrics import ApiMetrics, RequestMetricsMiddleware
from api.openapi import DocumentedApi
from api.request_context import RequestContextMiddleware
from api.routes import archive, callbacks, health, jobs, lifecycle, sessions, tools
from worker import encodings
from worker.celery_app import make_celery
from worker.runtime import API_REDIS, pool_options, redis_client
from worker.settings import Settings, get_settings
from worker.store.db import Database
from worker.store.stats import open_jobs

DESCRIPTION = (
    "Stores chat sessions for a gateway, queues a compaction job when a session reaches the "
    "hygiene threshold of its model's context window, and serves the compacted transcript "
    "and each job's telemetry. Errors are application/problem+json (RFC 9457). With "
    "COMPACTION_API_TOKEN set, every /v1 route needs `Authorization: Bearer <token>`. A "
    "session's PUT may name a callback_url: the jobFinished webhook is what it receives."
)


def broker_url(settings: Settings) -> str | None:
    """COMPACTION_REDIS_URL, else the Redis of a ``compaction up`` running from here."""
    if settings.redis_url:
        return settings.redis_url
    from worker.launcher import embedded_redis_url

    return embedded_redis_url(settings)


# SQLite: how long a request waits for another writer's lock before it answers 503 (nothing
# stored, retry): under the bound a client waits for any answer (docs/deploy.md, 5 s). Workers
# keep the longer default; their waits hold no client.
API_SQLITE_BUSY_TIMEOUT_S = 3.0


def build_context(settings: Settings) -> ApiContext:
    pool = pool_options(settings, size=settings.database_pool_size)
    db = Database(settings.database_url, busy_timeout_s=API_SQLITE_BUSY_TIMEOUT_S, **pool)
    url = broker_url(settings)
    client = celery = None
    if url is not None:
        client = redis_client(url, API_REDIS)
        celery = make_celery(settings.model_copy(update={"redis_url": url}), api=True)
    metrics = ApiMetrics(lambda: open_jobs(db))
    return ApiContext(settings, db, url, client, celery, metrics)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    context = build_context(settings)
    readiness = health.readiness_executor()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # The first snapshot should not wait for the encodings to load.
        await asyncio.to_thread(encodings.warm)
        yield
        readiness.shutdown(wait=False, cancel_futures=True)
        context.close()

    app = DocumentedApi(
        title="compaction-queue",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # install_docs serves /docs from local files; ReDoc needs a CDN: none
        redoc_url=None,
    )
    app.state.context = context
    app.state.readiness = readiness
    install_error_handlers(app)
    install_docs(app)
    app.include_router(health.router)
    app.include_router(sessions.router)
    app.include_router(archive.router)
    app.include_router(lifecycle.router)
    app.include_router(jobs.router)
    app.include_router(tools.router)
    app.webhooks.include_router(callbacks.router)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    # Outside the body limit: an unauthenticated caller's body is never read.
    app.add_middleware(BearerAuthMiddleware, token=settings.api_token)
    app.add_middleware(RequestMetricsMiddleware, metrics=context.metrics)  # counts 413s
    # Outermost: every answer, a 401 or 413 too, carries its X-Request-ID and gets a log line.
    app.add_middleware(RequestContextMiddleware)
    return app
