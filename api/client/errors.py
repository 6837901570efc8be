"""The client's errors: one root, translated from httpx and from the service's problems here.

    CompactionClientError
    ├── ServiceUnreachableError      no answer (refused, timed out, cut off), retries spent
    ├── ProblemError                 the service answered an error (application/problem+json)
    │   ├── BadRequestError          400: a malformed If-Match or Idempotency-Key header
    │   ├── UnauthorizedError        401: the bearer token is missing or wrong
    │   ├── NotFoundError            404: no such session or job
    │   ├── ConflictError            409: a compaction job is already open (job_id), or a guard
    │   ├── VersionConflictError     412: If-Match named a stale version (current_version)
    │   ├── UnprocessableError       422: invalid input, or an Idempotency-Key used for another body
    │   └── ServiceUnavailableError  503: nothing was stored; retry_after_s says when to retry
    ├── UnexpectedAnswerError        a success whose body is not what the route documents
    ├── JobWaitTimeoutError          wait_for_job gave up while the job was still open
    └── CallbackSignatureError       a callback whose signature or timestamp does not check out

Other statuses (413, 415, 500, a proxy's 502) are a plain ``ProblemError``. Every
``ProblemError`` carries the problem's ``detail`` (what is wrong, for a person), its ``status``
and ``type``, and the whole body as ``problem``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from api.client.models import Job

_MAX_TEXT_DETAIL = 500  # characters of a non-JSON error body kept as its detail


class CompactionClientError(Exception):
    """Root of every error the client raises."""


class ServiceUnreachableError(CompactionClientError):
    """The request got no answer, every retry included: the service is down or unreachable."""

    def __init__(self, message: str, *, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


class ProblemError(CompactionClientError):
    """The service answered with an error status."""

    def __init__(self, response: httpx.Response, problem: Mapping[str, Any], detail: str) -> None:
        super().__init__(f"{response.status_code} {detail}")
        self.status = response.status_code
        self.detail = detail
        self.problem = dict(problem)
        self.type: str | None = (
            problem.get("type") if isinstance(problem.get("type"), str) else None
        )
        self.method = response.request.method
        self.url = str(response.request.url)


class BadRequestError(ProblemError):
    """400: a malformed header; the request was not read."""


class UnauthorizedError(ProblemError):
    """401: ``Authorization: Bearer <token>`` is missing or does not match."""


class NotFoundError(ProblemError):
    """404: no session or job with this id."""


class ConflictError(ProblemError):
    """409: a compaction job is already open for the session (``job_id``), or a cooldown or the
    thrash guard holds (compact with ``force=True``)."""

    def __init__(self, response: httpx.Response, problem: Mapping[str, Any], detail: str) -> None:
        super().__init__(response, problem, detail)
        job_id = problem.get("job_id")
        self.job_id: str | None = job_id if isinstance(job_id, str) else None


class VersionConflictError(ProblemError):
    """412: ``If-Match`` named a version that is no longer current; read the session again
    (``current_version`` is the version now, None when the session does not exist)."""

    def __init__(self, response: httpx.Response, problem: Mapping[str, Any], detail: str) -> None:
        super().__init__(response, problem, detail)
        current = problem.get("current_version")
        self.current_version: int | None = current if isinstance(current, int) else None


class UnprocessableError(ProblemError):
    """422: the body is invalid (``errors`` names each problem), or its Idempotency-Key was
    already used with another body. Nothing was stored."""

    def __init__(self, response: httpx.Response, problem: Mapping[str, Any], detail: str) -> None:
        super().__init__(response, problem, detail)
        errors = problem.get("errors")
        self.errors: list[dict[str, Any]] = list(errors) if isinstance(errors, list) else []


class ServiceUnavailableError(ProblemError):
    """503: nothing was stored (the database was unavailable, or the broker for a manual
    compaction). ``retry_after_s`` is the service's Retry-After, when it sent one."""

    def __init__(self, response: httpx.Response, problem: Mapping[str, Any], detail: str) -> None:
        super().__init__(response, problem, detail)
        self.retry_after_s = retry_after_s(response)
        job_id = problem.get("job_id")
        self.job_id: str | None = job_id if isinstance(job_id, str) else None


class UnexpectedAnswerError(CompactionClientError):
    """A success whose body the client cannot read: not JSON, or not the route's shape (a proxy
    in between, or a service of another version)."""


class JobWaitTimeoutError(CompactionClientError):
    """``wait_for_job`` ran out of time; ``job`` is the last state seen (still open)."""

    def __init__(self, job: Job, timeout_s: float) -> None:
        super().__init__(f"job {job.id} is still {job.status} after {timeout_s:g}s")
        self.job = job


class CallbackSignatureError(CompactionClientError):
    """A job-completion callback that must not be trusted: unsigned, signed with another
    secret, altered, or older than the receiver accepts."""


_BY_STATUS: dict[int, type[ProblemError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    404: NotFoundError,
    409: ConflictError,
    412: VersionConflictError,
    422: UnprocessableError,
    503: ServiceUnavailableError,
}


def problem_error(response: httpx.Response) -> ProblemError:
    """The error for an answer with an error status (the one place statuses become classes)."""
    problem = _problem_body(response)
    detail = problem.get("detail")
    if not isinstance(detail, str) or not detail:
        detail = response.reason_phrase or f"HTTP {response.status_code}"
    cls = _BY_STATUS.get(response.status_code, ProblemError)
    return cls(response, problem, detail)


def _problem_body(response: httpx.Response) -> dict[str, Any]:
    """The problem document; a body that is no JSON object (a proxy's HTML page) becomes its
    text as the detail."""
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict):
        return body
    text = response.text.strip()[:_MAX_TEXT_DETAIL]
    return {"detail": text} if text else {}


def retry_after_s(response: httpx.Response) -> float | None:
    """Retry-After in seconds: a number, or an HTTP date (counted from now)."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # "-0000": UTC by RFC 5322
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
