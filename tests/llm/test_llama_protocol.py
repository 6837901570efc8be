"""The LLM client against a real llama.cpp server (SmolLM2-135M): the protocol, not the prose.

A 135M-parameter model cannot judge summary quality, so these assert what a real server does
with our requests: statuses, usage accounting, streaming, the output cap, and the 400 for a
prompt longer than the window, classified the way the fake server taught us to expect.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import httpx
import pytest

from tests.llm.conftest import MODEL_ALIAS, N_CTX
from worker.compressor.errors import SummarizerContextTooLongError
from worker.compressor.summarizer import SummaryRequest
from worker.summarizers.classify import error_for_status
from worker.summarizers.llm import LLMConfig, LLMSummarizer

pytestmark = pytest.mark.llm

PROMPT = (
    "Summarize this conversation in two sentences.\n"
    "USER: Please rename the function parse_cfg to parse_config in config.py.\n"
    "ASSISTANT: Done. I renamed it and updated the two call sites in main.py."
)


def request(prompt: str = PROMPT, max_output_tokens: int = 48) -> SummaryRequest:
    return SummaryRequest(
        prompt=prompt,
        window=(),
        previous_summary=None,
        focus_topic=None,
        budget_tokens=max_output_tokens,
        max_output_tokens=max_output_tokens,
        today=date(2026, 1, 1),
    )


def client(base_url: str, **kw: Any) -> LLMSummarizer:
    fields: dict[str, Any] = {
        "base_url": base_url,
        "models": (MODEL_ALIAS,),
        "context_length": N_CTX,
        "read_timeout_s": 60.0,
        "deadline_s": 120.0,
    }
    fields.update(kw)
    return LLMSummarizer(LLMConfig(**fields))


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_summary_with_usage_and_latency(llama_base_url: str, stream: bool) -> None:
    with client(llama_base_url, stream=stream) as llm:
        out = llm.summarize(request())
    assert out.text.strip() and out.model == MODEL_ALIAS
    assert out.latency_ms is not None and out.latency_ms > 0
    if stream and out.input_tokens is None:
        # llama-cpp-python 0.3.x ignores stream_options.include_usage: no usage in streams.
        assert out.output_tokens is None
        return
    assert out.input_tokens is not None and out.input_tokens > 20
    assert out.output_tokens is not None and 1 <= out.output_tokens <= 48


def test_raw_answer_has_the_openai_shape_and_respects_max_tokens(llama_base_url: str) -> None:
    body = {
        "model": MODEL_ALIAS,
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": 8,
        "temperature": 0.2,
    }
    with httpx.Client(timeout=60) as http:
        response = http.post(f"{llama_base_url}/chat/completions", json=body)
    assert response.status_code == 200
    data = response.json()
    assert data["object"] == "chat.completion"
    choice = data["choices"][0]
    assert choice["message"]["role"] == "assistant"
    assert choice["finish_reason"] in ("length", "stop")
    assert 1 <= data["usage"]["completion_tokens"] <= 8
    assert data["usage"]["total_tokens"] == (
        data["usage"]["prompt_tokens"] + data["usage"]["completion_tokens"]
    )


def test_stream_is_server_sent_events_ending_in_done(llama_base_url: str) -> None:
    body = {
        "model": MODEL_ALIAS,
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": 16,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with (
        httpx.Client(timeout=60) as http,
        http.stream("POST", f"{llama_base_url}/chat/completions", json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        data_lines = [line for line in response.iter_lines() if line.startswith("data:")]
    assert data_lines[-1].strip() == "data: [DONE]"
    assert len(data_lines) >= 3


def test_over_long_prompt_is_a_400_we_classify_as_context_too_long(llama_base_url: str) -> None:
    prompt = "alpha beta gamma delta " * 1500  # ~6000 tokens into a 2048-token window
    body = {
        "model": MODEL_ALIAS,
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": 8,
    }
    with httpx.Client(timeout=120) as http:
        response = http.post(f"{llama_base_url}/chat/completions", json=body)
    assert response.status_code == 400
    error = error_for_status(400, response.content, response.headers, model=MODEL_ALIAS)
    assert isinstance(error, SummarizerContextTooLongError), response.text
    with client(llama_base_url) as llm, pytest.raises(SummarizerContextTooLongError):
        llm.summarize(request(prompt=prompt))


def test_the_client_recovers_after_the_server_broke_a_stream(llama_base_url: str) -> None:
    """llama-cpp-python fails an over-long *streamed* prompt after its headers, then drops the
    keep-alive connection: the client must still classify it and keep working afterwards."""
    prompt = "alpha beta gamma delta " * 1500
    with client(llama_base_url, stream=True) as llm:
        with pytest.raises(SummarizerContextTooLongError):
            llm.summarize(request(prompt=prompt))
        for _ in range(2):
            assert llm.summarize(request(max_output_tokens=8)).text.strip()


def test_a_single_model_server_answers_any_model_name(llama_base_url: str) -> None:
    """llama-cpp-python serves its one model under any name: no 404, so no fallback here (the
    fallback chain is exercised against the fake server)."""
    with client(llama_base_url, models=("no-such-model", MODEL_ALIAS)) as llm:
        out = llm.summarize(request(max_output_tokens=8))
    assert (out.model, out.aux_model_failed) == ("no-such-model", None)
    assert out.text.strip()
