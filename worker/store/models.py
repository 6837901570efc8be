"""SQLAlchemy models: sessions, messages (never deleted) and jobs (one telemetry row each).

Ordering: a session's active transcript is its active messages ordered by ``seq``. ``seq`` is
allocated from ``sessions.next_seq`` and only grows. A compaction write-back archives the active
messages up to the job's ``upto_seq``, inserts the compacted set with fresh seqs, then gives the
messages the gateway appended after ``upto_seq`` fresh seqs after those, so they order after the
compacted part. Archived rows keep the seq they had when they were archived.

Search: when a message is archived, its searchable text (worker/store/search_text.py) is
written to ``archive_text`` in the same transaction, under an id that puts a session's rows on
one contiguous range (``archive key << 32 | seq``). SQLite indexes that text in an FTS5 trigram
table kept in step by triggers, PostgreSQL in a GIN index of the session id and the body's
pg_trgm trigrams (both made by migration
0003 and not modelled: see ``modelled``).

Retries: an ``Idempotency-Key`` row is written in the same transaction as the write it
answers, so a write and its remembered answer exist together or not at all.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    cast,
    or_,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from worker.compressor.formats import CHAT
from worker.compressor.jsonvalue import text_without_lone_surrogates

# SQLite only autoincrements INTEGER PRIMARY KEY.
BigId = BigInteger().with_variant(Integer, "sqlite")

OPEN_JOB_STATUSES = ("queued", "running")
JOB_STATUSES = ("queued", "running", "succeeded", "skipped", "aborted", "failed")
JOB_TRIGGERS = ("hygiene", "manual", "sweep")
IDEMPOTENT_ROUTES = ("snapshot", "append")  # PUT /v1/sessions/{id}, POST .../messages


def utcnow() -> datetime:
    return datetime.now(UTC)


def _in_list(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes in and out. SQLite keeps no zone, so its reads are tagged UTC again;
    writes are normalized to UTC so stored values compare correctly as text there."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: store timezone-aware UTC")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


class DerivedText(TypeDecorator[str]):
    """Text the service derives (summaries, error messages) rather than takes verbatim:
    U+0000, which PostgreSQL cannot store, and lone surrogates, which no UTF-8 text can hold,
    are written as U+FFFD, on every database alike. What the gateway sends is validated
    instead; its messages live in JSON, which escapes U+0000."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None:
            return None
        if "\x00" in value:
            value = value.replace("\x00", "\ufffd")
        return text_without_lone_surrogates(value)


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime(),
        dict[str, Any]: JSON,
    }


class SessionRow(Base):
    __tablename__ = "sessions"

    id: Mapped[str] = mapped_column(String(255), primary_key=True)  # the gateway's key
    model: Mapped[str] = mapped_column(String(200))
    context_length: Mapped[int] = mapped_column(Integer)
    # The wire format its messages are stored and answered in (worker.compressor.formats).
    format: Mapped[str] = mapped_column(String(32), server_default=CHAT)
    version: Mapped[int] = mapped_column(BigInteger, default=1)  # bumped on every change
    # Bumped by a snapshot PUT or a compaction, not by appends: a job's write-back refuses when
    # it moved since the job's snapshot.
    rewrite_count: Mapped[int] = mapped_column(BigInteger, default=0)
    next_seq: Mapped[int] = mapped_column(BigInteger, default=1)
    token_total: Mapped[int] = mapped_column(BigInteger, default=0)  # sum over active messages
    message_count: Mapped[int] = mapped_column(Integer, default=0)  # active messages
    # The gateway's own prompt_tokens (real provider usage) and the version it describes.
    reported_tokens: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    reported_version: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    compaction_count: Mapped[int] = mapped_column(Integer, default=0)
    previous_summary: Mapped[str | None] = mapped_column(DerivedText, nullable=True)
    # Anti-thrash: consecutive low-savings passes, and the token total the session must grow
    # past before automatic compaction is allowed again once the guard tripped.
    ineffective_count: Mapped[int] = mapped_column(Integer, default=0)
    last_savings_pct: Mapped[float | None] = mapped_column(Float, nullable=True)
    thrash_until_tokens: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    callback_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_activity_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_compacted_at: Mapped[datetime | None] = mapped_column(nullable=True)

    __table_args__ = (Index("ix_sessions_last_activity_at", "last_activity_at"),)


