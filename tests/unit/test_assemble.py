from __future__ import annotations

import pytest

from worker.compressor.assemble import (
    IMAGE_PLACEHOLDER,
    STUB_RESULT,
    assemble,
    sanitize_tool_pairs,
    strip_old_images,
    summary_placement,
    with_system_note,
)
from worker.compressor.markers import (
    EARLIER_SUMMARY_PREFIXES,
    END_MARKER,
    SUMMARY_PREFIX,
    SUMMARY_TAG,
    SYSTEM_NOTE,
    is_summary,
    summary_body,
    without_summary,
)
from worker.compressor.messages import (
    Message,
    ToolCall,
    assistant,
    content_text,
    system,
    tool_result,
    user,
)

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}


def calls(*ids: str) -> list[ToolCall]:
    return [ToolCall(id=i, name="bash", arguments="{}") for i in ids]


@pytest.mark.parametrize(
    ("prev", "nxt", "expected"),
    [
        (system("s"), user("u"), "assistant"),
        (system("s"), assistant("a"), "user"),
        (tool_result("c", "x"), assistant("a"), "user"),
        (tool_result("c", "x"), user("u"), "assistant"),
        (user("u"), user("u2"), "assistant"),
        (assistant("a"), assistant("a2"), "user"),
        (user("u"), assistant("a"), "merge"),  # either role touches a neighbour of that role
        (assistant("a"), user("u"), "merge"),
        (None, user("u"), "assistant"),
        (assistant("a"), None, "user"),
    ],
)
def test_summary_role_avoids_both_neighbours(
    prev: Message | None, nxt: Message | None, expected: str
) -> None:
    assert summary_placement(prev, nxt) == expected


def test_a_user_role_summary_carries_the_end_marker_and_an_assistant_one_does_not() -> None:
    as_user = assemble([system("s")], "BODY", [assistant("a")], placement="user").messages[1]
    as_assistant = assemble([system("s")], "BODY", [user("u")], placement="assistant").messages[1]
    assert as_user.role == "user" and content_text(as_user.content).endswith(END_MARKER)
    assert as_assistant.role == "assistant" and END_MARKER not in content_text(as_assistant.content)
    for msg in (as_user, as_assistant):
        assert content_text(msg.content).startswith(SUMMARY_TAG)
        assert summary_body(msg) == "BODY"


def test_merge_puts_the_summary_and_end_marker_in_front_of_the_next_message() -> None:
    head = [system("s"), user("u")]
    nxt = assistant("I will run the tests.", calls("c1"))
    built = assemble(head, "BODY", [nxt, tool_result("c1", "ok")], placement="merge")
    merged = built.messages[2]
    assert built.summary_index == 2 and len(built.messages) == 4
    assert merged.tool_calls == nxt.tool_calls
    text = content_text(merged.content)
    assert text.index(SUMMARY_TAG) < text.index(END_MARKER) < text.index("I will run the tests.")
    assert summary_body(merged) == "BODY"
    assert without_summary(merged) == nxt


def test_merge_into_a_message_with_parts_prepends_a_text_part() -> None:
    nxt = Message(role="user", content=({"type": "text", "text": "look"}, IMAGE))
    merged = assemble([assistant("a")], "BODY", [nxt], placement="merge").messages[1]
    assert isinstance(merged.content, tuple) and merged.content[1:] == nxt.content
    assert is_summary(merged)
    assert without_summary(merged) == nxt


def test_system_note_is_appended_once_across_passes() -> None:
    first = with_system_note(system("You are helpful."))
    again = with_system_note(first)
    assert again is first
    assert content_text(again.content) == f"You are helpful.\n\n{SYSTEM_NOTE}"
    parts = with_system_note(Message(role="system", content=({"type": "text", "text": "S"},)))
    assert content_text(parts.content) == f"S\n{SYSTEM_NOTE}"


def test_assemble_notes_the_system_prompt() -> None:
    built = assemble([system("S")], "BODY", [user("u")], placement="assistant")
    assert content_text(built.messages[0].content).count(SYSTEM_NOTE) == 1


def test_sanitizer_drops_results_whose_call_is_gone() -> None:
    msgs = [system("s"), user("u"), tool_result("gone", "x"), assistant("a")]
    out, dropped, stubbed = sanitize_tool_pairs(msgs)
    assert [m.role for m in out] == ["system", "user", "assistant"]
    assert (dropped, stubbed) == (1, 0)


