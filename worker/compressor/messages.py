"""Typed chat messages: parsing and validation of the OpenAI wire format, and back.

A parsed ``Message`` keeps every key it did not model in ``extra``, so a message that passes
through the compressor untouched serializes back to the same JSON object it came from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, cast

from worker.compressor.errors import InvalidTranscriptError
from worker.compressor.jsonvalue import LONE_SURROGATE

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
Part: TypeAlias = Mapping[str, Any]
Content: TypeAlias = str | tuple[Part, ...] | None

ROLES: frozenset[str] = frozenset({"system", "user", "assistant", "tool"})
TEXT_PART_TYPES: frozenset[str] = frozenset({"text"})
IMAGE_PART_TYPES: frozenset[str] = frozenset({"image_url", "input_image", "image"})
_MODELLED_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})
# A message is a few levels deep (parts, tool calls); a provider's extra fields may add some.
# Far deeper is refused: it would stop every recursive reader (JSON encoders included) short.
MAX_NESTING = 64
_EMPTY: Mapping[str, Any] = MappingProxyType({})


# Both classes are frozen, but their constructors set the slots directly: the generated
# frozen __init__ goes through object.__setattr__ for each field (~2 µs a message), and parsing
# a long transcript builds one per message.


@dataclass(frozen=True, slots=True, init=False)
class ToolCall:
    id: str
    name: str
    arguments: str  # the provider's JSON string, kept as a string
    extra: Mapping[str, Any] = field(
        default_factory=lambda: _EMPTY, compare=False
    )  # e.g. "type": "function"

    def __init__(
        self, id: str, name: str, arguments: str, extra: Mapping[str, Any] = _EMPTY
    ) -> None:
        _set_call_id(self, id)
        _set_call_name(self, name)
        _set_call_arguments(self, arguments)
        _set_call_extra(self, extra)


@dataclass(frozen=True, slots=True, init=False)
class Message:
    role: Role
    content: Content
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, compare=False)

    def __init__(
        self,
        role: Role,
        content: Content,
        tool_calls: tuple[ToolCall, ...] = (),
        tool_call_id: str | None = None,
        name: str | None = None,
        extra: Mapping[str, Any] = _EMPTY,
    ) -> None:
        _set_role(self, role)
        _set_content(self, content)
        _set_tool_calls(self, tool_calls)
        _set_tool_call_id(self, tool_call_id)
        _set_name(self, name)
        _set_extra(self, extra)

    def text(self) -> str:
        """The message's text: a string content, or its text parts joined by newlines."""
        return content_text(self.content)

    def with_content(self, content: Content) -> Message:
        return Message(
            self.role, content, self.tool_calls, self.tool_call_id, self.name, self.extra
        )


def slot_setter(cls: type, name: str) -> Callable[[object, object], None]:
    setter: Callable[[object, object], None] = cls.__dict__[name].__set__
    return setter


_set_call_id, _set_call_name, _set_call_arguments, _set_call_extra = (
    slot_setter(ToolCall, n) for n in ("id", "name", "arguments", "extra")
)
_set_role, _set_content, _set_tool_calls, _set_tool_call_id, _set_name, _set_extra = (
    slot_setter(Message, n)
    for n in ("role", "content", "tool_calls", "tool_call_id", "name", "extra")
)


def content_text(content: Content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in content if p.get("type") in TEXT_PART_TYPES)


def image_count(content: Content) -> int:
    if content is None or isinstance(content, str):
        return 0
    return sum(1 for p in content if p.get("type") in IMAGE_PART_TYPES)


def system(text: str) -> Message:
    return Message(role="system", content=text)


def user(text: str) -> Message:
    return Message(role="user", content=text)


def assistant(text: str | None, tool_calls: Iterable[ToolCall] = ()) -> Message:
    return Message(role="assistant", content=text, tool_calls=tuple(tool_calls))


def tool_result(call_id: str, text: str, name: str | None = None) -> Message:
    return Message(role="tool", content=text, tool_call_id=call_id, name=name)


# ---------------------------------------------------------------------------------------------
# wire format -> Message


def parse_messages(raw: object) -> list[Message]:
    """Parse a JSON list of OpenAI-format messages; raise InvalidTranscriptError naming the index."""
    if not isinstance(raw, list):
        raise InvalidTranscriptError(None, f"messages must be a JSON array, got {_kind(raw)}")
    out = []
    for i, item in enumerate(raw):
        msg = _parse_common(item) if type(item) is dict else None
        out.append(_parse_any(item, i) if msg is None else msg)
    return out


