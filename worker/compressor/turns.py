"""The window as the summarizer sees it: read whole, shown bounded, redacted.

Nothing in the window is pruned before it is read: a tool result reaches the summarizer as its
one-line account (command, exit code, first error line) followed by an excerpt of whole lines
(its error lines first, then its first and last lines) within a per-message budget, so an error
in the middle of a long output is never cut away before anyone looks. Tool-call arguments keep
their shape with long string leaves cut. Every turn is redacted once, here, after those cuts,
which keep whole lines and whole words so that no cut can split a secret into halves that no
pattern recognizes.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import replace
from functools import cache
from typing import NamedTuple

from worker.compressor.config import CompressConfig
from worker.compressor.cuts import line_excerpt
from worker.compressor.markers import without_summary
from worker.compressor.messages import Message, content_text
from worker.compressor.prune import duplicate_note, duplicated_outputs, shrink_calls
from worker.compressor.redact import Redacted, redact_message, redact_text
from worker.compressor.tooluse import Reading, Shown, ToolUse

# Joins a message's pieces for one redaction pass. No pattern matches across a NUL between two
# line breaks, and a split that does not give the pieces back falls back to one pass each.
_SEP = "\n\x00\n"

Redact = Callable[[str], Redacted]


class Turn(NamedTuple):  # one per window message: a tuple is cheaper to build
    message: Message  # as the summarizer sees it: results shown bounded, redacted
    removed: bool  # False for the lifted message: shown for context, kept verbatim
    known_tokens: int | None = None  # the original's count, when nothing in it changed
    at: int = -1  # where the message sits in the transcript


class Window(NamedTuple):
    """What the window is: where it starts and ends, and what is special in it."""

    start: int
    end: int
    summaries: Container[int]  # indexes carrying an earlier summary
    lifted: int | None  # shown for context, kept verbatim


class Built(NamedTuple):
    turns: list[Turn]
    redactions: int  # secrets replaced in the turns (the accounts' are counted by ``Shown``)
    shown_results: int  # tool results shown as their account and an excerpt
    deduplicated: int  # tool results shown as a pointer to the same output later
    shrunk_calls: int  # messages whose tool-call arguments had long strings cut


def build_turns(
    msgs: Sequence[Message],
    counts: Sequence[int],
    window: Window,
    *,
    reading: Reading,
    shown: Shown,
    config: CompressConfig,
) -> Built:
    """Turns for ``msgs[window.start:window.end]``, and what was done to show them. Each turn
    is redacted whole here: ``shown`` need not redact its pieces (``Shown(redacting=False)``)."""
    turns: list[Turn] = []
    redactions = results = dedup = shrunk = 0
    redact = cache(redact_text)  # agent transcripts repeat texts; redaction is pure
    newer = duplicated_outputs(msgs, window.start, window.end, min_chars=config.prune_min_chars)
    for index in range(window.start, window.end):
        msg = msgs[index]
        real = without_summary(msg) if index in window.summaries else msg
        if real is None:
            continue  # a standalone earlier summary: it is the previous summary, not a turn
        if real.role == "tool":
            shown_result = _shown_result(
                real, reading.by_result.get(index), newer.get(index), shown, config
            )
            if shown_result is not None:
                shown_result, count = redact_turn(shown_result, redact)
                redactions += count
                turns.append(Turn(shown_result, index != window.lifted, None, index))
                dedup += index in newer
                results += index not in newer
                continue
        elif real.tool_calls:
            slim = shrink_calls(real, config.tool_arg_max_chars, reading)
            shrunk += slim is not real
            real = slim
        known = counts[index] if real is msgs[index] else None
        clean, count = redact_turn(real, redact)
        redactions += count
        turns.append(Turn(clean, index != window.lifted, known, index))
    return Built(turns, redactions, results, dedup, shrunk)


def _shown_result(
    msg: Message, use: ToolUse | None, newer: str | None, shown: Shown, config: CompressConfig
) -> Message | None:
    """A tool result as the summarizer reads it: its account, then what matters of its body
    (not redacted yet: the turn is, whole). None for a result shown as it is (short, or without
    its call)."""
    text = content_text(msg.content)
    if use is None or (len(text) < config.prune_min_chars and newer is None):
        return None
    account = shown.one_liner(use)
    if newer is not None:
        return msg.with_content(f"{account}\n{duplicate_note(newer)}")
    room = config.serialize_result_chars if use.errors else config.serialize_ok_result_chars
    if room <= 0 or not use.body.strip():
        return msg.with_content(account)
    excerpt = line_excerpt(
        use.body, head=room // 4, tail=room // 4, marked=[e.at for e in use.errors], room=room
    )
    return msg.with_content(f"{account}\n{excerpt}")


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
