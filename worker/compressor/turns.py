"""The window as the summarizer sees it: pruned, earlier summaries taken out, redacted.

Every turn is redacted once, here, before anything cuts it (serialization, the extractive
summarizer and the ledger all read these messages), so no cut can split a secret into halves
that no pattern recognizes.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import replace
from functools import cache
from typing import NamedTuple

from worker.compressor.markers import without_summary
from worker.compressor.messages import Message
from worker.compressor.redact import Redacted, redact_message, redact_text

# Joins a message's pieces for one redaction pass. No pattern matches across a NUL between two
# line breaks, and a split that does not give the pieces back falls back to one pass each.
_SEP = "\n\x00\n"

Redact = Callable[[str], Redacted]


class Turn(NamedTuple):  # one per window message: a tuple is cheaper to build
    message: Message  # pruned and redacted
    removed: bool  # False for the lifted message: shown for context, kept verbatim
    known_tokens: int | None = None  # the original's count, when pruning left it unchanged


def build_turns(
    msgs: Sequence[Message],
    counts: Sequence[int],
    pruned: Sequence[Message],
    *,
    start: int,
    summaries: Container[int],
    lifted: int | None,
) -> tuple[list[Turn], int]:
    """Turns for ``pruned`` (= the window ``msgs[start:...]`` after pruning); and redactions."""
    turns: list[Turn] = []
    redactions = 0
    redact = cache(redact_text)  # agent transcripts repeat texts; redaction is pure
    for index, msg in enumerate(pruned, start):
        real = without_summary(msg) if index in summaries else msg
        if real is None:
            continue  # a standalone earlier summary: it is the previous summary, not a turn
        known = counts[index] if real is msgs[index] else None
        clean, count = redact_turn(real, redact)
        redactions += count
        turns.append(Turn(clean, index != lifted, known))
    return turns, redactions


def redact_turn(msg: Message, redact: Redact = redact_text) -> tuple[Message, int]:
    """The message with its text and tool-call arguments redacted, in one pass when it can be."""
    if isinstance(msg.content, tuple):
        return redact_message(msg)  # parts may carry URLs; the rare case takes the full helper
    if not msg.tool_calls:
        red = redact(msg.content or "")
        return (msg, 0) if not red.count else (msg.with_content(red.text), red.count)
    pieces = [msg.content or "", *(call.arguments for call in msg.tool_calls)]
    red = redact(_SEP.join(pieces))
    if not red.count:
        return msg, 0
    back = red.text.split(_SEP)
    if len(back) != len(pieces):
        return _piecewise(msg, redact)
    content = back[0] if msg.content is not None else None
    calls = tuple(
        call if text == call.arguments else replace(call, arguments=text)
        for call, text in zip(msg.tool_calls, back[1:], strict=True)
    )
    return replace(msg, content=content, tool_calls=calls), red.count


def _piecewise(msg: Message, redact: Redact = redact_text) -> tuple[Message, int]:
    content = redact(msg.content) if isinstance(msg.content, str) else None
    total = content.count if content else 0
    calls = []
    for call in msg.tool_calls:
        red = redact(call.arguments)
        total += red.count
        calls.append(replace(call, arguments=red.text))
    text = content.text if content else msg.content
    return replace(msg, content=text, tool_calls=tuple(calls)), total