def parse_message(raw: object, *, index: int | None = None) -> Message:
    """Parse one wire message."""
    if type(raw) is dict:
        msg = _parse_common(raw)
        if msg is not None:
            return msg
    return _parse_any(raw, index)


def _parse_common(raw: dict[str, Any]) -> Message | None:
    """The shapes nearly every message has, parsed directly; None for anything else.

    A text message (role and string content only), a tool result (plus ``tool_call_id`` and
    perhaps ``name``), an assistant message with well-formed tool calls. Anything this does not
    accept, valid or not, goes through ``_parse_any``, which gives the same message or names the
    problem; it must never accept what ``_parse_any`` would reject.
    """
    role, content, size = raw.get("role"), raw.get("content"), len(raw)
    if type(content) is str:
        if not (content.isascii() or _is_text(content)):
            return None
    elif content is not None:
        return None
    if role == "tool":
        call_id, name = raw.get("tool_call_id"), raw.get("name")
        if (
            content is None
            or type(call_id) is not str
            or not call_id
            or not (call_id.isascii() or _is_text(call_id))
            or (
                name is not None
                and (type(name) is not str or not (name.isascii() or _is_text(name)))
            )
            or size != 3 + ("name" in raw)
        ):
            return None
        return Message("tool", content, (), call_id, name)
    if role not in ("user", "assistant", "system"):
        return None
    if size == 2 and content is not None:
        return Message(role, content)
    if role != "assistant" or size != 3 or "content" not in raw or "tool_calls" not in raw:
        return None
    calls = _parse_common_calls(raw["tool_calls"])
    if not calls:
        return None
    return Message("assistant", content, calls)


def _parse_common_calls(raw: object) -> tuple[ToolCall, ...] | None:
    """``[{"id", "type", "function": {"name", "arguments"}}, ...]`` with distinct ids, or None."""
    if type(raw) is not list:
        return None
    calls = []
    for item in raw:
        if type(item) is not dict or len(item) != 3 or "type" not in item:
            return None
        call_id, function, kind = item.get("id"), item.get("function"), item["type"]
        if type(call_id) is not str or not call_id or type(function) is not dict:
            return None
        name, arguments = function.get("name"), function.get("arguments")
        if len(function) != 2 or type(name) is not str or not name or type(arguments) is not str:
            return None
        if not (call_id.isascii() and name.isascii() and arguments.isascii()) and not (
            _is_text(call_id) and _is_text(name) and _is_text(arguments)
        ):
            return None
        if type(kind) is str and not (kind.isascii() or _is_text(kind)):
            return None
        calls.append(ToolCall(call_id, name, arguments, {"type": kind}))
    if len(calls) > 1 and len({call.id for call in calls}) != len(calls):
        return None
    return tuple(calls)


def _is_text(value: str) -> bool:
    """No lone surrogate in ``value`` (an ASCII string is answered without a scan).

    A lone UTF-16 surrogate (a JSON escape such as \\ud800 without its other half) is not a
    character: no UTF-8 text, tokenizer, database or provider takes it, so a message holding
    one is refused at the door instead of failing later.
    """
    if value.isascii():
        return True
    try:
        value.encode("utf-8")  # in C, several times faster than a regex search
    except UnicodeEncodeError:
        return False
    return True


