"""Liveness, readiness and metrics (outside /v1: probes and scrapers carry no token).

``/healthz`` and ``/readyz`` are ``async``: FastAPI runs plain ``def`` routes on a bounded thread
pool, and while requests wait there on a Redis or a database that stopped answering, a probe
queued behind them would fail and get a healthy process restarted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import redis
from fastapi import APIRouter, Request, Response
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from api.deps import ApiContext, Context, get_context
from api.errors import ApiProblem
from api.metrics import CONTENT_TYPE
from api.openapi import problem
from api.schemas import Ready

log = logging.getLogger(__name__)
router = APIRouter(tags=["health"])

# Under the readiness probe's timeoutSeconds (5 in deploy/k8s/api.yaml), so a stuck check is
# reported as such instead of as a probe timeout.
READY_DEADLINE_S = 3.0
READY_THREADS = 2  # one per check: /readyz never waits for the request thread pool


def readiness_executor() -> ThreadPoolExecutor:
    """The threads /readyz runs its blocking checks on (one executor per app)."""
    return ThreadPoolExecutor(max_workers=READY_THREADS, thread_name_prefix="readyz")


@router.get("/healthz", operation_id="getHealth")
async def healthz() -> dict[str, str]:
    """The process answers: no database, no Redis, no thread."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    operation_id="getReadiness",
    response_model=Ready,
    responses={
        503: problem("not ready: the database or the broker does not answer (problems lists which)")
    },
)
async def readyz(request: Request) -> Ready:
    """The database and the broker answer, each within ``READY_DEADLINE_S``."""
    context = get_context(request)
    executor: ThreadPoolExecutor = request.app.state.readiness
    if context.redis is None:
        broker: str | None = "no broker configured: set COMPACTION_REDIS_URL"
        database = await _check(executor, "database", lambda: _select_1(context))
    else:
        client = context.redis
        database, broker = await asyncio.gather(
            _check(executor, "database", lambda: _select_1(context)),
            _check(executor, "broker", client.ping),
        )
        if broker is None:
            context.breaker.closed()  # the broker answers again: requests stop skipping it
    problems = [p for p in (database, broker) if p is not None]
    if problems:
        raise ApiProblem(503, "not-ready", "; ".join(problems), extra={"problems": problems})
    return Ready(status="ready", database="ok", broker="ok")


def _select_1(context: ApiContext) -> None:
    with context.db.read() as s:
        s.execute(text("SELECT 1"))


_EXPECTED = (SQLAlchemyError, redis.RedisError, OSError)


async def _check(
    executor: ThreadPoolExecutor, what: str, probe: Callable[[], object]
) -> str | None:
    """None when ``probe`` returns in time, else the problem, without the driver's text: this
    answer is public, and that text names hosts and ports. The log has all of it."""
    future = asyncio.get_running_loop().run_in_executor(executor, probe)
    done, _ = await asyncio.wait({future}, timeout=READY_DEADLINE_S)
    if not done:
        future.cancel()  # the thread finishes on its own, within its client's timeouts
        log.warning("readyz: the %s did not answer within %gs", what, READY_DEADLINE_S)
        return f"{what} did not answer within {READY_DEADLINE_S:g}s"
    error = future.exception()
    if error is None:
        return None
    if not isinstance(error, _EXPECTED):
        raise error
    log.warning("readyz: %s unreachable: %s: %s", what, type(error).__name__, error)
    return f"{what} unreachable ({type(error).__name__})"


@router.get(
    "/metrics",
    operation_id="getMetrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
)
def metrics(context: Context) -> Response:
    """Prometheus text format."""
    return Response(context.metrics.render(), media_type=CONTENT_TYPE)
