"""The providers' wire formats, read into the core's records and written back.

A gateway talks to its model in that provider's format: OpenAI Chat Completions
(``openai.chat``, what ``messages.py`` parses), Anthropic Messages (``anthropic.messages``:
``system`` apart, content blocks) or OpenAI Responses (``openai.responses``: input items). This
module is the one reader and writer of the other two. A transcript is read once into the
core's ``Message`` records, which the compressor works on as it does on chat messages; the
records keep where they came from, so what the compressor did not rewrite is written back as
it came (every block, item and field: thinking signatures, ``cache_control``, encrypted
reasoning, ids, fields no one here knows), and only what it rewrote is built anew, in the
same format.

How the blocks and items become records:

- Anthropic: a user message's leading ``tool_result`` blocks become tool messages (their
  ``tool_use_id``, their content), the rest of it one user message; an assistant message's
  ``tool_use`` blocks become its tool calls (``input`` as a JSON string), its other blocks
  its content. ``text`` blocks are the core's text parts as they are; ``image`` blocks are
  images; thinking, redacted thinking, server tool blocks and documents are parts the core
  neither reads nor sends to a summarizer (no text part), kept in place.
- Responses: a ``message`` item is a message (``developer`` as a system message), its
  ``input_text``/``output_text`` parts the core's text parts; a run of the assistant's items
  (messages, ``function_call``, ``custom_tool_call``, ``reasoning`` and the other items the
  assistant's turn holds) is one assistant message whose tool calls are the calls (a custom
  tool's raw ``input`` as its arguments); ``function_call_output`` and
  ``custom_tool_call_output`` are tool messages. Items the core cannot read (``reasoning``,
  ``compaction``, the built-in tools' calls) are parts of no text, never summarized.

Written back, Anthropic turns alternate (a tool message's block goes into the user turn that
follows the assistant's ``tool_use``, ahead of any text); a Responses call is answered by its
output item.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias, cast

from worker.compressor.errors import InvalidTranscriptError
from worker.compressor.markers import as_user_summary
from worker.compressor.messages import (
    IMAGE_PART_TYPES,
    TEXT_PART_TYPES,
    Content,
    Message,
    Part,
    Role,
    ToolCall,
    check_storable,
    parse_messages,
    to_wire_list,
)
from worker.compressor.tokens import TokenCounter

Format: TypeAlias = Literal["openai.chat", "anthropic.messages", "openai.responses"]
CHAT: Final = "openai.chat"
ANTHROPIC: Final = "anthropic.messages"
RESPONSES: Final = "openai.responses"
FORMATS: Final[tuple[Format, ...]] = (CHAT, ANTHROPIC, RESPONSES)
DEFAULT_FORMAT: Final[Format] = CHAT

# Where a record keeps its origin, in ``Message.extra``: no wire key starts with a NUL.
ORIGIN: Final = "\x00origin"


@dataclass(frozen=True, slots=True)
class Origin:
    """What a record was read from: ``wire``, the wire objects (one Anthropic message, a run of
    Responses items, or the Anthropic ``system``), of which it is record ``member`` of
    ``members``; ``view``, the record as read (what comes back equal is written as it came)."""

    wire: tuple[Any, ...]
    member: int
    members: int
    view: Message
    kinds: tuple[str, ...] = ()  # Responses: each text part's wire type, in order


@dataclass(frozen=True, slots=True)
class Transcript:
    """A transcript in one format: its messages (or items) and, for Anthropic, its system."""

    format: Format
    messages: list[Any]
    system: Any = None


def check_format(name: object) -> Format:
    """``name`` as a format; InvalidTranscriptError naming the formats otherwise."""
    for known in FORMATS:
        if name == known:
            return known
    raise InvalidTranscriptError(None, f"unknown format {name!r}: one of {', '.join(FORMATS)}")


def read(fmt: Format, messages: object, system: object = None) -> list[Message]:
    """The core's records of a transcript in ``fmt``; InvalidTranscriptError names the first
    problem by its path (``messages[3].content[1]: ...``)."""
    if fmt == CHAT:
        if system is not None:
            raise InvalidTranscriptError(None, f"system is given apart only in {ANTHROPIC}")
        return parse_messages(messages)
    if not isinstance(messages, list):
        raise InvalidTranscriptError(None, f"messages must be a JSON array, got {_kind(messages)}")
    if fmt == ANTHROPIC:
        return _read_anthropic(messages, system)
    if system is not None:
        raise InvalidTranscriptError(None, f"system is given apart only in {ANTHROPIC}")
    return _read_responses(messages)


def write(fmt: Format, msgs: Sequence[Message]) -> Transcript:
    """Records back in ``fmt``: those that came back as read, as they came; the rest built."""
    if fmt == CHAT:
        return Transcript(fmt, to_wire_list(msgs))
    if fmt == ANTHROPIC:
        return _write_anthropic(msgs)
    return Transcript(fmt, _write_responses(msgs))


# ---------------------------------------------------------------------------------------------
# as stored: one row per wire message or item; Anthropic's system, when given, a row of its own
# (``{"system": ...}``) ahead of the messages


def rows_of(transcript: Transcript) -> list[Any]:
    """The rows a transcript is stored as."""
    if transcript.format == ANTHROPIC and transcript.system is not None:
        return [{SYSTEM_ROW: transcript.system}, *transcript.messages]
    return list(transcript.messages)


def transcript_of(fmt: Format, rows: Sequence[Any]) -> Transcript:
    """The transcript stored as ``rows`` (``rows_of`` read back)."""
    if fmt == ANTHROPIC and rows and is_system_row(rows[0]):
        return Transcript(fmt, list(rows[1:]), rows[0][SYSTEM_ROW])
    return Transcript(fmt, list(rows))


def is_system_row(row: object) -> bool:
    return isinstance(row, dict) and len(row) == 1 and SYSTEM_ROW in row


def read_rows(fmt: Format, rows: Sequence[Any]) -> list[Message]:
    """The core's records of a stored transcript."""
    if fmt == CHAT:
        return parse_messages(list(rows))
    transcript = transcript_of(fmt, rows)
    return read(fmt, transcript.messages, transcript.system)


