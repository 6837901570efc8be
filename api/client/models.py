"""The service's answers as typed values (the bodies of DESIGN.md's HTTP API, read once here).

Times are timezone-aware ``datetime``s (the service sends ISO 8601 UTC), durations
milliseconds. A field the service adds later does not break an older client: ``Job.extra``
keeps the job fields this version does not know; other bodies ignore them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from api.client.errors import UnexpectedAnswerError

Decision: TypeAlias = Literal[
    "enqueued", "already_queued", "below_threshold", "too_few_messages", "cooldown", "thrash_guard"
]
JobStatus: TypeAlias = Literal["queued", "running", "succeeded", "skipped", "aborted", "failed"]
JobTrigger: TypeAlias = Literal["hygiene", "manual", "sweep"]
FINISHED: frozenset[str] = frozenset({"succeeded", "skipped", "aborted", "failed"})
Message: TypeAlias = dict[str, Any]  # OpenAI chat format, as the gateway sent it


def _when(value: object) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise UnexpectedAnswerError(f"expected an ISO 8601 time, got {value!r}")
    return datetime.fromisoformat(value)


def _object(data: object, what: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise UnexpectedAnswerError(f"{what}: expected a JSON object, got {type(data).__name__}")
    return data


@dataclass(frozen=True, slots=True)
class Job:
    """A compaction job and its telemetry (``GET /v1/jobs/{id}``; DESIGN.md lists the fields).
    The counts stay None until the job has run."""

    id: str
    session_id: str
    trigger: JobTrigger
    status: JobStatus
    enqueued_at: datetime
    attempt: int = 0
    skip_reason: str | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    savings_pct: float | None = None
    messages_before: int | None = None
    messages_after: int | None = None
    summarized_count: int | None = None
    dropped_count: int | None = None
    fallback_used: bool | None = None
    summarizer: str | None = None
    summary_tokens: int | None = None
    summarizer_input_tokens: int | None = None
    summarizer_calls: int | None = None
    redactions: int | None = None
    aux_model_failed: str | None = None
    error_class: str | None = None
    error: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    queue_wait_ms: float | None = None
    run_ms: float | None = None
    llm_ms: float | None = None
    worker: str | None = None
    # Not in a session's last_job, only in the job's own answer:
    focus_topic: str | None = None
    force: bool = False
    target_tokens: int | None = None  # the size a manual compaction asked for
    upto_seq: int | None = None
    version_after: int | None = None  # the session version this job wrote
    callback_status: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @classmethod
    def from_json(cls, data: object) -> Job:
        body = _object(data, "job")
        known = {f.name for f in fields(cls)} - {"extra"}
        values: dict[str, Any] = {k: v for k, v in body.items() if k in known and v is not None}
        for name in ("enqueued_at", "started_at", "finished_at"):
            if name in values:
                values[name] = _when(values[name])
        extra = MappingProxyType({k: v for k, v in body.items() if k not in known})
        try:
            return cls(**values, extra=extra)
        except TypeError as exc:  # a required field is missing
            raise UnexpectedAnswerError(f"job: {exc}") from None


@dataclass(frozen=True, slots=True)
class Hygiene:
    """The hygiene decision of a write, and the job it concerns."""

    decision: Decision
    job_id: str | None
    # Only when the write was stored but the broker could not take its job:
    job_status: str | None = None
    error_class: str | None = None
    detail: str | None = None  # what happened and what to do next (do not resend the turns)


@dataclass(frozen=True, slots=True)
class HygieneAnswer:
    """What ``PUT`` and append answer: the session's size and version after the write."""

    session_id: str
    version: int
    tokens: int
    threshold_tokens: int
    utilization: float
    hygiene: Hygiene
    job_open: bool  # HTTP 202: a compaction job is open for the session
    reason: str | None = None  # X-Hygiene-Reason: why the decision, for a person
    replayed: bool = False  # Idempotent-Replayed: the stored answer of an earlier request

    @classmethod
    def from_json(
        cls, data: object, *, status: int, reason: str | None, replayed: bool
    ) -> HygieneAnswer:
        body = _object(data, "hygiene answer")
        hygiene = _object(body.get("hygiene"), "hygiene")
        return cls(
            session_id=body["session_id"],
            version=body["version"],
            tokens=body["tokens"],
            threshold_tokens=body["threshold_tokens"],
            utilization=body["utilization"],
            hygiene=Hygiene(
                decision=hygiene["decision"],
                job_id=hygiene.get("job_id"),
                job_status=hygiene.get("job_status"),
                error_class=hygiene.get("error_class"),
                detail=hygiene.get("detail"),
            ),
            job_open=status == 202,
            reason=reason,
            replayed=replayed,
        )


