"""The wire format: request bodies, plain and streamed answers, empty and reasoning-only content."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import httpx
import pytest

from worker.compressor.errors import (
    EmptySummaryError,
    ReasoningOnlyError,
    SummarizerError,
    SummarizerProtocolError,
    SummarizerRateLimitError,
    SummarizerServerError,
)
from worker.compressor.summarizer import SummaryRequest
from worker.summarizers.llm import LLMConfig, LLMSummarizer
from worker.summarizers.wire import (
    Completion,
    max_output_tokens,
    parse_completion,
    read_stream,
    request_body,
    split_think,
    summary_text,
)


def req(budget: int = 2000, max_out: int = 0) -> SummaryRequest:
    return SummaryRequest(
        prompt="P",
        window=(),
        previous_summary=None,
        focus_topic=None,
        budget_tokens=budget,
        max_output_tokens=max_out,
        today=date(2026, 1, 1),
    )


def sse(*chunks: Any, done: bool = True) -> list[str]:
    lines = [f"data: {json.dumps(c)}" for c in chunks]
    return [*lines, *(["data: [DONE]"] if done else [])]


def delta(content: str | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"content": content} if content is not None else {}
    d.update(extra)
    return {"choices": [{"index": 0, "delta": d, "finish_reason": finish}]}


def test_max_tokens_is_the_budget_times_1_3_unless_the_request_says() -> None:
    assert max_output_tokens(req(2000)) == 2600
    assert max_output_tokens(req(2001)) == 2602  # rounded up
    assert max_output_tokens(req(2000, max_out=1234)) == 1234


def test_request_body_streams_with_usage() -> None:
    body = request_body("m", req(), max_tokens=10, temperature=0.1, stream=True)
    assert body == {
        "model": "m",
        "messages": [{"role": "user", "content": "P"}],
        "max_tokens": 10,
        "temperature": 0.1,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    assert "stream" not in request_body("m", req(), max_tokens=10, temperature=0, stream=False)


def test_plain_answer_with_usage_and_part_list_content() -> None:
    data = {
        "choices": [
            {
                "message": {
                    "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
                },
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2},
    }
    got = parse_completion(data, model="m")
    assert (got.content, got.finish_reason, got.input_tokens, got.output_tokens) == (
        "ab",
        "stop",
        5,
        2,
    )


@pytest.mark.parametrize(
    "data",
    [[], {"choices": []}, {"choices": [1]}, {"choices": [{"message": "x"}]}, {"id": "x"}],
)
def test_malformed_plain_answers_are_protocol_errors(data: Any) -> None:
    with pytest.raises(SummarizerProtocolError):
        parse_completion(data, model="m")


def test_error_object_in_a_200_is_classified_by_its_code() -> None:
    with pytest.raises(SummarizerRateLimitError):
        parse_completion({"error": {"code": 429, "message": "slow down"}}, model="m")
    with pytest.raises(SummarizerServerError):  # no numeric code: a broken gateway
        parse_completion({"error": {"message": "oops"}}, model="m")


def test_stream_folds_content_reasoning_finish_and_usage() -> None:
    lines = [
        ": keep-alive",
        "",
        "event: message",
        *sse(
            delta(role="assistant", content=""),
            delta(reasoning_content="think "),
            delta(reasoning="more"),
            delta("Hello, "),
            delta("world"),
            delta(finish="stop"),
            {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4}},
        ),
    ]
    got = read_stream(lines, model="m")
    assert (got.content, got.reasoning, got.finish_reason) == ("Hello, world", "think more", "stop")
    assert (got.input_tokens, got.output_tokens) == (9, 4)


def test_stream_with_finish_reason_but_no_done_is_accepted() -> None:
    assert read_stream(sse(delta("x"), delta(finish="stop"), done=False), model="m").content == "x"


def test_stream_without_done_or_finish_reason_was_cut() -> None:
    with pytest.raises(SummarizerProtocolError, match="closed before"):
        read_stream(sse(delta("partial"), done=False), model="m")


@pytest.mark.parametrize(
    "bad", ["data: {broken", "data: [1, 2]", "data: " + "[" * 5_000 + "]" * 5_000]
)
def test_garbage_in_a_stream_is_a_protocol_error(bad: str) -> None:
    with pytest.raises(SummarizerProtocolError):
        read_stream([*sse(delta("a"), done=False), bad], model="m")


def test_error_event_in_a_stream_is_classified() -> None:
    with pytest.raises(SummarizerServerError):
        read_stream(['data: {"error": {"code": 503, "message": "overloaded"}}'], model="m")


@pytest.mark.parametrize(
    ("completion", "error"),
    [
        (Completion(content=""), EmptySummaryError),
        (Completion(content=" \n\t"), EmptySummaryError),
        (Completion(content="", reasoning="hmm", finish_reason="length"), ReasoningOnlyError),
        (Completion(content="<think>never closed"), ReasoningOnlyError),
        (Completion(content="<think>done</think>   "), ReasoningOnlyError),
    ],
)
def test_empty_or_reasoning_only_content_is_never_a_summary(
    completion: Completion, error: type[EmptySummaryError]
) -> None:
    with pytest.raises(error) as info:
        summary_text(completion, model="m")
    assert type(info.value) is error and info.value.error_class == "empty_summary"


def test_summary_text_is_stripped_and_keeps_what_follows_a_think_block() -> None:
    assert summary_text(Completion(content="\n  ## Goal\n  x \n"), model="m") == "## Goal\n  x"
    assert split_think("  <think>a</think>b") == ("b", "a")
    assert split_think("no <think> here") == ("no <think> here", "")


@pytest.mark.parametrize("status", [200, 400])
def test_an_answer_nested_too_deep_to_parse_is_a_summarizer_error(status: int) -> None:
    """A real in-memory transport answering JSON nested past the parser's recursion limit
    (a RecursionError escaped the client before, failing the job instead of falling back)."""
    deep = b"[" * 5_000 + b"]" * 5_000

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=deep, headers={"content-type": "application/json"})

    config = LLMConfig(base_url="http://llm.invalid/v1", models=("a",), stream=False)
    with (
        LLMSummarizer(config, transport=httpx.MockTransport(answer)) as llm,
        pytest.raises(SummarizerError) as info,
    ):
        llm.summarize(req())
    if status == 200:
        assert isinstance(info.value, SummarizerProtocolError)
        assert "invalid JSON from model 'a'" in str(info.value)


def test_client_translates_transport_exceptions_once() -> None:
    """A real in-memory transport raising what a dead network would."""

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadError("connection reset by peer", request=request)

    config = LLMConfig(base_url="http://llm.invalid/v1", models=("a", "b"))
    with (
        LLMSummarizer(config, transport=httpx.MockTransport(refuse)) as llm,
        pytest.raises(SummarizerProtocolError) as info,
    ):
        llm.summarize(req())
    assert info.value.model == "b" and (info.value.aux_model_failed or "").startswith(
        "protocol_error"
    )
    assert isinstance(info.value.__cause__, httpx.ReadError)
