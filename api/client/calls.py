"""Each route as a request to send and a reader of its answer, and the retry rule; no I/O.

Both clients (``sync.py``, ``aio.py``) send these ``Call``s, so a route is described once: adding
one is a builder here (its path, body, headers, whether a retry is safe, how to read its answer)
and a one-line method in each client.

Retries: a call is sent again only when repeating it cannot store anything twice: a read, or a
write carrying an ``Idempotency-Key`` (the service answers a repeated key with the first
result). Every write the clients send carries one, generated per call unless the caller gave
one, and every retry of that call sends the same key. What is retried: no answer at all
(connection refused or cut, a timeout) and 503 (nothing was stored), within ``RetryPolicy``.
A manual compaction takes no key, so it is never retried.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx

from api.client.errors import (
    ServiceUnreachableError,
    UnexpectedAnswerError,
    problem_error,
    retry_after_s,
)
from api.client.models import (
    ArchivedAround,
    ArchivePage,
    CompactAccepted,
    HygieneAnswer,
    Job,
    Message,
    Reverted,
    Session,
    SessionPage,
    Transcript,
)

T = TypeVar("T")
IDEMPOTENCY_KEY = "Idempotency-Key"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and after how long a retryable call is sent again.

    Retry number n waits a random time up to ``backoff_s * 2**(n-1)`` (full jitter, so many
    gateways retrying at once spread out), at most ``max_wait_s``; a 503's ``Retry-After`` is
    waited instead, also at most ``max_wait_s``. The defaults give up after 4 tries and about
    10 s of waiting (more with Retry-After), then raise what the last try got.
    """

    attempts: int = 4  # tries in all, the first one included
    backoff_s: float = 0.5
    max_wait_s: float = 10.0

    def wait_s(self, retry: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_wait_s)
        return random.uniform(0.0, min(self.max_wait_s, self.backoff_s * 2 ** (retry - 1)))


NO_RETRIES = RetryPolicy(attempts=1)


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One request to the service and the reader of its successful answer."""

    method: str
    path: str
    read: Callable[[httpx.Response], T]
    json: object = None
    headers: Mapping[str, str] = field(default_factory=dict)
    retryable: bool = False  # sending it twice stores nothing twice
    params: Mapping[str, str] | None = None  # the query string

    def answer(self, response: httpx.Response) -> T:
        """The typed answer, or the error the response stands for."""
        if response.is_error:
            raise problem_error(response)
        try:
            return self.read(response)
        except (KeyError, TypeError, ValueError) as exc:  # ValueError: not JSON at all
            raise UnexpectedAnswerError(
                f"{self.method} {self.path} answered {response.status_code} with a body the "
                f"client cannot read ({type(exc).__name__}: {exc})"
            ) from exc


def retry_wait(
    policy: RetryPolicy, call: Call[Any], attempt: int, response: httpx.Response | None
) -> float | None:
    """Seconds to wait before sending ``call`` again after try number ``attempt`` got
    ``response`` (None: no answer at all); None when it must not be sent again."""
    if not call.retryable or attempt >= policy.attempts:
        return None
    if response is None:
        return policy.wait_s(attempt, None)
    if response.status_code == 503:
        return policy.wait_s(attempt, retry_after_s(response))
    return None


def unreachable(
    call: Call[Any], exc: httpx.TransportError, attempts: int
) -> ServiceUnreachableError:
    tries = f"{attempts} tries" if attempts > 1 else "1 try"
    return ServiceUnreachableError(
        f"{call.method} {call.path}: no answer after {tries} ({type(exc).__name__}: {exc})",
        attempts=attempts,
    )


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


def key_or_new(given: str | None) -> str:
    """The caller's key as given (an empty one is refused by the service), else a new one."""
    return new_idempotency_key() if given is None else given


def session_path(session_id: str, *tail: str) -> str:
    return "/".join(["/v1/sessions", quote(session_id, safe=""), *tail])


def _query(**values: str | int | float | datetime | None) -> dict[str, str]:
    """The query parameters that were given, as text (times in ISO 8601)."""
    return {
        name: value.isoformat() if isinstance(value, datetime) else str(value)
        for name, value in values.items()
        if value is not None
    }


def _if_match(version: int | None) -> dict[str, str]:
    return {} if version is None else {"If-Match": f'"{version}"'}


def _write_headers(*, idempotency_key: str, if_match: int | None) -> dict[str, str]:
    return {IDEMPOTENCY_KEY: idempotency_key, **_if_match(if_match)}


def _hygiene(response: httpx.Response) -> HygieneAnswer:
    return HygieneAnswer.from_json(
        response.json(),
        status=response.status_code,
        reason=response.headers.get("x-hygiene-reason"),
        replayed=response.headers.get("idempotent-replayed") == "true",
    )


