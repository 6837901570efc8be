"""The LLM summarizer against a real local chat-completions server playing scripted answers.

Every failure the client must survive is played for real over a socket: statuses with bodies
and headers, slow and trickling answers, broken JSON, bodies cut short, streams closed early,
empty and reasoning-only content. Each test checks the exact error class and the telemetry.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from tests.support.fake_openai import FakeOpenAI, Reply
from worker.compressor.errors import (
    EmptySummaryError,
    ReasoningOnlyError,
    SummarizerAuthError,
    SummarizerConnectionError,
    SummarizerContextTooLongError,
    SummarizerError,
    SummarizerModelNotFoundError,
    SummarizerProtocolError,
    SummarizerRateLimitError,
    SummarizerRequestError,
    SummarizerServerError,
    SummarizerTimeoutError,
    SummarizerUnavailableError,
)
from worker.compressor.summarizer import SummaryRequest
from worker.compressor.tokens import TokenCounter
from worker.errors import LLMPoolBusyError
from worker.settings import Settings
from worker.summarizers import build_summarizer, close_summarizer
from worker.summarizers.llm import LLMConfig, LLMSummarizer

pytestmark = pytest.mark.integration

SMALL, MAIN = "small-summarizer", "main-model"
KEY = "sk-test-secret-0123456789"


def make_request(
    prompt: str = "Summarize: the user asked for X; we did Y.", **kw: Any
) -> SummaryRequest:
    fields: dict[str, Any] = {
        "prompt": prompt,
        "window": (),
        "previous_summary": None,
        "focus_topic": None,
        "budget_tokens": 2000,
        "max_output_tokens": 2600,
        "today": datetime(2026, 1, 2, tzinfo=UTC).date(),
    }
    fields.update(kw)
    return SummaryRequest(**fields)


@contextlib.contextmanager
def client(fake: FakeOpenAI, **kw: Any) -> Iterator[LLMSummarizer]:
    fields: dict[str, Any] = {
        "base_url": fake.base_url,
        "models": (SMALL, MAIN),
        "read_timeout_s": 5.0,
        "deadline_s": 10.0,
    }
    fields.update(kw)
    counter = fields.pop("counter", None)
    sleep = fields.pop("sleep", time.sleep)
    with LLMSummarizer(LLMConfig(**fields), counter=counter, sleep=sleep) as llm:
        yield llm


def fail(fake: FakeOpenAI, **kw: Any) -> SummarizerError:
    with client(fake, **kw) as llm, pytest.raises(SummarizerError) as info:
        llm.summarize(make_request())
    return info.value


def models_asked(fake: FakeOpenAI) -> list[str | None]:
    return [r.model for r in fake.requests]


# -- success -------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
def test_success_reports_text_model_usage_and_latency(
    fake_openai: FakeOpenAI, stream: bool
) -> None:
    fake_openai.script(
        SMALL, Reply.ok("## Goal\nShip it.", prompt_tokens=321, completion_tokens=45)
    )
    with client(fake_openai, stream=stream) as llm:
        out = llm.summarize(make_request())
    assert out.text == "## Goal\nShip it."
    assert (out.model, out.input_tokens, out.output_tokens) == (SMALL, 321, 45)
    assert out.latency_ms is not None and out.latency_ms > 0
    assert out.aux_model_failed is None
    (sent,) = fake_openai.requests
    assert sent.stream is stream
    assert sent.max_tokens == 2600
    assert sent.body["temperature"] == pytest.approx(0.2)
    assert sent.messages == [{"role": "user", "content": make_request().prompt}]


def test_max_tokens_defaults_to_budget_times_1_3(fake_openai: FakeOpenAI) -> None:
    with client(fake_openai) as llm:
        llm.summarize(make_request(budget_tokens=3000, max_output_tokens=0))
    assert fake_openai.requests[0].max_tokens == 3900


def test_server_that_ignores_stream_and_answers_json_still_works(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(SMALL, Reply.ok("plain answer", stream=False, prompt_tokens=7))
    with client(fake_openai, stream=True) as llm:
        out = llm.summarize(make_request())
    assert (out.text, out.input_tokens) == ("plain answer", 7)
    assert fake_openai.requests[0].stream


def test_stream_without_usage_leaves_tokens_unknown(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(SMALL, Reply.ok("fine", usage=False))
    with client(fake_openai) as llm:
        out = llm.summarize(make_request())
    assert (out.text, out.input_tokens, out.output_tokens) == ("fine", None, None)


def test_leading_think_block_is_not_part_of_the_summary(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(SMALL, Reply.ok("<think>plan the sections</think>\n## Goal\nDone."))
    with client(fake_openai) as llm:
        assert llm.summarize(make_request()).text == "## Goal\nDone."


def test_connections_are_pooled_and_reused(fake_openai: FakeOpenAI) -> None:
    with client(fake_openai) as llm:
        for _ in range(3):
            llm.summarize(make_request())
    ports = {r.peer_port for r in fake_openai.requests}
    assert len(fake_openai.requests) == 3 and len(ports) == 1


def test_api_key_is_sent_but_never_shown(
    fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    fake_openai.script(SMALL, Reply.error(500))
    fake_openai.script(MAIN, Reply.error(401, code="invalid_api_key"))
    caplog.set_level(logging.DEBUG)
    with client(fake_openai, api_key=SecretStr(KEY)) as llm:
        with pytest.raises(SummarizerAuthError) as info:
            llm.summarize(make_request())
        shown = [repr(llm.config), str(info.value), info.value.aux_model_failed or "", caplog.text]
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in fake_openai.requests)
    assert not any(KEY in text for text in shown)


# -- auth and quota: abort, never fall back --------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        Reply.error(401, code="invalid_api_key"),
        Reply.error(402, message="Payment required"),
        Reply.error(403, type="permission_error"),
        Reply.error(429, code="insufficient_quota", type="insufficient_quota"),
    ],
    ids=["401", "402", "403", "429-insufficient-quota"],
)
def test_auth_and_quota_failures_abort_without_trying_the_main_model(
    fake_openai: FakeOpenAI, reply: Reply
) -> None:
    fake_openai.script(SMALL, reply)
    error = fail(fake_openai)
    assert type(error) is SummarizerAuthError and error.error_class == "auth"
    assert error.model == SMALL and error.aux_model_failed is None
    assert error.latency_ms is not None and error.latency_ms >= 0
    assert models_asked(fake_openai) == [SMALL]


def test_wrong_key_gets_the_servers_own_401(fake_openai: FakeOpenAI) -> None:
    fake_openai.api_key = "the-right-key"
    error = fail(fake_openai, api_key=SecretStr("a-wrong-key"))
    assert isinstance(error, SummarizerAuthError)


# -- model-class failures: the main model once, then a typed error ----------------------------

MODEL_CLASS_FAILURES = [
    (Reply.error(404, code="model_not_found"), SummarizerModelNotFoundError, "model_not_found"),
    (Reply.error(400, code="model_not_found"), SummarizerModelNotFoundError, "model_not_found"),
    (Reply.error(500), SummarizerServerError, "server_error"),
    (Reply.error(503, message="overloaded"), SummarizerServerError, "server_error"),
    (Reply.raw(502, b"<html>Bad Gateway</html>"), SummarizerServerError, "server_error"),
    (Reply.rate_limited(), SummarizerRateLimitError, "rate_limited"),
    (Reply.invalid_json(), SummarizerProtocolError, "protocol_error"),
    (Reply.invalid_json(stream=False), SummarizerProtocolError, "protocol_error"),
    (Reply.truncated(), SummarizerProtocolError, "protocol_error"),
    (Reply.stream_cut(), SummarizerProtocolError, "protocol_error"),
    (Reply.stream_cut(clean=True), SummarizerProtocolError, "protocol_error"),
    (Reply.empty(), EmptySummaryError, "empty_summary"),
    (Reply.empty("  \n\t "), EmptySummaryError, "empty_summary"),
    (Reply.empty(stream=False), EmptySummaryError, "empty_summary"),
    (Reply.reasoning_only(), ReasoningOnlyError, "empty_summary"),
    (Reply.reasoning_only(stream=False), ReasoningOnlyError, "empty_summary"),
    (
        Reply.ok("<think>still thinking when the budget ran out"),
        ReasoningOnlyError,
        "empty_summary",
    ),
    (Reply.error(422, type="validation_error"), SummarizerRequestError, "bad_request"),
    (Reply.ok("late", delay_s=1.5), SummarizerTimeoutError, "timeout"),
]
IDS = [
    "404",
    "400-model_not_found",
    "500",
    "503",
    "502-html",
    "429",
    "invalid-json-stream",
    "invalid-json",
    "truncated",
    "stream-cut",
    "stream-cut-clean",
    "empty",
    "whitespace",
    "empty-json",
    "reasoning-only",
    "reasoning-only-json",
    "unclosed-think",
    "422",
    "slow",
]


@pytest.mark.parametrize(("reply", "error_type", "error_class"), MODEL_CLASS_FAILURES, ids=IDS)
def test_model_class_failure_falls_back_to_the_main_model(
    fake_openai: FakeOpenAI, reply: Reply, error_type: type[SummarizerError], error_class: str
) -> None:
    fake_openai.script(SMALL, reply)
    fake_openai.script(MAIN, Reply.ok("main model summary", prompt_tokens=11, completion_tokens=3))
    with client(fake_openai, read_timeout_s=0.5) as llm:
        out = llm.summarize(make_request())
    assert (out.text, out.model, out.input_tokens, out.output_tokens) == (
        "main model summary",
        MAIN,
        11,
        3,
    )
    assert out.aux_model_failed is not None
    assert out.aux_model_failed.split(":")[0] == error_class
    assert SMALL in out.aux_model_failed
    assert models_asked(fake_openai) == [SMALL, MAIN]


@pytest.mark.parametrize(("reply", "error_type", "error_class"), MODEL_CLASS_FAILURES, ids=IDS)
def test_failure_on_both_models_raises_the_typed_error_with_telemetry(
    fake_openai: FakeOpenAI, reply: Reply, error_type: type[SummarizerError], error_class: str
) -> None:
    fake_openai.script(SMALL, reply)
    fake_openai.script(MAIN, reply)
    error = fail(fake_openai, read_timeout_s=0.5)
    assert type(error) is error_type and error.error_class == error_class
    assert error.model == MAIN
    assert error.aux_model_failed is not None and error.aux_model_failed.startswith(error_class)
    assert error.latency_ms is not None and error.latency_ms > 0
    assert models_asked(fake_openai) == [SMALL, MAIN]


def test_only_one_model_configured_means_no_second_attempt(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(SMALL, Reply.error(500))
    error = fail(fake_openai, models=(SMALL,))
    assert isinstance(error, SummarizerServerError) and error.status == 500
    assert error.aux_model_failed is None
    assert models_asked(fake_openai) == [SMALL]


def test_same_model_twice_is_tried_once() -> None:
    settings = Settings(llm_base_url="http://127.0.0.1:9/v1", summary_model="m", main_model="m")
    assert LLMConfig.from_settings(settings).models == ("m",)


# -- rate limits and Retry-After ------------------------------------------------------------


def test_short_retry_after_is_waited_out_on_the_same_model(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(SMALL, Reply.error(429, headers={"retry-after-ms": "300"}), Reply.ok("ok"))
    started = time.monotonic()
    with client(fake_openai) as llm:
        out = llm.summarize(make_request())
    assert out.model == SMALL and out.aux_model_failed is None
    assert models_asked(fake_openai) == [SMALL, SMALL]
    gap = fake_openai.requests[1].received_at - fake_openai.requests[0].received_at
    assert 0.3 <= gap < 2 and time.monotonic() - started >= 0.3


@pytest.mark.parametrize(
    ("header", "expected_s"),
    [("2", 2.0), ("0", 0.0), (None, None)],
    ids=["seconds", "zero", "absent"],
)
def test_retry_after_seconds_within_the_bound_are_slept(
    fake_openai: FakeOpenAI, header: str | None, expected_s: float | None
) -> None:
    waits: list[float] = []
    fake_openai.script(SMALL, Reply.rate_limited(header), Reply.ok("second try"))
    with client(fake_openai, sleep=waits.append) as llm:
        out = llm.summarize(make_request())
    if expected_s is None:  # nothing to honour: straight to the main model
        assert (waits, out.model, models_asked(fake_openai)) == ([], MAIN, [SMALL, MAIN])
    else:
        assert (waits, out.model, models_asked(fake_openai)) == (
            [expected_s],
            SMALL,
            [SMALL, SMALL],
        )


def test_long_retry_after_is_not_slept_but_raised_for_the_cooldown(fake_openai: FakeOpenAI) -> None:
    waits: list[float] = []
    fake_openai.script(SMALL, Reply.rate_limited(120))
    fake_openai.script(MAIN, Reply.rate_limited(90))
    error = fail(fake_openai, sleep=waits.append)
    assert isinstance(error, SummarizerRateLimitError)
    assert error.retry_after_s == 90.0
    assert error.aux_model_failed is not None and error.aux_model_failed.startswith("rate_limited")
    assert waits == [] and models_asked(fake_openai) == [SMALL, MAIN]


def test_retry_after_as_an_http_date(fake_openai: FakeOpenAI) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=600), usegmt=True)
    fake_openai.script(ANY := "*", Reply.rate_limited(when), Reply.rate_limited(when))
    error = fail(fake_openai, sleep=_never_sleep)
    assert isinstance(error, SummarizerRateLimitError) and error.retry_after_s is not None
    assert 590 <= error.retry_after_s <= 600
    assert fake_openai.pending(ANY) == 0


def test_still_rate_limited_after_the_wait_falls_back(fake_openai: FakeOpenAI) -> None:
    waits: list[float] = []
    fake_openai.script(SMALL, Reply.rate_limited(1), Reply.rate_limited(1))
    with client(fake_openai, sleep=waits.append) as llm:
        out = llm.summarize(make_request())
    assert waits == [1.0] and out.model == MAIN
    assert out.aux_model_failed is not None and out.aux_model_failed.startswith("rate_limited")
    assert models_asked(fake_openai) == [SMALL, SMALL, MAIN]


# -- context too long: the caller splits; no fallback -----------------------------------------


@pytest.mark.parametrize("shape", ["openai", "llamacpp", "vllm-nested", "litellm", "413"])
def test_context_too_long_is_raised_for_the_caller_to_split(
    fake_openai: FakeOpenAI, shape: str
) -> None:
    replies = {
        "openai": Reply.context_too_long("openai"),
        "llamacpp": Reply.context_too_long("llamacpp"),
        "litellm": Reply.context_too_long("litellm"),
        "vllm-nested": Reply(
            kind="error",
            status=400,
            body={
                "error": {
                    "message": "You passed 1015 input tokens...",
                    "type": "BadRequestError",
                    "param": "input_tokens",
                    "code": 400,
                }
            },
        ),
        "413": Reply.raw(413, b"Request Entity Too Large"),
    }
    fake_openai.script(SMALL, replies[shape])
    error = fail(fake_openai)
    assert type(error) is SummarizerContextTooLongError and error.error_class == "context_too_long"
    assert models_asked(fake_openai) == [SMALL]


def test_server_window_smaller_than_the_prompt(fake_openai: FakeOpenAI) -> None:
    fake_openai.context_window = 5  # the prompt is ~15 rough tokens
    error = fail(fake_openai)
    fake_openai.context_window = None
    assert isinstance(error, SummarizerContextTooLongError)
    with client(fake_openai) as llm:
        assert llm.summarize(make_request()).text


def test_an_unstructured_400_is_a_bad_request_not_a_context_error(fake_openai: FakeOpenAI) -> None:
    # vLLM before 0.16 put "maximum context length" only in free text: we do not read it.
    body = {
        "object": "error",
        "message": "This model's maximum context length is 4096 tokens",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }
    fake_openai.script(
        "*", Reply(kind="error", status=400, body=body), Reply(kind="error", status=400, body=body)
    )
    error = fail(fake_openai)
    assert isinstance(error, SummarizerRequestError) and error.status == 400


def test_prompt_too_big_for_the_window_fails_before_any_request(
    fake_openai: FakeOpenAI, counter: TokenCounter
) -> None:
    prompt = "word " * 3000  # ~3000 tokens
    with (
        client(fake_openai, counter=counter, context_length=2000) as llm,
        pytest.raises(SummarizerContextTooLongError),
    ):
        llm.summarize(make_request(prompt=prompt))
    assert fake_openai.requests == []


def test_output_room_is_capped_to_what_the_window_leaves(
    fake_openai: FakeOpenAI, counter: TokenCounter
) -> None:
    prompt = "word " * 3000
    with client(fake_openai, counter=counter, context_length=5000) as llm:
        llm.summarize(make_request(prompt=prompt, max_output_tokens=2600))
    (sent,) = fake_openai.requests
    assert sent.max_tokens is not None and 1300 <= sent.max_tokens < 2000


# -- timeouts -----------------------------------------------------------------------------


def test_read_timeout_is_a_timeout_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script("*", Reply.ok("late").after(2), Reply.ok("late").after(2))
    started = time.monotonic()
    error = fail(fake_openai, read_timeout_s=0.3)
    assert isinstance(error, SummarizerTimeoutError) and error.error_class == "timeout"
    assert time.monotonic() - started < 3.0  # two attempts of ~0.3 s, not two of 2 s


def test_trickling_stream_is_cut_off_by_the_overall_deadline(fake_openai: FakeOpenAI) -> None:
    # Every chunk comes well within the read timeout; only the deadline can stop this.
    slow = Reply.ok("x" * 16 * 40, chunk_delay_s=0.1)
    fake_openai.script("*", slow, slow)
    started = time.monotonic()
    error = fail(fake_openai, read_timeout_s=5, deadline_s=0.6)
    elapsed = time.monotonic() - started
    assert isinstance(error, SummarizerTimeoutError)
    assert "deadline" in str(error)
    assert 1.2 <= elapsed < 4.0  # two attempts, each stopped at ~0.6 s of a 4 s stream


def test_silent_server_is_cut_off_by_the_deadline_even_with_a_long_read_timeout(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.script("*", Reply.ok().after(3), Reply.ok().after(3))
    started = time.monotonic()
    error = fail(fake_openai, read_timeout_s=60, deadline_s=0.4)
    assert isinstance(error, SummarizerTimeoutError)
    assert time.monotonic() - started < 3.5  # not two of 3 s


def test_connect_timeout(listener_that_never_accepts: int) -> None:
    config = LLMConfig(
        base_url=f"http://127.0.0.1:{listener_that_never_accepts}/v1",
        models=(SMALL, MAIN),
        connect_timeout_s=0.3,
    )
    with LLMSummarizer(config) as llm, pytest.raises(SummarizerTimeoutError) as info:
        llm.summarize(make_request())
    assert "ConnectTimeout" in str(info.value)


def test_a_wait_for_a_pooled_connection_is_ours_not_a_model_failure(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.default = Reply.ok("slow").after(1.5)
    with client(fake_openai, max_connections=1, connect_timeout_s=0.3) as llm:
        holder = threading.Thread(target=llm.summarize, args=(make_request(),))
        holder.start()  # takes the only connection for 1.5 s
        wait_for(lambda: len(fake_openai.requests) == 1)
        with pytest.raises(LLMPoolBusyError) as info:
            llm.summarize(make_request())
        holder.join()
    assert not isinstance(info.value, SummarizerError)  # no fallback, no cooldown
    assert "PoolTimeout" in str(info.value)
    assert [r.model for r in fake_openai.requests] == [SMALL]  # the main model was not tried


def wait_for(check: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


# -- endpoint-level failures: no second model on the same dead endpoint ----------------------


def test_connection_refused_is_a_connection_error_without_fallback() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago, now closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", models=(SMALL, MAIN))
    with LLMSummarizer(config) as llm, pytest.raises(SummarizerConnectionError) as info:
        llm.summarize(make_request())
    assert info.value.error_class == "connection_error" and info.value.aux_model_failed is None


def test_no_model_configured_is_unavailable(fake_openai: FakeOpenAI) -> None:
    error = fail(fake_openai, models=())
    assert isinstance(error, SummarizerUnavailableError) and error.error_class == "no_provider"
    assert fake_openai.requests == []


# -- odd but real answers --------------------------------------------------------------------


def test_200_carrying_an_error_object_is_classified_by_its_code(fake_openai: FakeOpenAI) -> None:
    body = {"error": {"message": "Upstream rate limit", "code": 429, "type": "rate_limit"}}
    fake_openai.script(
        "*", Reply(kind="error", status=200, body=body), Reply(kind="error", status=200, body=body)
    )
    error = fail(fake_openai)
    assert isinstance(error, SummarizerRateLimitError)


def test_error_event_inside_a_stream(fake_openai: FakeOpenAI) -> None:
    event = b'data: {"error": {"message": "internal", "code": 500}}'
    fake_openai.script(
        SMALL, Reply.raw(200, event + b"\n\n", {"Content-Type": "text/event-stream"})
    )
    with client(fake_openai) as llm:
        out = llm.summarize(make_request())
    assert out.model == MAIN
    assert out.aux_model_failed is not None and out.aux_model_failed.startswith("server_error")


@pytest.mark.parametrize("stream", [True, False])
def test_an_answer_past_the_size_cap_is_a_protocol_error_not_a_memory_hog(
    fake_openai: FakeOpenAI, stream: bool
) -> None:
    huge = Reply.ok("## Goal\n" + "x" * 300_000)  # streamed as one endless data line
    fake_openai.script(SMALL, huge)
    fake_openai.script(MAIN, huge)
    error = fail(fake_openai, stream=stream, max_answer_bytes=100_000)
    assert isinstance(error, SummarizerProtocolError)
    assert str(error) == "the answer from model 'main-model' passed 100,000 bytes"
    assert models_asked(fake_openai) == [SMALL, MAIN]


def test_stream_lines_split_across_reads_and_any_line_ending_are_read_whole() -> None:
    events = [
        b'data: {"choices": [{"delta": {"content": "Caf\xc3\xa9 \xe2\x80\x94 "}}]}\r\n\r\n',
        b'data: {"choices": [{"delta": {"content": "done"}}]}\r\r',
        b'data: {"choices": [{"delta": {}, "finish_reason": "stop"}]}\n\n',
        b"data: [DONE]",  # the last line without its line break
    ]
    body = b"".join(events)
    pieces = [body[i : i + 7] for i in range(0, len(body), 7)]  # splits lines, CRLFs, UTF-8

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"Content-Type": "text/event-stream"}, content=iter(pieces)
        )

    config = LLMConfig(base_url="http://llm.test/v1", models=(SMALL,))
    with LLMSummarizer(config, transport=httpx.MockTransport(handler)) as llm:
        out = llm.summarize(make_request())
    assert out.text == "Café — done"


# -- build_summarizer -------------------------------------------------------------------------


def test_build_summarizer_uses_the_llm_when_a_base_url_is_set(fake_openai: FakeOpenAI) -> None:
    settings = Settings(
        llm_base_url=fake_openai.base_url,
        llm_api_key=SecretStr(KEY),
        summary_model=SMALL,
        main_model=MAIN,
        summary_context_length=8000,
    )
    summarizer = build_summarizer(settings)
    try:
        assert isinstance(summarizer, LLMSummarizer) and summarizer.is_llm
        assert summarizer.name == SMALL
        assert summarizer.summarize(make_request()).model == SMALL
    finally:
        close_summarizer(summarizer)
    assert fake_openai.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_the_connection_pool_has_room_for_every_worker_thread(fake_openai: FakeOpenAI) -> None:
    summarizer = build_summarizer(
        Settings(llm_base_url=fake_openai.base_url, summary_model=SMALL, worker_concurrency=48)
    )
    try:
        assert isinstance(summarizer, LLMSummarizer)
        assert summarizer.config.max_connections == 48
    finally:
        close_summarizer(summarizer)


@pytest.mark.parametrize("base_url", [None, "", "   "])
def test_build_summarizer_without_a_base_url_is_extractive(base_url: str | None) -> None:
    summarizer = build_summarizer(Settings(llm_base_url=base_url))
    assert summarizer.name == "extractive" and not summarizer.is_llm
    close_summarizer(summarizer)


# -- helpers -----------------------------------------------------------------------------------


@pytest.fixture
def listener_that_never_accepts() -> Iterator[int]:
    """A port whose accept queue is full, so a new connection's handshake never completes."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    time.sleep(0.05)
    try:
        yield port
    finally:
        for filler in fillers:
            filler.close()
        server.close()