def write_rows(fmt: Format, msgs: Sequence[Message]) -> list[Any]:
    """Records as the rows they are stored as."""
    return rows_of(write(fmt, msgs))


def row_records(fmt: Format, row: object) -> list[Message]:
    """The records one stored row reads as, alone (what its token count is counted on)."""
    if fmt == CHAT:
        return parse_messages([row])
    if is_system_row(row):
        return read(fmt, [], cast(dict[str, Any], row)[SYSTEM_ROW])
    return read(fmt, [row])


def row_role(fmt: Format, row: Mapping[str, Any]) -> Role:
    """The role a stored row is filed under: its first record's (an Anthropic user turn that
    opens with tool results is the tool's; a Responses call is the assistant's)."""
    if fmt == CHAT:
        return cast(Role, row.get("role"))
    records = row_records(fmt, row)
    return records[0].role if records else "user"


def chat_form(fmt: Format, row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A stored row as the OpenAI Chat messages of its records (what the archive's search
    text and tool names are read from, in every format)."""
    if fmt == CHAT:
        return [dict(row)]
    return as_chat(row_records(fmt, row))


def as_chat(records: Sequence[Message]) -> list[dict[str, Any]]:
    """Records as OpenAI Chat messages: their text and images, their calls (not where they
    came from, nor the parts no chat message holds: thinking, reasoning, hosted tools)."""
    out = to_wire_list(records)
    for wire in out:
        wire.pop(ORIGIN, None)
        content = wire.get("content")
        if isinstance(content, list):
            kept = [p for p in content if p.get("type") in _CHAT_PART_TYPES]
            if not kept:
                wire["content"] = ""
            elif len(kept) < len(content):
                wire["content"] = kept
    return out


_CHAT_PART_TYPES = TEXT_PART_TYPES | IMAGE_PART_TYPES


def row_tokens(fmt: Format, rows: Sequence[Any], counter: TokenCounter) -> list[int]:
    """Each stored row's tokens: the sum over the records it reads as alone."""
    return [sum(counter.count_message(m) for m in row_records(fmt, row)) for row in rows]


SYSTEM_ROW: Final = "system"


# ---------------------------------------------------------------------------------------------
# reading


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "a string" if isinstance(value, str) else "a value"


def _problem(index: int | None, path: str, problem: str) -> InvalidTranscriptError:
    return InvalidTranscriptError(index, problem, path=path)


def _blocks(raw: object, index: int | None, path: str) -> list[dict[str, Any]]:
    """A list of typed blocks (or parts), each an object with a string ``type``."""
    if not isinstance(raw, list):
        raise _problem(index, path, f"must be a string or an array of blocks, got {_kind(raw)}")
    for k, block in enumerate(raw):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise _problem(index, f"{path}[{k}]", "a block must be an object with a string type")
    return cast(list[dict[str, Any]], raw)


def _string(block: Mapping[str, Any], key: str, index: int, path: str) -> str:
    value = block.get(key)
    if not isinstance(value, str) or not value:
        raise _problem(index, f"{path}.{key}" if path else key, "must be a non-empty string")
    return value


def _origin(
    wire: tuple[Any, ...], views: list[Message], kinds: Sequence[tuple[str, ...]] = ()
) -> list[Message]:
    """``views`` (the records read from ``wire``), each carrying its origin."""
    out = []
    for k, view in enumerate(views):
        origin = Origin(wire, k, len(views), view, kinds[k] if kinds else ())
        out.append(
            Message(
                view.role,
                view.content,
                view.tool_calls,
                view.tool_call_id,
                view.name,
                MappingProxyType({**view.extra, ORIGIN: origin}),
            )
        )
    return out


def _text_parts(raw: object, index: int | None, path: str) -> Content:
    """Anthropic content: a string, or blocks as parts (``text`` and ``image`` as the core reads
    them; any other block kept as a part it does not read)."""
    if isinstance(raw, str):
        return raw
    blocks = _blocks(raw, index, path)
    for k, block in enumerate(blocks):
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            raise _problem(index, f"{path}[{k}].text", "must be a string")
    return tuple(blocks)


def _read_anthropic(messages: list[Any], system: object) -> list[Message]:
    out: list[Message] = []
    if system is not None:
        check_storable({"system": system}, None)
        prompt = _text_parts(system, None, "system")
        if isinstance(prompt, tuple) and any(p["type"] != "text" for p in prompt):
            raise _problem(None, "system", "must be a string or an array of text blocks")
        out += _origin((system,), [Message("system", prompt)])
    for i, raw in enumerate(messages):
        if not isinstance(raw, dict):
            raise _problem(i, "", f"a message must be an object, got {_kind(raw)}")
        check_storable(raw, i)
        role = raw.get("role")
        if role not in ("user", "assistant"):
            raise _problem(i, "role", f"must be user or assistant, got {role!r}")
        content = raw.get("content")
        if content == [] or content is None:
            raise _problem(i, "content", "must be a string or a non-empty array of blocks")
        views = (
            _anthropic_user(content, i) if role == "user" else [_anthropic_assistant(content, i)]
        )
        out += _origin((raw,), views)
    return out


def _anthropic_user(content: object, index: int) -> list[Message]:
    if isinstance(content, str):
        return [Message("user", content)]
    blocks = _blocks(content, index, "content")
    views: list[Message] = []
    rest: list[dict[str, Any]] = []
    for k, block in enumerate(blocks):
        path = f"content[{k}]"
        if block["type"] != "tool_result":
            rest.append(block)
            continue
        if rest:
            raise _problem(index, path, "a tool_result block must come before the other blocks")
        call_id = _string(block, "tool_use_id", index, path)
        result = block.get("content", "")
        body: Content = "" if result is None else _text_parts(result, index, f"{path}.content")
        flags = {"is_error": True} if block.get("is_error") is True else {}
        views.append(Message("tool", body, (), call_id, None, MappingProxyType(flags)))
    if rest:
        views.append(Message("user", _text_parts(rest, index, "content")))
    return views


def _anthropic_assistant(content: object, index: int) -> Message:
    if isinstance(content, str):
        return Message("assistant", content)
    blocks = _blocks(content, index, "content")
    calls: list[ToolCall] = []
    parts: list[dict[str, Any]] = []
    for k, block in enumerate(blocks):
        if block["type"] != "tool_use":
            parts.append(block)
            continue
        path = f"content[{k}]"
        call_id = _string(block, "id", index, path)
        name = _string(block, "name", index, path)
        args = block.get("input", {})
        if not isinstance(args, dict):
            raise _problem(index, f"{path}.input", f"must be an object, got {_kind(args)}")
        calls.append(ToolCall(call_id, name, json.dumps(args, ensure_ascii=False)))
    body = _text_parts(parts, index, "content") if parts else None
    return Message("assistant", body, tuple(calls))


# Responses items by the side of the conversation they are on. An item of a type not named
# here (a future one) is the assistant's, read as a part of no text.
_USER_ROLES = {"user": "user", "system": "system", "developer": "system"}
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_CALLS = frozenset({"function_call", "custom_tool_call"})
# Items of the user's side that are no message and answer no call: kept as they are.
_OPAQUE_OUTPUTS = frozenset({"mcp_approval_response", "item_reference"})
_TEXT_PART_KINDS = frozenset({"input_text", "output_text", "text"})


def _responses_parts(raw: object, index: int, path: str) -> tuple[Content, tuple[str, ...]]:
    """A Responses content: a string, or parts (text parts as the core's, each one's wire type
    remembered; images as they are; the rest kept, unread)."""
    if isinstance(raw, str):
        return raw, ()
    parts = _blocks(raw, index, path)
    out: list[Part] = []
    kinds: list[str] = []
    for k, part in enumerate(parts):
        kind = part["type"]
        if kind in _TEXT_PART_KINDS:
            text = part.get("text")
            if not isinstance(text, str):
                raise _problem(index, f"{path}[{k}].text", "must be a string")
            out.append({"type": "text", "text": text})
            kinds.append(kind)
        else:
            out.append(part)
    return tuple(out), tuple(kinds)


def _read_responses(items: list[Any]) -> list[Message]:
    out: list[Message] = []
    run: list[dict[str, Any]] = []  # the assistant's items being gathered
    start = 0

    def close_run() -> None:
        if run:
            view, kinds = _responses_assistant(run, start)
            out.extend(_origin(tuple(run), [view], [kinds]))
            run.clear()

    for i, raw in enumerate(items):
        if not isinstance(raw, dict):
            raise _problem(i, "", f"an item must be an object, got {_kind(raw)}")
        check_storable(raw, i)
        kind = raw.get("type", "message" if "role" in raw else None)
        if not isinstance(kind, str):
            raise _problem(i, "type", "an item needs a string type (or a role, for a message)")
        role = raw.get("role")
        if kind == "message" and role != "assistant":
            if not isinstance(role, str) or role not in _USER_ROLES:
                raise _problem(i, "role", f"must be user, system, developer or assistant: {role!r}")
            close_run()
            content, kinds = _responses_parts(raw.get("content"), i, "content")
            out += _origin((raw,), [Message(cast(Role, _USER_ROLES[role]), content)], [kinds])
        elif kind in _OUTPUTS:
            close_run()
            call_id = _string(raw, "call_id", i, "")
            content, kinds = _responses_parts(raw.get("output", ""), i, "output")
            out += _origin((raw,), [Message("tool", content, (), call_id)], [kinds])
        elif kind.endswith("_output") and isinstance(raw.get("call_id"), str) and raw["call_id"]:
            close_run()  # a built-in tool's output: the tool message of its call, unread
            out += _origin((raw,), [Message("tool", (raw,), (), raw["call_id"])])
        elif kind in _OPAQUE_OUTPUTS:
            close_run()
            out += _origin((raw,), [Message("user", (raw,))])
        else:
            if not run:
                start = i
            run.append(raw)
    close_run()
    return out


def _responses_assistant(
    run: Sequence[dict[str, Any]], start: int
) -> tuple[Message, tuple[str, ...]]:
    parts: list[Part] = []
    kinds: list[str] = []
    calls: list[ToolCall] = []
    for k, item in enumerate(run):
        i = start + k
        kind = item.get("type", "message")
        if kind == "message":
            read, own = _responses_parts(item.get("content"), i, "content")
            if isinstance(read, str):
                parts.append({"type": "text", "text": read})
                kinds.append("output_text")
            elif read:
                parts.extend(read)
                kinds.extend(own)
        elif kind in _CALLS:
            call_id = _string(item, "call_id", i, "")
            name = _string(item, "name", i, "")
            key = "arguments" if kind == "function_call" else "input"
            args = item.get(key)
            if not isinstance(args, str):
                raise _problem(i, key, "must be a string")
            calls.append(ToolCall(call_id, name, args))
        elif isinstance(item.get("call_id"), str) and item["call_id"]:
            # A built-in tool's call (computer, shell, patch): a call the core keeps paired
            # with its output, of no arguments it reads; written back as it came.
            calls.append(ToolCall(item["call_id"], kind, ""))
        else:
            parts.append(item)  # reasoning, compaction, a hosted tool's call: not read
    content: Content = tuple(parts) if parts else None
    return Message("assistant", content, tuple(calls)), tuple(kinds)


# ---------------------------------------------------------------------------------------------
# writing


def origin_of(msg: Message) -> Origin | None:
    origin = msg.extra.get(ORIGIN)
    return origin if isinstance(origin, Origin) else None


def _as_read(msgs: Sequence[Message], i: int) -> Origin | None:
    """The origin of ``msgs[i]`` when it and the records read with it come back as they were
    read, in order, starting at ``i``: then the wire objects are written as they came."""
    origin = origin_of(msgs[i])
    if origin is None or origin.member != 0 or i + origin.members > len(msgs):
        return None
    for k in range(origin.members):
        other = origin_of(msgs[i + k])
        if other is None or other.wire is not origin.wire or other.member != k:
            return None
        if msgs[i + k] != other.view:
            return None
    return origin


def _write_anthropic(msgs: Sequence[Message]) -> Transcript:
    system: Any = None
    turns: list[dict[str, Any]] = []
    verbatim: list[bool] = []  # each turn: written as it came
    i = 0
    while i < len(msgs):
        msg = msgs[i]
        origin = _as_read(msgs, i)
        if msg.role == "system":
            value: Any = origin.wire[0] if origin is not None else _anthropic_content(msg.content)
            system = value if system is None else _join_system(system, value)
            i += 1
            continue
        if origin is not None:
            _append_turn(turns, verbatim, origin.wire[0], as_it_came=True)
            i += origin.members
            continue
        if not turns and msg.role == "assistant" and not msg.tool_calls:
            # The first turn is the user's (the API refuses any other): text of ours placed
            # after the system prompt (a summary) opens the user's turn instead, framed as a
            # summary in the user's turn is.
            msg = Message("user", as_user_summary(msg.text()))
        _append_turn(turns, verbatim, _anthropic_turn(msg), as_it_came=False)
        i += 1
    return Transcript(ANTHROPIC, turns, system)


def _anthropic_content(content: Content) -> Any:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return [dict(p) for p in content]


def _join_system(first: Any, more: Any) -> Any:
    if isinstance(first, str) and isinstance(more, str):
        return f"{first}\n\n{more}"
    return _block_list(first) + _block_list(more)


def _anthropic_turn(msg: Message) -> dict[str, Any]:
    """One record as an Anthropic turn, built from what it holds now (and the fields of the
    block it was read from)."""
    origin = origin_of(msg)
    if msg.role == "tool":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": msg.tool_call_id}
        if origin is not None:  # the block it was read from: is_error, cache_control, ...
            source = _tool_result_block(origin, msg.tool_call_id)
            if source is not None:
                block = dict(source)
        block["content"] = _anthropic_content(msg.content)
        return {"role": "user", "content": [block]}
    base = dict(origin.wire[0]) if origin is not None and isinstance(origin.wire[0], dict) else {}
    if msg.role == "user":
        base.update(role="user", content=_anthropic_content(msg.content))
        return base
    content: list[dict[str, Any]] = []
    body = msg.content
    if isinstance(body, str):
        if body:
            content.append({"type": "text", "text": body})
    elif body is not None:
        content += [dict(p) for p in body]
    sources = _tool_use_blocks(origin)
    for call in msg.tool_calls:
        use = dict(sources.get(call.id, {"type": "tool_use", "id": call.id}))
        use.update(name=call.name, input=_input_of(call.arguments))
        content.append(use)
    if not content:
        content.append({"type": "text", "text": ""})
    base.update(role="assistant", content=content)
    return base


def _input_of(arguments: str) -> Any:
    try:
        value = json.loads(arguments)
    except ValueError:
        return {"input": arguments}
    return value if isinstance(value, dict) else {"input": value}


def _tool_result_block(origin: Origin, call_id: str | None) -> Mapping[str, Any] | None:
    wire = origin.wire[0]
    content = wire.get("content") if isinstance(wire, dict) else None
    for block in content if isinstance(content, list) else ():
        if block.get("type") == "tool_result" and block.get("tool_use_id") == call_id:
            return cast(Mapping[str, Any], block)
    return None


def _tool_use_blocks(origin: Origin | None) -> dict[str, Mapping[str, Any]]:
    if origin is None or not isinstance(origin.wire[0], dict):
        return {}
    content = origin.wire[0].get("content")
    return {
        block["id"]: block
        for block in (content if isinstance(content, list) else ())
        if block.get("type") == "tool_use" and isinstance(block.get("id"), str)
    }


def _append_turn(
    turns: list[dict[str, Any]],
    verbatim: list[bool],
    turn: dict[str, Any],
    *,
    as_it_came: bool,
) -> None:
    """Append a turn. A turn built here of the same role as the one before joins it
    (Anthropic's turns alternate), tool results ahead of the other blocks; two turns that came
    so stay as they came."""
    if not turns or turns[-1].get("role") != turn.get("role") or (as_it_came and verbatim[-1]):
        turns.append(turn)
        verbatim.append(as_it_came)
        return
    last = turns[-1]
    mine, theirs = _block_list(last.get("content")), _block_list(turn.get("content"))
    results = [b for b in mine + theirs if b.get("type") == "tool_result"]
    others = [b for b in mine + theirs if b.get("type") != "tool_result"]
    base = turn if as_it_came else last  # the fields of the one that came (there is one, or none)
    turns[-1] = {**base, "content": results + others}
    verbatim[-1] = False


def _block_list(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content or [])


def _write_responses(msgs: Sequence[Message]) -> list[Any]:
    items: list[Any] = []
    i = 0
    while i < len(msgs):
        origin = _as_read(msgs, i)
        if origin is not None:
            items += origin.wire
            i += origin.members
            continue
        items += _responses_items(msgs[i])
        i += 1
    return items


def _responses_items(msg: Message) -> list[dict[str, Any]]:
    """One record as Responses items, built from what it holds now (and the fields of the
    items it was read from)."""
    origin = origin_of(msg)
    source = origin.wire if origin is not None else ()
    kinds = list(origin.kinds) if origin is not None else []
    if msg.role != "assistant" and source and msg.content == (source[0],):
        return [source[0]]  # an item read whole, unread: a built-in tool's output, a reference
    if msg.role == "tool":
        base = dict(source[0]) if source else {"type": "function_call_output"}
        base.pop("id", None)
        base.update(call_id=msg.tool_call_id, output=_responses_content(msg.content, kinds))
        return [base]
    if msg.role in ("system", "user"):
        base = dict(source[0]) if source else {"type": "message", "role": msg.role}
        base.pop("id", None)
        base["content"] = _responses_content(msg.content, kinds)
        return [base]
    out: list[dict[str, Any]] = []
    texts: list[Part] = []
    template = next((s for s in source if s.get("type", "message") == "message"), None)
    body = msg.content
    for part in ({"type": "text", "text": body},) if isinstance(body, str) else (body or ()):
        if part.get("type") == "text":
            texts.append(part)
            continue
        if texts:
            out.append(_assistant_message(template, texts, kinds))
            texts = []
        out.append(dict(part))
    if texts:
        out.append(_assistant_message(template, texts, kinds))
    calls = {s.get("call_id"): s for s in source if isinstance(s.get("call_id"), str)}
    for call in msg.tool_calls:
        item = dict(calls.get(call.id, {"type": "function_call"}))
        kind = item.get("type")
        if kind in _CALLS:
            item.update(call_id=call.id, name=call.name)
            item["input" if kind == "custom_tool_call" else "arguments"] = call.arguments
        out.append(item)  # a built-in tool's call as it came
    return out


def _assistant_message(
    template: Mapping[str, Any] | None, texts: Sequence[Part], kinds: list[str]
) -> dict[str, Any]:
    """What the assistant said, as an input message of its own (rewritten text is no output
    item of the API's: no id, no status; its content a string, as input messages take it)."""
    item: dict[str, Any] = {"type": "message", "role": "assistant"}
    for key, value in (template or {}).items():
        if key not in ("id", "status", "content", "type", "role"):
            item[key] = value
    del kinds[: len(texts)]
    item["content"] = "\n\n".join(str(p.get("text", "")) for p in texts)
    return item


def _text_part(text: str, kinds: list[str], default: str) -> dict[str, Any]:
    kind = kinds.pop(0) if kinds else default
    if kind == "output_text":
        return {"type": kind, "text": text, "annotations": []}
    return {"type": kind, "text": text}


def _responses_content(content: Content, kinds: list[str]) -> Any:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return [
        _text_part(str(p.get("text", "")), kinds, "input_text")
        if p.get("type") == "text"
        else dict(p)
        for p in content
    ]
