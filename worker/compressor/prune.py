"""Deterministic pre-pass over the window about to be summarized: no LLM, linear time.

Tool outputs dominate agent transcripts, so before anything reaches the summarizer we shrink
them: an output repeated later is replaced by a short pointer, a large older output by a one-line
account of the call that produced it, and long string leaves in tool-call arguments are cut while
the arguments stay valid JSON (strict providers reject a call whose arguments do not parse).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from worker.compressor import jsonvalue
from worker.compressor.messages import (
    Message,
    ToolCall,
    answered_calls,
    content_text,
    image_count,
)

_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_EXIT_LINE = re.compile(r"(?im)^\s*(?:exit(?:ed with)?[ _]?(?:code|status)[:= ]*)(-?\d+)\b")
# Where a tool reports its exit code: at the start or at the end, never deep inside the output
# (which there is more likely the program talking about another process). Scanning only these
# ends also keeps the pre-pass linear in messages, not in megabytes of output.
_ENDS_CHARS = 400
_COMMAND_KEYS = ("command", "cmd", "script", "code")
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "target_file", "notebook_path")
_QUERY_KEYS = ("query", "pattern", "regex", "q", "search", "search_term")
_URL_KEYS = ("url", "uri", "href")
_WRITE_WORDS = ("write", "create", "save", "edit", "patch", "replace", "apply", "insert")
_SNIPPET_CHARS = 80
# json.dumps(value, ensure_ascii=False) without building an encoder for every call.
_to_json = json.JSONEncoder(ensure_ascii=False).encode


@dataclass(frozen=True, slots=True)
class PruneResult:
    messages: list[Message]  # the window, pruned
    pruned_tool_outputs: int
    deduplicated_tool_outputs: int
    shrunk_tool_args: int


def prune_window(
    msgs: Sequence[Message],
    start: int,
    end: int,
    *,
    min_chars: int,
    arg_max_chars: int,
) -> PruneResult:
    """Prune messages[start:end]; later messages are only read (to find newer duplicates).

    Nothing is redacted here (the serialized window is, as a whole), so every cut is made with
    ``safe_prefix``: it never keeps part of a secret that the redactor could no longer recognize.
    """
    answered = answered_calls(msgs[start:end])
    newer = _duplicated_outputs(msgs, start, end, min_chars=min_chars)
    parsed = _Parsed()  # a call's arguments are read to shrink them and to describe its result
    out: list[Message] = []
    pruned = deduped = shrunk = 0
    for i in range(start, end):
        msg = msgs[i]
        if msg.role == "tool":
            if i in newer:
                note = f"[duplicate output: same as the later result of call {newer[i]}]"
                out.append(msg.with_content(note))
                deduped += 1
                continue
            if len(content_text(msg.content)) >= min_chars:
                call = answered[i - start]
                args = parsed.mapping(call.arguments) if call else {}
                out.append(msg.with_content(describe_tool_result(msg, call, args=args)))
                pruned += 1
                continue
        if msg.tool_calls:
            slim = _shrink_calls(msg, arg_max_chars, parsed)
            if slim is not msg:
                shrunk += 1
                msg = slim
        out.append(msg)
    return PruneResult(out, pruned, deduped, shrunk)


_INVALID = object()


class _Parsed:
    """Tool-call arguments parsed once each; the values are shared, so nobody may change them."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def value(self, arguments: str) -> Any:
        """The parsed JSON, or ``_INVALID``."""
        if arguments in self._values:
            return self._values[arguments]
        try:
            value = jsonvalue.loads(arguments)
        except ValueError:
            value = _INVALID
        self._values[arguments] = value
        return value

    def mapping(self, arguments: str) -> Mapping[str, Any]:
        """The arguments as a mapping; {} when they are not a JSON object."""
        if not arguments or arguments[0] != "{":
            return {}
        value = self.value(arguments)
        return value if isinstance(value, dict) else {}


def _duplicated_outputs(
    msgs: Sequence[Message], start: int, end: int, *, min_chars: int
) -> dict[int, str]:
    """Window indexes of tool outputs repeated later (keep the newest): index -> newer call id."""
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
# one-line accounts of tool calls


def describe_tool_result(
    msg: Message, call: ToolCall | None, *, args: Mapping[str, Any] | None = None
) -> str:
    """A one-line account of a tool result, e.g. ``[bash] ran `pytest -x` -> exit 1, 212 lines``.

    ``args``: the call's arguments parsed already, if the caller has them.
    """
    name = call.name if call else (msg.name or "tool")
    output = content_text(msg.content)
    images = image_count(msg.content)
    arguments = call.arguments if call else ""
    line = f"[{name}] {describe_call(name, arguments, output, args=args)}"
    return f"{line} (+{images} image{'s' * (images != 1)})" if images else line


def describe_call(
    name: str, arguments: str, output: str, *, args: Mapping[str, Any] | None = None
) -> str:
    """What a call did and how it ended, from its name, arguments and output."""
    if args is None:
        args = parse_json_object(arguments)

    def cut(text: str, limit: int = _SNIPPET_CHARS) -> str:
        return snippet(text, limit)

    command = _first_str(args, _COMMAND_KEYS)
    if command is not None:
        return f"ran `{cut(command)}` -> {_command_outcome(output, cut)}"
    path = _first_str(args, _PATH_KEYS)
    query = _first_str(args, _QUERY_KEYS)
    if query is not None:
        where = f" in {cut(path, 60)}" if path else ""
        return f"searched for '{cut(query, 60)}'{where} -> {_size(output)}"
    if path is not None and any(w in name.lower() for w in _WRITE_WORDS):
        return f"wrote {cut(path, 100)} -> {cut(_first_line(output))}"
    if path is not None:
        return f"read {cut(path, 100)}{_from_line(args)} ({len(output):,} chars)"
    url = _first_str(args, _URL_KEYS)
    if url is not None:
        return f"fetched {cut(url, 100)} ({len(output):,} chars)"
    shown = [f"{k}={cut(str(v), 40)}" for k, v in list(args.items())[:2] if _is_scalar(v)]
    called = f"called with {', '.join(shown)}" if shown else "called"
    return f"{called} -> {_size(output)}"


