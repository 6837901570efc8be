"""``/v1/sessions``: snapshots, appends, manual compaction, and reads of a session."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends, Response

from api import ingest
from api.deps import Context, IfMatch, SessionId, require_token
from api.schemas import (
    AppendIn,
    ArchivedMessageOut,
    ArchiveOut,
    CompactAccepted,
    CompactIn,
    HygieneAnswer,
    MessagesOut,
    SessionOut,
    SnapshotIn,
)
from worker.hygiene import threshold_tokens
from worker.store import jobs, sessions
from worker.store.models import SessionRow

router = APIRouter(prefix="/v1/sessions", tags=["sessions"], dependencies=[Depends(require_token)])

HYGIENE_RESPONSES: dict[int | str, dict[str, object]] = {
    202: {"model": HygieneAnswer, "description": "a compaction job is open for the session"},
    412: {"description": "If-Match names a version that is not the current one"},
    413: {"description": "a request limit was exceeded"},
    422: {"description": "invalid input; nothing was stored"},
    503: {"description": "stored, but the broker is unreachable (the job is marked failed)"},
}


def _etag(response: Response, version: int) -> None:
    response.headers["ETag"] = f'"{version}"'


def _hygiene_response(context: Context, row: SessionRow, response: Response) -> HygieneAnswer:
    response.status_code, answer, reason = ingest.hygiene(context, row)
    _etag(response, answer.version)
    response.headers["X-Hygiene-Reason"] = reason  # the answer's shape is fixed; say why here
    return answer


@router.put("/{session_id}", response_model=HygieneAnswer, responses=HYGIENE_RESPONSES)
def put_session(
    session_id: SessionId, body: SnapshotIn, if_match: IfMatch, context: Context, response: Response
) -> HygieneAnswer:
    """Store a full snapshot (the previous transcript is archived), then decide hygiene."""
    token_counts = ingest.count_tokens(context, body.messages, model=body.model)
    row = sessions.put_snapshot(
        context.db,
        session_id=session_id,
        model=body.model,
        context_length=body.context_length,
        messages=body.messages,
        token_counts=token_counts,
        prompt_tokens=body.prompt_tokens,
        if_match=if_match,
        callback_url=body.callback_url,
    )
    return _hygiene_response(context, row, response)


@router.post("/{session_id}/messages", response_model=HygieneAnswer, responses=HYGIENE_RESPONSES)
def append(
    session_id: SessionId, body: AppendIn, if_match: IfMatch, context: Context, response: Response
) -> HygieneAnswer:
    """Append new turns, then decide hygiene."""
    model = sessions.get_session(context.db, session_id=session_id).model
    token_counts = ingest.count_tokens(context, body.messages, model=model)
    row = sessions.append_messages(
        context.db,
        session_id=session_id,
        messages=body.messages,
        token_counts=token_counts,
        prompt_tokens=body.prompt_tokens,
        if_match=if_match,
    )
    return _hygiene_response(context, row, response)


@router.post(
    "/{session_id}/compact",
    status_code=202,
    response_model=CompactAccepted,
    responses={
        409: {"description": "a job is already open (its id is in job_id), or a guard holds"},
        503: {"description": "the broker is unreachable"},
    },
)
def compact(
    session_id: SessionId, context: Context, body: Annotated[CompactIn | None, Body()] = None
) -> CompactAccepted:
    """Queue a manual compaction. ``force`` bypasses cooldown and thrash guard; an open job is
    never doubled: 409 with that job's id."""
    job = ingest.manual_compaction(context, session_id, body or CompactIn())
    return CompactAccepted(job_id=job.id, status="queued")


@router.get("/{session_id}", response_model=SessionOut)
def get_session(session_id: SessionId, context: Context, response: Response) -> SessionOut:
    """Size, threshold, version and the latest job of a session."""
    row = sessions.get_session(context.db, session_id=session_id)
    last = jobs.latest_job(context.db, session_id=session_id)
    tokens = sessions.effective_tokens(row)
    _etag(response, row.version)
    return SessionOut(
        session_id=row.id,
        model=row.model,
        context_length=row.context_length,
        version=row.version,
        tokens=tokens,
        threshold_tokens=threshold_tokens(row.context_length, context.settings.hygiene_threshold),
        utilization=round(tokens / row.context_length, 4),
        message_count=row.message_count,
        compaction_count=row.compaction_count,
        last_activity_at=row.last_activity_at.isoformat(),
        last_compacted_at=row.last_compacted_at.isoformat() if row.last_compacted_at else None,
        last_job=jobs.job_telemetry(last) if last is not None else None,
    )


@router.get("/{session_id}/messages", response_model=MessagesOut)
def get_messages(session_id: SessionId, context: Context, response: Response) -> MessagesOut:
    """The active transcript: what to send to the model next."""
    row, active = sessions.session_transcript(context.db, session_id=session_id)
    _etag(response, row.version)
    return MessagesOut(version=row.version, messages=[m.message for m in active])


@router.get("/{session_id}/archive", response_model=ArchiveOut)
def get_archive(session_id: SessionId, context: Context) -> ArchiveOut:
    """Every message ever replaced, with its generation; nothing is deleted."""
    archived = sessions.archived_messages(context.db, session_id=session_id)
    return ArchiveOut(
        session_id=session_id,
        messages=[
            ArchivedMessageOut(
                seq=m.seq,
                generation=m.generation,
                archived_by_job=m.archived_by_job,
                archived_at=m.archived_at.isoformat() if m.archived_at else None,
                message=m.message,
            )
            for m in archived
        ],
    )