@dataclass(frozen=True, slots=True)
class Session:
    """``GET /v1/sessions/{id}``: size, threshold, version and the latest job."""

    session_id: str
    model: str
    context_length: int
    version: int
    tokens: int
    threshold_tokens: int
    utilization: float
    message_count: int
    compaction_count: int
    last_activity_at: datetime
    last_compacted_at: datetime | None
    last_job: Job | None

    @classmethod
    def from_json(cls, data: object) -> Session:
        body = _object(data, "session")
        last_job = body.get("last_job")
        activity = _when(body["last_activity_at"])
        assert activity is not None  # _when only answers None for None
        return cls(
            session_id=body["session_id"],
            model=body["model"],
            context_length=body["context_length"],
            version=body["version"],
            tokens=body["tokens"],
            threshold_tokens=body["threshold_tokens"],
            utilization=body["utilization"],
            message_count=body["message_count"],
            compaction_count=body["compaction_count"],
            last_activity_at=activity,
            last_compacted_at=_when(body.get("last_compacted_at")),
            last_job=Job.from_json(last_job) if last_job is not None else None,
        )


@dataclass(frozen=True, slots=True)
class Transcript:
    """``GET /v1/sessions/{id}/messages``: the active transcript, what to send to the model."""

    version: int
    messages: list[Message]
    format: str = "openai.chat"  # the session's wire format: messages are in it
    system: Any = None  # anthropic.messages: the system prompt beside the messages

    @classmethod
    def from_json(cls, data: object) -> Transcript:
        body = _object(data, "transcript")
        messages = body["messages"]
        if not isinstance(messages, list):
            raise UnexpectedAnswerError("transcript: messages is not a list")
        return cls(
            version=body["version"],
            messages=messages,
            format=str(body.get("format", "openai.chat")),
            system=body.get("system"),
        )


@dataclass(frozen=True, slots=True)
class CompactAccepted:
    """``POST /v1/sessions/{id}/compact``: the manual compaction's job, queued."""

    job_id: str
    status: JobStatus

    @classmethod
    def from_json(cls, data: object) -> CompactAccepted:
        body = _object(data, "compact answer")
        return cls(job_id=body["job_id"], status=body["status"])


@dataclass(frozen=True, slots=True)
class CallbackEvent:
    """What a finished job POSTs to the session's ``callback_url``, once verified."""

    event: str
    session_id: str
    version: int | None  # the session version the job produced
    sent_at: int  # epoch seconds, covered by the signature
    job: Job

    @classmethod
    def from_json(cls, data: object) -> CallbackEvent:
        body = _object(data, "callback")
        return cls(
            event=body["event"],
            session_id=body["session_id"],
            version=body.get("version"),
            sent_at=body["sent_at"],
            job=Job.from_json(body["job"]),
        )