def put_session(
    session_id: str,
    *,
    model: str,
    context_length: int,
    messages: Sequence[Message],
    prompt_tokens: int | None,
    callback_url: str | None,
    if_match: int | None,
    idempotency_key: str,
    format: str | None = None,
    system: Any = None,
) -> Call[HygieneAnswer]:
    body: dict[str, Any] = {
        "model": model,
        "context_length": context_length,
        "messages": list(messages),
    }
    if prompt_tokens is not None:
        body["prompt_tokens"] = prompt_tokens
    if callback_url is not None:
        body["callback_url"] = callback_url
    if format is not None:
        body["format"] = format
    if system is not None:
        body["system"] = system
    headers = _write_headers(idempotency_key=idempotency_key, if_match=if_match)
    return Call("PUT", session_path(session_id), _hygiene, body, headers, retryable=True)


def append(
    session_id: str,
    messages: Sequence[Message],
    *,
    prompt_tokens: int | None,
    if_match: int | None,
    idempotency_key: str,
) -> Call[HygieneAnswer]:
    body: dict[str, Any] = {"messages": list(messages)}
    if prompt_tokens is not None:
        body["prompt_tokens"] = prompt_tokens
    headers = _write_headers(idempotency_key=idempotency_key, if_match=if_match)
    path = session_path(session_id, "messages")
    return Call("POST", path, _hygiene, body, headers, retryable=True)


def compact(
    session_id: str, *, focus_topic: str | None, force: bool, target_tokens: int | None
) -> Call[CompactAccepted]:
    body: dict[str, Any] = {"force": force}
    if focus_topic is not None:
        body["focus_topic"] = focus_topic
    if target_tokens is not None:
        body["target_tokens"] = target_tokens
    return Call(
        "POST",
        session_path(session_id, "compact"),
        lambda r: CompactAccepted.from_json(r.json()),
        body,
    )


def get_session(session_id: str) -> Call[Session]:
    return Call(
        "GET", session_path(session_id), lambda r: Session.from_json(r.json()), retryable=True
    )


def get_messages(session_id: str) -> Call[Transcript]:
    return Call(
        "GET",
        session_path(session_id, "messages"),
        lambda r: Transcript.from_json(r.json()),
        retryable=True,
    )


def get_job(job_id: str) -> Call[Job]:
    return Call(
        "GET",
        f"/v1/jobs/{quote(job_id, safe='')}",
        lambda r: Job.from_json(r.json()),
        retryable=True,
    )


def list_jobs(session_id: str, *, limit: int | None = None) -> Call[list[Job]]:
    """``GET /v1/jobs?session_id=``: a session's jobs, newest first."""
    params = {"session_id": session_id}
    if limit is not None:
        params["limit"] = str(limit)
    return Call(
        "GET",
        "/v1/jobs",
        lambda r: [Job.from_json(j) for j in r.json()["jobs"]],
        params=params,
        retryable=True,
    )


def get_archive(
    session_id: str,
    *,
    q: str | None,
    cursor: str | None,
    limit: int | None,
    generation: int | None,
    job_id: str | None,
) -> Call[ArchivePage]:
    params = _query(q=q, cursor=cursor, limit=limit, generation=generation, job_id=job_id)
    return Call(
        "GET",
        session_path(session_id, "archive"),
        lambda r: ArchivePage.from_json(r.json()),
        retryable=True,
        params=params,
    )


def get_archived_message(
    session_id: str, seq: int, *, before: int | None, after: int | None
) -> Call[ArchivedAround]:
    return Call(
        "GET",
        session_path(session_id, "archive", str(seq)),
        lambda r: ArchivedAround.from_json(r.json()),
        retryable=True,
        params=_query(before=before, after=after),
    )


def revert(session_id: str, job_id: str, *, if_match: int | None) -> Call[Reverted]:
    """Not retried: a repeated revert is refused (409, already reverted), not ignored."""
    return Call(
        "POST",
        session_path(session_id, "revert"),
        lambda r: Reverted.from_json(r.json()),
        {"job_id": job_id},
        _if_match(if_match),
    )


def delete(session_id: str, *, if_match: int | None) -> Call[None]:
    """Not retried: once erased, a repeat would answer 404 for a delete that worked."""
    return Call("DELETE", session_path(session_id), lambda r: None, headers=_if_match(if_match))


def list_sessions(
    *,
    cursor: str | None,
    limit: int | None,
    min_utilization: float | None,
    idle_since: datetime | None,
    min_compactions: int | None,
    model: str | None,
) -> Call[SessionPage]:
    params = _query(
        cursor=cursor,
        limit=limit,
        min_utilization=min_utilization,
        idle_since=idle_since,
        min_compactions=min_compactions,
        model=model,
    )
    return Call(
        "GET",
        "/v1/sessions",
        lambda r: SessionPage.from_json(r.json()),
        retryable=True,
        params=params,
    )


def _tools(response: httpx.Response) -> list[dict[str, Any]]:
    tools = response.json()["tools"]
    if not isinstance(tools, list):
        raise UnexpectedAnswerError("tools: not a list")
    return tools


def list_tools() -> Call[list[dict[str, Any]]]:
    return Call("GET", "/v1/tools", _tools, retryable=True)
