"""``AsyncCompactionClient``: the same API as ``CompactionClient``, for async code (asyncio or
trio, through httpx and anyio)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, TypeVar

import anyio
import httpx

from api.client import calls
from api.client.calls import RetryPolicy
from api.client.errors import CompactionClientError, JobWaitTimeoutError
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
from api.client.sync import DEFAULT_BASE_URL, default_headers

T = TypeVar("T")
log = logging.getLogger(__name__)


class AsyncCompactionClient:
    """The v1 API of a compaction-queue service; each method as in ``CompactionClient``."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        token: str | None = None,
        timeout_s: float = 60.0,
        retry: RetryPolicy = RetryPolicy(),  # noqa: B008 - frozen, so one shared default is safe
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._retry = retry
        self._http = httpx.AsyncClient(
            base_url=base_url,
            headers=default_headers(token),
            timeout=timeout_s,
            transport=transport,
            follow_redirects=False,
        )

    @property
    def base_url(self) -> str:
        return str(self._http.base_url).rstrip("/")

    async def put_session(
        self,
        session_id: str,
        *,
        model: str,
        context_length: int,
        messages: Sequence[Message],
        prompt_tokens: int | None = None,
        callback_url: str | None = None,
        if_match: int | None = None,
        idempotency_key: str | None = None,
        format: str | None = None,
        system: Any = None,
    ) -> HygieneAnswer:
        """``CompactionClient.put_session``, awaited."""
        call = calls.put_session(
            session_id,
            model=model,
            context_length=context_length,
            messages=messages,
            prompt_tokens=prompt_tokens,
            callback_url=callback_url,
            if_match=if_match,
            idempotency_key=calls.key_or_new(idempotency_key),
            format=format,
            system=system,
        )
        return await self._send(call)

    async def append(
        self,
        session_id: str,
        messages: Sequence[Message],
        *,
        prompt_tokens: int | None = None,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> HygieneAnswer:
        call = calls.append(
            session_id,
            messages,
            prompt_tokens=prompt_tokens,
            if_match=if_match,
            idempotency_key=calls.key_or_new(idempotency_key),
        )
        return await self._send(call)

    async def compact(
        self,
        session_id: str,
        *,
        focus_topic: str | None = None,
        force: bool = False,
        target_tokens: int | None = None,
    ) -> CompactAccepted:
        call = calls.compact(
            session_id, focus_topic=focus_topic, force=force, target_tokens=target_tokens
        )
        return await self._send(call)

    async def get_session(self, session_id: str) -> Session:
        return await self._send(calls.get_session(session_id))

    async def get_messages(self, session_id: str) -> Transcript:
        return await self._send(calls.get_messages(session_id))

    async def get_job(self, job_id: str) -> Job:
        return await self._send(calls.get_job(job_id))

    async def wait_for_job(
        self, job_id: str, *, timeout_s: float = 600.0, poll_interval_s: float = 0.5
    ) -> Job:
        deadline = time.monotonic() + timeout_s
        while True:
            job = await self.get_job(job_id)
            remaining = deadline - time.monotonic()
            if job.finished:
                return job
            if remaining <= 0:
                raise JobWaitTimeoutError(job, timeout_s)
            await anyio.sleep(min(poll_interval_s, remaining))

    async def get_archive(
        self,
        session_id: str,
        *,
        cursor: str | None = None,
        limit: int | None = None,
        generation: int | None = None,
        job_id: str | None = None,
    ) -> ArchivePage:
        """A page of the session's archived messages, oldest first; pass ``next_cursor`` as
        ``cursor`` for the next one."""
        return await self._send(
            calls.get_archive(
                session_id, q=None, cursor=cursor, limit=limit, generation=generation, job_id=job_id
            )
        )

    async def search_archive(
        self,
        session_id: str,
        query: str,
        *,
        cursor: str | None = None,
        limit: int | None = None,
        generation: int | None = None,
        job_id: str | None = None,
    ) -> ArchivePage:
        """Archived messages holding every term of ``query`` (exact strings too: paths, error
        lines, ids), newest first, as ``hits`` with snippets."""
        return await self._send(
            calls.get_archive(
                session_id,
                q=query,
                cursor=cursor,
                limit=limit,
                generation=generation,
                job_id=job_id,
            )
        )

    async def get_archived_message(
        self, session_id: str, seq: int, *, before: int | None = None, after: int | None = None
    ) -> ArchivedAround:
        """The archived message at ``seq`` (a hit's), with neighbours archived with it."""
        return await self._send(
            calls.get_archived_message(session_id, seq, before=before, after=after)
        )

    async def revert(
        self, session_id: str, job_id: str, *, if_match: int | None = None
    ) -> Reverted:
        """Restore what the compaction ``job_id`` replaced (a new version). ``ConflictError``
        while a job is open or when it cannot be undone. Sent once."""
        return await self._send(calls.revert(session_id, job_id, if_match=if_match))

    async def delete(self, session_id: str, *, if_match: int | None = None) -> None:
        """Erase the session and everything stored for it. Sent once."""
        await self._send(calls.delete(session_id, if_match=if_match))

    async def list_sessions(
        self,
        *,
        cursor: str | None = None,
        limit: int | None = None,
        min_utilization: float | None = None,
        idle_since: datetime | None = None,
        min_compactions: int | None = None,
        model: str | None = None,
    ) -> SessionPage:
        """A page of sessions in id order, filtered; pass ``next_cursor`` as ``cursor``."""
        return await self._send(
            calls.list_sessions(
                cursor=cursor,
                limit=limit,
                min_utilization=min_utilization,
                idle_since=idle_since,
                min_compactions=min_compactions,
                model=model,
            )
        )

    async def list_jobs(self, session_id: str, *, limit: int | None = None) -> list[Job]:
        """The session's jobs, newest first (at most ``limit``)."""
        return await self._send(calls.list_jobs(session_id, limit=limit))

    async def list_tools(self) -> list[dict[str, Any]]:
        """The recall tool definitions (OpenAI tools format) to hand a model."""
        return await self._send(calls.list_tools())

    async def _send(self, call: calls.Call[T]) -> T:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._http.request(
                    call.method,
                    call.path,
                    json=call.json,
                    params=call.params,
                    headers=dict(call.headers),
                )
            except httpx.TransportError as exc:
                wait = calls.retry_wait(self._retry, call, attempt, None)
                if wait is None:
                    raise calls.unreachable(call, exc, attempt) from exc
                log.info("%s %s: %s; retry %d in %.2fs", call.method, call.path, exc, attempt, wait)
            except httpx.HTTPError as exc:
                raise CompactionClientError(f"{call.method} {call.path}: {exc}") from exc
            else:
                wait = calls.retry_wait(self._retry, call, attempt, response)
                if wait is None:
                    return call.answer(response)
                log.info("%s %s: 503; retry %d in %.2fs", call.method, call.path, attempt, wait)
            await anyio.sleep(wait)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncCompactionClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
