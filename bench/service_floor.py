"""The floor an append is measured against: FastAPI doing what no append can do without.

One sync ``POST /v1/sessions/{session_id}/messages``, served by uvicorn exactly as
``compaction api`` serves ours (one process, the same uvicorn options), with the same
dependencies, honestly counted:

- the same bearer-token check (``api.auth.token_refusal``, constant-time), as a dependency;
- the same body model (``api.schemas.AppendIn``: strict pydantic, ``messages`` a list) and the
  same path parameter (``api.deps.SessionId``);
- one write transaction on a ``Database`` built from the same settings as the API's (pool size,
  overflow, recycle, idle ping; on SQLite the same busy timeout and ``BEGIN IMMEDIATE``), in
  which one primary-key SELECT reads the session's version and one INSERT stores the turns
  (in a table of its own, so our tables are untouched);
- a small JSON answer.

What it leaves out is what an append adds on top: our middlewares (request id and access log,
metrics, body limit, auth before the body is read), the wire-format check and token counting,
the Idempotency-Key, If-Match, the session's counters, the hygiene decision and its job.

    COMPACTION_DATABASE_URL=... COMPACTION_API_PORT=8001 python -m bench.service_floor
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from sqlalchemy import JSON, Column, Integer, MetaData, String, Table, insert, select

from api.auth import token_refusal
from api.deps import SessionId
from api.main import API_SQLITE_BUSY_TIMEOUT_S
from api.schemas import AppendIn
from worker.runtime import pool_options
from worker.settings import Settings, get_settings
from worker.store.db import Database
from worker.store.models import SessionRow

FLOOR_TABLE = Table(
    "bench_floor_turns",
    MetaData(),
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String(255), nullable=False),
    Column("messages", JSON, nullable=False),
)
_VERSION = select(SessionRow.__table__.c.version)
_STORE = insert(FLOOR_TABLE)


async def authorized(request: Request) -> None:
    """The API's bearer-token check (``api.deps.require_token`` runs the same function), as
    ours, an ``async def`` dependency: no thread hop."""
    problem = token_refusal(request.app.state.api_token, request.headers.get("authorization", ""))
    if problem is not None:
        raise problem


Authorized = Annotated[None, Depends(authorized)]


def create_floor_app(settings: Settings) -> FastAPI:
    pool = pool_options(settings, size=settings.database_pool_size)
    db = Database(settings.database_url, busy_timeout_s=API_SQLITE_BUSY_TIMEOUT_S, **pool)
    FLOOR_TABLE.create(db.engine, checkfirst=True)
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.state.api_token = settings.api_token

    @app.post("/v1/sessions/{session_id}/messages")
    def append(session_id: SessionId, body: AppendIn, _: Authorized) -> dict[str, Any]:
        with db.write() as s:
            conn = s.connection()
            version = conn.execute(_VERSION.where(SessionRow.id == session_id)).scalar()
            conn.execute(_STORE, {"session_id": session_id, "messages": body.messages})
        return {"session_id": session_id, "version": version, "stored": len(body.messages)}

    return app


def main() -> int:
    import uvicorn

    settings = get_settings()
    uvicorn.run(
        create_floor_app(settings),
        host=settings.api_host,
        port=settings.api_port,
        log_level="info",
        log_config=None,
        access_log=False,
        proxy_headers=False,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