# The share of its window a session's own count fills, kept current by the database: an index
# on it makes the sweep's size test an index condition. Only sessions with activity since their
# last compaction are in it (the sweep wants no others), so a query must repeat that predicate.
SESSION_UTILIZATION = cast(SessionRow.token_total, Float) / SessionRow.context_length
UNCOMPACTED_ACTIVITY = or_(
    SessionRow.last_compacted_at.is_(None),
    SessionRow.last_compacted_at < SessionRow.last_activity_at,
)
SWEEP_UTILIZATION_INDEX = "ix_sessions_sweep_utilization"
Index(
    SWEEP_UTILIZATION_INDEX,
    SESSION_UTILIZATION,
    sqlite_where=UNCOMPACTED_ACTIVITY,
    postgresql_where=UNCOMPACTED_ACTIVITY,
)


class MessageRow(Base):
    __tablename__ = "messages"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(
        String(255), ForeignKey("sessions.id", ondelete="RESTRICT")
    )
    seq: Mapped[int] = mapped_column(BigInteger)
    role: Mapped[str] = mapped_column(String(16))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)  # the wire message, verbatim
    tokens: Mapped[int] = mapped_column(Integer)  # counted once, at ingestion
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    # 0 for what the gateway sent; k for messages written by the session's k-th compaction.
    generation: Mapped[int] = mapped_column(Integer, default=0)
    archived_by_job: Mapped[str | None] = mapped_column(String(36), nullable=True)
    archived_at: Mapped[datetime | None] = mapped_column(nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        UniqueConstraint("session_id", "seq", name="uq_messages_session_seq"),
        CheckConstraint(
            _in_list("role", ("system", "user", "assistant", "tool")), name="ck_messages_role"
        ),
        CheckConstraint("tokens >= 0", name="ck_messages_tokens"),
        Index("ix_messages_session_active_seq", "session_id", "active", "seq"),
        # What one compaction archived: archive pages filtered by job, and revert.
        Index(
            "ix_messages_archived_by_job",
            "archived_by_job",
            sqlite_where=text("archived_by_job IS NOT NULL"),
            postgresql_where=text("archived_by_job IS NOT NULL"),
        ),
    )


class JobRow(Base):
    __tablename__ = "jobs"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    session_id: Mapped[str] = mapped_column(
        String(255), ForeignKey("sessions.id", ondelete="RESTRICT")
    )
    trigger: Mapped[str] = mapped_column(String(16))  # hygiene | manual | sweep
    status: Mapped[str] = mapped_column(String(16), default="queued")
    skip_reason: Mapped[str | None] = mapped_column(String(64), nullable=True)
    focus_topic: Mapped[str | None] = mapped_column(Text, nullable=True)
    force: Mapped[bool] = mapped_column(Boolean, default=False)
    target_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)  # asked; else null
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    upto_seq: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    snapshot_rewrite_count: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    version_after: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # Telemetry.
    tokens_before: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    tokens_after: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    savings_pct: Mapped[float | None] = mapped_column(Float, nullable=True)
    messages_before: Mapped[int | None] = mapped_column(Integer, nullable=True)
    messages_after: Mapped[int | None] = mapped_column(Integer, nullable=True)
    summarized_count: Mapped[int | None] = mapped_column(Integer, nullable=True)
    dropped_count: Mapped[int | None] = mapped_column(Integer, nullable=True)
    fallback_used: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    summarizer: Mapped[str | None] = mapped_column(String(200), nullable=True)
    summary_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    summarizer_input_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    summarizer_calls: Mapped[int | None] = mapped_column(Integer, nullable=True)
    redactions: Mapped[int | None] = mapped_column(Integer, nullable=True)
    aux_model_failed: Mapped[str | None] = mapped_column(DerivedText, nullable=True)
    error_class: Mapped[str | None] = mapped_column(String(64), nullable=True)
    error: Mapped[str | None] = mapped_column(DerivedText, nullable=True)
    enqueued_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(nullable=True)
    queue_wait_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    run_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    llm_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    worker: Mapped[str | None] = mapped_column(String(255), nullable=True)
    callback_status: Mapped[str | None] = mapped_column(String(32), nullable=True)
    callback_attempts: Mapped[int] = mapped_column(Integer, default=0)

    __table_args__ = (
        CheckConstraint(_in_list("status", JOB_STATUSES), name="ck_jobs_status"),
        CheckConstraint(_in_list("trigger", JOB_TRIGGERS), name="ck_jobs_trigger"),
        # One open job per session, enforced by the database.
        Index(
            "uq_jobs_one_open_per_session",
            "session_id",
            unique=True,
            sqlite_where=text(_in_list("status", OPEN_JOB_STATUSES)),
            postgresql_where=text(_in_list("status", OPEN_JOB_STATUSES)),
        ),
        Index("ix_jobs_session_enqueued", "session_id", "enqueued_at"),
        Index("ix_jobs_status_enqueued", "status", "enqueued_at"),
    )


