from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.data import real_transcripts
from worker.compressor.errors import InvalidTranscriptError
from worker.compressor.messages import (
    MAX_NESTING,
    Message,
    ToolCall,
    _parse_any,
    assistant,
    parse_message,
    parse_messages,
    to_wire_list,
    tool_result,
    user,
)
from worker.compressor.tokens import IMAGE_TOKENS, TokenCounter, encoding_name_for_model
from worker.compressor.tooluse import read_tool_uses


def test_wire_round_trip_keeps_every_key() -> None:
    raw = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}], "metadata": {"k": 1}},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
            "reasoning_content": "why",
        },
        {"role": "tool", "content": "ok", "tool_call_id": "c1", "name": "f"},
    ]
    assert to_wire_list(parse_messages(raw)) == raw


def test_real_transcripts_round_trip() -> None:
    sessions = real_transcripts()
    assert len(sessions) == 38
    for name, raw in sessions:
        assert to_wire_list(parse_messages(list(raw))) == list(raw), name


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ({"messages": []}, "must be a JSON array"),
        ([{"role": "bot", "content": "x"}], "messages[0]: role must be one of"),
        (
            [{"role": "user", "content": "a"}, {"role": "tool", "content": "x"}],
            "messages[1]: a tool message needs",
        ),
        ([{"role": "user", "content": None}], "needs content"),
        ([{"role": "assistant", "content": None}], "needs content or tool_calls"),
        ([{"role": "user", "content": [{"type": "audio"}]}], "unsupported part type 'audio'"),
        (
            [
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": {}}}],
                }
            ],
            "arguments must be a JSON string, got object",
        ),
        ([{"role": "user", "content": "x", "tool_calls": []}], "only allowed on assistant"),
        (
            [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "a", "type": "function", "function": {"name": "f", "arguments": ""}},
                        {"id": "a", "type": "function", "function": {"name": "g", "arguments": ""}},
                    ],
                }
            ],
            "tool call id 'a' appears twice",
        ),
    ],
)
def test_malformed_messages_name_index_and_problem(raw: object, needle: str) -> None:
    with pytest.raises(InvalidTranscriptError) as info:
        parse_messages(raw)
    assert needle in str(info.value)


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"inner": value} if depth % 2 else [value]
    return value


@pytest.mark.parametrize("depth", [63, 64, 900])
def test_a_message_nested_past_the_limit_is_refused(depth: int) -> None:
    # The message is a level of its own: an extra field nested 63 deep makes 64 levels.
    msg = {"role": "user", "content": "x", "meta": _nested(depth)}
    if depth + 1 <= MAX_NESTING:
        assert parse_messages([msg])[0].extra["meta"] == msg["meta"]
        return
    with pytest.raises(InvalidTranscriptError) as info:
        parse_messages([{"role": "system", "content": "s"}, msg])
    assert str(info.value) == (
        "messages[1]: a message may nest objects and arrays at most 64 levels deep"
    )


def test_image_parts_cost_a_fixed_amount_not_their_base64(counter: TokenCounter) -> None:
    payload = "data:image/png;base64," + "A" * 500_000
    small, big = parse_messages(
        [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]},
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": payload}}]},
        ]
    )
    assert counter.count_message(small) == counter.count_message(big)
    assert IMAGE_TOKENS <= counter.count_message(big) < IMAGE_TOKENS + 20


def test_encoding_follows_model_family() -> None:
    assert encoding_name_for_model("gpt-4o-mini") == "o200k_base"
    assert encoding_name_for_model("openai/gpt-5.1") == "o200k_base"
    assert encoding_name_for_model("gpt-4") == "cl100k_base"
    assert encoding_name_for_model("deepseek-chat") == "cl100k_base"
    assert encoding_name_for_model(None) == "cl100k_base"


# ---------------------------------------------------------------------------------------------
# The fast path for common shapes gives what the general parser gives, or leaves it the case.

ODD_VALUES: list[object] = [
    *("", None, 3, [], {}, "c1", "function", [{"type": "text", "text": "hi"}]),
    *("a\ud800", "\udc00", "é 😀"),  # lone surrogates (refused) and a character beyond the BMP
]


def _valid_call(i: int) -> dict[str, Any]:
    return {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}


