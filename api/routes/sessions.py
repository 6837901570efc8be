"""``/v1/sessions``: snapshots, appends, manual compaction, and reads of a session."""

from __future__ import annotations

import re
from email.message import Message
from typing import Annotated

from fastapi import APIRouter, Body, Depends, Header, Request, Response
from fastapi.responses import JSONResponse

from api import ingest
from api.deps import Context, IfMatch, SessionId, require_token
from api.errors import ApiProblem
from api.ingest import HygieneReply
from api.openapi import ETAG, RETRY_AFTER, UNAVAILABLE, V1_RESPONSES, header, problem
from api.schemas import (
    AppendIn,
    CompactAccepted,
    CompactIn,
    JobTelemetry,
    MessagesOut,
    SessionOut,
    SnapshotIn,
)
from worker.compressor import formats
from worker.hygiene import threshold_tokens
from worker.store import jobs, sessions
from worker.store.idempotency import MAX_KEY_CHARS, RETENTION

router = APIRouter(
    prefix="/v1/sessions",
    tags=["sessions"],
    dependencies=[Depends(require_token)],
    responses=V1_RESPONSES,
)

_ANSWER_HEADERS = {
    "ETag": ETAG,
    "X-Hygiene-Reason": header("why the decision, for a person (the body's shape is fixed)"),
    "Idempotent-Replayed": header(
        '"true" when this is the stored answer of an earlier request with the same '
        "Idempotency-Key (nothing was written)",
        required=False,
    ),
}
NOT_FOUND = problem("no session with this id")
UNSUPPORTED_MEDIA_TYPE = problem("the body is not sent as Content-Type: application/json")
HYGIENE_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"description": "stored; no compaction job is open", "headers": _ANSWER_HEADERS},
    202: {
        "model": HygieneReply,
        "description": "stored; a compaction job is open for the session",
        "headers": _ANSWER_HEADERS,
    },
    400: problem(
        "a malformed If-Match or Idempotency-Key header, or a body that is not UTF-8 text"
    ),
    412: problem(
        "If-Match names a version that is not the current one (current_version, and the ETag "
        "header when the session exists)",
        ETag=ETAG | {"required": False},
    ),
    413: problem("a request limit was exceeded (detail names the setting that raises it)"),
    415: UNSUPPORTED_MEDIA_TYPE,
    422: problem(
        "invalid input, or an Idempotency-Key already used with another body; nothing was stored"
    ),
    503: problem(
        UNAVAILABLE + " (with the same Idempotency-Key). A write that was stored is never a "
        "503: if the broker cannot take its job, the answer is 200 with hygiene.job_status "
        "'failed'",
        **{"Retry-After": RETRY_AFTER},
    ),
}

# Visible ASCII, no spaces: UUIDs, ULIDs, base64 and hex digests all fit.
_KEY = re.compile(rf"[\x21-\x7e]{{1,{MAX_KEY_CHARS}}}")


async def parse_idempotency_key(  # async: no thread hop (see api/deps.py)
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


async def require_json(request: Request) -> None:
    """415 for a body sent as anything but JSON: FastAPI would read it as bytes and answer
    "Input should be a valid dictionary", which does not say what to change."""
    if not await request.body():
        return  # nothing sent: the body's own validation says what is missing
    declared = request.headers.get("content-type")
    if declared is not None and _is_json(declared):
        return
    got = f"got {declared[:60]!r}" if declared else "no Content-Type header was sent"
    raise ApiProblem(
        415,
        "unsupported-media-type",
        f"the body must be JSON: send Content-Type: application/json ({got})",
    )


def _is_json(content_type: str) -> bool:
    """application/json, with parameters or not, or any application/*+json."""
    if content_type == "application/json":  # what nearly every client sends: no parsing
        return True
    parsed = Message()
    parsed["content-type"] = content_type
    subtype = parsed.get_content_subtype()
    return parsed.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


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


@router.put(
    "/{session_id}",
    operation_id="putSession",
    response_model=HygieneReply,
    responses=HYGIENE_RESPONSES,
    dependencies=[Depends(require_json)],
)
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


@router.post(
    "/{session_id}/messages",
    operation_id="appendMessages",
    response_model=HygieneReply,
    responses={**HYGIENE_RESPONSES, 404: NOT_FOUND},
    dependencies=[Depends(require_json)],
)
def append(
    session_id: SessionId, body: AppendIn, if_match: IfMatch, key: IdempotencyKey, context: Context
) -> JSONResponse:
    """Append new turns, then decide hygiene."""
    reply = ingest.append(context, session_id, body, if_match=if_match, key=key)
    return _hygiene_response(reply)


@router.post(
    "/{session_id}/compact",
    operation_id="compactSession",
    status_code=202,
    response_model=CompactAccepted,
    responses={
        400: problem("a body that is not UTF-8 text"),
        404: NOT_FOUND,
        409: problem(
            "a job is already open (its id is in job_id), or a cooldown or the thrash guard "
            'holds (send "force": true)'
        ),
        415: UNSUPPORTED_MEDIA_TYPE,
        503: problem(
            UNAVAILABLE + "; or the broker is unreachable (the job in job_id is failed)",
            **{"Retry-After": RETRY_AFTER},
        ),
    },
    dependencies=[Depends(require_json)],
)
def compact(
    session_id: SessionId, context: Context, body: Annotated[CompactIn | None, Body()] = None
) -> CompactAccepted:
    """Queue a manual compaction. ``force`` bypasses cooldown and thrash guard; an open job is
    never doubled: 409 with that job's id."""
    job = ingest.manual_compaction(context, session_id, body or CompactIn())
    return CompactAccepted(job_id=job.id, status="queued")


_READ_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"headers": {"ETag": ETAG}},
    404: NOT_FOUND,
}


@router.get(
    "/{session_id}",
    operation_id="getSession",
    response_model=SessionOut,
    responses=_READ_RESPONSES,
)
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
        last_job=None if last is None else JobTelemetry.model_validate(jobs.job_telemetry(last)),
    )


@router.get(
    "/{session_id}/messages",
    operation_id="getMessages",
    response_model=MessagesOut,
    response_model_exclude_unset=True,  # "system" for Anthropic's format only
    responses=_READ_RESPONSES,
)
def get_messages(session_id: SessionId, context: Context, response: Response) -> MessagesOut:
    """The active transcript: what to send to the model next."""
    row, active = sessions.session_transcript(context.db, session_id=session_id)
    _etag(response, row.version)
    fmt = formats.check_format(row.format)
    transcript = formats.transcript_of(fmt, [m.message for m in active])
    out = MessagesOut(version=row.version, format=fmt, messages=transcript.messages)
    if fmt == formats.ANTHROPIC:  # its system prompt stands beside the messages
        out.system = transcript.system
    return out
