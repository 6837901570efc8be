"""Who wrote a user-role message: the person, or the agent around the model.

Agents put messages of their own in the user role: feedback on a tool call they could not run,
a reminder of the output format, a stand-in reply in runs without a person, warnings,
interrupts, their context (docs/tool-formats/agent_user_messages.md has each agent's shapes).
Read as the person's ask, such a message becomes the Active Task and crowds out what the person
said. They are told apart by how they are built, not by their words:

* an envelope: the whole message one tag (``<environment_context>…</environment_context>``),
  or one after a heading line (``# AGENTS.md instructions …``), one bracketed note
  (``[Request interrupted by user]``), or ending on a bracketed note line
  (``…\\n[Error occurred in processing last action]``);
* it talks about the tool use before it: it names one of the session's tools, or an
  identifier (``apply_patch``, ``str_replace_editor``) the assistant's message before it used,
  or quotes what the call before it sent (an argument's name, its command); or it speaks of
  the model's output in the agents' own words for it (``META``: "tool call", "your last
  output", the "finish tool");
* it is a refrain: the same message sent again in a session with tool use (a nudge: a person
  does not type the same paragraph twice).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from worker.compressor import jsonvalue
from worker.compressor.messages import Message

_WHOLE_TAG = re.compile(r"\s*(?:[^\n<]*\n+)?<([A-Za-z][\w-]*)[^>]*>.*</\1>\s*", re.DOTALL)
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)+")
# How agents speak of the model's output when they answer it in the user role (their templates
# are English whatever the person writes).
META = (
    "tool call",
    "tool calls",
    "function call",
    "function calls",
    "your last output",
    "your output",
    "your response",
    "your bash command",
    "your command",
    "finish tool",
)
_BRACKET_NOTE = re.compile(r"\[[^\[\]\n]{3,120}\]")
_QUOTED = re.compile(r"'([^'\n]{3,200})'|\"([^\"\n]{3,200})\"|`([^`\n]{3,200})`")
_MIN_REFRAIN_CHARS = 40  # "ok, go on" twice is a person; a paragraph twice is a template
_MIN_QUOTED = 4  # a quoted word this short matches too much by chance
_FEEDBACK_CHARS = 1_000


def agent_written(
    msg: Message, *, before: Message | None, tools: frozenset[str], refrain: bool
) -> bool:
    """``msg`` (a user-role message) was written by the agent, not by a person. ``before``: the
    assistant message it answers (its tool calls); ``tools``: the names of the tools the
    session's assistant called; ``refrain``: the same text is sent again elsewhere."""
    text = msg.text().strip()
    if not text:
        return False
    if _envelope(text):
        return True
    if tools and refrain and len(text) >= _MIN_REFRAIN_CHARS:
        return True
    # A long message is a person's ask, whatever the agent wrapped around it (an example of
    # its tools, a template with the issue inside).
    return len(text) <= _FEEDBACK_CHARS and _about_tool_use(text, before, tools)


def refrains(msgs: Sequence[Message]) -> set[str]:
    """The user-role texts sent more than once."""
    seen: set[str] = set()
    again: set[str] = set()
    for msg in msgs:
        if msg.role == "user":
            text = msg.text().strip()
            (again if text in seen else seen).add(text)
    return again


def tool_names(msgs: Iterable[Message]) -> frozenset[str]:
    """The names of the tools the assistant called."""
    return frozenset(call.name for m in msgs if m.role == "assistant" for call in m.tool_calls)


def _envelope(text: str) -> bool:
    if text.endswith(">") and "</" in text and _WHOLE_TAG.fullmatch(text):
        return True
    if _BRACKET_NOTE.fullmatch(text):
        return True
    last = text.rsplit("\n", 1)
    return len(last) == 2 and _BRACKET_NOTE.fullmatch(last[1].strip()) is not None


def _about_tool_use(text: str, before: Message | None, tools: frozenset[str]) -> bool:
    """``text`` names a tool of the session or an identifier the message before it used,
    quotes what the call before it sent, or speaks of the model's output as agents do. (With
    no assistant message before it, it answers nothing: it is the person's first ask.)"""
    if before is None:
        return False
    if any(_names(text, name) for name in tools):
        return True
    lowered = text.lower()
    if any(_names_phrase(lowered, phrase) for phrase in META):
        return True
    sent = _sent(before)
    said = before.text()
    for m in _IDENTIFIER.finditer(text):
        word = m.group()
        if len(word) >= _MIN_QUOTED and (_names(said, word) or any(_names(s, word) for s in sent)):
            return True
    for m in _QUOTED.finditer(text):
        quoted = next(g for g in m.groups() if g is not None).strip()
        if len(quoted) >= _MIN_QUOTED and any(quoted in s for s in sent):
            return True
    return False


def _names(text: str, name: str) -> bool:
    """``name`` (a tool's, snake_case or with a dot or dash, so no plain word) stands in
    ``text`` as a word."""
    if len(name) < _MIN_QUOTED or not any(c in name for c in "_.-"):
        return False
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        if (at == 0 or not _word(text[at - 1])) and (end == len(text) or not _word(text[end])):
            return True
        at = text.find(name, end)
    return False


def _names_phrase(lowered: str, phrase: str) -> bool:
    at = lowered.find(phrase)
    while at >= 0:
        end = at + len(phrase)
        if (at == 0 or not _word(lowered[at - 1])) and (
            end == len(lowered) or not _word(lowered[end])
        ):
            return True
        at = lowered.find(phrase, end)
    return False


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _sent(msg: Message) -> list[str]:
    """What the tool calls of ``msg`` sent: their argument names and string values."""
    out: list[str] = []
    for call in msg.tool_calls:
        out.append(call.name)
        try:
            args = jsonvalue.loads(call.arguments)
        except ValueError:
            out.append(call.arguments)
            continue
        if isinstance(args, dict):
            for key, value in args.items():
                out.append(str(key))
                if isinstance(value, str):
                    out.append(value)
                elif isinstance(value, list):  # an argv
                    out += [v for v in value if isinstance(v, str)]
    return out
