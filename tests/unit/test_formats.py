"""Anthropic Messages and OpenAI Responses transcripts through the core (``formats.py``).

Generated transcripts (tests/strategies.py) are written in each format as a gateway of that
provider holds them (tests/support/wire_formats.py: thinking blocks with signatures,
``cache_control``, ``is_error``, encrypted reasoning, a provider ``compaction`` item, ids).
Uncompacted, they come back identical; compacted, the provider's rules hold, every opaque
block or item that comes back is one that came in, unchanged, and none reaches a summarizer.
"""

from __future__ import annotations

import copy
import json
from datetime import date
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import Transcript, transcripts
from tests.support.invariants import violations
from tests.support.summarizers import ScriptedSummarizer
from tests.support.wire_formats import (
    anthropic_violations,
    blocks_with_opaque,
    opaque_values,
    responses_violations,
    to_anthropic,
    to_responses,
)
from worker.compressor import formats
from worker.compressor.compress import compress
from worker.compressor.config import CompressConfig
from worker.compressor.errors import InvalidTranscriptError
from worker.compressor.extractive import ExtractiveSummarizer
from worker.compressor.markers import is_summary
from worker.compressor.messages import Message, content_text
from worker.compressor.summarizer import Summarizer
from worker.encodings import counter_for_model

TODAY = date(2026, 2, 2)
COUNTER = counter_for_model("gpt-4")
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def in_format(fmt: formats.Format, tr: Transcript, seed: int) -> formats.Transcript:
    if fmt == formats.ANTHROPIC:
        system, turns = to_anthropic(tr.messages, seed)
        return formats.Transcript(fmt, turns, system)
    return formats.Transcript(fmt, to_responses(tr.messages, seed))


def rule_violations(wire: formats.Transcript) -> list[str]:
    if wire.format == formats.ANTHROPIC:
        return anthropic_violations(wire.system, wire.messages)
    return responses_violations(wire.messages)


def compact(
    wire: formats.Transcript, summarizer: Summarizer, context_length: int, *, passes: int = 0
) -> tuple[list[Message], list[Message], formats.Transcript]:
    """The records read, the records compacted, and those written back."""
    records = formats.read(wire.format, wire.messages, wire.system)
    result = compress(
        records,
        config=CompressConfig(context_length=context_length),
        summarizer=summarizer,
        counter=COUNTER,
        today=TODAY,
        compaction_count=passes,  # after the first, no first turns are protected
    )
    return records, result.messages, formats.write(wire.format, result.messages)


FORMATS = [formats.ANTHROPIC, formats.RESPONSES]


@pytest.mark.parametrize("fmt", FORMATS)
@PROPERTY
@given(tr=transcripts(), seed=st.integers(0, 2**16))
def test_an_uncompacted_transcript_comes_back_as_it_came(
    fmt: formats.Format, tr: Transcript, seed: int
) -> None:
    wire = in_format(fmt, tr, seed)
    sent = copy.deepcopy((wire.messages, wire.system))
    assert rule_violations(wire) == []  # what we are handed is what the provider takes
    back = formats.write(fmt, formats.read(fmt, wire.messages, wire.system))
    assert json.dumps((back.messages, back.system), sort_keys=True) == json.dumps(
        sent, sort_keys=True
    )


@pytest.mark.parametrize("fmt", FORMATS)
@PROPERTY
@given(
    tr=transcripts(),
    seed=st.integers(0, 2**16),
    context_length=st.integers(600, 6_000),
    llm=st.booleans(),
)
def test_a_compacted_transcript_keeps_the_providers_rules_and_its_opaque_blocks(
    fmt: formats.Format, tr: Transcript, seed: int, context_length: int, llm: bool
) -> None:
    wire = in_format(fmt, tr, seed)
    sent_opaque = set(blocks_with_opaque([wire.messages, wire.system]))
    summarizer: Summarizer = ScriptedSummarizer() if llm else ExtractiveSummarizer()
    read, records, out = compact(wire, summarizer, context_length)
    assert violations(read, records) == []  # the core's own invariants, as ever
    assert rule_violations(out) == []
    # Thinking signatures, encrypted reasoning, a provider compaction: what comes back came
    # in, whole and unchanged.
    assert set(blocks_with_opaque([out.messages, out.system])) <= sent_opaque
    if isinstance(summarizer, ScriptedSummarizer):
        prompts = "\n".join(summarizer.prompts)
        assert not [v for v in opaque_values([wire.messages, wire.system]) if v in prompts]