def test_sanitizer_stubs_a_missing_result_right_after_its_group() -> None:
    msgs = [user("u"), assistant(None, calls("a", "b")), tool_result("a", "1"), user("next")]
    out, dropped, stubbed = sanitize_tool_pairs(msgs)
    assert [(m.role, m.tool_call_id) for m in out] == [
        ("user", None),
        ("assistant", None),
        ("tool", "a"),
        ("tool", "b"),
        ("user", None),
    ]
    assert out[3].content == STUB_RESULT
    assert (dropped, stubbed) == (0, 1)


def test_sanitizer_drops_a_second_result_for_the_same_call() -> None:
    msgs = [assistant(None, calls("a")), tool_result("a", "1"), tool_result("a", "again")]
    out, dropped, _ = sanitize_tool_pairs(msgs)
    assert len(out) == 2 and dropped == 1


def test_sanitizer_leaves_a_trailing_open_group_open() -> None:
    msgs = [user("u"), assistant(None, calls("a", "b")), tool_result("a", "1")]
    out, dropped, stubbed = sanitize_tool_pairs(msgs)
    assert out == msgs and (dropped, stubbed) == (0, 0)


def test_old_images_become_placeholders_but_the_newest_user_image_stays() -> None:
    old = Message(role="user", content=({"type": "text", "text": "first"}, IMAGE, IMAGE))
    shot = Message(role="tool", content=(IMAGE,), tool_call_id="c")
    newest = Message(role="user", content=({"type": "text", "text": "now this"}, IMAGE))
    sys_img = Message(role="system", content=({"type": "text", "text": "s"}, IMAGE))
    msgs = [sys_img, old, assistant("a", calls("c")), shot, assistant("b"), newest]
    out, removed = strip_old_images(msgs)
    assert removed == 3
    assert out[0] is sys_img and out[5] is newest
    assert out[1].content == (
        {"type": "text", "text": "first"},
        {"type": "text", "text": IMAGE_PLACEHOLDER},
        {"type": "text", "text": IMAGE_PLACEHOLDER},
    )
    assert out[3].content == ({"type": "text", "text": IMAGE_PLACEHOLDER},)


def test_every_summary_we_write_is_recognized_and_a_tag_alone_is_not() -> None:
    ours = [
        assemble([system("s")], "BODY", [assistant("a")], placement="user").messages[1],
        assemble([system("s")], "BODY", [user("u")], placement="assistant").messages[1],
        assemble([user("u")], "BODY", [assistant("a", calls("c"))], placement="merge").messages[1],
        assemble([assistant("a")], "BODY", [user("next")], placement="merge").messages[1],
        assemble(
            [assistant("a")],
            "BODY",
            [Message(role="user", content=({"type": "text", "text": "look"}, IMAGE))],
            placement="merge",
        ).messages[1],
    ]
    assert all(is_summary(m) and summary_body(m) == "BODY" for m in ours)
    pasted = f"{SUMMARY_TAG} notes from my other chat\n\nnow write the lexer tests"
    not_ours = [
        user(pasted),  # a person pasting (part of) a summary: no end marker
        assistant(f"{SUMMARY_TAG} I see the summary above; continuing."),  # a model echoing
        Message(role="user", content=({"type": "text", "text": pasted}, IMAGE)),
        # The end marker in a later part does not make the first part a summary of ours.
        Message(
            role="user",
            content=({"type": "text", "text": pasted}, {"type": "text", "text": END_MARKER}),
        ),
        Message(role="user", content=(IMAGE, {"type": "text", "text": f"{pasted}{END_MARKER}"})),
        tool_result("c", f"{SUMMARY_TAG} {END_MARKER}"),
    ]
    assert not any(is_summary(m) for m in not_ours)
    assert all(without_summary(m) is m for m in not_ours)


def test_the_prefix_says_the_exact_messages_can_be_recalled() -> None:
    assert "recall tool" in SUMMARY_PREFIX and "error message" in SUMMARY_PREFIX


@pytest.mark.parametrize("earlier", EARLIER_SUMMARY_PREFIXES)
def test_summaries_stored_under_an_earlier_prefix_are_still_ours(earlier: str) -> None:
    standalone = assistant(f"{earlier}\n\nBODY")
    merged = user(f"{earlier}\n\nBODY\n\n{END_MARKER}\n\nnext question")
    assert is_summary(standalone) and summary_body(standalone) == "BODY"
    assert is_summary(merged) and summary_body(merged) == "BODY"
    assert without_summary(standalone) is None
    assert without_summary(merged) == user("next question")
