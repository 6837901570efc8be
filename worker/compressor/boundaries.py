"""Where the verbatim head ends, where the verbatim tail starts, and what must stay outside.

The split never cuts a tool group (an assistant's tool calls and their results stay together),
and the latest real user message and the latest assistant message are never summarized away.
The latest user message can be far back in an agent session (one ask, hundreds of tool calls);
keeping everything after it verbatim would make compaction impossible, so in that case it is
*lifted*: kept verbatim right after the summary while the turns around it are summarized.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from worker.compressor.markers import is_summary, without_summary
from worker.compressor.messages import Message


@dataclass(frozen=True, slots=True)
class Split:
    head_end: int  # messages [0, head_end) stay verbatim
    tail_start: int  # messages [tail_start, n) stay verbatim; [head_end, tail_start) is the window
    lifted: int | None = None  # a window index kept verbatim (the latest user message)

    def window(self) -> range:
        return range(self.head_end, self.tail_start)


@dataclass(frozen=True, slots=True)
class Budget:
    tail_tokens: int  # aim for this many tokens in the tail
    soft_ceiling: float  # x tail_tokens: one oversized message may still stay whole
    min_tail_messages: int

    @property
    def ceiling_tokens(self) -> int:
        return int(self.tail_tokens * self.soft_ceiling)


def plan_split(
    msgs: Sequence[Message], counts: Sequence[int], *, protect_first_n: int, budget: Budget
) -> Split:
    """Choose what stays verbatim at both ends; the middle goes to the summarizer."""
    head = head_end(msgs, protect_first_n=protect_first_n)
    tail = tail_start_by_budget(counts, floor=head, budget=budget)
    tail = not_inside_tool_group(msgs, tail, floor=head)
    tail = past_earlier_summary(msgs, tail)
    tail = keep_latest_assistant(msgs, tail, floor=head)
    return keep_latest_user(msgs, counts, Split(head, tail), budget=budget)


def head_end(msgs: Sequence[Message], *, protect_first_n: int) -> int:
    """The system prompt plus ``protect_first_n`` messages, never ending inside a tool group."""
    end = 1 if msgs and msgs[0].role == "system" else 0
    end = min(len(msgs), end + max(0, protect_first_n))
    # The window must not open with tool results whose call stays in the head.
    while end < len(msgs) and msgs[end].role == "tool":
        end += 1
    return end


def tail_start_by_budget(counts: Sequence[int], *, floor: int, budget: Budget) -> int:
    """Walk back from the end while the tail is under budget; keep at least the minimum."""
    n = len(counts)
    start = n
    total = 0
    while start > floor:
        cost = counts[start - 1]
        kept = n - start
        if kept >= budget.min_tail_messages and (
            total >= budget.tail_tokens or total + cost > budget.ceiling_tokens
        ):
            break
        total += cost
        start -= 1
    return start


def not_inside_tool_group(msgs: Sequence[Message], start: int, *, floor: int) -> int:
    """Move a tail start that falls on tool results back to the assistant that called them."""
    i = start
    while floor < i < len(msgs) and msgs[i].role == "tool":
        i -= 1
    if i < len(msgs) and msgs[i].role == "assistant" and msgs[i].tool_calls:
        return i
    return start  # orphan results: the sanitizer drops them later


def past_earlier_summary(msgs: Sequence[Message], start: int) -> int:
    """Move the tail start past the newest earlier summary (and its tool group) in the tail.

    An earlier summary belongs in the window, where it becomes the previous summary; left in
    the tail it would sit beside the new one, stale.
    """
    newest = next((i for i in range(len(msgs) - 1, start - 1, -1) if is_summary(msgs[i])), None)
    if newest is None:
        return start
    end = newest + 1
    while end < len(msgs) and msgs[end].role == "tool":
        end += 1
    return end


def keep_latest_assistant(msgs: Sequence[Message], start: int, *, floor: int) -> int:
    """The latest assistant message stays in the tail (the reply the user last saw)."""
    latest = latest_real(msgs, "assistant")
    return min(start, latest) if latest is not None and latest >= floor else start


def keep_latest_user(
    msgs: Sequence[Message], counts: Sequence[int], split: Split, *, budget: Budget
) -> Split:
    """The latest real user message stays verbatim after the summary: in the tail if that fits,
    else lifted. It never stays in the head, where a summary would come after it and read as
    the newest user turn."""
    latest = latest_real(msgs, "user")
    if latest is None or latest >= split.tail_start or split.head_end >= split.tail_start:
        return split
    if latest < split.head_end:
        return Split(latest, split.tail_start, lifted=latest)
    if latest + 1 == split.tail_start or sum(counts[latest:]) <= budget.ceiling_tokens:
        # A user message is a clean boundary: no tool group starts before it and ends after.
        return Split(split.head_end, latest)
    return Split(split.head_end, split.tail_start, lifted=latest)


def shrink_head(msgs: Sequence[Message], split: Split) -> Split | None:
    """The same split with the head's last message (or tool group) moved into the window.

    None when only the system prompt is left: it never moves.
    """
    end = split.head_end - 1
    while end > 0 and msgs[end].role == "tool":
        end -= 1  # back to the assistant that made the calls: the group moves as one
    floor = 1 if msgs and msgs[0].role == "system" else 0
    if end < floor:
        return None
    return Split(end, split.tail_start, split.lifted)


def latest_real(msgs: Sequence[Message], role: str) -> int | None:
    """Index of the newest real message of ``role`` (a standalone summary is not one)."""
    for i in range(len(msgs) - 1, -1, -1):
        msg = msgs[i]
        if msg.role == role and (not is_summary(msg) or without_summary(msg) is not None):
            return i
    return None
