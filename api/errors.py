"""Errors as ``application/problem+json`` (RFC 9457), mapped in one place.

Our own error classes map to statuses through ``ERROR_STATUS`` (a test checks that every
``StoreError`` and ``CompactionError`` subclass has an entry); HTTP-level refusals of the API
itself are ``ApiProblem``; FastAPI's validation errors and Starlette's HTTP errors are rendered
in the same shape, so a client parses one kind of error body.
"""

from __future__ import annotations

import functools
import logging
import re
import sys
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException

from worker.compressor.errors import CompactionError, InvalidTranscriptError
from worker.store.errors import (
    ArchivedMessageNotFoundError,
    IdempotencyKeyReusedError,
    IntegrityViolationError,
    JobFencedError,
    JobNotFoundError,
    OpenJobExistsError,
    RevertRefusedError,
    SessionNotFoundError,
    StoreError,
    VersionConflictError,
)

log = logging.getLogger(__name__)
PROBLEM_JSON = "application/problem+json"

# status, problem slug (the last part of the ``type`` URI)
ERROR_STATUS: dict[type[Exception], tuple[int, str]] = {
    SessionNotFoundError: (404, "session-not-found"),
    JobNotFoundError: (404, "job-not-found"),
    ArchivedMessageNotFoundError: (404, "archived-message-not-found"),
    VersionConflictError: (412, "version-conflict"),
    OpenJobExistsError: (409, "job-already-open"),
    JobFencedError: (409, "job-fenced"),
    RevertRefusedError: (409, "revert-refused"),
    IdempotencyKeyReusedError: (422, "idempotency-key-reused"),
    IntegrityViolationError: (409, "constraint-violated"),
    StoreError: (500, "store-error"),
    InvalidTranscriptError: (422, "invalid-transcript"),
    CompactionError: (422, "invalid-input"),
}


def problem_type(slug: str) -> str:
    return f"urn:compaction-queue:problem:{slug}"


class ApiProblem(Exception):
    """A refusal decided by the API itself (limits, auth, broker down, manual-compaction rules)."""

    def __init__(
        self,
        status: int,
        slug: str,
        detail: str,
        *,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status, self.slug, self.detail = status, slug, detail
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})


def problem_response(
    status: int,
    slug: str,
    detail: str,
    *,
    headers: Mapping[str, str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> JSONResponse:
    body = {
        "type": problem_type(slug),
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        **(extra or {}),
    }
    return JSONResponse(
        body, status_code=status, headers=dict(headers or {}), media_type=PROBLEM_JSON
    )


def status_for(exc: Exception) -> tuple[int, str]:
    """The nearest mapped class in ``exc``'s MRO decides."""
    for cls in type(exc).__mro__:
        if cls in ERROR_STATUS:
            return ERROR_STATUS[cls]
    return 500, "internal-error"


def _extra_for(exc: Exception) -> tuple[dict[str, str], dict[str, Any]]:
    if isinstance(exc, VersionConflictError):
        headers = {} if exc.current_version is None else {"ETag": f'"{exc.current_version}"'}
        return headers, {"current_version": exc.current_version}
    if isinstance(exc, (OpenJobExistsError, RevertRefusedError)):
        return {}, {"job_id": exc.job_id}
    return {}, {}


async def _our_error(request: Request, exc: Exception) -> JSONResponse:
    status, slug = status_for(exc)
    if status >= 500:
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    headers, extra = _extra_for(exc)
    return problem_response(status, slug, str(exc), headers=headers, extra=extra)


async def _api_problem(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiProblem)
    return problem_response(exc.status, exc.slug, exc.detail, headers=exc.headers, extra=exc.extra)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [{"loc": _location(err.get("loc", ())), "msg": _message(err)} for err in exc.errors()]
    detail = "; ".join(f"{e['loc']}: {e['msg']}" for e in errors) or "invalid request"
    return problem_response(422, "validation-error", detail, extra={"errors": errors})


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if type(exc.__cause__) is ValueError:
        return _integer_too_long()
    slug = HTTPStatus(exc.status_code).phrase.lower().replace(" ", "-")
    detail = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).description
    if isinstance(exc.__cause__, UnicodeDecodeError):
        cause = exc.__cause__
        detail = (
            f"the body is not UTF-8 text (byte 0x{cause.object[cause.start]:02x} at offset "
            f"{cause.start}): send JSON encoded as UTF-8"
        )
    if exc.status_code == 405:
        allowed = allowed_methods(request)
        if allowed:
            headers = {**(exc.headers or {}), "Allow": ", ".join(allowed)}
            return problem_response(405, slug, detail, headers=headers)
    if isinstance(exc.__cause__, RecursionError):
        # FastAPI's "There was an error parsing the body", when JSON nesting ran past the
        # parser's recursion limit (about a thousand levels).
        detail = (
            "the JSON body is nested too deeply to parse (objects and arrays inside each other)"
        )
    return problem_response(exc.status_code, slug, detail, headers=exc.headers)


def allowed_methods(request: Request) -> list[str]:
    """Every method the API document gives the request's path (Starlette's 405 names only the
    first route that matched the path)."""
    path = request.url.path
    methods: set[str] = set()
    for template, operations in request.app.openapi().get("paths", {}).items():
        if _template_pattern(template).fullmatch(path):
            methods |= {m.upper() for m in operations if m.upper() in _HTTP_METHODS}
    return sorted(methods)


_HTTP_METHODS = frozenset({"GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS", "HEAD"})


@functools.cache
def _template_pattern(template: str) -> re.Pattern[str]:
    """``/v1/sessions/{session_id}`` as a pattern of the paths it names."""
    parts = re.split(r"(\{[^}]+\})", template)
    return re.compile("".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts))


