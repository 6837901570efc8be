"""The one boundary where HTTP statuses, provider error bodies and httpx exceptions become ours.

Classification reads only structure: the exception's type, the HTTP status, the headers, and the
``code`` / ``type`` / ``param`` fields of the provider's error object. The human-readable
``message`` goes into our error text and is never matched: providers reword it freely.

Error bodies seen in the wild, all handled by ``parse_error_body``::

    {"error": {"message", "type", "param", "code"}}        OpenAI, Azure, Groq, LiteLLM, OpenRouter
    {"error": {"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens", "n_ctx"}}
                                                            llama.cpp server
    {"object": "error", "message", "type", "param", "code"} vLLM (flat; newer ones nest it)
    {"error": "text", "error_type": "validation"}           text-generation-inference
    {"detail": ...}                                         FastAPI-based servers
    anything else (an HTML page from a proxy)               status alone decides
"""

from __future__ import annotations

import email.utils
import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from worker.compressor.errors import (
    SummarizerAuthError,
    SummarizerConnectionError,
    SummarizerContextTooLongError,
    SummarizerError,
    SummarizerModelNotFoundError,
    SummarizerProtocolError,
    SummarizerRateLimitError,
    SummarizerRequestError,
    SummarizerServerError,
    SummarizerTimeoutError,
    SummarizerUnavailableError,
)
from worker.errors import LLMPoolBusyError

# Structured codes/types that say "the input does not fit": the caller splits it smaller.
CONTEXT_CODES = frozenset(
    {
        "context_length_exceeded",  # OpenAI, Azure, Groq, llama-cpp-python, newer vLLM
        "context_window_exceeded",
        "model_context_window_exceeded",
        "exceed_context_size_error",  # llama.cpp server
        "string_above_max_length",  # OpenAI: one message longer than it accepts
    }
)
# vLLM >= 0.16 names the offending parameter instead of giving a code.
CONTEXT_PARAMS = frozenset({"input_tokens"})
# Credentials or money: retrying cannot help, so the compaction aborts.
AUTH_CODES = frozenset(
    {
        "invalid_api_key",
        "insufficient_quota",  # OpenAI sends this with 429, not 402
        "billing_hard_limit_reached",
        "billing_not_active",
        "account_deactivated",
        "authentication_error",
        "permission_error",
    }
)
MODEL_CODES = frozenset(
    {"model_not_found", "model_not_available", "invalid_model", "unknown_model"}
)
MAX_RETRY_AFTER_S = 86_400.0  # a longer (or garbage) value is clamped, not trusted


@dataclass(frozen=True, slots=True)
class ProviderError:
    """The structured part of an error answer; ``message`` is only ever shown, never matched."""

    code: str | None = None  # lower-cased; numeric codes become their digits
    type: str | None = None
    param: str | None = None
    message: str = ""
    reports_context_sizes: bool = False  # llama.cpp's n_prompt_tokens / n_ctx are present

    @property
    def markers(self) -> frozenset[str]:
        return frozenset(m for m in (self.code, self.type) if m)


def parse_error_body(raw: bytes) -> ProviderError:
    """Pull code/type/param/message out of any of the common error shapes (or none)."""
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):  # nested too deep
        return ProviderError(message=_snippet(raw.decode("utf-8", "replace")))
    if not isinstance(data, dict):
        return ProviderError(message=_snippet(str(data)))
    inner = data.get("error")
    if isinstance(inner, dict):
        return _from_fields(inner)
    if isinstance(inner, str):  # TGI: {"error": "...", "error_type": "..."}
        return ProviderError(type=_norm(data.get("error_type")), message=_snippet(inner))
    if "detail" in data and "message" not in data:
        return ProviderError(message=_snippet(str(data["detail"])))
    return _from_fields(data)


def _from_fields(obj: dict[str, Any]) -> ProviderError:
    return ProviderError(
        code=_norm(obj.get("code")),
        type=_norm(obj.get("type")),
        param=_norm(obj.get("param")),
        message=_snippet(str(obj.get("message") or "")),
        reports_context_sizes="n_ctx" in obj and "n_prompt_tokens" in obj,
    )


def _norm(value: object) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float | str):
        text = str(value).strip().lower()
        return text or None
    return None


def _snippet(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def retry_after_s(headers: httpx.Headers, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms``."""
    millis = _finite(headers.get("retry-after-ms"))
    if millis is not None:
        return min(max(millis / 1000, 0.0), MAX_RETRY_AFTER_S)
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    seconds = _finite(value)
    if seconds is None:
        seconds = _seconds_until_http_date(value, now or datetime.now(UTC))
    return None if seconds is None else min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


def _finite(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _seconds_until_http_date(value: str, now: datetime) -> float | None:
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        when = when.replace(tzinfo=UTC)
    return (when - now).total_seconds()


def error_for_status(
    status: int, body: bytes, headers: httpx.Headers, *, model: str
) -> SummarizerError:
    """The error for a non-2xx answer (or a 2xx whose body is an error object)."""
    info = parse_error_body(body)
    detail = f"HTTP {status} from model {model!r}: {info.message or '(no message)'}"
    if _is_context_overflow(status, info):
        return SummarizerContextTooLongError(detail, model=model)
    if status in (401, 402, 403) or info.markers & AUTH_CODES:
        return SummarizerAuthError(detail, model=model)
    if status == 404 or info.markers & MODEL_CODES or (status == 400 and info.param == "model"):
        return SummarizerModelNotFoundError(detail, model=model)
    if status == 429:
        return SummarizerRateLimitError(detail, model=model, retry_after_s=retry_after_s(headers))
    if status == 408:
        return SummarizerTimeoutError(detail, model=model)
    if status >= 500:
        return SummarizerServerError(detail, model=model, status=status)
    if 400 <= status < 500:
        return SummarizerRequestError(detail, model=model, status=status)
    return SummarizerProtocolError(f"unexpected {detail}", model=model)  # 1xx/3xx


def _is_context_overflow(status: int, info: ProviderError) -> bool:
    if status == 413:  # request entity too large: smaller pieces will pass
        return True
    if info.markers & CONTEXT_CODES:
        return True
    return status == 400 and (info.param in CONTEXT_PARAMS or info.reports_context_sizes)


def error_for_exception(exc: httpx.HTTPError, *, model: str) -> SummarizerError | LLMPoolBusyError:
    """Translate an httpx exception raised while talking to ``model``.

    A pool timeout is the one that is not a ``SummarizerError``: the request never left this
    process, so it says nothing about the model or the provider.
    """
    name = type(exc).__name__
    detail = f"{name} talking to model {model!r}: {exc}" if str(exc) else f"{name} ({model!r})"
    if isinstance(exc, httpx.PoolTimeout):
        return LLMPoolBusyError(f"every connection to the LLM stayed busy: {detail}")
    if isinstance(exc, httpx.TimeoutException):
        return SummarizerTimeoutError(detail, model=model)
    if isinstance(exc, httpx.UnsupportedProtocol):  # a base URL we cannot speak to
        return SummarizerUnavailableError(detail, model=model)
    if isinstance(exc, httpx.ConnectError | httpx.ProxyError | httpx.WriteError):
        return SummarizerConnectionError(detail, model=model)
    # RemoteProtocolError (body shorter than announced, chunked stream cut), ReadError (reset
    # mid-answer), DecodingError, TooManyRedirects: the answer itself is broken.
    return SummarizerProtocolError(detail, model=model)
