"""Undo and erase a session's data, and list sessions for operators.

``POST /v1/sessions/{id}/revert`` restores what one compaction replaced (worker/store/
revert.py); ``DELETE /v1/sessions/{id}`` erases the session and everything stored for it
(worker/store/erase.py); ``GET /v1/sessions`` pages through sessions in id order.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response
from pydantic import BeforeValidator

from api.deps import ApiContext, Context, IfMatch, SessionId, require_token
from api.errors import ApiProblem
from api.ingest import BROKER_ERRORS
from api.openapi import ETAG, V1_RESPONSES, problem
from api.routes.sessions import require_json
from api.schemas import MAX_INTEGER, MAX_MODEL_CHARS, MAX_SESSION_ID_CHARS, Name
from api.schemas_archive import RevertIn, RevertOut, SessionListItem, SessionPage
from worker.cooldowns import forget_session
from worker.store import session_list
from worker.store.erase import erase_session
from worker.store.models import SessionRow
from worker.store.revert import revert_compaction
from worker.store.session_list import SessionFilter
from worker.store.sessions import effective_tokens

log = logging.getLogger(__name__)
router = APIRouter(
    prefix="/v1/sessions",
    tags=["sessions"],
    dependencies=[Depends(require_token)],
    responses=V1_RESPONSES,
)

STALE_IF_MATCH = problem(
    "If-Match names a version that is not the current one (current_version, and the ETag header)",
    ETag=ETAG | {"required": False},
)
BAD_IF_MATCH = problem("a malformed If-Match header, or a body that is not UTF-8 text")
JOB_OPEN = problem("a compaction job is queued or running (its id is in job_id): try once it ended")


@router.post(
    "/{session_id}/revert",
    operation_id="revertCompaction",
    response_model=RevertOut,
    responses={
        200: {"headers": {"ETag": ETAG}},
        400: BAD_IF_MATCH,
        404: problem("no session with this id, or no job with this id in the session"),
        409: problem(
            "a job is open (job_id), or this compaction cannot be undone now: it changed "
            "nothing, was already reverted, or a later compaction or snapshot replaced what it "
            "wrote (detail says which; revert the later compaction first)"
        ),
        412: STALE_IF_MATCH,
        415: problem("the body is not sent as Content-Type: application/json"),
    },
    dependencies=[Depends(require_json)],
)
def revert(
    session_id: SessionId, body: RevertIn, if_match: IfMatch, context: Context, response: Response
) -> RevertOut:
    """Restore the transcript a compaction replaced, with every turn appended since; what the
    compaction wrote (its summary) is archived in turn. The session gets a new version."""
    done = revert_compaction(
        context.db, session_id=session_id, job_id=body.job_id, if_match=if_match
    )
    response.headers["ETag"] = f'"{done.version}"'
    return RevertOut(
        session_id=done.session_id,
        job_id=done.job_id,
        version=done.version,
        restored=done.restored,
        archived=done.archived,
    )


@router.delete(
    "/{session_id}",
    operation_id="deleteSession",
    status_code=204,
    response_class=Response,
    responses={
        204: {"description": "erased: nothing of the session is left in any table"},
        400: BAD_IF_MATCH,
        404: problem("no session with this id"),
        409: JOB_OPEN,
        412: STALE_IF_MATCH,
    },
)
def delete_session(session_id: SessionId, if_match: IfMatch, context: Context) -> Response:
    """Erase the session: its messages, archive and search text, its remembered
    Idempotency-Key answers and its job rows (with their texts), and its cooldown in Redis. The
    id is free again."""
    erase_session(context.db, session_id=session_id, if_match=if_match)
    _forget_cooldown(context, session_id)
    return Response(status_code=204)


def _forget_cooldown(context: ApiContext, session_id: str) -> None:
    """Best effort: a cooldown left behind (Redis unreachable) expires on its own within
    minutes; the erasure itself is committed."""
    if context.redis is None or context.breaker.down() is not None:
        return
    try:
        forget_session(context.redis, session_id=session_id)
    except BROKER_ERRORS as exc:
        context.breaker.failed(exc)
        log.warning("cooldown of erased session %s left to expire: %s", session_id, exc)


def _iso_time(value: object) -> object:
    """A time as ISO 8601 text; a number (which pydantic would read as Unix time) is none."""
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        raise ValueError("must be an ISO 8601 time with a zone, e.g. 2026-03-01T00:00:00Z")
    return value


_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


@router.get("", operation_id="listSessions", response_model=SessionPage)
def list_sessions(
    context: Context,
    cursor: Annotated[
        Name | None,
        Query(
            max_length=MAX_SESSION_ID_CHARS,
            description="next_cursor of the previous page; absent for the first",
        ),
    ] = None,
    limit: Annotated[
        int,
        Query(
            ge=1,
            le=session_list.MAX_SESSIONS,
            description=f"sessions a page, at most {session_list.MAX_SESSIONS}",
        ),
    ] = session_list.DEFAULT_SESSIONS,
    min_utilization: Annotated[
        float | None,
        Query(ge=0, le=100, description="only sessions holding at least this share of the window"),
    ] = None,
    idle_since: Annotated[
        datetime | None,
        BeforeValidator(_iso_time),
        Query(description="only sessions with no activity since then (ISO 8601 with a zone)"),
    ] = None,
    min_compactions: Annotated[
        int | None,
        Query(ge=0, le=MAX_INTEGER, description="only sessions compacted at least this often"),
    ] = None,
    model: Annotated[
        Name | None, Query(min_length=1, max_length=MAX_MODEL_CHARS, description="only this model")
    ] = None,
) -> SessionPage:
    """Sessions in id order (stable while they change), filtered; each with its utilization
    and its open job, if any."""
    if idle_since is not None and idle_since.tzinfo is None:
        raise ApiProblem(
            422, "validation-error", "idle_since: give a time zone, e.g. 2026-03-01T00:00:00Z"
        )
    only = SessionFilter(
        min_utilization=min_utilization,
        idle_since=idle_since,
        min_compactions=min_compactions,
        model=model,
    )
    page = session_list.list_sessions(context.db, after_id=cursor, limit=limit, only=only)
    return SessionPage(
        sessions=[_item(row, open_job) for row, open_job in page.sessions],
        next_cursor=page.next_cursor,
    )


def _item(row: SessionRow, open_job_id: str | None) -> SessionListItem:
    tokens = effective_tokens(row)
    return SessionListItem(
        session_id=row.id,
        model=row.model,
        context_length=row.context_length,
        version=row.version,
        tokens=tokens,
        utilization=round(tokens / row.context_length, 4),
        message_count=row.message_count,
        compaction_count=row.compaction_count,
        last_activity_at=row.last_activity_at.isoformat(),
        last_compacted_at=row.last_compacted_at.isoformat() if row.last_compacted_at else None,
        open_job_id=open_job_id,
    )
