"""Classification of provider answers and httpx exceptions, by structure only."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.compaction import Decision, decide
from worker.compressor import errors
from worker.compressor.errors import SummarizerError
from worker.cooldowns import cooldown_seconds
from worker.errors import LLMPoolBusyError
from worker.settings import Settings
from worker.summarizers.classify import (
    error_for_exception,
    error_for_status,
    parse_error_body,
    retry_after_s,
)
from worker.summarizers.wire import read_stream

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def classify(status: int, body: Any, headers: dict[str, str] | None = None) -> SummarizerError:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return error_for_status(status, raw, httpx.Headers(headers or {}), model="m")


def openai_error(code: Any = None, type: str | None = None, param: str | None = None) -> Any:
    return {"error": {"message": "whatever text", "type": type, "param": param, "code": code}}


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (400, openai_error("context_length_exceeded", "invalid_request_error"), "context_too_long"),
        (
            400,
            {
                "error": {
                    "code": 400,
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 9000,
                    "n_ctx": 4096,
                }
            },
            "context_too_long",
        ),
        (
            400,
            {"error": {"code": 400, "message": "x", "n_prompt_tokens": 9, "n_ctx": 4}},
            "context_too_long",
        ),
        (400, openai_error(400, "BadRequestError", "input_tokens"), "context_too_long"),
        (
            400,
            {"object": "error", "type": "BadRequestError", "code": "context_length_exceeded"},
            "context_too_long",
        ),
        (400, openai_error("400", "context_length_exceeded"), "context_too_long"),
        (400, openai_error("string_above_max_length"), "context_too_long"),
        (413, b"<html>too large</html>", "context_too_long"),
        (401, openai_error("invalid_api_key"), "auth"),
        (402, b"", "auth"),
        (403, {"detail": "Forbidden"}, "auth"),
        (429, openai_error("insufficient_quota", "insufficient_quota"), "auth"),
        (400, openai_error(None, "authentication_error"), "auth"),
        (404, openai_error("model_not_found"), "model_not_found"),
        (404, b"Not Found", "model_not_found"),
        (400, openai_error("model_not_found"), "model_not_found"),
        (400, openai_error(None, "invalid_request_error", "model"), "model_not_found"),
        (429, openai_error("rate_limit_exceeded"), "rate_limited"),
        (408, b"", "timeout"),
        (500, b"", "server_error"),
        (502, b"<html>bad gateway</html>", "server_error"),
        (503, {"error": "Model is loading", "error_type": "overloaded"}, "server_error"),
        (504, b"", "server_error"),
        (529, b"", "server_error"),
        (
            400,
            {
                "object": "error",
                "message": "maximum context length is 4096 tokens",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
            "bad_request",
        ),
        (422, {"error": "Input validation error", "error_type": "validation"}, "bad_request"),
        (405, b"", "bad_request"),
        (302, b"", "protocol_error"),
    ],
)
def test_status_and_structured_fields_decide_the_class(
    status: int, body: Any, expected: str
) -> None:
    error = classify(status, body)
    assert error.error_class == expected
    assert error.model == "m"
    assert f"HTTP {status}" in str(error)


def test_message_text_is_never_read_for_the_class() -> None:
    # The same wording that would fool a text matcher, under every status.
    words = "context_length_exceeded maximum context length invalid api key rate limit"
    for status in (400, 500):
        error = classify(status, {"error": {"message": words}})
        assert error.error_class == ("bad_request" if status == 400 else "server_error")


def test_server_error_keeps_its_status() -> None:
    error = classify(503, b"")
    assert isinstance(error, errors.SummarizerServerError) and error.status == 503


def test_rate_limit_carries_retry_after() -> None:
    error = classify(429, openai_error("rate_limit_exceeded"), {"Retry-After": "17"})
    assert isinstance(error, errors.SummarizerRateLimitError) and error.retry_after_s == 17.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "30"}, 30.0),
        ({"Retry-After": "1.5"}, 1.5),
        ({"Retry-After": " 0 "}, 0.0),
        ({"Retry-After": "-5"}, 0.0),
        ({"Retry-After": "Sun, 01 Mar 2026 12:01:00 GMT"}, 60.0),
        ({"Retry-After": "Sun, 01 Mar 2026 11:59:00 GMT"}, 0.0),  # already past
        ({"retry-after-ms": "250", "Retry-After": "1"}, 0.25),  # the precise one wins
        ({"Retry-After": "99999999"}, 86_400.0),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "nan"}, None),
        ({"Retry-After": "inf"}, None),
        ({}, None),
    ],
)
def test_retry_after_in_seconds_or_http_date(
    headers: dict[str, str], expected: float | None
) -> None:
    assert retry_after_s(httpx.Headers(headers), now=NOW) == expected


@pytest.mark.parametrize(
    ("raw", "code", "type_", "message"),
    [
        (b'{"error": {"code": "x_y", "type": "T", "message": "m"}}', "x_y", "t", "m"),
        (
            b'{"object": "error", "code": 400, "type": "BadRequestError", "message": "m"}',
            "400",
            "badrequesterror",
            "m",
        ),
        (b'{"error": "text", "error_type": "validation"}', None, "validation", "text"),
        (b'{"detail": [{"msg": "field required"}]}', None, None, "[{'msg': 'field required'}]"),
        (b"<html>\n  Bad   Gateway </html>", None, None, "<html> Bad Gateway </html>"),
        (b"[1, 2]", None, None, "[1, 2]"),
        (b"\xff\xfe", None, None, "\ufffd\ufffd"),
        (b'{"error": {"code": true, "type": ["list"]}}', None, None, ""),
    ],
)
def test_error_bodies_of_every_common_shape_parse(
    raw: bytes, code: str | None, type_: str | None, message: str
) -> None:
    info = parse_error_body(raw)
    assert (info.code, info.type, info.message) == (code, type_, message)


def test_long_messages_are_shortened() -> None:
    info = parse_error_body(json.dumps({"error": {"message": "x" * 5000}}).encode())
    assert len(info.message) == 300 and info.message.endswith("…")


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (httpx.ConnectTimeout("t"), "timeout"),
        (httpx.ReadTimeout("t"), "timeout"),
        (httpx.WriteTimeout("t"), "timeout"),
        (httpx.ConnectError("refused"), "connection_error"),
        (httpx.ProxyError("proxy"), "connection_error"),
        (httpx.WriteError("reset while sending"), "connection_error"),
        (httpx.UnsupportedProtocol("ftp"), "no_provider"),
        (httpx.RemoteProtocolError("peer closed"), "protocol_error"),
        (httpx.ReadError("reset"), "protocol_error"),
        (httpx.DecodingError("gzip"), "protocol_error"),
        (httpx.TooManyRedirects("loop"), "protocol_error"),
    ],
)
def test_httpx_exceptions_map_by_type(exc: httpx.HTTPError, expected: str) -> None:
    error = error_for_exception(exc, model="m")
    assert isinstance(error, SummarizerError)
    assert error.error_class == expected and type(exc).__name__ in str(error)


def test_a_pool_timeout_is_a_retried_wait_not_a_summarizer_failure() -> None:
    # The request never left the process: no fallback to the main model, no cooldown.
    error = error_for_exception(httpx.PoolTimeout("t"), model="m")
    assert isinstance(error, LLMPoolBusyError) and not isinstance(error, SummarizerError)
    assert decide(error) is Decision.RETRY


def test_every_error_class_has_a_cooldown_of_the_documented_length() -> None:
    s = Settings()
    classes = {
        cls.error_class
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, SummarizerError)
    }
    lengths = {c: cooldown_seconds(c, settings=s) for c in classes}
    assert lengths["protocol_error"] == lengths["empty_summary"] == 30
    assert lengths["no_provider"] == 600
    assert all(
        v == 60
        for c, v in lengths.items()
        if c not in {"protocol_error", "empty_summary", "no_provider"}
    )


# -- the boundary never lets anything but a SummarizerError out ---------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=6,
)
error_like = st.fixed_dictionaries(
    {},
    optional={
        "code": json_values,
        "type": json_values,
        "param": json_values,
        "message": json_values,
        "n_ctx": st.integers(),
        "n_prompt_tokens": st.integers(),
    },
)
bodies = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    error_like.map(lambda e: json.dumps({"error": e}).encode()),
    error_like.map(lambda e: json.dumps({"object": "error", **e}).encode()),
)


# A boundary check, not an invariant of the algorithm: a fixed, modest number of examples.
@settings(max_examples=120)
@given(status=st.integers(100, 599), body=bodies, retry_after=st.text(max_size=40))
def test_any_answer_becomes_exactly_one_summarizer_error(
    status: int, body: bytes, retry_after: str
) -> None:
    headers = (
        httpx.Headers({"Retry-After": retry_after}) if retry_after.isascii() else httpx.Headers()
    )
    error = error_for_status(status, body, headers, model="m")
    assert isinstance(error, SummarizerError) and error.model == "m"
    if isinstance(error, errors.SummarizerRateLimitError) and error.retry_after_s is not None:
        assert 0.0 <= error.retry_after_s <= 86_400.0


@settings(max_examples=120)
@given(
    lines=st.lists(
        st.one_of(st.text(max_size=60), json_values.map(lambda v: "data: " + json.dumps(v))),
        max_size=8,
    )
)
def test_any_stream_is_a_completion_or_a_summarizer_error(lines: list[str]) -> None:
    try:
        completion = read_stream(lines, model="m")
    except SummarizerError:
        return
    assert isinstance(completion.content, str) and isinstance(completion.reasoning, str)
