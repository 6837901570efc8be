"""What of an archived message is searchable, how a query is read, and the snippet of a hit.

Pure functions over the stored wire dicts: the same text goes into SQLite's FTS5 table and
PostgreSQL's trigram index, so both databases answer a query alike.

The searchable text is what a developer would quote back: the text of user, assistant and
system messages, each tool call's name and arguments, and tool output. Arguments and outputs
often arrive as JSON strings, where a path reads ``\\"/app/main.py\\"`` and a traceback is one
line full of ``\\n``; those are decoded first, so ``File "/app/main.py", line 3`` is found as it
was printed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# A tool output past this many characters is searchable up to here only: the index holds a
# copy of what it indexes, and the trigram index several times that.
MAX_INDEXED_CHARS = 200_000
MAX_QUERY_CHARS = 1_000
MAX_QUERY_TERMS = 16
# Terms shorter than this cannot use a trigram index (SQLite FTS5's trigram tokenizer finds
# nothing for them; pg_trgm has no trigram to look up): they only narrow what longer terms
# found, or are matched by a bounded scan.
MIN_INDEXED_TERM_CHARS = 3
SNIPPET_CHARS = 240
HIGHLIGHT_OPEN, HIGHLIGHT_CLOSE = "[[", "]]"
ELLIPSIS = "…"

# A "quoted phrase" (spaces kept), else a run of non-space characters.
_TERM = re.compile(r'"([^"]+)"|(\S+)')
_JSON_START = frozenset("{[")


def searchable_text(message: Mapping[str, Any], *, tool_name: str | None = None) -> str:
    """The message's searchable text (at most ``MAX_INDEXED_CHARS`` characters)."""
    parts: list[str] = []
    name = message.get("name")
    if isinstance(name, str) and name:
        parts.append(name)
    elif tool_name:
        parts.append(tool_name)
    parts.extend(_content_texts(message.get("content"), decode=message.get("role") == "tool"))
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            parts.extend(_call_texts(call))
    return "\n".join(p for p in parts if p)[:MAX_INDEXED_CHARS]


def text_digest(role: str, tool_name: str | None, body: str) -> str:
    """Names a searchable text: archived copies with the same digest are indexed once."""
    payload = json.dumps([role, tool_name, body], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def tool_names_by_call_id(messages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """call id -> function name, over the assistant tool calls among ``messages``."""
    out: dict[str, str] = {}
    for message in messages:
        calls = message.get("tool_calls")
        if not isinstance(calls, list):
            continue
        for call in calls:
            if not isinstance(call, Mapping):
                continue
            function = call.get("function")
            name = function.get("name") if isinstance(function, Mapping) else None
            if isinstance(call.get("id"), str) and isinstance(name, str):
                out[call["id"]] = name
    return out


def tool_name_of(message: Mapping[str, Any], by_call_id: Mapping[str, str]) -> str | None:
    """The tool a message calls (its first call) or answers (its call id, else its name)."""
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        names = tool_names_by_call_id([message])
        first = calls[0].get("id") if isinstance(calls[0], Mapping) else None
        return names.get(first) if isinstance(first, str) else None
    if message.get("role") != "tool":
        return None
    call_id = message.get("tool_call_id")
    if isinstance(call_id, str) and call_id in by_call_id:
        return by_call_id[call_id]
    name = message.get("name")
    return name if isinstance(name, str) and name else None


def _content_texts(content: object, *, decode: bool) -> Iterator[str]:
    if isinstance(content, str):
        yield _decoded(content) if decode else content
    elif isinstance(content, list):
        for part in content:
            text = part.get("text") if isinstance(part, Mapping) else None
            if isinstance(text, str):
                yield _decoded(text) if decode else text


def _call_texts(call: object) -> Iterator[str]:
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        return
    name, arguments = function.get("name"), function.get("arguments")
    if isinstance(name, str):
        yield name
    if isinstance(arguments, str):
        yield _decoded(arguments)


def _decoded(text: str) -> str:
    """A JSON object or array as its keys and values, one per line; other text as it is."""
    stripped = text.lstrip()
    if not stripped or stripped[0] not in _JSON_START:
        return text
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    return "\n".join(_leaves(value)) if isinstance(value, (dict, list)) else text


def _leaves(value: object, key: str | None = None) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k))
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, key)
    elif value is not None:
        text = value if isinstance(value, str) else json.dumps(value)
        yield f"{key}: {text}" if key is not None else text


# ---------------------------------------------------------------------------------------------
# queries and snippets


@dataclass(frozen=True, slots=True)
class Query:
    """The terms of ``q``: a hit holds every one, case-insensitively, anywhere in its text."""

    terms: tuple[str, ...]

    @property
    def indexed(self) -> tuple[str, ...]:
        """The terms a trigram index can look up."""
        return tuple(t for t in self.terms if len(t) >= MIN_INDEXED_TERM_CHARS)

    @property
    def short(self) -> tuple[str, ...]:
        return tuple(t for t in self.terms if len(t) < MIN_INDEXED_TERM_CHARS)

    def matches(self, text: str) -> bool:
        folded = text.casefold()
        return all(t.casefold() in folded for t in self.terms)


def parse_query(q: str) -> Query:
    """Terms split at spaces; a "quoted phrase" is one term with its spaces. Each term is
    matched as it is written, punctuation included (``foo.py:42``, ``--force``, ``0x1f``)."""
    terms: list[str] = []
    for match in _TERM.finditer(q):
        term = match.group(1) if match.group(1) is not None else match.group(2)
        term = term.strip()
        if term and term.casefold() not in {t.casefold() for t in terms}:
            terms.append(term)
    return Query(tuple(terms[:MAX_QUERY_TERMS]))


def snippet(text: str, query: Query, *, width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``text`` around its first match, every match marked
    ``[[like this]]``; ``…`` where text was cut."""
    spans = sorted(_spans(text, query))
    start = 0
    if spans:
        first = spans[0][0]
        start = max(0, min(first - width // 3, len(text) - width))
    end = min(len(text), start + width)
    out: list[str] = [ELLIPSIS] if start > 0 else []
    at = start
    for s, e in _merged(spans):
        if e <= start or s >= end:
            continue
        s, e = max(s, start), min(e, end)
        out += [text[at:s], HIGHLIGHT_OPEN, text[s:e], HIGHLIGHT_CLOSE]
        at = e
    out.append(text[at:end])
    if end < len(text):
        out.append(ELLIPSIS)
    return "".join(out)


def _spans(text: str, query: Query) -> Iterator[tuple[int, int]]:
    """Where each term occurs; positions index ``text``, so the case fold used must keep
    lengths (``ß`` folds to ``ss``: such text is matched by ``lower()``, or as written)."""
    fold = next((f for f in (str.casefold, str.lower) if len(f(text)) == len(text)), None)
    haystack = fold(text) if fold else text
    for term in query.terms:
        needle = fold(term) if fold else term
        at = haystack.find(needle)
        while needle and at >= 0:
            yield at, at + len(needle)
            at = haystack.find(needle, at + len(needle))


def _merged(spans: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    current: tuple[int, int] | None = None
    for s, e in spans:
        if current is not None and s <= current[1]:
            current = (current[0], max(current[1], e))
            continue
        if current is not None:
            yield current
        current = (s, e)
    if current is not None:
        yield current