def test_the_summary_opens_the_users_turn_after_an_anthropic_system_prompt() -> None:
    """The Messages API takes no assistant turn first: a summary placed right after the system
    prompt (an assistant message in chat form) opens the user's turn."""
    turns: list[dict[str, Any]] = [{"role": "user", "content": "Plan the migration " * 40}]
    for n in range(12):
        turns.append({"role": "assistant", "content": f"Step {n}: " + "details " * 80})
        turns.append({"role": "user", "content": f"ok, next {n} " + "words " * 60})
    *_, out = compact(
        formats.Transcript(formats.ANTHROPIC, turns, "You plan migrations."),
        ExtractiveSummarizer(),
        4_000,
        passes=1,
    )
    assert out.system.startswith("You plan migrations.\n")  # the compaction note appended
    assert anthropic_violations(out.system, out.messages) == []
    first = out.messages[0]
    assert first["role"] == "user"
    assert is_summary(formats.read(formats.ANTHROPIC, [first])[0])
    assert out.messages[-1] == turns[-1]  # the latest user message, as it came
    # The next pass finds the summary in the user's turn, and the turn's own words after it.
    turns2 = [
        *out.messages,
        {"role": "assistant", "content": "More steps. " + "details " * 300},
        {"role": "user", "content": "and now the rollback plan"},
    ]
    read, records, again = compact(
        formats.Transcript(formats.ANTHROPIC, turns2, out.system),
        ExtractiveSummarizer(),
        4_000,
        passes=2,
    )
    assert violations(read, records) == []
    assert anthropic_violations(again.system, again.messages) == []
    assert again.messages[-1] == turns2[-1]
    assert sum(is_summary(m) for m in formats.read(formats.ANTHROPIC, again.messages)) == 1


def test_a_pruned_tool_result_keeps_its_block_fields() -> None:
    """The head's old tool output becomes its one-line account; the block keeps ``is_error``
    and ``cache_control``, and the turn's other blocks stay as they were."""
    big = "Traceback (most recent call last):\n" + "  File 'x.py', line 1\n" * 400
    turns: list[dict[str, Any]] = [
        {"role": "user", "content": "run the tests"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "run pytest", "signature": "sig-1"},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "bash",
                    "input": {"command": "pytest"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": big,
                    "is_error": True,
                    "cache_control": {"type": "ephemeral"},
                }
            ],
        },
    ]
    for n in range(10):
        turns.append({"role": "assistant", "content": f"Reading part {n}. " + "notes " * 120})
        turns.append({"role": "user", "content": f"go on {n}"})
    records = formats.read(formats.ANTHROPIC, turns)
    result = compress(
        records,
        config=CompressConfig(context_length=9_000, protect_first_n=3),
        summarizer=ExtractiveSummarizer(),
        counter=COUNTER,
        today=TODAY,
    )
    out = formats.write(formats.ANTHROPIC, result.messages)
    assert anthropic_violations(out.system, out.messages) == []
    results = [
        b
        for t in out.messages
        if isinstance(t["content"], list)
        for b in t["content"]
        if b.get("type") == "tool_result"
    ]
    assert results, "the protected head keeps the tool result"
    (kept,) = results
    assert kept["is_error"] is True and kept["cache_control"] == {"type": "ephemeral"}
    assert len(json.dumps(kept["content"])) < len(big) // 4  # pruned to its account
    assert out.messages[1] == turns[1]  # the thinking turn, signature and all


