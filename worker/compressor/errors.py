"""Errors raised by the compressor core and by summarizers.

    CompactionError                  the core was handed something it cannot work with
    └── InvalidTranscriptError       a message is malformed (names the index and the problem)

    SummarizerError                  a summarizer could not produce a summary
    ├── SummarizerAuthError          401/402/403: credentials or quota; the compaction aborts
    ├── SummarizerUnavailableError   no provider (or no model) is configured
    ├── SummarizerConnectionError    the endpoint refused or dropped the connection before answering
    ├── SummarizerContextTooLongError  the input did not fit the model; the core re-chunks smaller
    ├── SummarizerRateLimitError     429; carries the provider's Retry-After when it sent one
    ├── SummarizerTimeoutError       connect/read timeout
    ├── SummarizerServerError        5xx
    ├── SummarizerModelNotFoundError 404 / unknown model
    ├── SummarizerRequestError       another 4xx: the provider refused this request as malformed
    ├── SummarizerProtocolError      invalid JSON, truncated body, stream closed early
    └── EmptySummaryError            HTTP 200 with empty, whitespace or reasoning-only content
        └── ReasoningOnlyError       a reasoning model spent its budget thinking: no content

The LLM client translates httpx errors and HTTP statuses into these classes, by type and
status, at one boundary. The core decides what each means for the transcript; the task decides
retry, cooldown and job status from ``error_class``. An LLM summarizer also sets, on the error
it finally raises, ``aux_model_failed`` (the summary model's failure when the main model was
tried after it) and ``latency_ms`` (time spent on the call), for the job's telemetry.
"""

from __future__ import annotations


class CompactionError(Exception):
    """Root of the core's own errors."""


class InvalidTranscriptError(CompactionError):
    """A message in the input is malformed."""

    def __init__(self, index: int | None, problem: str, *, path: str = "") -> None:
        """``path``: where in the message (``content[1].input``), or outside the messages
        (``system``) when ``index`` is None."""
        self.index = index
        self.problem = problem
        self.path = path
        where = f"messages[{index}]" if index is not None else ""
        if path:
            where = f"{where}.{path}" if where else path
        super().__init__(f"{where}: {problem}" if where else problem)


class SummarizerError(Exception):
    """Root of summarizer failures. ``error_class`` is the stable name used in telemetry."""

    error_class = "summarizer_error"
    aux_model_failed: str | None = None  # see SummaryResponse.aux_model_failed
    latency_ms: float | None = None

    def __init__(self, message: str, *, model: str | None = None) -> None:
        super().__init__(message)
        self.model = model


class SummarizerAuthError(SummarizerError):
    error_class = "auth"


class SummarizerUnavailableError(SummarizerError):
    error_class = "no_provider"


class SummarizerConnectionError(SummarizerError):
    error_class = "connection_error"


class SummarizerContextTooLongError(SummarizerError):
    error_class = "context_too_long"


class SummarizerRateLimitError(SummarizerError):
    error_class = "rate_limited"

    def __init__(
        self, message: str, *, model: str | None = None, retry_after_s: float | None = None
    ) -> None:
        super().__init__(message, model=model)
        self.retry_after_s = retry_after_s


class SummarizerTimeoutError(SummarizerError):
    error_class = "timeout"


class SummarizerServerError(SummarizerError):
    error_class = "server_error"

    def __init__(self, message: str, *, model: str | None = None, status: int = 500) -> None:
        super().__init__(message, model=model)
        self.status = status


class SummarizerModelNotFoundError(SummarizerError):
    error_class = "model_not_found"


class SummarizerRequestError(SummarizerError):
    error_class = "bad_request"

    def __init__(self, message: str, *, model: str | None = None, status: int = 400) -> None:
        super().__init__(message, model=model)
        self.status = status


class SummarizerProtocolError(SummarizerError):
    error_class = "protocol_error"


class EmptySummaryError(SummarizerError):
    error_class = "empty_summary"


class ReasoningOnlyError(EmptySummaryError):
    """A reasoning model spent its output budget on reasoning and returned no content."""
