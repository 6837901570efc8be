"""Every way the core shortens a text, in one place.

A cut made before redaction could split a secret into halves that no pattern recognizes, so
every cut here keeps whole words and whole quoted strings (``safe_prefix``) or whole lines
(``line_excerpt``); the redactor then sees each kept secret as whole as in the original.
"""

from __future__ import annotations

from collections.abc import Sequence

ELLIPSIS = "…"


def size(text: str) -> int:
    """A text's size as budgets count it: UTF-8 bytes, which track tokens across scripts (a
    CJK character is three bytes and about one token; English runs about four bytes a token)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


# Estimating tokens without tokenizing: over the real and generated transcripts, UTF-8 bytes
# / 2.7 runs 13-17% above tiktoken's count in total (a single random-looking text can come out
# ~25% under; CJK text, three bytes a character, comes out a little over).
_TENTH_BYTES_PER_TOKEN = 27


def estimated_tokens(text: str) -> int:
    return size(text) * 10 // _TENTH_BYTES_PER_TOKEN + 1


# A budget given in tokens is met in bytes with less per token: Chinese runs 2.5-2.6 bytes a
# token (cl100k), English 3.4-3.5; a text sized so stays within its budget in either.
_TENTH_BYTES_PER_BUDGET_TOKEN = 25


def bytes_for(tokens: int) -> int:
    """How many bytes (``size``) a text may have to stay within ``tokens`` tokens."""
    return max(0, tokens) * _TENTH_BYTES_PER_BUDGET_TOKEN // 10


def first_line(text: str) -> str:
    """The first non-blank line of ``text`` (stripped), or ""."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


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


def snippet(text: str, limit: int = 80) -> str:
    """One line, at most ``limit`` characters (white-space runs become one space)."""
    flat = " ".join(text[: limit * 4].split())
    return flat if len(flat) <= limit else safe_prefix(flat, limit - 1).rstrip() + ELLIPSIS


def quote(text: str, limit: int) -> str:
    """An exact quote of ``text``: whole when it fits, else its start and a count of the rest."""
    quoted = text.strip()
    if len(quoted) <= limit:
        return quoted
    kept = safe_prefix(quoted, limit).rstrip()
    return f"{kept}{ELLIPSIS}[{len(quoted) - len(kept):,} chars not quoted]"


def cut_middle(text: str, head: int, tail: int) -> str:
    """Keep the first ``head`` and last ``tail`` characters, naming how much was left out.

    Returns ``text`` itself (the same object) when it fits.
    """
    if len(text) <= head + tail:
        return text
    omitted = len(text) - head - tail
    end = f"\n{text[len(text) - tail :]}" if tail else ""
    return f"{text[:head]}\n{ELLIPSIS}[{omitted:,} chars omitted]{ELLIPSIS}{end}"


def line_excerpt(text: str, *, head: int, tail: int, marked: Sequence[int] = (), room: int) -> str:
    """Whole lines of a long ``text`` within ``room`` characters: first the lines at the offsets
    in ``marked`` (error lines), then its first lines (up to ``head`` chars) and its last lines
    (up to ``tail`` chars); shown in text order, each gap named with its size.

    Lines are never cut inside (a marked line longer than the room left is skipped), so a
    secret on a kept line stays whole for the redactor.
    """
    if len(text) <= room:
        return text
    wanted = [*(_line_span(text, at) for at in marked), *_head_span(text, head)]
    wanted += _tail_span(text, tail)
    picked: list[tuple[int, int]] = []
    used = 0
    for start, end in wanted:
        if any(a <= start and end <= b for a, b in picked):
            continue
        if used + end - start > room:
            continue
        picked.append((start, end))
        used += end - start
    pieces: list[str] = []
    last_end = 0
    for start, end in _merged(picked):
        if start > last_end:
            pieces.append(_gap(text, last_end, start))
        pieces.append(text[start:end].rstrip("\n"))
        last_end = end
    if last_end < len(text.rstrip("\n")):
        pieces.append(_gap(text, last_end, len(text)))
    return "\n".join(pieces)


def _head_span(text: str, chars: int) -> list[tuple[int, int]]:
    if chars <= 0:
        return []
    end = text.rfind("\n", 0, chars + 1)
    return [(0, end + 1)] if end > 0 else []


def _tail_span(text: str, chars: int) -> list[tuple[int, int]]:
    body = text.rstrip("\n")
    if chars <= 0 or not body:
        return []
    start = body.find("\n", max(0, len(body) - chars - 1))
    return [(start + 1, len(body))] if start >= 0 else []


def _line_span(text: str, at: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return start, (len(text) if end < 0 else end + 1)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _gap(text: str, start: int, end: int) -> str:
    lines = text.count("\n", start, end)
    return f"{ELLIPSIS}[{lines:,} line{'s' * (lines != 1)} omitted]{ELLIPSIS}"
