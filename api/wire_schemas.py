"""JSON Schemas of the three wire formats' messages, for the OpenAPI document.

They describe what a gateway sends (the core's reader, ``worker/compressor/formats.py``, is
what checks it, and names a problem by its path): the shape of each format's messages and
blocks, with every field we do not model allowed (``cache_control``, signatures, ids, fields
a provider adds later ride along and come back as they came).
"""

from __future__ import annotations

from typing import Any

_OPEN = {"additionalProperties": True}
_TYPED_BLOCK = {
    "type": "object",
    "required": ["type"],
    "properties": {"type": {"type": "string"}},
    **_OPEN,
}

CHAT_MESSAGE: dict[str, Any] = {
    "title": "openai.chat message",
    "type": "object",
    "required": ["role"],
    "properties": {
        "role": {"enum": ["system", "user", "assistant", "tool"]},
        "content": {
            "anyOf": [
                {"type": "string"},
                {"type": "null"},
                {
                    "type": "array",
                    "items": _TYPED_BLOCK,
                    "description": "parts: text, image_url, input_image, image",
                },
            ]
        },
        "tool_calls": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "function"],
                "properties": {
                    "id": {"type": "string"},
                    "function": {
                        "type": "object",
                        "required": ["name", "arguments"],
                        "properties": {"name": {"type": "string"}, "arguments": {"type": "string"}},
                    },
                },
            },
        },
        "tool_call_id": {"type": "string"},
        "name": {"type": "string"},
    },
    **_OPEN,
}

ANTHROPIC_MESSAGE: dict[str, Any] = {
    "title": "anthropic.messages message",
    "type": "object",
    "required": ["role", "content"],
    "properties": {
        "role": {"enum": ["user", "assistant"]},
        "content": {
            "anyOf": [
                {"type": "string"},
                {
                    "type": "array",
                    "minItems": 1,
                    "items": _TYPED_BLOCK,
                    "description": "blocks: text, image, document, tool_use (id, name, input), "
                    "tool_result (tool_use_id, content, is_error; first in its turn), thinking "
                    "and redacted_thinking (with their signatures), server tool blocks",
                },
            ]
        },
    },
    **_OPEN,
}

ANTHROPIC_SYSTEM: dict[str, Any] = {
    "title": "anthropic.messages system",
    "anyOf": [
        {"type": "string"},
        {
            "type": "array",
            "items": {
                **_TYPED_BLOCK,
                "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
            },
        },
        {"type": "null"},
    ],
}

RESPONSES_ITEM: dict[str, Any] = {
    "title": "openai.responses input item",
    "type": "object",
    "description": "message (role user, system, developer or assistant; content a string or "
    "parts: input_text, output_text, input_image, ...; type may be left out), function_call "
    "(call_id, name, arguments), function_call_output (call_id, output), custom_tool_call "
    "(call_id, name, input), custom_tool_call_output, reasoning (encrypted_content), "
    "compaction, and the other items the Responses API documents",
    "properties": {
        "type": {"type": "string"},
        "role": {"enum": ["user", "system", "developer", "assistant"]},
        "call_id": {"type": "string"},
    },
    **_OPEN,
}

MESSAGES_ITEMS: dict[str, Any] = {
    "anyOf": [CHAT_MESSAGE, ANTHROPIC_MESSAGE, RESPONSES_ITEM],
    "description": "one message, in the format named by `format` (the session's, on append)",
}
