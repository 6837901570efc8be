"""``/v1/sessions``: snapshots, appends, manual compaction, and reads of a session."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Body, Depends, Header, Response
from fastapi.responses import JSONResponse

from api import ingest
from api.deps import Context, IfMatch, SessionId, require_token
from api.errors import ApiProblem
from api.ingest import HygieneReply
from api.schemas import (
    AppendIn,
    ArchivedMessageOut,
    ArchiveOut,
    CompactAccepted,
    CompactIn,
    MessagesOut,
    SessionOut,
    SnapshotIn,
)
from worker.hygiene import threshold_tokens
from worker.store import jobs, sessions
from worker.store.idempotency import MAX_KEY_CHARS, RETENTION

router = APIRouter(prefix="/v1/sessions", tags=["sessions"], dependencies=[Depends(require_token)])

_ANSWER_HEADERS = {
    "ETag": {"description": 'the version, e.g. "3"', "schema": {"type": "string"}},
    "X-Hygiene-Reason": {"description": "why the decision", "schema": {"type": "string"}},
    "Idempotent-Replayed": {
        "description": '"true" when this is the stored answer of an earlier request with the '
        "same Idempotency-Key (nothing was written)",
        "schema": {"type": "string"},
    },
}
HYGIENE_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"description": "stored; no compaction job is open", "headers": _ANSWER_HEADERS},
    202: {
        "model": HygieneReply,
        "description": "stored; a compaction job is open for the session",
        "headers": _ANSWER_HEADERS,
    },
    400: {"description": "a malformed If-Match or Idempotency-Key header"},
    412: {"description": "If-Match names a version that is not the current one"},
    413: {"description": "a request limit was exceeded"},
    422: {
        "description": "invalid input, or an Idempotency-Key already used with another body; "
        "nothing was stored"
    },
    503: {
        "description": "the database is unavailable: nothing was stored; retry (with the same "
        "Idempotency-Key). A write that was stored is never a 503: if the broker cannot take its "
        "job, the answer is 200 with hygiene.job_status 'failed'"
    },
}

# Visible ASCII, no spaces: UUIDs, ULIDs, base64 and hex digests all fit.
_KEY = re.compile(rf"[\x21-\x7e]{{1,{MAX_KEY_CHARS}}}")


def parse_idempotency_key(
    idempotency_key: Annotated[
        str | None,
        Header(
            description=(
                "Names this write so that a retry is safe: the same key with the same body "
                "answers the first result again and stores nothing; with another body, 422. "
                f"1-{MAX_KEY_CHARS} visible ASCII characters (e.g. a UUID), scoped to the "
                f"session and the route, kept {RETENTION.total_seconds() / 3600:g} hours."
            ),
        ),
    ] = None,
) -> str | None:
    if idempotency_key is None:
        return None
    if _KEY.fullmatch(idempotency_key) is None:
        raise ApiProblem(
            400,
            "bad-idempotency-key",
            f"Idempotency-Key must be 1 to {MAX_KEY_CHARS} visible ASCII characters (no spaces "
            f"or controls), e.g. a UUID; got {idempotency_key[:40]!r}",
        )
    return idempotency_key


IdempotencyKey = Annotated[str | None, Depends(parse_idempotency_key)]


def _etag(response: Response, version: int) -> None:
    response.headers["ETag"] = f'"{version}"'


def _hygiene_response(reply: ingest.Reply) -> JSONResponse:
    """The stored answer as sent the first time: status, body, ETag and X-Hygiene-Reason."""
    answer = reply.answer
    headers = {
        "ETag": f'"{answer.body["version"]}"',
        "X-Hygiene-Reason": answer.reason,  # the answer's shape is fixed; say why here
    }
    if reply.replayed:
        headers["Idempotent-Replayed"] = "true"
    return JSONResponse(answer.body, status_code=answer.status, headers=headers)


@router.put("/{session_id}", response_model=HygieneReply, responses=HYGIENE_RESPONSES)
def put_session(
    session_id: SessionId,
    body: SnapshotIn,
    if_match: IfMatch,
    key: IdempotencyKey,
    context: Context,
) -> JSONResponse:
    """Store a full snapshot (the previous transcript is archived), then decide hygiene."""
    reply = ingest.put_snapshot(context, session_id, body, if_match=if_match, key=key)
    return _hygiene_response(reply)


@router.post("/{session_id}/messages", response_model=HygieneReply, responses=HYGIENE_RESPONSES)
def append(
    session_id: SessionId, body: AppendIn, if_match: IfMatch, key: IdempotencyKey, context: Context
) -> JSONResponse:
    """Append new turns, then decide hygiene."""
    reply = ingest.append(context, session_id, body, if_match=if_match, key=key)
    return _hygiene_response(reply)


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
