"""The job-completion callback, as an OpenAPI 3.1 webhook: what the service POSTs to a session's
``callback_url``. Documented here, sent by ``worker.callbacks``; never served."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Response

from api.schemas import CallbackEvent
from worker.callbacks import EVENT, EVENT_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER

router = APIRouter(tags=["callbacks"])


@router.post(
    EVENT,
    operation_id="jobFinished",
    response_class=Response,
    responses={
        200: {
            "description": "any 2xx marks the callback delivered (the answer's body is never "
            "read). Other statuses and transport errors are retried after a random wait below "
            "2, 4, 8 ... s (at most 5 min) up to COMPACTION_CALLBACK_MAX_ATTEMPTS; redirects "
            "are not followed; a failing callback never changes the job's status"
        },
        "default": {"description": "anything but a 2xx: the callback is retried, as above"},
    },
)
def job_finished(
    body: CallbackEvent,
    event: Annotated[str, Header(alias=EVENT_HEADER, description=f"always {EVENT}")],
    timestamp: Annotated[
        int, Header(alias=TIMESTAMP_HEADER, description="epoch seconds: the body's sent_at")
    ],
    signature: Annotated[
        str | None,
        Header(
            alias=SIGNATURE_HEADER,
            pattern="^sha256=[0-9a-f]{64}$",
            description="`sha256=<hex HMAC-SHA256 of the raw body with "
            "COMPACTION_CALLBACK_SECRET>`; absent without that secret. Verify it on the raw "
            "bytes, before parsing, in constant time; refuse an old sent_at to stop replays",
        ),
    ] = None,
) -> None:
    """A job finished: its telemetry and the session version it produced (read
    ``GET /v1/sessions/{id}/messages`` for that version). Sent for a session whose ``PUT``
    carried a ``callback_url``; the body is JSON with sorted keys and no spaces."""
