"""One checker for DESIGN.md invariants 1-3, applied the same way to our output and to Hermes'.

It reads plain wire dicts (OpenAI chat format), not our typed messages, so that it judges both
compressors by what a provider would receive and depends on nothing either of them computes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Wire = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Violation:
    kind: str  # a stable name, e.g. "orphan_tool_result"
    index: int | None  # the output message it concerns, when there is one
    detail: str

    def __str__(self) -> str:
        where = f"[{self.index}] " if self.index is not None else ""
        return f"{self.kind}: {where}{self.detail}"


def check_transcript(before: Sequence[Wire], after: Sequence[Wire]) -> list[Violation]:
    """Every invariant 1-3 violation in ``after``, the compaction of ``before``."""
    return [
        *tool_pairing_violations(after),
        *adjacent_role_violations(after),
        *system_prompt_violations(before, after),
        *latest_user_violations(before, after),
    ]


def tool_pairing_violations(msgs: Sequence[Wire]) -> list[Violation]:
    """Invariant 1: each tool call answered exactly once, in the tool block right after it."""
    out: list[Violation] = []
    for i, msg in enumerate(msgs):
        if msg.get("role") == "assistant" and msg.get("tool_calls"):
            out.extend(_unanswered_calls(msgs, i))
        elif msg.get("role") == "tool":
            out.extend(_orphan_result(msgs, i))
    return out


def _call_ids(msg: Wire) -> list[str]:
    return [str(tc.get("id")) for tc in msg.get("tool_calls") or () if isinstance(tc, Mapping)]


def _tool_block(msgs: Sequence[Wire], start: int) -> list[Wire]:
    """The contiguous tool messages starting at ``start``."""
    block: list[Wire] = []
    for msg in msgs[start:]:
        if msg.get("role") != "tool":
            break
        block.append(msg)
    return block


def _unanswered_calls(msgs: Sequence[Wire], i: int) -> list[Violation]:
    answered = Counter(str(m.get("tool_call_id")) for m in _tool_block(msgs, i + 1))
    out: list[Violation] = []
    for call_id in _call_ids(msgs[i]):
        if answered[call_id] == 0:
            out.append(Violation("unanswered_tool_call", i, f"call {call_id!r} has no result"))
        elif answered[call_id] > 1:
            out.append(
                Violation(
                    "duplicate_tool_result", i, f"call {call_id!r} has {answered[call_id]} results"
                )
            )
    return out


def _orphan_result(msgs: Sequence[Wire], i: int) -> list[Violation]:
    owner = i - 1
    while owner >= 0 and msgs[owner].get("role") == "tool":
        owner -= 1
    call_id = str(msgs[i].get("tool_call_id"))
    if owner >= 0 and msgs[owner].get("role") == "assistant" and call_id in _call_ids(msgs[owner]):
        return []
    return [Violation("orphan_tool_result", i, f"result for {call_id!r} follows no such call")]


def adjacent_role_violations(msgs: Sequence[Wire]) -> list[Violation]:
    """Invariant 1: no two adjacent user messages and no two adjacent assistant messages."""
    return [
        Violation("adjacent_same_role", i, f"two {msgs[i]['role']} messages in a row")
        for i in range(1, len(msgs))
        if msgs[i].get("role") in ("user", "assistant")
        and msgs[i].get("role") == msgs[i - 1].get("role")
    ]


def system_prompt_violations(before: Sequence[Wire], after: Sequence[Wire]) -> list[Violation]:
    """Invariant 2: the system prompt stays first, its text intact; a note may be appended once."""
    out = [
        Violation("system_not_first", i, "a system message after the start")
        for i, msg in enumerate(after)
        if i > 0 and msg.get("role") == "system"
    ]
    if not before or before[0].get("role") != "system":
        return out
    original = text_of(before[0].get("content"))
    if not after or after[0].get("role") != "system":
        return [*out, Violation("system_not_first", 0, "the system prompt is no longer first")]
    kept = text_of(after[0].get("content"))
    if not kept.startswith(original):
        out.append(Violation("system_prompt_changed", 0, "the original system text is not kept"))
    elif original and kept.count(original) != 1:
        out.append(Violation("system_prompt_changed", 0, "the system text appears more than once"))
    return out


def latest_user_violations(before: Sequence[Wire], after: Sequence[Wire]) -> list[Violation]:
    """Invariant 3: the latest user message is still a user message of its own, verbatim.

    A summary placed after it (as Hermes does when the only user turn is in the head) does not
    break this; merging the summary into it, or leaving it only inside the summary, does.
    """
    wanted = _last_user(before)
    if wanted is None:
        return []
    content = wanted.get("content")
    if any(m.get("role") == "user" and m.get("content") == content for m in after):
        return []
    text = text_of(content)
    for i, msg in enumerate(after):
        if text and text in text_of(msg.get("content")):
            return [Violation("latest_user_changed", i, "it survives only inside another message")]
    return [Violation("latest_user_lost", None, "it is nowhere in the output")]


def latest_user_is_still_last(before: Sequence[Wire], after: Sequence[Wire]) -> bool:
    """Informational, not an invariant: no other user-role message (a summary) comes after it."""
    wanted, got = _last_user(before), _last_user(after)
    if wanted is None:
        return True
    return got is not None and got.get("content") == wanted.get("content")


def _last_user(msgs: Sequence[Wire]) -> Wire | None:
    return next((m for m in reversed(msgs) if m.get("role") == "user"), None)


def text_of(content: object) -> str:
    """A message's text: string content, or its text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, Mapping) and p.get("type") == "text"
        )
    return ""
