"""A typed Python client for the compaction-queue HTTP API (sync and async, over httpx).

    from api.client import CompactionClient

    with CompactionClient("http://127.0.0.1:8000", token=token) as queue:
        answer = queue.put_session("chat-42", model="gpt-4o", context_length=128_000,
                                   messages=messages, prompt_tokens=usage.prompt_tokens)
        if answer.hygiene.job_id:
            job = queue.wait_for_job(answer.hygiene.job_id)
        transcript = queue.get_messages("chat-42")   # what to send to the model next

``AsyncCompactionClient`` has the same methods, awaited. Writes carry an ``Idempotency-Key``
(yours, or one generated per call) and are retried with that same key after no answer or a
503, so a turn is never stored twice (``RetryPolicy``). Errors are the classes in
``api.client.errors``, each with the problem's ``detail``. A gateway's webhook receiver checks
job-completion callbacks with ``verify_callback``. Only httpx and the standard library are
needed: the client imports nothing else of the service.
"""

from api.client.aio import AsyncCompactionClient
from api.client.calls import NO_RETRIES, RetryPolicy
from api.client.errors import (
    BadRequestError,
    CallbackSignatureError,
    CompactionClientError,
    ConflictError,
    JobWaitTimeoutError,
    NotFoundError,
    ProblemError,
    ServiceUnavailableError,
    ServiceUnreachableError,
    UnauthorizedError,
    UnexpectedAnswerError,
    UnprocessableError,
    VersionConflictError,
)
from api.client.models import (
    ArchivedAround,
    ArchivedMessage,
    ArchivePage,
    CallbackEvent,
    CompactAccepted,
    Hygiene,
    HygieneAnswer,
    Job,
    Reverted,
    SearchHit,
    Session,
    SessionPage,
    SessionSummary,
    Transcript,
)
from api.client.sync import CompactionClient
from api.client.webhooks import verify_callback
from worker.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER

__all__ = [
    "NO_RETRIES",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "ArchivePage",
    "ArchivedAround",
    "ArchivedMessage",
    "AsyncCompactionClient",
    "BadRequestError",
    "CallbackEvent",
    "CallbackSignatureError",
    "CompactAccepted",
    "CompactionClient",
    "CompactionClientError",
    "ConflictError",
    "Hygiene",
    "HygieneAnswer",
    "Job",
    "JobWaitTimeoutError",
    "NotFoundError",
    "ProblemError",
    "RetryPolicy",
    "Reverted",
    "SearchHit",
    "ServiceUnavailableError",
    "ServiceUnreachableError",
    "Session",
    "SessionPage",
    "SessionSummary",
    "Transcript",
    "UnauthorizedError",
    "UnexpectedAnswerError",
    "UnprocessableError",
    "VersionConflictError",
    "verify_callback",
]