def _parse_any(raw: object, index: int | None) -> Message:
    """Parse one wire message of any shape, or name what is wrong with it."""
    if not isinstance(raw, Mapping):
        raise InvalidTranscriptError(index, f"a message must be a JSON object, got {_kind(raw)}")
    check_storable(raw, index)
    role = raw.get("role")
    if not isinstance(role, str) or role not in ROLES:  # a list or object is unhashable
        raise InvalidTranscriptError(
            index, f"role must be one of system, user, assistant, tool; got {role!r}"
        )
    content = _parse_content(raw.get("content"), index)
    tool_calls = _parse_tool_calls(raw.get("tool_calls"), role, index)
    tool_call_id = raw.get("tool_call_id")
    if role == "tool":
        if not isinstance(tool_call_id, str) or not tool_call_id:
            raise InvalidTranscriptError(index, "a tool message needs a non-empty tool_call_id")
    elif tool_call_id is not None:
        raise InvalidTranscriptError(
            index, f"tool_call_id is only allowed on tool messages, not {role}"
        )
    if content is None and role != "assistant":
        raise InvalidTranscriptError(index, f"a {role} message needs content (null is not allowed)")
    if content is None and not tool_calls:
        raise InvalidTranscriptError(index, "an assistant message needs content or tool_calls")
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        raise InvalidTranscriptError(index, f"name must be a string, got {_kind(name)}")
    extra = {k: v for k, v in raw.items() if k not in _MODELLED_KEYS}
    return Message(
        role=cast(Role, role),
        content=content,
        tool_calls=tool_calls,
        tool_call_id=tool_call_id,
        name=name,
        extra=MappingProxyType(extra) if extra else _EMPTY,
    )


def check_storable(raw: Mapping[Any, Any], index: int | None) -> None:
    """Refuse a wire message (of any format) nested past ``MAX_NESTING`` levels, or holding a
    string or key with a lone surrogate (no database stores one), naming where."""
    too_deep, lone_surrogate = _read_through(raw)
    if too_deep:
        raise InvalidTranscriptError(
            index, f"a message may nest objects and arrays at most {MAX_NESTING} levels deep"
        )
    if lone_surrogate:
        _name_lone_surrogate(raw, index)


def _read_through(raw: Mapping[Any, Any]) -> tuple[bool, bool]:
    """(nested past ``MAX_NESTING``, a string or key holding a lone surrogate), in one walk.

    Breadth first, level by level, without recursion: the answer never depends on the caller's
    stack, and a message nested thousands deep is read only ``MAX_NESTING`` levels down.
    Strings are read where they sit (an ASCII one is answered without a scan).
    """
    level: list[Any] = [raw]
    lone = False
    items: Iterable[Any]
    for _ in range(MAX_NESTING):
        below: list[Any] = []
        for container in level:
            if type(container) is list:
                items = container
            else:
                for key in container:
                    if type(key) is str and not key.isascii() and not _is_text(key):
                        lone = True
                items = container.values()
            for item in items:
                kind = type(item)
                if kind is str:
                    if not lone and not item.isascii() and not _is_text(item):
                        lone = True
                elif kind is dict or kind is list or isinstance(item, Mapping):
                    below.append(item)
        if not below:
            return False, lone
        level = below
    return True, lone


def _name_lone_surrogate(raw: Mapping[Any, Any], index: int | None) -> None:
    """Raise, naming the first string (or key) in the message that holds a lone surrogate.

    Only for a message known to hold one and to nest at most ``MAX_NESTING`` levels.
    """
    todo: list[tuple[str, object]] = [("", raw)]
    while todo:
        path, value = todo.pop()
        if isinstance(value, str):
            found = None if value.isascii() else LONE_SURROGATE.search(value)
            if found is not None:
                code = ord(found.group())
                raise InvalidTranscriptError(
                    index,
                    f"{path or 'the message'} holds a lone surrogate (U+{code:04X}) at character "
                    f"{found.start()}: that is not Unicode text (a JSON \\u escape of a "
                    "surrogate needs its other half right after it)",
                )
        elif isinstance(value, Mapping):
            for key, item in reversed(list(value.items())):
                where = f"{path}.{key}" if path else str(key)
                todo.append((where, item))
                if isinstance(key, str):
                    todo.append((f"the key {where!r}" if path else f"the key {key!r}", key))
        elif isinstance(value, list):
            for i in range(len(value) - 1, -1, -1):
                todo.append((f"{path}[{i}]", value[i]))


def _parse_content(raw: object, index: int | None) -> Content:
    if raw is None or isinstance(raw, str):
        return raw
    if not isinstance(raw, list):
        raise InvalidTranscriptError(
            index, f"content must be a string, null or a list of parts, got {_kind(raw)}"
        )
    return tuple(_parse_part(part, index, j) for j, part in enumerate(raw))