def _integer_too_long() -> JSONResponse:
    """FastAPI's "There was an error parsing the body", when the JSON parser refused an integer
    past Python's limit on its digits: the only plain ValueError it raises (JSONDecodeError and
    UnicodeDecodeError are subclasses). A value out of range, as a shorter one's is a 422."""
    msg = f"an integer of more than {sys.get_int_max_str_digits()} digits is out of every range"
    return problem_response(
        422, "validation-error", f"body: {msg}", extra={"errors": [{"loc": "body", "msg": msg}]}
    )


DATABASE_RETRY_AFTER_S = 5


async def _database_unavailable(request: Request, exc: Exception) -> JSONResponse:
    """The database is down, restarting or busy past its timeout: retry later, nothing stored.

    Every write is one transaction, so a request that failed here changed nothing.
    """
    log.error("%s %s: database unavailable", request.method, request.url.path, exc_info=exc)
    cause = type(getattr(exc, "orig", None) or exc).__name__
    return problem_response(
        503,
        "database-unavailable",
        f"the database is unavailable ({cause}); nothing was stored, try again",
        headers={"Retry-After": str(DATABASE_RETRY_AFTER_S)},
    )


async def _database_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, DBAPIError)
    if exc.connection_invalidated:  # the connection broke mid-request
        return await _database_unavailable(request, exc)
    return await _unexpected(request, exc)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return problem_response(500, "internal-error", "the server failed; see its log")


def _message(error: Mapping[str, Any]) -> str:
    """Pydantic's message; for a validator's own ValueError, that error's text alone (pydantic
    puts "Value error, " before it, which tells a client nothing)."""
    cause = (error.get("ctx") or {}).get("error")
    if error.get("type") == "value_error" and cause is not None:
        return str(cause)
    return str(error.get("msg", "invalid"))


def _location(loc: object) -> str:
    """('body', 'messages', 3, 'role') -> 'messages[3].role'; the 'body' prefix says nothing."""
    parts = list(loc) if isinstance(loc, (list, tuple)) else [loc]
    if len(parts) > 1 and parts[0] == "body":
        parts = parts[1:]
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "body"


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ApiProblem, _api_problem)
    app.add_exception_handler(StoreError, _our_error)
    app.add_exception_handler(CompactionError, _our_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(OperationalError, _database_unavailable)
    app.add_exception_handler(DisconnectionError, _database_unavailable)
    app.add_exception_handler(DBAPIError, _database_error)
    app.add_exception_handler(Exception, _unexpected)