def _never_sleep(seconds: float) -> None:
    raise AssertionError(f"should not wait {seconds} s in the call")


def test_events_under_a_json_content_type_are_still_read(fake_openai: FakeOpenAI) -> None:
    events = b'data: {"choices": [{"delta": {"content": "from a proxy"}, "finish_reason": "stop"}]}'
    raw = Reply.raw(200, events + b"\n\ndata: [DONE]\n\n", {"Content-Type": "application/json"})
    fake_openai.script(SMALL, raw)
    with client(fake_openai) as llm:
        assert llm.summarize(make_request()).text == "from a proxy"


# -- connections that die before any answer, streams that die before any event -----------------


def test_a_dead_pooled_connection_is_retried_once_on_a_fresh_one(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(SMALL, Reply.hang_up(), Reply.ok("second connection"))
    with client(fake_openai) as llm:
        out = llm.summarize(make_request())
    assert (out.text, out.model, out.aux_model_failed) == ("second connection", SMALL, None)
    first, second = fake_openai.requests
    assert first.peer_port != second.peer_port


def test_a_server_that_always_hangs_up_is_a_protocol_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script("*", *[Reply.hang_up()] * 4)
    error = fail(fake_openai)
    assert isinstance(error, SummarizerProtocolError)
    assert models_asked(fake_openai) == [SMALL, SMALL, MAIN, MAIN]


def test_a_stream_that_dies_before_its_first_event_is_asked_again_as_json(
    fake_openai: FakeOpenAI,
) -> None:
    # llama-cpp-python validates the prompt only after it has started the stream.
    fake_openai.script(SMALL, Reply.empty_stream(), Reply.context_too_long("openai"))
    error = fail(fake_openai)
    assert isinstance(error, SummarizerContextTooLongError)
    assert [r.stream for r in fake_openai.requests] == [True, False]


def test_an_empty_stream_then_a_json_answer_is_a_summary(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(SMALL, Reply.empty_stream(), Reply.ok("as json", prompt_tokens=12))
    with client(fake_openai) as llm:
        out = llm.summarize(make_request())
    assert (out.text, out.model, out.input_tokens) == ("as json", SMALL, 12)
