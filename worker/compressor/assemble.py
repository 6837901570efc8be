"""Putting the transcript back together: head, summary, lifted message, tail, then repairs.

The summary is a message nobody wrote, so it must fit the conversation's shape: its role is
chosen so no two user or two assistant messages touch, and when neither role fits it is merged
into the message after it. The tool-pair sanitizer runs last, on the finished list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from worker.compressor.markers import (
    FULL,
    Framing,
    has_system_note,
    merge_summary,
    render_summary,
)
from worker.compressor.messages import (
    IMAGE_PART_TYPES,
    Content,
    Message,
    image_count,
)

Placement = Literal["user", "assistant", "merge"]
# Compaction never separates a call from its results (the split keeps tool groups whole), so a
# stub stands only where the transcript itself had no result for a call: an interrupted tool.
STUB_RESULT = "[no output was recorded for this tool call]"
IMAGE_PLACEHOLDER = "[image removed during compaction]"
_TURN_ROLES = ("user", "assistant")


def summary_placement(prev: Message | None, nxt: Message | None) -> Placement:
    """The summary's role between ``prev`` (head) and ``nxt`` (after it), or "merge".

    Avoiding the head comes first (it is settled); then flip to avoid the next message.
    """
    role: Literal["user", "assistant"] = (
        "user" if prev is not None and prev.role in ("assistant", "tool") else "assistant"
    )
    if nxt is not None and nxt.role == role:
        role = "assistant" if role == "user" else "user"
        if prev is not None and prev.role == role:
            return "merge"
    return role


@dataclass(frozen=True, slots=True)
class Assembled:
    messages: list[Message]
    summary_index: int  # where the summary text sits in ``messages``
    dropped_results: int  # orphan tool results the sanitizer removed
    stubbed_results: int  # missing tool results the sanitizer stood in for


def assemble(
    head: Sequence[Message],
    summary_body: str,
    after: Sequence[Message],
    *,
    placement: Placement,
    framing: Framing = FULL,
) -> Assembled:
    """head + summary + after (the lifted message, then the tail), sanitized."""
    out = list(head)
    if out and out[0].role == "system":
        out[0] = with_system_note(out[0], framing.system_note)
    rest = list(after)
    if placement == "merge":
        # Neither role fits between its neighbours: it becomes the start of the next message.
        text = render_summary(summary_body, with_end_marker=True, framing=framing)
        rest[0] = summary_msg = rest[0].with_content(merge_summary(text, rest[0].content))
    else:
        text = render_summary(summary_body, with_end_marker=placement == "user", framing=framing)
        summary_msg = Message(role=placement, content=text)
        out.append(summary_msg)
    out.extend(rest)
    cleaned, dropped, stubbed = sanitize_tool_pairs(out)
    index = next(i for i, m in enumerate(cleaned) if m is summary_msg)
    return Assembled(cleaned, index, dropped, stubbed)


def with_system_note(msg: Message, note: str = FULL.system_note) -> Message:
    """The system prompt with the compaction note appended, once across all passes."""
    if has_system_note(msg.content):
        return msg
    content = msg.content
    if isinstance(content, tuple):
        return msg.with_content((*content, {"type": "text", "text": note}))
    return msg.with_content(f"{content}\n\n{note}" if content else note)


def sanitize_tool_pairs(msgs: Sequence[Message]) -> tuple[list[Message], int, int]:
    """Each tool call answered exactly once, right after its call; returns (msgs, dropped, stubs).

    Results whose call is gone (or that answer twice) are dropped; a call whose result is gone
    gets a stub result. A tool group still open at the very end is left open: the gateway may
    be waiting for that result.
    """
    out: list[Message] = []
    waiting: list[str] = []  # call ids of the current group still without a result
    dropped = stubbed = 0
    for msg in msgs:
        if msg.role == "tool":
            if msg.tool_call_id in waiting:
                waiting.remove(msg.tool_call_id)
                out.append(msg)
            else:
                dropped += 1
            continue
        out.extend(Message(role="tool", content=STUB_RESULT, tool_call_id=i) for i in waiting)
        stubbed += len(waiting)
        out.append(msg)
        waiting = [call.id for call in msg.tool_calls] if msg.role == "assistant" else []
    return out, dropped, stubbed


def strip_old_images(msgs: Sequence[Message]) -> tuple[list[Message], int]:
    """Replace image payloads with a placeholder in messages older than the current image.

    The current image is the newest user message with images, else (no user sent any) the
    newest message with images, such as a tool's screenshot: it and every message after it
    keep theirs (a screenshot taken after the user's picture is newer still). The system prompt
    is left alone. Returns the messages and how many images were removed.
    """
    with_images = [i for i, m in enumerate(msgs) if m.role != "system" and image_count(m.content)]
    users = [i for i in with_images if msgs[i].role == "user"]
    anchor = users[-1] if users else with_images[-1] if with_images else 0
    out = list(msgs)
    removed = 0
    for i in with_images:
        if i >= anchor:
            break
        out[i] = msgs[i].with_content(_without_images(msgs[i].content))
        removed += image_count(msgs[i].content)
    return out, removed


def _without_images(content: Content) -> Content:
    if not isinstance(content, tuple):
        return content  # only part lists carry images
    return tuple(
        {"type": "text", "text": IMAGE_PLACEHOLDER} if p.get("type") in IMAGE_PART_TYPES else p
        for p in content
    )
