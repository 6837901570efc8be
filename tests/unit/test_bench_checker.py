"""The bench's invariant checker catches each violation it claims to, and passes a valid transcript."""

from __future__ import annotations

from typing import Any

import pytest

from bench.invariants import check_transcript, latest_user_is_still_last
from tests.data import real_transcripts

SYSTEM = {"role": "system", "content": "You are a careful agent."}
NOTE = "\n\n[Note: earlier turns were compacted.]"


def call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": "{}"}}


def asks(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [call(i) for i in ids]}


def result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def says(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


BEFORE = [SYSTEM, user("first"), asks("a", "b"), result("a"), result("b"), says("done"), user("go")]
GOOD_AFTER = [
    {"role": "system", "content": SYSTEM["content"] + NOTE},
    user("[summary] earlier work"),
    asks("b"),
    result("b"),
    says("done"),
    user("go"),
]


def kinds(after: list[dict[str, Any]]) -> list[str]:
    return [v.kind for v in check_transcript(BEFORE, after)]


def test_a_valid_compaction_has_no_violations() -> None:
    assert check_transcript(BEFORE, GOOD_AFTER) == []


@pytest.mark.parametrize(("_name", "msgs"), real_transcripts()[:5])
def test_real_transcripts_are_valid_as_they_are(
    _name: str, msgs: tuple[dict[str, Any], ...]
) -> None:
    assert check_transcript(msgs, msgs) == []


def test_a_call_without_its_result_is_caught() -> None:
    after = [*GOOD_AFTER[:3], user("go")]
    assert kinds(after) == ["unanswered_tool_call"]


def test_a_result_outside_its_calls_block_is_caught() -> None:
    # Both answers exist, but the second arrives after an unrelated message.
    after = [GOOD_AFTER[0], user("s"), asks("a", "b"), result("a"), says("x"), result("b")]
    after += [says("done"), user("go")]
    assert sorted(kinds(after)) == ["orphan_tool_result", "unanswered_tool_call"]


def test_a_result_answered_twice_is_caught() -> None:
    after = [*GOOD_AFTER[:4], result("b"), *GOOD_AFTER[4:]]
    assert kinds(after) == ["duplicate_tool_result"]


def test_a_result_with_no_call_is_caught() -> None:
    after = [GOOD_AFTER[0], user("s"), says("x"), result("zz"), says("done"), user("go")]
    assert "orphan_tool_result" in kinds(after)


def test_adjacent_user_messages_are_caught() -> None:
    after = [GOOD_AFTER[0], user("[summary]"), user("go")]
    assert kinds(after) == ["adjacent_same_role"]


def test_adjacent_assistant_messages_are_caught() -> None:
    after = [GOOD_AFTER[0], user("s"), says("[summary]"), says("done"), user("go")]
    assert kinds(after) == ["adjacent_same_role"]


def test_system_prompt_moved_or_rewritten_is_caught() -> None:
    moved = [user("s"), says("x"), SYSTEM, user("go")]
    assert sorted(kinds(moved)) == ["system_not_first", "system_not_first"]
    rewritten = [{"role": "system", "content": "Summary first. " + SYSTEM["content"]}, user("go")]
    assert kinds(rewritten) == ["system_prompt_changed"]
    doubled = [{"role": "system", "content": SYSTEM["content"] * 2}, user("go")]
    assert kinds(doubled) == ["system_prompt_changed"]


def test_latest_user_message_merged_into_the_summary_is_caught() -> None:
    after = [GOOD_AFTER[0], says("x"), user("[summary] ...\n\ngo")]
    assert kinds(after) == ["latest_user_changed"]


def test_latest_user_message_left_only_in_the_summary_is_caught() -> None:
    after = [GOOD_AFTER[0], user("s"), says("[summary] the user said go")]
    assert kinds(after) == ["latest_user_changed"]


def test_latest_user_message_lost_is_caught() -> None:
    after = [GOOD_AFTER[0], user("s"), says("[summary] the user asked for something")]
    assert kinds(after) == ["latest_user_lost"]


def test_a_summary_after_the_verbatim_latest_user_message_is_allowed() -> None:
    after = [GOOD_AFTER[0], user("go"), says("x"), user("[summary] the user said go")]
    assert kinds(after) == []
    assert not latest_user_is_still_last(BEFORE, after)
    assert latest_user_is_still_last(BEFORE, GOOD_AFTER)
