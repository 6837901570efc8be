"""What a request needs, as ``Annotated`` dependencies: the app context, auth, If-Match."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

import redis
from fastapi import Depends, Header, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.auth import token_refusal
from api.errors import ApiProblem
from api.metrics import ApiMetrics
from api.schemas import MAX_SESSION_ID_CHARS, Name
from worker.settings import Settings
from worker.store.db import Database


class BrokerBreaker:
    """Remembers that the broker just failed, so requests stop waiting on it for a while.

    A Redis that stops answering costs each request its client timeouts; on SQLite a write
    asks for the cooldown inside its transaction, so those waits would also queue every other
    writer behind them. After a failure, requests skip the broker for ``open_s`` (no cooldown
    is known, a new job fails as ``broker_unavailable`` at once); then one request tries again.
    """

    def __init__(self, open_s: float = 5.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.open_s = open_s
        self._clock = clock
        self._lock = threading.Lock()
        self._until = 0.0
        self._error: Exception | None = None

    def down(self) -> Exception | None:
        """The recent failure while the breaker is open, else None (go ahead)."""
        with self._lock:
            return self._error if self._clock() < self._until else None

    def failed(self, exc: Exception) -> None:
        with self._lock:
            self._until, self._error = self._clock() + self.open_s, exc

    def closed(self) -> None:
        """The broker was seen answering: stop skipping it now."""
        with self._lock:
            self._until, self._error = 0.0, None


@dataclass
class ApiContext:
    """One per app: made by ``create_app``, closed when the app shuts down."""

    settings: Settings
    db: Database
    broker_url: str | None  # None: no broker configured, so nothing can be enqueued
    redis: redis.Redis | None
    celery: Any  # untyped library; None without a broker
    metrics: ApiMetrics
    breaker: BrokerBreaker = field(default_factory=BrokerBreaker)

    def close(self) -> None:
        self.db.dispose()
        if self.redis is not None:
            self.redis.close()
        if self.celery is not None:
            self.celery.close()


def get_context(request: Request) -> ApiContext:
    context: ApiContext = request.app.state.context
    return context


# The dependencies below are ``async def``: they never block, and FastAPI runs a plain ``def``
# dependency in its thread pool, a thread hop each on every request.


async def context_dependency(request: Request) -> ApiContext:
    return get_context(request)


Context = Annotated[ApiContext, Depends(context_dependency)]


# Only documents the scheme (and gives /docs its Authorize button): ``token_refusal`` decides.
bearer_scheme = HTTPBearer(
    scheme_name="bearerAuth",
    description="COMPACTION_API_TOKEN; required on /v1/* when it is set",
    auto_error=False,
)


async def require_token(
    request: Request,
    context: Context,
    _: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)],
) -> None:
    """Bearer auth on /v1/* when COMPACTION_API_TOKEN is set (constant-time compare).

    ``BearerAuthMiddleware`` runs the same check earlier, before the body is read; this keeps
    a router safe wherever it is mounted.
    """
    problem = token_refusal(context.settings.api_token, request.headers.get("authorization", ""))
    if problem is not None:
        raise problem


IF_MATCH_PATTERN = r'^\s*(?:W/)?"?[0-9]{1,18}"?\s*$'
_VERSION_TAG = re.compile(r'^\s*(?:W/)?"?(\d{1,18})"?\s*$')


async def parse_if_match(
    if_match: Annotated[
        str | None,
        Header(
            description='the version, e.g. "3" (one version, quoted or not; anything else is a '
            "400 bad-if-match)",
            json_schema_extra={"pattern": IF_MATCH_PATTERN},
        ),
    ] = None,
) -> int | None:
    if if_match is None:
        return None
    found = _VERSION_TAG.match(if_match)
    if found is None:
        raise ApiProblem(
            400,
            "bad-if-match",
            f'If-Match must name one version, like "3"; got {if_match[:40]!r}',
        )
    return int(found.group(1))


IfMatch = Annotated[int | None, Depends(parse_if_match)]
SessionId = Annotated[Name, Path(min_length=1, max_length=MAX_SESSION_ID_CHARS)]
