"""URLs and identifiers in text: exact strings a summary must not paraphrase.

Each function takes one text and returns what it found, in order of appearance. They are pure
and deterministic, and they stay cheap on large texts (a few precompiled passes each).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from functools import partial
from itertools import accumulate

# ---------------------------------------------------------------------------------------------
# URLs and identifiers

# A redaction marker may sit inside a URL (https://user:[REDACTED]@host/...).
_URL = re.compile(r"\bhttps?://(?:[^\s'\"<>()\[\]{}\\`|^]|\[REDACTED\])+")
_URL_TRAILING = ".,;:!?*_'\""


def may_hold_urls(text: str) -> bool:
    """False when ``urls`` would find nothing in ``text`` or in any part of it."""
    return "://" in text


def urls(text: str) -> list[str]:
    """The URLs in ``text``, in order."""
    if not may_hold_urls(text):
        return []
    return [m.group(0).rstrip(_URL_TRAILING) for m in _URL.finditer(text)]


# Patterns start with a literal or a character class, and boundaries are checked afterwards:
# a leading look-behind would make the engine try every position of every tool output.
_FULL_SHA = re.compile(r"[0-9a-f]{40}(?![0-9A-Za-z])")
# Short SHAs only where git put them: "commit 3f78685", "[main 3f78685]", "HEAD is now at 3f78685",
# "git show 3f78685", and ranges "3f78685..9fceb02" (not a diff's "index" line: blob ids).
_GIT_CONTEXT_SHA = re.compile(
    r"(?:commit|HEAD is now at|git (?:show|checkout|revert|cherry-pick|reset --hard|rebase|log|diff|switch))"
    r"\s+(?P<sha>[0-9a-f]{7,12})(?![0-9A-Za-z])"
)
_BRANCH_SHA = re.compile(r"\[[\w./-]+ (?P<sha>[0-9a-f]{7,12})\]")  # git commit's "[main 3f78685]"
_SHA_RANGE = re.compile(r"(?P<a>[0-9a-f]{7,12})\.\.\.?(?P<b>[0-9a-f]{7,12})(?![0-9A-Za-z.])")
_HASH_NUMBER = re.compile(r"#(?P<n>\d{1,7})(?![\w#])")
_REPO_BEFORE = re.compile(r"(?<![\w.-])[A-Za-z0-9][\w.-]{0,38}/[\w.-]{1,100}\Z")
_UUID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![0-9A-Za-z-])"
)
_HEX_DIGIT_AND_LETTER = re.compile(r"(?=.*[0-9])(?=.*[a-f])")
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


# Hex runs are rare in prose and code, but the patterns above start with a character class, so
# the engine tries each of them at every hex digit of every text. One byte translation shows
# where runs of hex could be (a hex digit becomes x, A-F becomes X, "." and "-" stay, the rest is
# a space), and each pattern runs only on text that holds the run it needs.
_HEX_SHAPE = bytes(
    ord("x")
    if c in b"0123456789abcdef"
    else ord("X")
    if c in b"ABCDEF"
    else c
    if c in b".-"
    else ord(" ")
    for c in range(256)
)
_FULL_SHA_SHAPE = b"x" * 40
_SHORT_SHA_SHAPE = b"x" * 7
_RANGE_SHAPE = b"x" * 7 + b".."
_UUID_SHAPE = b"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"


_HASH_DIGIT = re.compile(r"#\d")


def may_hold_identifiers(text: str) -> bool:
    """False when ``identifiers`` would find nothing in ``text`` or in any part of it.

    Every identifier pattern needs seven hex digits in a row (a UUID's first group has eight)
    or a ``#`` before a digit.
    """
    if _HASH_DIGIT.search(text):
        return True
    return _SHORT_SHA_SHAPE in text.encode("utf-8", "surrogatepass").translate(_HEX_SHAPE)


def texts_with_identifiers(texts: Sequence[str]) -> set[int]:
    """Indexes of the texts that may hold an identifier (``may_hold_identifiers``), found in
    one look at all of them: a window has thousands of texts and few identifiers."""
    joined = "\n".join(texts)
    found: set[int] = set()
    if "#" in joined:
        starts = list(accumulate((len(t) + 1 for t in texts[:-1]), initial=0))
        found |= _owners(_first_hash_digit(joined), len(joined), starts)
    shape = joined.encode("utf-8", "surrogatepass").translate(_HEX_SHAPE)
    if _SHORT_SHA_SHAPE in shape:
        byte_starts = list(accumulate((_utf8_len(t) + 1 for t in texts[:-1]), initial=0))
        # A substring search, not a pattern: hex letters and digits are most of any text, so
        # a pattern would start a match attempt at nearly every byte.
        found |= _owners(partial(shape.find, _SHORT_SHA_SHAPE), len(shape), byte_starts)
    return found


def _first_hash_digit(text: str) -> Callable[[int], int]:
    def first(pos: int) -> int:
        m = _HASH_DIGIT.search(text, pos)
        return m.start() if m is not None else -1

    return first


def _owners(first: Callable[[int], int], length: int, starts: Sequence[int]) -> set[int]:
    """The texts (by their start in a joined text of ``length``) holding a match; ``first(pos)``:
    where the first match at or after ``pos`` starts, -1 when none. After a match, the rest of
    its text is skipped."""
    owners: set[int] = set()
    pos = 0
    while (at := first(pos)) >= 0:
        i = bisect_right(starts, at) - 1
        owners.add(i)
        pos = starts[i + 1] if i + 1 < len(starts) else length
    return owners


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def identifiers(text: str) -> list[str]:
    """Git SHAs, issue and PR references, UUIDs: strings a summary must not paraphrase."""
    return [value for _, value in _identifier_spans(text)]


def _identifier_spans(text: str) -> list[tuple[int, str]]:
    """(offset, identifier) of each identifier in ``text``, in order (several patterns find
    them: the offsets put them back in order)."""
    if not may_hold_identifiers(text):
        return []
    shape = text.encode("utf-8", "surrogatepass").translate(_HEX_SHAPE)
    found: list[tuple[int, str]] = []
    if _FULL_SHA_SHAPE in shape:
        for m in _FULL_SHA.finditer(text):
            if _free_start(text, m.start()) and _is_sha(m.group(0)):
                found.append((m.start(), m.group(0)))
    if _SHORT_SHA_SHAPE in shape:
        found.extend(_git_context_shas(text, ranges=_RANGE_SHAPE in shape))
    if "#" in text:
        found.extend(_issue_refs(text))
    if b"-" in shape and _UUID_SHAPE in shape.replace(b"X", b"x"):
        found.extend(
            (m.start(), m.group(0))
            for m in _UUID.finditer(text)
            if _free_start(text, m.start(), "-")
        )
    return sorted(found)


def _git_context_shas(text: str, *, ranges: bool) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    if "commit" in text or "HEAD" in text or "git " in text:
        found.extend(_shas(_GIT_CONTEXT_SHA, text))
    if "[" in text:
        found.extend(_shas(_BRANCH_SHA, text))
    if ranges:
        for m in _SHA_RANGE.finditer(text):
            start = m.start()
            if _free_start(text, start, ".") and not text.endswith("index ", 0, start):
                found.extend((m.start(g), m.group(g)) for g in ("a", "b") if _is_sha(m.group(g)))
    return found


def _shas(pattern: re.Pattern[str], text: str) -> list[tuple[int, str]]:
    return [
        (m.start("sha"), m.group("sha")) for m in pattern.finditer(text) if _is_sha(m.group("sha"))
    ]


def _issue_refs(text: str) -> list[tuple[int, str]]:
    """owner/repo#12 with any number; a bare #1234 needs two digits and a free start."""
    found: list[tuple[int, str]] = []
    for m in _HASH_NUMBER.finditer(text):
        start = m.start()
        repo = _REPO_BEFORE.search(text, max(0, start - 140), start)
        if repo is not None:
            found.append((repo.start(), text[repo.start() : m.end()]))
        elif len(m.group("n")) >= 2 and _free_start(text, start, "/#&"):
            found.append((start, m.group(0)))
    return found


def _free_start(text: str, i: int, extra: str = "") -> bool:
    return i == 0 or (text[i - 1] not in _WORD_CHARS and text[i - 1] not in extra)


def _is_sha(value: str) -> bool:
    return _HEX_DIGIT_AND_LETTER.match(value) is not None