@dataclass(frozen=True, slots=True)
class ArchivedMessage:
    """A message a snapshot, compaction or revert replaced, kept verbatim."""

    seq: int
    generation: int  # 0: as the gateway sent it; k: written by compaction k
    archived_by_job: str | None  # the compaction that archived it; None for a snapshot or revert
    archived_at: datetime | None
    message: Message

    @classmethod
    def from_json(cls, data: object) -> ArchivedMessage:
        body = _object(data, "archived message")
        return cls(
            seq=body["seq"],
            generation=body["generation"],
            archived_by_job=body.get("archived_by_job"),
            archived_at=_when(body.get("archived_at")),
            message=dict(_object(body["message"], "message")),
        )


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One archived message a search found; read it whole with ``get_archived_message``."""

    seq: int
    generation: int
    role: str
    tool_name: str | None  # the tool it calls, or whose result it is
    snippet: str  # text around the first match, every match marked
    archived_by_job: str | None
    archived_at: datetime | None

    @classmethod
    def from_json(cls, data: object) -> SearchHit:
        body = _object(data, "search hit")
        return cls(
            seq=body["seq"],
            generation=body["generation"],
            role=body["role"],
            tool_name=body.get("tool_name"),
            snippet=body["snippet"],
            archived_by_job=body.get("archived_by_job"),
            archived_at=_when(body.get("archived_at")),
        )


@dataclass(frozen=True, slots=True)
class ArchivePage:
    """``GET …/archive``: a page of archived messages (oldest first), or with a query its hits
    (newest first). ``next_cursor`` asks for the next page (None: this is the last)."""

    session_id: str
    messages: list[ArchivedMessage]
    hits: list[SearchHit] | None  # None without a query
    next_cursor: str | None

    @classmethod
    def from_json(cls, data: object) -> ArchivePage:
        body = _object(data, "archive page")
        hits = body.get("hits")
        return cls(
            session_id=body["session_id"],
            messages=[ArchivedMessage.from_json(m) for m in body["messages"]],
            hits=None if hits is None else [SearchHit.from_json(h) for h in hits],
            next_cursor=body.get("next_cursor"),
        )


@dataclass(frozen=True, slots=True)
class ArchivedAround:
    """``GET …/archive/{seq}``: the message at ``seq`` and its neighbours archived with it."""

    session_id: str
    seq: int
    messages: list[ArchivedMessage]

    @classmethod
    def from_json(cls, data: object) -> ArchivedAround:
        body = _object(data, "archived messages")
        return cls(
            session_id=body["session_id"],
            seq=body["seq"],
            messages=[ArchivedMessage.from_json(m) for m in body["messages"]],
        )


@dataclass(frozen=True, slots=True)
class Reverted:
    """``POST …/revert``: the compaction undone and the session's new version."""

    session_id: str
    job_id: str
    version: int
    restored: int  # messages the compaction had replaced, active again
    archived: int  # messages the compaction wrote, archived now

    @classmethod
    def from_json(cls, data: object) -> Reverted:
        body = _object(data, "revert answer")
        return cls(
            session_id=body["session_id"],
            job_id=body["job_id"],
            version=body["version"],
            restored=body["restored"],
            archived=body["archived"],
        )


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One session of ``GET /v1/sessions``."""

    session_id: str
    model: str
    context_length: int
    version: int
    tokens: int
    utilization: float
    message_count: int
    compaction_count: int
    last_activity_at: datetime
    last_compacted_at: datetime | None
    open_job_id: str | None  # the queued or running job, if any

    @classmethod
    def from_json(cls, data: object) -> SessionSummary:
        body = _object(data, "session")
        activity = _when(body["last_activity_at"])
        assert activity is not None  # _when only answers None for None
        return cls(
            session_id=body["session_id"],
            model=body["model"],
            context_length=body["context_length"],
            version=body["version"],
            tokens=body["tokens"],
            utilization=body["utilization"],
            message_count=body["message_count"],
            compaction_count=body["compaction_count"],
            last_activity_at=activity,
            last_compacted_at=_when(body.get("last_compacted_at")),
            open_job_id=body.get("open_job_id"),
        )


@dataclass(frozen=True, slots=True)
class SessionPage:
    """A page of sessions in id order; ``next_cursor`` asks for the next (None: the last)."""

    sessions: list[SessionSummary]
    next_cursor: str | None

    @classmethod
    def from_json(cls, data: object) -> SessionPage:
        body = _object(data, "session page")
        return cls(
            sessions=[SessionSummary.from_json(s) for s in body["sessions"]],
            next_cursor=body.get("next_cursor"),
        )
