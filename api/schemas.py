"""Request and response bodies of the v1 API.

Messages arrive as a plain JSON list and are validated by the core's parser, which names the
index and the problem (``messages[3]: a tool message needs a non-empty tool_call_id``); the
list is stored verbatim once it passed.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from api.wire_schemas import ANTHROPIC_SYSTEM, MESSAGES_ITEMS
from worker.callback_targets import literal_refusal
from worker.compressor.formats import CHAT, Format
from worker.hygiene import DecisionName

MAX_SESSION_ID_CHARS = 255
MAX_MODEL_CHARS = 200
MAX_URL_CHARS = 2_000
MAX_FOCUS_CHARS = 2_000
MAX_CONTEXT_LENGTH = 100_000_000
MAX_PROMPT_TOKENS = 10 * MAX_CONTEXT_LENGTH  # a count past the window is allowed, not an overflow
# A compacted transcript keeps the system prompt, the latest user message and a summary: a
# size asked for below this could not hold them. The upper bound is the session's own window
# (checked with the session, api/ingest.py); MAX_CONTEXT_LENGTH bounds it here.
MIN_TARGET_TOKENS = 256
# The largest values the database's integer columns hold (BIGINT, INTEGER): a parameter
# compared with one is bounded by it, so that a larger one is a 422, never an overflow.
MAX_BIGINT = 2**63 - 1
MAX_INTEGER = 2**31 - 1

_LINE_BREAKS_AND_TABS = frozenset("\t\n\r")


def _no_controls(value: str, allowed: frozenset[str] = frozenset()) -> str:
    """Refuse C0 control characters and DEL (U+0000 cannot even be stored by PostgreSQL), and
    lone surrogates (a JSON escape such as \\ud800 without its other half: not Unicode text,
    which no database takes; pydantic refuses them itself only where it reads the JSON)."""
    if value.isprintable():  # the common case, in C
        return value
    for i, ch in enumerate(value):
        if (ch < " " or ch == "\x7f") and ch not in allowed:
            raise ValueError(f"must not contain control characters (U+{ord(ch):04X} at index {i})")
        if "\ud800" <= ch <= "\udfff":
            raise ValueError(
                f"must not contain a lone surrogate (U+{ord(ch):04X} at index {i}): "
                "that is not Unicode text"
            )
    return value


def _plain_text(value: str) -> str:
    return _no_controls(value, _LINE_BREAKS_AND_TABS)


# Identifiers and URLs: printable text only. Free text: line breaks and tabs are fine.
Name = Annotated[str, AfterValidator(_no_controls)]
FreeText = Annotated[str, AfterValidator(_plain_text)]


class _Body(BaseModel):
    # A misspelt field ("prompt_token") is an error, not a silently ignored value; and a value
    # of another JSON type is an error, not coerced ("100000" is no integer, "yes" no boolean).
    # Every field is a type JSON has (string, integer, boolean, array), so strict costs a
    # client nothing it could send correctly.
    model_config = ConfigDict(extra="forbid", strict=True)


class SnapshotIn(_Body):
    """``PUT /v1/sessions/{id}``: the full transcript."""

    model: Name = Field(min_length=1, max_length=MAX_MODEL_CHARS)
    context_length: int = Field(gt=0, le=MAX_CONTEXT_LENGTH)
    messages: list[Any] = Field(json_schema_extra={"items": MESSAGES_ITEMS})
    prompt_tokens: int | None = Field(default=None, ge=0, le=MAX_PROMPT_TOKENS)
    callback_url: Name | None = Field(default=None, max_length=MAX_URL_CHARS)
    format: Format = Field(
        default=CHAT,
        description="the wire format of messages, kept by the session: appends use it and "
        "GET …/messages answers in it",
    )
    system: Any = Field(
        default=None,
        description="anthropic.messages only: the system prompt (a string or text blocks), "
        "beside the messages",
        json_schema_extra=ANTHROPIC_SYSTEM,
    )

    @field_validator("callback_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("must be an absolute http:// or https:// URL")
        try:
            parts.port  # noqa: B018 - parsing it is the check
        except ValueError as exc:
            raise ValueError(f"has an invalid port: {exc}") from None
        refusal = literal_refusal(value)
        if refusal is not None:
            raise ValueError(refusal)
        return value


class AppendIn(_Body):
    """``POST /v1/sessions/{id}/messages``: new turns, in the session's format."""

    messages: list[Any] = Field(min_length=1, json_schema_extra={"items": MESSAGES_ITEMS})
    prompt_tokens: int | None = Field(default=None, ge=0, le=MAX_PROMPT_TOKENS)


