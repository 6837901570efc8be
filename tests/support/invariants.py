"""DESIGN.md invariants 1-3 as checks that return what is wrong (empty when all is well)."""

from __future__ import annotations

from collections.abc import Sequence

from worker.compressor.boundaries import latest_real
from worker.compressor.markers import SYSTEM_NOTE, is_summary
from worker.compressor.messages import Message, content_text


def unpaired_tool_calls(msgs: Sequence[Message]) -> list[str]:
    """Calls without exactly one result in the tool block right after them.

    A group still open at the very end of the transcript is allowed: the gateway may be waiting.
    """
    bad: list[str] = []
    for i, msg in enumerate(msgs):
        if not msg.tool_calls:
            continue
        end = i + 1
        while end < len(msgs) and msgs[end].role == "tool":
            end += 1
        if end == len(msgs):
            continue  # a trailing open group
        answered = [m.tool_call_id for m in msgs[i + 1 : end]]
        bad += [c.id for c in msg.tool_calls if answered.count(c.id) != 1]
    return bad


def orphan_tool_results(msgs: Sequence[Message]) -> list[int]:
    bad = []
    for i, msg in enumerate(msgs):
        if msg.role != "tool":
            continue
        owner = i - 1
        while owner >= 0 and msgs[owner].role == "tool":
            owner -= 1
        if owner < 0 or msg.tool_call_id not in {c.id for c in msgs[owner].tool_calls}:
            bad.append(i)
    return bad


def adjacent_same_role(msgs: Sequence[Message]) -> list[int]:
    return [
        i
        for i in range(1, len(msgs))
        if msgs[i].role in ("user", "assistant") and msgs[i].role == msgs[i - 1].role
    ]


def violations(before: Sequence[Message], after: Sequence[Message]) -> list[str]:
    """Everything wrong with ``after`` as the compaction of ``before`` (invariants 1-3)."""
    out = [f"unpaired call {c}" for c in unpaired_tool_calls(after)]
    out += [f"orphan result at {i}" for i in orphan_tool_results(after)]
    out += [f"adjacent {after[i].role} at {i}" for i in adjacent_same_role(after)]
    if before and before[0].role == "system":
        original = content_text(before[0].content).split(SYSTEM_NOTE)[0].rstrip()
        if not after or after[0].role != "system":
            out.append("the system prompt is not first")
        elif not content_text(after[0].content).startswith(original):
            out.append("the system prompt changed")
        elif content_text(after[0].content).count(SYSTEM_NOTE) > 1:
            out.append("the compaction note appears twice")
    out += [f"system message at {i}" for i, m in enumerate(after) if i and m.role == "system"]
    latest = latest_real(before, "user")
    if latest is not None:
        users = [m for m in after if m.role == "user"]
        if not users or users[-1] != before[latest] or is_summary(users[-1]):
            out.append("the latest user message is not the last user message, verbatim")
    if sum(is_summary(m) for m in after) > 1:
        out.append("more than one summary")
    return out
