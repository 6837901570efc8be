"""Deterministic shrinking of messages that stay in the transcript or go to the summarizer.

Tool outputs dominate agent transcripts. Two cuts, both linear and LLM-free: an old tool output
becomes its one-line account (``Shown.one_liner``: the command, its exit code and first error
line), or a pointer when the same output comes again later; long string leaves in tool-call
arguments are cut while the arguments stay valid JSON (strict providers reject a call whose
arguments do not parse). Nothing is read here: what a call did comes from the tool-use reader.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from worker.compressor import jsonvalue
from worker.compressor.cuts import safe_prefix
from worker.compressor.messages import Message, ToolCall, content_text
from worker.compressor.tooluse import Reading, Shown

# json.dumps(value, ensure_ascii=False) without building an encoder for every call.
_to_json = json.JSONEncoder(ensure_ascii=False).encode


@dataclass(frozen=True, slots=True)
class PruneResult:
    messages: list[Message]  # the pruned messages
    pruned_tool_outputs: int
    deduplicated_tool_outputs: int
    shrunk_tool_args: int


def prune_head(
    msgs: Sequence[Message],
    end: int,
    reading: Reading,
    shown: Shown,
    *,
    min_chars: int,
    arg_max_chars: int,
) -> PruneResult:
    """``msgs[:end]`` (the head, which stays) with old tool outputs and arguments shrunk."""
    newer = duplicated_outputs(msgs, 0, end, min_chars=min_chars)
    out: list[Message] = []
    pruned = deduped = shrunk = 0
    for i in range(end):
        msg = msgs[i]
        if msg.role == "tool":
            if i in newer:
                out.append(msg.with_content(duplicate_note(newer[i])))
                deduped += 1
                continue
            use = reading.by_result.get(i)
            if use is not None and use.output_chars >= min_chars:
                out.append(msg.with_content(shown.one_liner(use)))
                pruned += 1
                continue
        if msg.tool_calls:
            slim = shrink_calls(msg, arg_max_chars, reading)
            if slim is not msg:
                shrunk += 1
                msg = slim
        out.append(msg)
    return PruneResult(out, pruned, deduped, shrunk)


def duplicate_note(newer_call_id: str) -> str:
    return f"[duplicate output: same as the later result of call {newer_call_id}]"


def duplicated_outputs(
    msgs: Sequence[Message], start: int, end: int, *, min_chars: int
) -> dict[int, str]:
    """Indexes in [start, end) of tool outputs repeated later (the newest is kept): index ->
    the newer result's call id."""
    newest: dict[str, str] = {}
    found: dict[int, str] = {}
    for i in range(len(msgs) - 1, start - 1, -1):
        msg = msgs[i]
        if msg.role != "tool":
            continue
        text = content_text(msg.content)
        if len(text) < min_chars:
            continue
        if text in newest:
            if i < end:
                found[i] = newest[text]
        else:
            newest[text] = msg.tool_call_id or "?"
    return found


# ---------------------------------------------------------------------------------------------
# JSON-safe argument shrinking


def shrink_calls(msg: Message, max_chars: int, reading: Reading | None = None) -> Message:
    """``msg`` with long string leaves in its calls' arguments cut (the same object if none)."""
    calls: list[ToolCall] | None = None  # a copy, made at the first call that changes
    for i, call in enumerate(msg.tool_calls):
        if len(call.arguments) <= max_chars:
            continue  # no string leaf can be longer than the JSON that holds it
        use = reading.use_of(call) if reading is not None else None
        shrunk = shrink_arguments(call.arguments, max_chars, use.args if use else None)
        if shrunk is not None:
            calls = calls or list(msg.tool_calls)
            calls[i] = ToolCall(id=call.id, name=call.name, arguments=shrunk, extra=call.extra)
    if calls is None:
        return msg
    return Message(msg.role, msg.content, tuple(calls), msg.tool_call_id, msg.name, msg.extra)


def shrink_arguments(
    arguments: str, max_chars: int, parsed: Mapping[str, Any] | None = None
) -> str | None:
    """Cut string leaves longer than ``max_chars``; the result is still valid JSON.

    ``parsed``: the arguments already parsed, if the caller has them ({} is "not an object").
    Returns None when nothing needed cutting (or the arguments are not JSON: they pass through).
    """
    if len(arguments) <= max_chars:
        return None
    value: Any = parsed if parsed else None
    if value is None:
        try:
            value = jsonvalue.loads(arguments)
        except ValueError:
            return None
    shrunk = _shrink_value(value, max_chars)  # builds new containers; ``value`` is not changed
    return None if shrunk is value else _to_json(shrunk)


def _shrink_value(value: Any, max_chars: int) -> Any:
    """``value`` with long string leaves cut; the same object when nothing needed cutting."""
    if isinstance(value, str):
        if len(value) <= max_chars:
            return value
        return f"{safe_prefix(value, max_chars)}…[{len(value) - max_chars:,} chars cut]"
    if isinstance(value, dict):
        changed: dict[Any, Any] | None = None
        for key, item in value.items():
            new = _shrink_value(item, max_chars)
            if new is not item:
                changed = changed or dict(value)
                changed[key] = new
        return value if changed is None else changed
    if isinstance(value, list):
        items = [_shrink_value(item, max_chars) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value
