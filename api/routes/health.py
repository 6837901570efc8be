"""Liveness, readiness and metrics (outside /v1: probes and scrapers carry no token)."""

from __future__ import annotations

import redis
from fastapi import APIRouter, Response
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from api.deps import Context
from api.errors import ApiProblem
from api.metrics import CONTENT_TYPE
from api.schemas import Ready

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """The process answers."""
    return {"status": "ok"}


@router.get("/readyz", response_model=Ready, responses={503: {"description": "not ready"}})
def readyz(context: Context) -> Ready:
    """The database and the broker are reachable."""
    problems = []
    try:
        with context.db.read() as s:
            s.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        problems.append(f"database unreachable: {type(exc).__name__}: {exc.__cause__ or exc}")
    if context.redis is None:
        problems.append("no broker configured: set COMPACTION_REDIS_URL")
    else:
        try:
            context.redis.ping()
        except (redis.RedisError, OSError) as exc:
            problems.append(f"broker unreachable: {exc}")
    if problems:
        raise ApiProblem(503, "not-ready", "; ".join(problems), extra={"problems": problems})
    return Ready(status="ready", database="ok", broker="ok")


@router.get("/metrics", response_class=Response)
def metrics(context: Context) -> Response:
    """Prometheus text format."""
    return Response(context.metrics.render(), media_type=CONTENT_TYPE)
