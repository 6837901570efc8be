"""JSON text to a Python value: ``json.loads``'s answer, from a faster decoder where it can.

Tool-call arguments are parsed several times per compaction (to shrink them, to describe a
call, to read the ledger's files and commands) and agents put whole files in them. msgspec's
decoder reads them about three times faster. It takes strict JSON only, so what it refuses goes
to ``json.loads``, which answers those texts as it always did: a value (NaN, Infinity, a number
past the float range, a lone surrogate, escaped or not) or the same ``ValueError``. Where both
accept a text they give equal values (a property test holds them to it).

Nesting deeper than ``MAX_DEPTH`` is a ``ValueError`` too: such a text stays an opaque string
for every caller, instead of a value that a recursive walk (shrinking, redaction) would
overflow the stack on. Both decoders would otherwise stop only at Python's recursion limit, at a
depth that depends on how deep the caller's stack already is.

One difference from ``json.loads``, on purpose: a lone surrogate in a string (an escape such as
``\\ud800`` without its other half, which arguments written by a JavaScript agent can hold) comes
out as U+FFFD. What callers make of a value (one-line descriptions, shrunk arguments, ledger
entries, summaries) must be text that UTF-8, the tokenizer and the database can take.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

_decode = msgspec.json.Decoder().decode
MAX_DEPTH = 100
_TOO_DEEP = f"JSON nested deeper than {MAX_DEPTH} levels"
LONE_SURROGATE = re.compile(f"[{chr(0xD800)}-{chr(0xDFFF)}]")  # no surrogate literal: mypyc


def loads(text: str) -> Any:
    """What ``json.loads(text)`` returns (lone surrogates as U+FFFD), or raises; ``ValueError``
    past ``MAX_DEPTH`` levels."""
    try:
        try:
            value = _decode(text)
            raw = False  # msgspec reads the text as UTF-8, which a raw lone surrogate is not
        except (msgspec.DecodeError, UnicodeEncodeError):  # the latter: a raw lone surrogate
            value = json.loads(text)
            raw = not text.isascii() and LONE_SURROGATE.search(text) is not None
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None
    # Each level takes two characters: a shorter text cannot nest past the limit.
    if len(text) > 2 * MAX_DEPTH and type(value) in _CONTAINERS and deeper_than(value, MAX_DEPTH):
        raise ValueError(_TOO_DEEP)
    # A decoded string can hold a lone surrogate only where the text has an escape or one raw.
    if raw or "\\u" in text:
        return without_lone_surrogates(value)
    return value


_raw_decode = json.JSONDecoder().raw_decode


def loads_prefix(text: str) -> tuple[Any, int]:
    """The JSON value that ``text`` starts with, and where it ends: ``loads`` for a text that
    is one value, else ``json``'s raw decode of its start (a tool that appends a note after
    its JSON answer). The same ``ValueError`` cases as ``loads``."""
    try:
        return loads(text), len(text)
    except ValueError:
        pass
    try:
        value, end = _raw_decode(text)
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None
    if type(value) in _CONTAINERS and deeper_than(value, MAX_DEPTH):
        raise ValueError(_TOO_DEEP)
    if "\\u" in text[:end] or not text.isascii():
        return without_lone_surrogates(value), end
    return value, end


def text_without_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (an ASCII text is not scanned)."""
    return text if text.isascii() else LONE_SURROGATE.sub("\ufffd", text)


def without_lone_surrogates(value: Any) -> Any:
    """``value`` with each lone surrogate in its strings (keys too) replaced by U+FFFD.

    Recursive: callers pass values nested at most ``MAX_DEPTH`` levels.
    """
    if type(value) is str:
        return text_without_lone_surrogates(value)
    if type(value) is list:
        return [without_lone_surrogates(item) for item in value]
    if type(value) is dict:
        return {
            without_lone_surrogates(key): without_lone_surrogates(item)
            for key, item in value.items()
        }
    return value


_CONTAINERS = (dict, list)  # what json and msgspec decode to


def deeper_than(value: dict[Any, Any] | list[Any], limit: int) -> bool:
    """Whether a decoded JSON ``value`` (itself a level) nests objects and arrays more than
    ``limit`` levels deep. Breadth first, without recursion: the answer never depends on the
    caller's stack."""
    level: list[Any] = [value]
    for _ in range(limit):
        level = [
            child
            for item in level
            for child in (item.values() if type(item) is dict else item)
            if type(child) is dict or type(child) is list
        ]
        if not level:
            return False
    return True