class IdempotencyKeyRow(Base):
    """The answer a write gave, kept under the client's ``Idempotency-Key`` for its retries."""

    __tablename__ = "idempotency_keys"

    session_id: Mapped[str] = mapped_column(
        String(255), ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True
    )
    route: Mapped[str] = mapped_column(String(16), primary_key=True)  # snapshot | append
    idempotency_key: Mapped[str] = mapped_column(String(255), primary_key=True)
    body_sha256: Mapped[str] = mapped_column(String(64))  # of the body's canonical JSON
    # The answer as sent: HTTP status, JSON body, X-Hygiene-Reason.
    status: Mapped[int] = mapped_column(Integer)
    answer: Mapped[dict[str, Any]] = mapped_column(JSON)
    reason: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        CheckConstraint(_in_list("route", IDEMPOTENT_ROUTES), name="ck_idempotency_keys_route"),
        CheckConstraint("status >= 200 AND status < 300", name="ck_idempotency_keys_status"),
        Index("ix_idempotency_keys_created_at", "created_at"),
    )


class ArchiveKeyRow(Base):
    """A small number per session with an indexed archive: ``archive_text`` ids are
    ``id << 32 | seq``, so one session's rows make one range that SQLite's FTS5 seeks into."""

    __tablename__ = "archive_keys"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(
        String(255), ForeignKey("sessions.id", ondelete="CASCADE"), unique=True
    )


class ArchiveTextRow(Base):
    """The searchable text of one archived message (gone again when it is restored).

    A text is indexed once per session: a snapshot PUT archives the whole previous transcript,
    so a gateway that PUTs every turn archives each message again and again. The first
    archived copy of a text (same role, tool and text: ``digest``) holds ``body``; later
    copies keep their row with ``body`` null, and one of them takes the body over when the
    holder is restored (archive_index.unindex).
    """

    __tablename__ = "archive_text"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=False)
    message_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("messages.id", ondelete="CASCADE"), unique=True
    )
    session_id: Mapped[str] = mapped_column(
        String(255), ForeignKey("sessions.id", ondelete="CASCADE")
    )
    seq: Mapped[int] = mapped_column(BigInteger)
    tool_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    digest: Mapped[str] = mapped_column(String(32))  # of role, tool name and text
    body: Mapped[str | None] = mapped_column(DerivedText, nullable=True)  # null: a later copy

    __table_args__ = (
        UniqueConstraint("session_id", "seq", name="uq_archive_text_session_seq"),
        Index(
            "uq_archive_text_session_digest",
            "session_id",
            "digest",
            unique=True,
            sqlite_where=text("body IS NOT NULL"),
            postgresql_where=text("body IS NOT NULL"),
        ),
    )


# The search index itself is one database's own kind of object, made by migration 0003 and
# not modelled: SQLite's FTS5 table (with its shadow tables archive_fts_data, _idx, _docsize,
# _config) and PostgreSQL's GIN index over (session_id, body trigrams). Schema comparisons (alembic autogenerate, the
# migration test) leave them out; tests check each exists on its database.
SQLITE_SEARCH_TABLE = "archive_fts"
POSTGRES_SEARCH_INDEX = "ix_archive_text_session_body_trgm"


def modelled(name: str | None, type_: str, parent_names: object) -> bool:
    """Alembic's ``include_name``: False for the search index's own objects."""
    if name is None:
        return True
    if type_ == "table":
        return not name.startswith(SQLITE_SEARCH_TABLE)
    return not (type_ == "index" and name == POSTGRES_SEARCH_INDEX)
