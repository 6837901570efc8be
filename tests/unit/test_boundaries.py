from __future__ import annotations

from worker.compressor.boundaries import (
    Budget,
    Split,
    head_end,
    keep_latest_user,
    latest_real,
    not_inside_tool_group,
    plan_split,
    shrink_head,
    tail_start_by_budget,
)
from worker.compressor.markers import render_summary
from worker.compressor.messages import Message, ToolCall, assistant, system, tool_result, user


def calls(*ids: str) -> list[ToolCall]:
    return [ToolCall(id=i, name="bash", arguments="{}") for i in ids]


def budget(tail: int, *, ceiling: float = 1.5, min_tail: int = 1) -> Budget:
    return Budget(tail_tokens=tail, soft_ceiling=ceiling, min_tail_messages=min_tail)


def test_head_is_the_system_prompt_plus_protected_messages() -> None:
    msgs = [system("s"), user("u1"), assistant("a1"), user("u2"), assistant("a2")]
    assert head_end(msgs, protect_first_n=3) == 4
    assert head_end(msgs, protect_first_n=0) == 1
    assert head_end(msgs[1:], protect_first_n=0) == 0  # no system prompt: nothing is implied


def test_head_never_ends_between_a_call_and_its_results() -> None:
    msgs = [
        system("s"),
        user("u"),
        assistant(None, calls("a", "b")),
        tool_result("a", "1"),
        tool_result("b", "2"),
        assistant("done"),
    ]
    assert head_end(msgs, protect_first_n=3) == 5


def test_tail_walks_back_to_the_budget() -> None:
    counts = [10, 100, 100, 100, 100]
    assert tail_start_by_budget(counts, floor=1, budget=budget(200)) == 3


def test_one_oversized_recent_message_stays_whole_under_the_soft_ceiling() -> None:
    counts = [10, 100, 100, 250]
    # 250 > 200 but under 300 (x1.5): it stays; the next one would cross the ceiling.
    assert tail_start_by_budget(counts, floor=1, budget=budget(200)) == 3
    # Under a smaller ceiling it would still stay: the tail keeps at least one message.
    assert tail_start_by_budget(counts, floor=1, budget=budget(100)) == 3


def test_tail_keeps_its_minimum_number_of_messages() -> None:
    counts = [10, 5000, 5000, 5000, 5000]
    assert tail_start_by_budget(counts, floor=1, budget=budget(10, min_tail=3)) == 2
    assert tail_start_by_budget(counts, floor=3, budget=budget(10, min_tail=3)) == 3


def test_tail_start_on_a_tool_result_moves_back_to_its_call() -> None:
    msgs = [
        system("s"),
        user("u"),
        assistant(None, calls("a", "b", "c")),
        tool_result("a", "1"),
        tool_result("b", "2"),
        tool_result("c", "3"),
        assistant("done"),
    ]
    assert not_inside_tool_group(msgs, 4, floor=1) == 2
    assert not_inside_tool_group(msgs, 6, floor=1) == 6  # a clean boundary stays
    orphan = [system("s"), user("u"), tool_result("zz", "1"), assistant("x")]
    assert not_inside_tool_group(orphan, 2, floor=1) == 2  # no call to move to


def test_latest_user_message_stays_in_the_tail_when_that_fits() -> None:
    msgs = [system("s"), user("u1"), assistant("a1"), user("u2"), assistant("a2"), user("u3")]
    msgs += [assistant("a3")]
    counts = [10, 10, 10, 10, 10, 10, 10]
    split = plan_split(msgs, counts, protect_first_n=0, budget=budget(10))
    assert split == Split(head_end=1, tail_start=5)


def test_latest_user_message_far_back_is_lifted_instead_of_keeping_everything() -> None:
    # One ask, then a long agent run: keeping all of it verbatim would make no progress.
    msgs: list[Message] = [system("s"), user("the task"), assistant("ok")]
    for i in range(10):
        msgs += [assistant(None, calls(f"c{i}")), tool_result(f"c{i}", "out")]
    counts = [10] * len(msgs)
    split = plan_split(msgs, counts, protect_first_n=0, budget=budget(30, ceiling=1.0))
    assert split.lifted == 1
    assert split.head_end == 1
    assert msgs[split.tail_start].role == "assistant"
    assert split.tail_start > 10


def test_latest_user_message_in_the_head_is_lifted_out_of_it() -> None:
    msgs: list[Message] = [system("s"), user("the task")]
    for i in range(10):
        msgs += [assistant(None, calls(f"c{i}")), tool_result(f"c{i}", "out")]
    counts = [10] * len(msgs)
    split = plan_split(msgs, counts, protect_first_n=3, budget=budget(30, ceiling=1.0))
    # A summary after the head would otherwise be the newest "user" text the model sees.
    assert (split.head_end, split.lifted) == (1, 1)


def test_latest_assistant_message_stays_in_the_tail() -> None:
    msgs = [system("s"), user("u1"), assistant("a1"), user("u2"), assistant("reply"), user("u3")]
    counts = [10, 10, 10, 10, 10, 1000]
    split = plan_split(msgs, counts, protect_first_n=0, budget=budget(100, min_tail=1))
    assert split.tail_start == 4


def test_a_standalone_summary_is_not_the_latest_user_message() -> None:
    summary = Message(role="user", content=render_summary("old", with_end_marker=True))
    msgs = [system("s"), user("real ask"), assistant("a"), summary]
    assert latest_real(msgs, "user") == 1
    split = keep_latest_user(msgs, [10] * 4, Split(1, 3), budget=budget(100))
    assert split == Split(1, 1)


def test_shrinking_the_head_moves_a_whole_tool_group_and_never_the_system_prompt() -> None:
    msgs = [
        system("s"),
        user("u"),
        assistant(None, calls("a", "b")),
        tool_result("a", "1"),
        tool_result("b", "2"),
        user("next"),
    ]
    assert shrink_head(msgs, Split(5, 5)) == Split(2, 5)
    assert shrink_head(msgs, Split(2, 5)) == Split(1, 5)
    assert shrink_head(msgs, Split(1, 5)) is None
