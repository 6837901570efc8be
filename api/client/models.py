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

    @classmethod
    def from_json(cls, data: object) -> Transcript:
        body = _object(data, "transcript")
        messages = body["messages"]
        if not isinstance(messages, list):
            raise UnexpectedAnswerError("transcript: messages is not a list")
        return cls(version=body["version"], messages=messages)


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