def _parse_part(raw: object, index: int | None, j: int) -> Part:
    if not isinstance(raw, Mapping):
        raise InvalidTranscriptError(index, f"content[{j}] must be an object, got {_kind(raw)}")
    kind = raw.get("type")
    if isinstance(kind, (list, dict)):  # unhashable: the set lookups below would raise
        raise InvalidTranscriptError(
            index, f"content[{j}].type must be a string, got {_kind(kind)}"
        )
    if kind in TEXT_PART_TYPES:
        if not isinstance(raw.get("text"), str):
            raise InvalidTranscriptError(
                index, f"content[{j}] is a text part without a string 'text'"
            )
    elif kind == "image_url":
        url = raw.get("image_url")
        if isinstance(url, Mapping):
            url = url.get("url")
        if not isinstance(url, str):
            raise InvalidTranscriptError(index, f"content[{j}] image_url part needs image_url.url")
    elif kind == "input_image":
        if not isinstance(raw.get("image_url"), str) and not isinstance(raw.get("file_id"), str):
            raise InvalidTranscriptError(
                index, f"content[{j}] input_image part needs image_url or file_id"
            )
    elif kind == "image":
        if not isinstance(raw.get("source"), Mapping):
            raise InvalidTranscriptError(index, f"content[{j}] image part needs a source object")
    else:
        raise InvalidTranscriptError(
            index,
            f"content[{j}] has unsupported part type {kind!r} "
            "(expected text, image_url, input_image or image)",
        )
    return raw


def _parse_tool_calls(raw: object, role: object, index: int | None) -> tuple[ToolCall, ...]:
    if raw is None:
        return ()
    if role != "assistant":
        raise InvalidTranscriptError(
            index, f"tool_calls are only allowed on assistant messages, not {role}"
        )
    if not isinstance(raw, list):
        raise InvalidTranscriptError(index, f"tool_calls must be a list, got {_kind(raw)}")
    calls = tuple(_parse_tool_call(tc, index, j) for j, tc in enumerate(raw))
    seen: set[str] = set()
    for call in calls:
        if call.id in seen:
            raise InvalidTranscriptError(index, f"tool call id {call.id!r} appears twice")
        seen.add(call.id)
    return calls


def _parse_tool_call(raw: object, index: int | None, j: int) -> ToolCall:
    where = f"tool_calls[{j}]"
    if not isinstance(raw, Mapping):
        raise InvalidTranscriptError(index, f"{where} must be an object, got {_kind(raw)}")
    call_id = raw.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise InvalidTranscriptError(index, f"{where}.id must be a non-empty string")
    function = raw.get("function")
    if not isinstance(function, Mapping):
        raise InvalidTranscriptError(index, f"{where}.function must be an object")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidTranscriptError(index, f"{where}.function.name must be a non-empty string")
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        raise InvalidTranscriptError(
            index, f"{where}.function.arguments must be a JSON string, got {_kind(arguments)}"
        )
    extra = {k: v for k, v in raw.items() if k not in {"id", "function"}}
    fextra = {k: v for k, v in function.items() if k not in {"name", "arguments"}}
    if fextra:
        extra["function"] = fextra
    return ToolCall(id=call_id, name=name, arguments=arguments, extra=extra or _EMPTY)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), type(value).__name__
    )


# ---------------------------------------------------------------------------------------------
# Message -> wire format


def to_wire(msg: Message) -> dict[str, Any]:
    """Serialize back to an OpenAI-format dict (key order: role, content, modelled, extra)."""
    out: dict[str, Any] = {"role": msg.role, "content": _content_to_wire(msg.content)}
    if msg.tool_calls:
        out["tool_calls"] = [_tool_call_to_wire(tc) for tc in msg.tool_calls]
    if msg.tool_call_id is not None:
        out["tool_call_id"] = msg.tool_call_id
    if msg.name is not None:
        out["name"] = msg.name
    for key, value in msg.extra.items():
        out.setdefault(key, value)
    return out


def to_wire_list(msgs: Sequence[Message]) -> list[dict[str, Any]]:
    return [to_wire(m) for m in msgs]


def _content_to_wire(content: Content) -> str | list[dict[str, Any]] | None:
    if content is None or isinstance(content, str):
        return content
    return [dict(p) for p in content]


def _tool_call_to_wire(tc: ToolCall) -> dict[str, Any]:
    extra = dict(tc.extra)
    fextra = extra.pop("function", {})
    out: dict[str, Any] = {"id": tc.id, "type": extra.pop("type", "function")}
    out["function"] = {"name": tc.name, "arguments": tc.arguments, **fextra}
    out.update(extra)
    return out
