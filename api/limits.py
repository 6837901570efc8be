"""Request limits: body bytes (also when chunked without Content-Length), message count, and
characters of text per message (image parts count against the body only). Each refusal names
the limit and the setting that raises it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import ApiProblem, problem_response
from worker.compressor.messages import IMAGE_PART_TYPES


class BodyTooLargeError(HTTPException):
    """Raised from ``receive`` while the body streams in. An HTTPException, because FastAPI
    re-raises those from body parsing (any other error there would become a 400)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, _body_detail(limit))


def _body_detail(limit: int) -> str:
    return f"the request body exceeds {limit} bytes (COMPACTION_MAX_BODY_BYTES)"


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", ())).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            # Refuse before reading a byte of it.
            response = problem_response(413, "payload-too-large", _body_detail(self.max_bytes))
            await response(scope, receive, send)
            return
        seen = 0

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLargeError(self.max_bytes)
            return message

        await self.app(scope, counting_receive, send)


def check_message_limits(
    messages: Sequence[Any], *, max_messages: int, max_content_chars: int
) -> None:
    """413 when there are too many messages, or one message carries too much text."""
    if len(messages) > max_messages:
        raise ApiProblem(
            413,
            "too-many-messages",
            f"{len(messages)} messages in one request; the limit is {max_messages} "
            "(COMPACTION_MAX_MESSAGES_PER_REQUEST)",
        )
    for index, message in enumerate(messages):
        size = content_chars(message)
        if size > max_content_chars:
            raise ApiProblem(
                413,
                "message-too-large",
                f"messages[{index}]: content is {size} characters; the limit is "
                f"{max_content_chars} (COMPACTION_MAX_CONTENT_CHARS)",
            )


def content_chars(message: object) -> int:
    """Characters a message carries: its content (text and blocks), its tool calls, and an
    item's arguments, input or output (OpenAI Responses).

    Images are left out: their base64 data is no text (an image costs a fixed number of
    tokens), and the body limit bounds them.
    """
    if not isinstance(message, dict):
        return 0
    return sum(_chars(message.get(key)) for key in _TEXT_KEYS)


_TEXT_KEYS = ("content", "tool_calls", "arguments", "input", "output")


def _chars(value: object) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        if value.get("type") in IMAGE_PART_TYPES:
            return 0
        return sum(_chars(v) for v in value.values())
    if isinstance(value, list):
        return sum(_chars(v) for v in value)
    return 0