class CompactIn(_Body):
    """``POST /v1/sessions/{id}/compact``: a manual compaction."""

    focus_topic: FreeText | None = Field(default=None, max_length=MAX_FOCUS_CHARS)
    force: bool = False
    target_tokens: int | None = Field(
        default=None,
        ge=MIN_TARGET_TOKENS,
        le=MAX_CONTEXT_LENGTH,
        description="the size to compact to, in tokens: at most the session's context_length; "
        "absent: COMPACTION_TARGET_RATIO of the window",
    )


class HygieneOut(BaseModel):
    decision: DecisionName
    job_id: str | None


class HygieneAnswer(BaseModel):
    session_id: str
    version: int
    tokens: int
    threshold_tokens: int
    utilization: float
    hygiene: HygieneOut


class CompactAccepted(BaseModel):
    job_id: str
    status: Literal["queued"]


JobStatus = Literal["queued", "running", "succeeded", "skipped", "aborted", "failed"]
JobTrigger = Literal["hygiene", "manual", "sweep"]


class JobTelemetry(BaseModel):
    """One job's telemetry (DESIGN.md); times are ISO 8601 UTC, durations milliseconds. The
    counts stay null until the job has run."""

    model_config = ConfigDict(extra="allow")  # a field added later reaches old clients too

    id: str
    session_id: str
    trigger: JobTrigger
    status: JobStatus
    skip_reason: str | None
    attempt: int
    tokens_before: int | None
    tokens_after: int | None
    savings_pct: float | None
    messages_before: int | None
    messages_after: int | None
    summarized_count: int | None
    dropped_count: int | None
    fallback_used: bool | None
    summarizer: str | None = Field(description='the model name, or "extractive"')
    summary_tokens: int | None
    summarizer_input_tokens: int | None
    summarizer_calls: int | None
    redactions: int | None
    aux_model_failed: str | None
    error_class: str | None
    error: str | None
    enqueued_at: str
    started_at: str | None
    finished_at: str | None
    queue_wait_ms: float | None
    run_ms: float | None
    llm_ms: float | None
    worker: str | None


class JobOut(JobTelemetry):
    """The telemetry plus what the job was asked and what it produced."""

    focus_topic: str | None = None
    force: bool = False
    target_tokens: int | None = Field(
        default=None, description="the size a manual compaction asked for; null: none was"
    )
    upto_seq: int | None = None
    version_after: int | None = None
    callback_status: str | None = Field(default=None, description="retrying, delivered or failed")


class SessionOut(BaseModel):
    session_id: str
    model: str
    context_length: int
    version: int
    tokens: int
    threshold_tokens: int
    utilization: float
    message_count: int
    compaction_count: int
    last_activity_at: str
    last_compacted_at: str | None
    last_job: JobTelemetry | None


class MessagesOut(BaseModel):
    version: int
    format: Format
    messages: list[dict[str, Any]]
    system: Any = Field(
        default=None,
        description="anthropic.messages only (absent in the others): the system prompt, null "
        "when the session has none",
    )


class JobPage(BaseModel):
    jobs: list[JobOut]
    next_before: str | None  # pass as ?before= for the next (older) page


class Ready(BaseModel):
    status: Literal["ready"]
    database: str
    broker: str


class CallbackEvent(BaseModel):
    """What a finished job POSTs to the session's ``callback_url`` (docs/worker.md)."""

    event: Literal["compaction.job.finished"]
    session_id: str
    version: int | None = Field(description="the session version the job produced")
    sent_at: int = Field(description="epoch seconds; also X-Compaction-Timestamp, and signed")
    job: JobTelemetry


class ValidationIssue(BaseModel):
    loc: str = Field(description="where, e.g. messages[3].role; body for the whole body")
    msg: str


class Problem(BaseModel):
    """Every error answer (RFC 9457), sent as application/problem+json."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(description="urn:compaction-queue:problem:<slug>; the slug names the case")
    title: str
    status: int
    detail: str = Field(description="what is wrong, for a person")
    errors: list[ValidationIssue] | None = Field(
        default=None, description="each problem of a request that failed validation"
    )
    current_version: int | None = Field(default=None, description="412: the session's version now")
    job_id: str | None = Field(
        default=None, description="409: the job already open; 503: the job the broker missed"
    )
    problems: list[str] | None = Field(default=None, description="503 from /readyz: each check")
