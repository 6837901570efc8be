"""The LLM summarizer: any OpenAI-compatible ``/chat/completions`` endpoint, over httpx.

One call is at most two models: the summary model, then (after a model-class failure) the main
model, once. Failures become ``SummarizerError`` classes in ``classify`` and nowhere else; the
caller decides what each means (the core: re-split, extractive fallback or abort; the task:
cooldowns). A wait for a free pooled connection is this process's capacity, not the model's: it
becomes ``LLMPoolBusyError``, which the core lets through and the task retries. What a call cost — latency, the provider's usage tokens, which model wrote it and
whether the summary model failed first — comes back in ``SummaryResponse`` or on the error.

Answers are streamed by default: the read timeout then bounds the gap between tokens rather than
the whole generation, a cut stream is detected, and ``deadline_s`` bounds one attempt from the
request to its last byte. Servers that ignore ``stream`` and answer plain JSON work too.

Build one per process and share it between threads (its connection pool is thread-safe); close
it, or use it as a context manager, when done.
"""

from __future__ import annotations

import codecs
import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import TypeVar

import httpx
from pydantic import SecretStr

from worker.compressor.errors import (
    SummarizerAuthError,
    SummarizerConnectionError,
    SummarizerContextTooLongError,
    SummarizerError,
    SummarizerProtocolError,
    SummarizerRateLimitError,
    SummarizerTimeoutError,
    SummarizerUnavailableError,
)
from worker.compressor.summarizer import SummaryRequest, SummaryResponse
from worker.compressor.tokens import TokenCounter
from worker.settings import Settings
from worker.summarizers.classify import error_for_exception, error_for_status
from worker.summarizers.wire import (
    Completion,
    EmptyStreamError,
    max_output_tokens,
    parse_completion,
    read_stream,
    request_body,
    summary_text,
)

log = logging.getLogger(__name__)
_T = TypeVar("_T")

# These say nothing about the model, so trying the main model cannot help: the credentials are
# shared, the input would not fit it either (the core re-splits), the endpoint is the same.
_NO_FALLBACK = (
    SummarizerAuthError,
    SummarizerContextTooLongError,
    SummarizerConnectionError,
    SummarizerUnavailableError,
)
_ERROR_BODY_MAX_BYTES = 64 * 1024
_PROMPT_FRAMING_TOKENS = 16  # chat template around the one user message


@dataclass(frozen=True, slots=True)
class LLMConfig:
    base_url: str  # …/v1
    models: tuple[str, ...]  # the summary model, then the main model (distinct, non-empty)
    api_key: SecretStr | None = field(default=None, repr=False)
    context_length: int = 32_000  # the summary model's window: prompt + max_tokens fit in it
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 120.0  # streaming: the longest silence between two chunks
    deadline_s: float = 300.0  # one attempt, request to last byte
    temperature: float = 0.2
    stream: bool = True
    retry_after_max_wait_s: float = 10.0  # wait this long in the call; longer: raise, cool down
    max_connections: int = 16  # one per thread that may call at once: no call waits for one
    max_answer_bytes: int = 16 * 1024 * 1024  # a summary is a few KB; past this, it is broken

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMConfig:
        if not settings.llm_base_url:
            raise SummarizerUnavailableError("COMPACTION_LLM_BASE_URL is not set")
        models = tuple(dict.fromkeys(m for m in (settings.summary_model, settings.main_model) if m))
        return cls(
            base_url=settings.llm_base_url,
            models=models,
            api_key=settings.llm_api_key,
            context_length=settings.summary_context_length,
            connect_timeout_s=settings.llm_connect_timeout_s,
            read_timeout_s=settings.llm_read_timeout_s,
            deadline_s=settings.llm_request_deadline_s,
            temperature=settings.llm_temperature,
            stream=settings.llm_stream,
            retry_after_max_wait_s=settings.llm_retry_after_max_wait_s,
            max_connections=max(1, settings.worker_concurrency),
        )