def test_responses_items_are_read_as_one_assistant_turn_and_its_outputs() -> None:
    items: list[dict[str, Any]] = [
        {"role": "developer", "content": "Be brief."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"},
        {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": '{"cmd":"ls"}'},
        {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": "*** Begin"},
        {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
        {"type": "custom_tool_call_output", "call_id": "c2", "output": "done"},
        {"type": "compaction", "encrypted_content": "cmp"},
    ]
    records = formats.read(formats.RESPONSES, items)
    assert [(m.role, m.tool_call_id, [c.id for c in m.tool_calls]) for m in records] == [
        ("system", None, []),
        ("user", None, []),
        ("assistant", None, ["c1", "c2"]),
        ("tool", "c1", []),
        ("tool", "c2", []),
        ("assistant", None, []),
    ]
    assert records[2].tool_calls[1].arguments == "*** Begin"  # a custom tool's raw input
    assert content_text(records[1].content) == "fix it"
    assert content_text(records[2].content) == ""  # the reasoning is not read
    assert formats.write(formats.RESPONSES, records).messages == items


@pytest.mark.parametrize(
    ("fmt", "messages", "system", "where"),
    [
        (
            formats.ANTHROPIC,
            [{"role": "user", "content": [{"text": "x"}]}],
            None,
            "messages[0].content[0]",
        ),
        (formats.ANTHROPIC, [{"role": "tool", "content": "x"}], None, "messages[0].role"),
        (
            formats.ANTHROPIC,
            [
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t", "name": "f", "input": []}],
                },
            ],
            None,
            "messages[1].content[0].input",
        ),
        (
            formats.ANTHROPIC,
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "a"},
                        {"type": "tool_result", "tool_use_id": "t"},
                    ],
                }
            ],
            None,
            "messages[0].content[1]",
        ),
        (formats.ANTHROPIC, [{"role": "user", "content": "q"}], [{"type": "image"}], "system"),
        (formats.ANTHROPIC, [{"role": "user", "content": []}], None, "messages[0].content"),
        (
            formats.RESPONSES,
            [{"type": "function_call", "name": "f", "arguments": "{}"}],
            None,
            "messages[0].call_id",
        ),
        (
            formats.RESPONSES,
            [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}],
            None,
            "messages[0].arguments",
        ),
        (formats.RESPONSES, [{"role": "tool", "content": "x"}], None, "messages[0].role"),
        (formats.RESPONSES, [{"content": "x"}], None, "messages[0].type"),
        (formats.RESPONSES, [{"role": "user", "content": "q"}], "sys", "system is given apart"),
        (formats.CHAT, [{"role": "user", "content": "q"}], "sys", "system is given apart"),
        # No database stores a lone surrogate: refused in every format, by where it is.
        (formats.ANTHROPIC, [{"role": "user", "content": "a\ud83d"}], None, "messages[0]: content"),
        (formats.ANTHROPIC, [{"role": "user", "content": "q"}], "sys \ud83d", "system holds"),
        (
            formats.RESPONSES,
            [{"type": "function_call_output", "call_id": "c", "output": "x\ud800"}],
            None,
            "messages[0]: output holds a lone surrogate",
        ),
    ],
)
def test_a_malformed_block_or_item_is_named_by_its_path(
    fmt: formats.Format, messages: list[Any], system: Any, where: str
) -> None:
    with pytest.raises(InvalidTranscriptError) as err:
        formats.read(fmt, messages, system)
    assert str(err.value).startswith(where), str(err.value)


def test_a_format_is_one_of_the_three() -> None:
    assert [formats.check_format(f) for f in formats.FORMATS] == list(formats.FORMATS)
    with pytest.raises(InvalidTranscriptError, match="unknown format 'anthropic'"):
        formats.check_format("anthropic")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
KEYS = st.sampled_from(
    [
        "role",
        "content",
        "type",
        "text",
        "id",
        "name",
        "input",
        "tool_use_id",
        "call_id",
        "arguments",
        "output",
        "is_error",
        "signature",
        "thinking",
        "encrypted_content",
    ]
)
VALUES = st.sampled_from(
    [
        "user",
        "assistant",
        "system",
        "developer",
        "tool",
        "text",
        "tool_use",
        "tool_result",
        "thinking",
        "message",
        "function_call",
        "function_call_output",
        "reasoning",
        "custom_tool_call",
        "input_text",
        "output_text",
        "x",
    ]
)
SHAPED = st.recursive(
    VALUES | JSON,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=25,
)


@pytest.mark.parametrize("fmt", formats.FORMATS)
@settings(max_examples=300, deadline=None)
@given(messages=st.lists(SHAPED, max_size=5), system=st.none() | SHAPED)
def test_any_json_is_read_or_refused_by_name_and_what_is_read_comes_back(
    fmt: formats.Format, messages: list[Any], system: Any
) -> None:
    sent = copy.deepcopy((messages, system))
    try:
        records = formats.read(fmt, messages, system)
    except InvalidTranscriptError as exc:
        assert str(exc)  # names the problem
        return
    back = formats.write(fmt, records)
    assert (back.messages, back.system if fmt == formats.ANTHROPIC else None) == (
        sent[0],
        sent[1] if fmt == formats.ANTHROPIC else None,
    )