@st.composite
def wire_messages(draw: st.DrawFn) -> dict[str, Any]:
    """A message of a common shape, then a few keys removed, added or given odd values."""
    role = draw(st.sampled_from(["user", "assistant", "system", "tool", "tool_calls"]))
    if role == "tool":
        raw: dict[str, Any] = {"role": "tool", "content": "out", "tool_call_id": "c1"}
        if draw(st.booleans()):
            raw["name"] = "bash"
    elif role == "tool_calls":
        calls = [_valid_call(i) for i in range(draw(st.integers(1, 3)))]
        raw = {
            "role": "assistant",
            "content": draw(st.sampled_from([None, ""])),
            "tool_calls": calls,
        }
        for call in draw(st.lists(st.sampled_from(calls), max_size=2)):
            function = call.get("function")
            target = draw(
                st.sampled_from([call, function] if isinstance(function, dict) else [call])
            )
            key = draw(st.sampled_from(["id", "type", "function", "name", "arguments", "extra"]))
            if draw(st.booleans()):
                target.pop(key, None)
            else:
                target[key] = draw(st.sampled_from(ODD_VALUES))
    else:
        raw = {"role": role, "content": "text"}
    keys = ["role", "content", "tool_calls", "tool_call_id", "name", "reasoning_content"]
    for key in draw(st.lists(st.sampled_from(keys), max_size=2)):
        if draw(st.booleans()):
            raw.pop(key, None)
        else:
            raw[key] = draw(st.sampled_from([*ODD_VALUES, "bot"]))
    return raw


def _full(msg: Message) -> tuple[object, ...]:
    """Every field, the ones equality ignores (extras) and their types included."""
    calls = tuple((c, dict(c.extra), type(c.extra)) for c in msg.tool_calls)
    return (msg, calls, dict(msg.extra), type(msg.extra))


@given(wire_messages())
def test_common_shapes_parse_exactly_as_the_general_parser_does(raw: dict[str, Any]) -> None:
    try:
        expected: object = _full(_parse_any(raw, 7))
    except InvalidTranscriptError as exc:
        expected = str(exc)
    try:
        got: object = _full(parse_message(raw, index=7))
    except InvalidTranscriptError as exc:
        got = str(exc)
    assert got == expected


def test_a_result_answers_the_newest_call_before_it_with_its_id() -> None:
    first = ToolCall("call_0", "bash", "{}")
    second = ToolCall("call_0", "bash", '{"command": "ls"}')
    other = ToolCall("call_1", "bash", "{}")
    msgs = [
        tool_result("call_0", "before any call"),
        assistant(None, [first]),
        tool_result("call_0", "a"),
        user("next"),
        assistant(None, [second, other]),
        tool_result("call_1", "c"),
        tool_result("call_0", "b"),
        tool_result("call_9", "unknown"),
    ]
    by_result = read_tool_uses(msgs).by_result
    assert by_result[2].call is first and by_result[6].call is second
    assert by_result[5].call is other
    assert set(by_result) == {2, 5, 6}  # a result before any call, or of no call, answers none


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ({"role": "user", "content": "bad \ud800 x"}, "content holds a lone surrogate (U+D800)"),
        ({"role": "user", "content": [{"type": "text", "text": "\udfff"}]}, "content[0].text"),
        ({"role": "tool", "content": "x", "tool_call_id": "c\udc00"}, "tool_call_id"),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"a": 1}\ud83d'},
                    }
                ],
            },
            "tool_calls[0].function.arguments holds a lone surrogate (U+D83D) at character 8",
        ),
        ({"role": "user", "content": "x", "meta": {"k": ["a", "\ud800"]}}, "meta.k[1]"),
        ({"role": "user", "content": "x", "\ud800": 1}, "the key '\\ud800'"),
    ],
)
def test_a_lone_surrogate_anywhere_is_refused_naming_where(raw: dict[str, Any], where: str) -> None:
    # Not Unicode: counting, storing or sending such a message would fail later, far from here.
    with pytest.raises(InvalidTranscriptError) as err:
        parse_messages([{"role": "system", "content": "s"}, raw])
    assert str(err.value).startswith("messages[1]: ") and where in str(err.value)
    assert "that is not Unicode text" in str(err.value)


def test_characters_beyond_the_basic_plane_are_text() -> None:
    # Escaped as a surrogate pair in JSON ("\ud83d\ude00"), they decode to one character.
    msg = parse_messages([{"role": "user", "content": "ok \U0001f600"}])[0]
    assert msg.content == "ok 😀"