def parse_json_object(arguments: str) -> Mapping[str, Any]:
    """Tool-call arguments as a mapping; {} when they are not a JSON object."""
    return _Parsed().mapping(arguments)


def snippet(text: str, limit: int = _SNIPPET_CHARS) -> str:
    """One line, at most ``limit`` characters (cut with ``safe_prefix``)."""
    flat = " ".join(text[: limit * 4].split())
    return flat if len(flat) <= limit else safe_prefix(flat, limit - 1) + "…"


def safe_prefix(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters without keeping a fragment of a token.

    A cut inside a word drops that word; a cut inside quotes drops the quoted part. What is kept
    is whole words and whole quoted strings, which the redactor recognizes as well as in the
    full text; a secret's fragment could have slipped past it.
    """
    if len(text) <= limit:
        return text
    end = limit
    if not text[limit].isspace():
        while end and not text[end - 1].isspace():
            end -= 1
    head = text[:end]
    for quote in ('"', "'", "`"):
        if head.count(quote) % 2:
            head = head[: head.rfind(quote)]
    return head


def exit_code(output: str) -> int | None:
    head, tail = output[:_ENDS_CHARS], output[-_ENDS_CHARS:]
    match = _RETURNCODE.search(head) or _exit_line(tail) or _exit_line(head)
    return int(match.group(1)) if match else None


def _exit_line(text: str) -> re.Match[str] | None:
    # Every match holds "exit", and case-insensitively only "x" and "X" match its "x": a text
    # with neither (most outputs) is answered by two memchr scans instead of a regex that
    # tries a match at every position (it starts with a multi-line ``^``).
    return _EXIT_LINE.search(text) if "x" in text or "X" in text else None


def command_body(output: str) -> str:
    """The output of a command without the ``<returncode>…<output>`` envelope, if it has one."""
    start = output.find("<output>", 0, _ENDS_CHARS)
    if start < 0:
        return output
    end = output.rfind("</output>", start)
    return output[start + len("<output>") : end if end >= 0 else len(output)].strip("\n")


def _command_outcome(output: str, cut: Callable[[str], str]) -> str:
    code = exit_code(output)
    body = command_body(output)
    lines = _line_count(body)
    if code is None:
        return f"{lines} line{'s' * (lines != 1)}"
    outcome = f"exit {code}, {lines} line{'s' * (lines != 1)}"
    last = _last_line(body)
    return f'{outcome}, last: "{cut(last)}"' if code != 0 and last else outcome


def _first_str(args: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _from_line(args: Mapping[str, Any]) -> str:
    for key in ("offset", "start_line", "line", "view_range"):
        value = args.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return f" from line {value}"
        if isinstance(value, list) and value and isinstance(value[0], int):
            return f" from line {value[0]}"
    return ""


def _is_scalar(value: object) -> bool:
    return isinstance(value, str | int | float | bool)


def _size(output: str) -> str:
    lines = _line_count(output)
    return f"{lines} line{'s' * (lines != 1)}, {len(output):,} chars"


def _line_count(text: str) -> int:
    stripped = text.strip("\n")
    return stripped.count("\n") + 1 if stripped else 0


def _first_line(text: str) -> str:
    stripped = text.lstrip()
    if not stripped:
        return "(no output)"
    end = stripped.find("\n")
    return stripped if end < 0 else stripped[:end]


def _last_line(text: str) -> str:
    stripped = text.rstrip()
    return stripped[stripped.rfind("\n") + 1 :]


# ---------------------------------------------------------------------------------------------
# JSON-safe argument shrinking


def _shrink_calls(msg: Message, max_chars: int, parsed: _Parsed) -> Message:
    calls: list[ToolCall] | None = None  # a copy, made at the first call that changes
    for i, call in enumerate(msg.tool_calls):
        if len(call.arguments) <= max_chars:
            continue  # no string leaf can be longer than the JSON that holds it
        slim = _shrink_call(call, max_chars, parsed)
        if slim is not call:
            calls = calls or list(msg.tool_calls)
            calls[i] = slim
    if calls is None:
        return msg
    return Message(msg.role, msg.content, tuple(calls), msg.tool_call_id, msg.name, msg.extra)


def _shrink_call(call: ToolCall, max_chars: int, parsed: _Parsed) -> ToolCall:
    shrunk = shrink_arguments(call.arguments, max_chars, parsed)
    if shrunk is None:
        return call
    return ToolCall(id=call.id, name=call.name, arguments=shrunk, extra=call.extra)


def shrink_arguments(arguments: str, max_chars: int, parsed: _Parsed | None = None) -> str | None:
    """Cut string leaves longer than ``max_chars``; the result is still valid JSON.

    Returns None when nothing needed cutting (or the arguments are not JSON: they pass through).
    """
    if len(arguments) <= max_chars:
        return None
    value = (parsed or _Parsed()).value(arguments)
    if value is _INVALID:
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
