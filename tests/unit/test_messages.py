from __future__ import annotations

import pytest

from tests.data import real_transcripts
from worker.compressor.errors import InvalidTranscriptError
from worker.compressor.messages import parse_messages, to_wire_list
from worker.compressor.tokens import IMAGE_TOKENS, TokenCounter, encoding_name_for_model


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
    ],
)
def test_malformed_messages_name_index_and_problem(raw: object, needle: str) -> None:
    with pytest.raises(InvalidTranscriptError) as info:
        parse_messages(raw)
    assert needle in str(info.value)


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
