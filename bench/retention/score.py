"""Is a planted artifact still in a compacted transcript?

Text of a message, for this purpose: its content (a string, or every string inside its parts)
and its tool calls' arguments, both as the raw JSON string and as the string values it decodes
to. A needle is kept when it appears in that text, whitespace runs collapsed to one space on
both sides. An exit code is kept when the original call (same id) is still there with its
result, unchanged or still showing the code, or when some line of the output holds the failing
command (or its first 40 characters) together with the code written as ``exit N``,
``exit code N``, ``exit code: N``, ``exit status N``, ``"exit_code": N`` or
``<returncode>N</returncode>``.

A value update (``current_value``) is kept when its latest value is there; its earlier value is
*given as current* when it is on some line of the output that does not say ``superseded`` (the
word our output puts beside an earlier value it replaced).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

Wire = Mapping[str, Any]
_WS = re.compile(r"\s+")
COMMAND_PREFIX_CHARS = 40


def collapse(text: str) -> str:
    return _WS.sub(" ", text).strip()


def strings_in(value: object) -> Iterator[str]:
    """Every string inside a JSON-like value (dict keys and ``type`` tags left out)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if key != "type":
                yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)


def _decoded(arguments: str) -> list[str]:
    try:
        value = json.loads(arguments)
    except (ValueError, TypeError):
        return []
    return list(strings_in(value))


def message_strings(msg: Wire) -> list[str]:
    """The texts of one message that a needle is looked for in (uncollapsed)."""
    out = list(strings_in(msg.get("content")))
    for call in msg.get("tool_calls") or ():
        if not isinstance(call, Mapping):
            continue
        function = call.get("function")
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        if isinstance(arguments, str):
            out.append(arguments)
            out.extend(_decoded(arguments))
        elif arguments is not None:
            out.extend(strings_in(arguments))
    return out


def message_text(msg: Wire) -> str:
    return "\n".join(collapse(s) for s in message_strings(msg))


def transcript_text(msgs: Sequence[Wire]) -> str:
    return "\n".join(message_text(m) for m in msgs)


def contains(text: str, needle: str) -> bool:
    """``text`` already collapsed (as ``transcript_text`` returns it)."""
    wanted = collapse(needle)
    return bool(wanted) and wanted in text


def result_digest(text: str) -> str:
    """What the truth stores of an original tool result (to tell an unchanged one)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def exit_code_pattern(code: int) -> re.Pattern[str]:
    n = re.escape(str(code))
    return re.compile(
        rf"(?:\bexit(?:\s+code|\s+status)?\s*:?\s*{n}(?!\d)"
        rf'|"exit_code"\s*:\s*{n}(?!\d)'
        rf"|<returncode>{n}</returncode>)",
        re.IGNORECASE,
    )


def _result_of(msgs: Sequence[Wire], call_id: str) -> str | None:
    """The text of ``call_id``'s result, when the call and its result are both still there."""
    called = any(
        isinstance(c, Mapping) and str(c.get("id")) == call_id
        for m in msgs
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or ()
    )
    if not called:
        return None
    for m in msgs:
        if m.get("role") == "tool" and str(m.get("tool_call_id")) == call_id:
            return "\n".join(strings_in(m.get("content")))
    return None


def exit_code_kept(artifact: Mapping[str, Any], msgs: Sequence[Wire]) -> bool:
    related = artifact["related"]
    code = int(related["exit_code"])
    pattern = exit_code_pattern(code)
    call_id = related.get("call_id")
    if call_id:
        result = _result_of(msgs, str(call_id))
        if result is not None and (
            result_digest(result) == related.get("result_digest") or pattern.search(result)
        ):
            return True
    command = collapse(str(related["command"]))
    prefixes = {command, command[:COMMAND_PREFIX_CHARS]}
    for msg in msgs:
        for text in message_strings(msg):
            for line in text.splitlines():
                flat = collapse(line)
                if pattern.search(flat) and any(p in flat for p in prefixes):
                    return True
    return False


def kept(artifact: Mapping[str, Any], msgs: Sequence[Wire], *, text: str | None = None) -> bool:
    """Whether ``artifact`` (a truth entry) survives in ``msgs``; ``text`` is
    ``transcript_text(msgs)`` when the caller has it already."""
    if artifact["kind"] == "exit_code":
        return exit_code_kept(artifact, msgs)
    return contains(transcript_text(msgs) if text is None else text, str(artifact["needle"]))


def reached_prompt(artifact: Mapping[str, Any], prompts: Sequence[str]) -> bool:
    """Whether the needle was in the text some summary call was handed."""
    return any(contains(collapse(p), str(artifact["needle"])) for p in prompts)


SUPERSEDED_WORD = "superseded"


def stale_as_current(artifact: Mapping[str, Any], msgs: Sequence[Wire]) -> bool | None:
    """Whether an artifact's superseded value is still given as current in ``msgs``: on a line
    (whitespace collapsed, any case) without the word "superseded". None when it has none."""
    old = artifact.get("related", {}).get("superseded")
    if not old:
        return None
    wanted = [collapse(v).casefold() for v in old]
    for msg in msgs:
        for text in message_strings(msg):
            for line in text.splitlines():
                flat = collapse(line).casefold()
                if SUPERSEDED_WORD not in flat and any(w in flat for w in wanted):
                    return True
    return False
