"""Secret redaction: every text that reaches a summarizer or a stored summary passes through here.

Always on (a logging preference must not become a data-sharing preference), pure, and
idempotent: a marker is never mistaken for a secret, so redacting twice finds nothing more.
What helps debugging stays (the key name, the vendor prefix, the URL's scheme, host and path,
the header name); only the secret part becomes ``[REDACTED]``. The shapes recognized are in
``secret_patterns.py``; the judgement on names and values (``password_field`` is code,
``password: hunter2`` is not) in ``secret_names.py``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from worker.compressor import jsonvalue
from worker.compressor.messages import Content, Message, Part, ToolCall, slot_setter
from worker.compressor.needle_screen import NeedleScreen
from worker.compressor.secret_names import (
    MARKER,
    MARKER_RE,
    Assignment,
    is_secret_name,
    is_secret_value,
)
from worker.compressor.secret_patterns import PASSES, PRIVATE_KEY_MARKER

__all__ = [
    "MARKER",
    "PRIVATE_KEY_MARKER",
    "Redacted",
    "is_secret_name",
    "redact_arguments",
    "redact_message",
    "redact_text",
]


@dataclass(frozen=True, slots=True, init=False)
class Redacted:
    text: str
    count: int  # secrets replaced

    # One per distinct text redacted: set the slots directly, as Message does (the frozen
    # dataclass's generated __init__ goes through object.__setattr__ for each field).
    def __init__(self, text: str, count: int) -> None:
        _set_text(self, text)
        _set_count(self, count)


_set_text, _set_count = (slot_setter(Redacted, n) for n in ("text", "count"))


_SCREEN = NeedleScreen([p.needles for p in PASSES])


def redact_text(text: str) -> Redacted:
    """Replace every recognized secret in ``text`` with a marker; count the replacements."""
    if not text:
        return Redacted(text, 0)
    # Clean text, nearly all of it: one scan for every pass's needles, then only passes that can
    # match run.
    for i in _SCREEN.present(text.lower()):
        text, count = PASSES[i].apply(text)
        if count:
            return _remaining_passes(text, count, after=i)
    return Redacted(text, 0)


def _remaining_passes(text: str, total: int, *, after: int) -> Redacted:
    # A replacement changes the text: the passes after it are screened again, in one scan.
    pending = [i for i in _SCREEN.present(text.lower()) if i > after]
    while pending:
        i = pending.pop(0)
        text, count = PASSES[i].apply(text)
        if count:
            total += count
            pending = [j for j in _SCREEN.present(text.lower()) if j > i]
    return Redacted(text, total)


# ---------------------------------------------------------------------------------------------
# Messages


def redact_message(msg: Message) -> tuple[Message, int]:
    """Redact a message's text, text parts, image URLs, string extras and tool-call arguments.

    Tool-call arguments that were valid JSON stay valid JSON: string leaves are redacted in the
    parsed value (with their key as context) and the value is serialized again, only if changed.
    The same message object comes back when nothing was found.
    """
    content, count = _redact_content(msg.content)
    calls: list[ToolCall] = []
    for call in msg.tool_calls:
        arguments, n = redact_arguments(call.arguments)
        count += n
        calls.append(replace(call, arguments=arguments) if n else call)
    extra, n = _redact_json(dict(msg.extra), key=None)
    count += n
    if not count:
        return msg, 0
    extras = MappingProxyType(extra) if n else msg.extra  # read-only, as parse_message makes it
    return replace(msg, content=content, tool_calls=tuple(calls), extra=extras), count


def _redact_content(content: Content) -> tuple[Content, int]:
    if content is None:
        return None, 0
    if isinstance(content, str):
        red = redact_text(content)
        return red.text, red.count
    parts: list[Part] = []
    total = 0
    for part in content:
        new, n = _redact_part(part)
        parts.append(new)
        total += n
    return (tuple(parts) if total else content), total


def _redact_part(part: Part) -> tuple[Part, int]:
    text = part.get("text")
    if part.get("type") == "text" and isinstance(text, str):
        red = redact_text(text)
        return ({**part, "text": red.text} if red.count else part), red.count
    url = part.get("image_url")
    if isinstance(url, Mapping) and isinstance(url.get("url"), str):
        red = _redact_url(url["url"])
        return ({**part, "image_url": {**url, "url": red.text}} if red.count else part), red.count
    if isinstance(url, str):
        red = _redact_url(url)
        return ({**part, "image_url": red.text} if red.count else part), red.count
    return part, 0


def _redact_url(url: str) -> Redacted:
    if url.startswith("data:"):
        return Redacted(url, 0)  # inline image bytes: nothing to find, megabytes to scan
    return redact_text(url)


def redact_arguments(arguments: str) -> tuple[str, int]:
    """Redact a tool call's JSON arguments, keeping them valid JSON when they were."""
    try:
        value = jsonvalue.loads(arguments)
    except ValueError:
        red = redact_text(arguments)
        return red.text, red.count
    new, count = _redact_json(value, key=None)
    if not count:
        return arguments, 0
    return json.dumps(new, ensure_ascii=False), count


def _redact_json(value: Any, *, key: str | None) -> tuple[Any, int]:
    if isinstance(value, str):
        return _redact_leaf(value, key)
    if isinstance(value, list):
        items = [_redact_json(v, key=key) for v in value]
        return [v for v, _ in items], sum(n for _, n in items)
    if isinstance(value, dict):
        pairs = {k: _redact_json(v, key=str(k)) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, sum(n for _, n in pairs.values())
    return value, 0


def _redact_leaf(value: str, key: str | None) -> tuple[str, int]:
    """A JSON string leaf: its own text, and the whole of it when its key names a secret."""
    red = redact_text(value)
    if key is None or MARKER_RE.search(red.text):
        return red.text, red.count
    if key.lower() in ("authorization", "proxy-authorization"):
        header = redact_text(f"Authorization: {red.text}")
        return header.text.removeprefix("Authorization: "), red.count + header.count
    if is_secret_value(Assignment(name=key, sep=": ", raw=json.dumps(value))):
        return MARKER, red.count + 1
    return red.text, red.count
