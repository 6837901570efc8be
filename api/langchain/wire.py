"""LangChain messages to and from the wire format the service speaks (``openai.chat``).

The conversions are LangChain's own (``convert_to_openai_messages``, ``convert_to_messages``:
roles system/user/assistant/tool, tool calls with ``function.arguments`` as JSON text,
``tool_call_id``), imported when first used, so that importing this module needs no LangChain.

Message ids stay off the wire (the OpenAI format has none): the service compares and stores
messages by what they say. When a compacted transcript comes back, a message the agent already
holds, word for word (the kept head and the verbatim tail), keeps its LangChain id; a new one
(the summary, or a message the summary was merged into) gets an id derived from the session
and version, so taking the same transcript twice gives the same ids.
"""

from __future__ import annotations

import functools
import importlib
import json
import uuid
from collections import defaultdict, deque
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from api.client.mirror import Message
from api.client.mirror import to_wire as plain_json


@functools.cache
def _messages() -> ModuleType:
    return importlib.import_module("langchain_core.messages")


def to_wire(messages: Sequence[Any]) -> list[Message]:
    """LangChain messages (or message dicts) as ``openai.chat`` messages, plain JSON; content
    made only of text blocks becomes one string, other blocks pass as they are."""
    if not messages:
        return []
    converted = _messages().convert_to_openai_messages(list(messages), text_format="string")
    return plain_json(converted)


def from_wire(wire: Sequence[Message], *, held: Sequence[Any], seed: str) -> list[Any]:
    """``openai.chat`` messages as LangChain messages, with ids: those of ``held`` (the agent's
    messages) for the same messages, derived from ``seed`` for the others."""
    converted: list[Any] = _messages().convert_to_messages(list(wire))
    ids = _ids_by_text(held)
    for index, message in enumerate(converted):
        same = ids.get(_text_of(message))
        message.id = (
            same.popleft() if same else str(uuid.uuid5(uuid.NAMESPACE_URL, f"{seed}/{index}"))
        )
    return converted


def _ids_by_text(messages: Sequence[Any]) -> dict[str, deque[str]]:
    """Each message's id under its wire form (in order: equal messages keep their order)."""
    ids: defaultdict[str, deque[str]] = defaultdict(deque)
    for message in messages:
        if getattr(message, "id", None):
            ids[_text_of(message)].append(str(message.id))
    return ids


def _text_of(message: Any) -> str:
    return json.dumps(to_wire([message])[0], sort_keys=True, ensure_ascii=False)