class LLMSummarizer:
    """A ``Summarizer`` backed by an OpenAI-compatible chat-completions endpoint."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        counter: TokenCounter | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """
        Args:
            counter: counts the prompt before sending, so an input that cannot fit the window
                fails fast (without it, the server is the judge).
            transport: for tests (``httpx.MockTransport``); the real one pools connections.
        """
        self.config = config
        self._counter = counter
        self._sleep = sleep
        self._clock = clock
        self._client = httpx.Client(
            base_url=config.base_url.rstrip("/") + "/",
            headers=_headers(config.api_key),
            timeout=self._timeout(),
            limits=httpx.Limits(
                max_connections=config.max_connections,
                max_keepalive_connections=config.max_connections,
            ),
            transport=transport,
            follow_redirects=False,  # a redirect means a wrong base URL: say so
        )

    @property
    def name(self) -> str:
        return self.config.models[0] if self.config.models else "llm"

    @property
    def is_llm(self) -> bool:
        return True

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> LLMSummarizer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        """Summary model first; after a model-class failure, the main model once."""
        started = self._clock()
        try:
            return self._summarize(request, started)
        except SummarizerError as exc:
            exc.latency_ms = self._ms_since(started)
            raise

    # -- the fallback chain -----------------------------------------------------------------
    def _summarize(self, request: SummaryRequest, started: float) -> SummaryResponse:
        if not self.config.models:
            raise SummarizerUnavailableError(
                "an LLM base URL is set but neither COMPACTION_SUMMARY_MODEL nor "
                "COMPACTION_MAIN_MODEL names a model"
            )
        max_tokens = self._fit_output(request)
        first, *rest = self.config.models
        try:
            return self._respond(first, request, max_tokens, started, aux_failure=None)
        except SummarizerError as exc:
            if not rest or isinstance(exc, _NO_FALLBACK):
                raise
            aux_failure = describe(exc)
            log.warning(
                "summary model %r failed (%s); trying main model %r", first, aux_failure, rest[0]
            )
        try:
            return self._respond(rest[0], request, max_tokens, started, aux_failure=aux_failure)
        except SummarizerError as exc:
            exc.aux_model_failed = aux_failure
            raise

    def _respond(
        self,
        model: str,
        request: SummaryRequest,
        max_tokens: int,
        started: float,
        *,
        aux_failure: str | None,
    ) -> SummaryResponse:
        completion = self._complete_honouring_retry_after(model, request, max_tokens)
        return SummaryResponse(
            text=summary_text(completion, model=model),
            model=model,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            latency_ms=self._ms_since(started),
            aux_model_failed=aux_failure,
        )

    def _complete_honouring_retry_after(
        self, model: str, request: SummaryRequest, max_tokens: int
    ) -> Completion:
        """A 429 whose Retry-After is short is waited out here, once; a long one is raised."""
        try:
            return self._complete(model, request, max_tokens)
        except SummarizerRateLimitError as exc:
            wait_s = exc.retry_after_s
            if wait_s is None or wait_s > self.config.retry_after_max_wait_s:
                raise
            log.info("model %r rate-limited; retrying in %.1f s as asked", model, wait_s)
            self._sleep(wait_s)
            return self._complete(model, request, max_tokens)

    def _fit_output(self, request: SummaryRequest) -> int:
        """``max_tokens`` for this prompt; ContextTooLong when the prompt leaves too little room.

        The window must hold the prompt and the answer. When the prompt leaves at least half
        the requested answer room, the answer is capped to fit; otherwise the input must be
        split smaller, which is the caller's job.
        """
        wanted = max_output_tokens(request)
        if self._counter is None:
            return wanted
        prompt_tokens = self._counter.count_text(request.prompt) + _PROMPT_FRAMING_TOKENS
        room = self.config.context_length - prompt_tokens
        if room < max(1, wanted // 2):
            raise SummarizerContextTooLongError(
                f"prompt of ~{prompt_tokens} tokens leaves {room} of the {wanted} output tokens "
                f"wanted in the summary model's {self.config.context_length}-token window",
                model=self.name,
            )
        return min(wanted, room)

    # -- one HTTP attempt -------------------------------------------------------------------
    def _complete(self, model: str, request: SummaryRequest, max_tokens: int) -> Completion:
        """One attempt; a stream that died before its first event is asked again as JSON."""
        try:
            return self._attempt(model, request, max_tokens, stream=self.config.stream)
        except EmptyStreamError:
            log.info("model %r: empty stream; asking again without streaming", model)
            return self._attempt(model, request, max_tokens, stream=False)

    def _attempt(
        self, model: str, request: SummaryRequest, max_tokens: int, *, stream: bool
    ) -> Completion:
        body = request_body(
            model,
            request,
            max_tokens=max_tokens,
            temperature=self.config.temperature,
            stream=stream,
        )
        deadline = self._clock() + self.config.deadline_s
        try:
            response = self._send(self._client.build_request("POST", "chat/completions", json=body))
            try:
                return self._read(response, model, deadline)
            finally:
                response.close()
        except httpx.HTTPError as exc:
            raise error_for_exception(exc, model=model) from exc

    def _send(self, request: httpx.Request) -> httpx.Response:
        """Send and wait for the headers, once more if a pooled connection was already dead.

        A keep-alive connection the server closed while it sat in the pool fails before any
        answer arrives; the pool drops it, so the second try goes out on a fresh connection.
        Nothing was answered, so nothing is lost by asking again.
        """
        try:
            return self._client.send(request, stream=True)
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            log.info("connection closed before an answer (%s); sending again", type(exc).__name__)
            return self._client.send(request, stream=True)

    def _read(self, response: httpx.Response, model: str, deadline: float) -> Completion:
        if not response.is_success:
            body = self._read_capped(response, model, deadline, limit=_ERROR_BODY_MAX_BYTES)
            raise error_for_status(response.status_code, body, response.headers, model=model)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return read_stream(self._stream_lines(response, model, deadline), model=model)
        raw = self._read_capped(response, model, deadline, limit=self.config.max_answer_bytes + 1)
        if len(raw) > self.config.max_answer_bytes:
            raise self._too_large(model)
        if raw.lstrip().startswith(b"data:"):  # events under the wrong content type (some proxies)
            return read_stream(raw.decode("utf-8", "replace").splitlines(), model=model)
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            # RecursionError: JSON nested past the parser's limit, from a broken or hostile server.
            raise SummarizerProtocolError(
                f"invalid JSON from model {model!r}: {exc}", model=model
            ) from exc
        return parse_completion(data, model=model)

    def _read_capped(
        self, response: httpx.Response, model: str, deadline: float, *, limit: int
    ) -> bytes:
        """The body up to ``limit`` bytes (an error page may be huge), within the deadline."""
        parts: list[bytes] = []
        size = 0
        for chunk in self._until(response.iter_bytes(), model, deadline):
            parts.append(chunk)
            size += len(chunk)
            if size >= limit:
                break
        return b"".join(parts)[:limit]

    def _stream_lines(self, response: httpx.Response, model: str, deadline: float) -> Iterator[str]:
        """The event stream's lines, within the deadline and ``max_answer_bytes`` (a stream
        that never ends, or one endless line, must not grow without bound until the deadline)."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        partial: list[str] = []  # the unfinished line, in pieces (no re-scan per chunk)
        size = 0
        for chunk in self._until(response.iter_bytes(), model, deadline):
            size += len(chunk)
            if size > self.config.max_answer_bytes:
                raise self._too_large(model)
            # SSE ends lines with CRLF, LF or CR; a CRLF split across chunks makes one extra
            # empty line, which the reader skips like any blank separator.
            text = decoder.decode(chunk).replace("\r\n", "\n").replace("\r", "\n")
            *ended, rest = text.split("\n")
            if ended:
                ended[0] = "".join([*partial, ended[0]])
                partial.clear()
                yield from ended
            if rest:
                partial.append(rest)
        last = "".join([*partial, decoder.decode(b"", final=True)])
        if last:
            yield last

    def _too_large(self, model: str) -> SummarizerProtocolError:
        return SummarizerProtocolError(
            f"the answer from model {model!r} passed {self.config.max_answer_bytes:,} bytes",
            model=model,
        )

    def _until(self, items: Iterator[_T], model: str, deadline: float) -> Iterator[_T]:
        for item in items:
            if self._clock() > deadline:
                raise SummarizerTimeoutError(
                    f"model {model!r} was still answering after the "
                    f"{self.config.deadline_s:g} s deadline",
                    model=model,
                )
            yield item

    def _timeout(self) -> httpx.Timeout:
        # No single wait may outlast the deadline: a silent server is cut off by it too.
        read_s = min(self.config.read_timeout_s, self.config.deadline_s)
        return httpx.Timeout(
            connect=self.config.connect_timeout_s,
            read=read_s,
            write=read_s,
            pool=self.config.connect_timeout_s,
        )

    def _ms_since(self, started: float) -> float:
        return round((self._clock() - started) * 1000, 3)


def describe(exc: SummarizerError) -> str:
    """``"<error_class>: <message>"``: how a failure is recorded in telemetry."""
    return f"{exc.error_class}: {exc}"


def _headers(api_key: SecretStr | None) -> dict[str, str]:
    headers = {"Accept": "application/json, text/event-stream", "User-Agent": "compaction-queue"}
    key = api_key.get_secret_value() if api_key is not None else ""
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return headers
