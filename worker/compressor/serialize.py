"""Turns rendered as labelled text for the summarizer, bounded per message.

The messages arrive redacted (``turns.py``): a cut made here can no longer split a secret.
"""

from __future__ import annotations

from typing import NamedTuple

from worker.compressor.config import CompressConfig
from worker.compressor.cuts import cut_middle
from worker.compressor.messages import IMAGE_PART_TYPES, TEXT_PART_TYPES, Content, Message


class Serialized(NamedTuple):  # one per window message: a tuple is cheaper to build
    text: str
    cut: bool  # part of the message was left out
    label_chars: int  # characters that are labels and ids rather than the message's own text


_ROLE_LABELS = {role: f"[{role.upper()}]: " for role in ("system", "user", "assistant")}


def serialize_turn(msg: Message, *, config: CompressConfig) -> Serialized:
    """One message as ``[ROLE]: text`` lines; tool calls and results carry their ids."""
    content = msg.content
    text = content if type(content) is str else _visible_text(content)
    # A tool result arrives already shown bounded (turns.py); the cap only catches the rest.
    head = config.serialize_message_max_chars * 3 // 4
    tail = config.serialize_message_max_chars - head
    tool = msg.role == "tool"
    label = f"[TOOL RESULT {msg.tool_call_id}]: " if tool else _ROLE_LABELS[msg.role]
    # Most texts fit: the length is checked here, and only a cut pays for the call.
    body = text if len(text) <= head + tail else cut_middle(text, head, tail)
    cut = body is not text
    if not msg.tool_calls:
        return Serialized(label + body, cut, len(label))
    lines = [label + body] if body else []
    label_chars = len(label)
    args_head = config.serialize_tool_args_head_chars
    for call in msg.tool_calls:
        args = call.arguments
        if len(args) > args_head:
            args = cut_middle(args, args_head, 0)
            cut = True
        call_label = f"[TOOL CALL {call.name} {call.id}]: "
        label_chars += len(call_label)
        lines.append(call_label + args)
    return Serialized("\n".join(lines), cut, label_chars)


def _visible_text(content: Content) -> str:
    """Text parts in order, each image as ``[image]`` (its payload never reaches the model)."""
    if content is None or isinstance(content, str):
        return content or ""
    pieces = []
    for part in content:
        kind = part.get("type")
        if kind in TEXT_PART_TYPES:
            pieces.append(str(part.get("text", "")))
        elif kind in IMAGE_PART_TYPES:
            pieces.append("[image]")
    return "\n".join(pieces)
