"""Compaction jobs: create, claim (worker/store/claims.py), write back, finish, and the reads
around them.

Each function is one transaction. A job moves ``queued -> running -> succeeded | skipped |
aborted | failed``; ``attempt`` counts claims, and every write after the claim names the attempt
it belongs to, so a worker whose lock expired (and whose job was claimed again) is fenced out.
Lock order, everywhere: the job row, then the session row.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from worker.compressor.messages import to_wire_list
from worker.compressor.redact import redact_text
from worker.compressor.report import CompactionReport, CompactionResult
from worker.store.archive_index import SearchText, archive_active
from worker.store.claims import JobClaim, as_ms, claim_job, elapsed_ms
from worker.store.db import Database
from worker.store.errors import (
    JobFencedError,
    JobNotFoundError,
    OpenJobExistsError,
    SessionNotFoundError,
    translate_integrity_error,
    violated_constraint,
)
from worker.store.models import (
    JOB_TRIGGERS,
    OPEN_JOB_STATUSES,
    JobRow,
    MessageRow,
    SessionRow,
    utcnow,
)
from worker.store.sessions import insert_rows, lock_session
from worker.store.stats import JobStats, OpenJobs, job_stats, open_jobs

__all__ = [
    "AUTO_TRIGGERS",
    "FINISHED_STATUSES",
    "TELEMETRY_FIELDS",
    "HygieneState",
    "JobClaim",
    "JobStats",
    "OpenJobs",
    "Timings",
    "add_job",
    "claim_job",
    "create_job",
    "finish_job",
    "finish_job_in",
    "get_job",
    "hygiene_state",
    "hygiene_state_in",
    "idle_sessions",
    "job_stats",
    "job_telemetry",
    "latest_job",
    "list_jobs",
    "open_job_id",
    "open_jobs",
    "record_callback",
    "stuck_jobs",
    "write_back",
]

FINISHED_STATUSES = ("succeeded", "skipped", "aborted", "failed")
AUTO_TRIGGERS = ("hygiene", "sweep")
_OPEN_JOB_INDEX = "uq_jobs_one_open_per_session"
_BROKER_UNAVAILABLE = "broker_unavailable"

TELEMETRY_FIELDS = (
    "id", "session_id", "trigger", "status", "skip_reason", "attempt",
    "tokens_before", "tokens_after", "savings_pct", "messages_before", "messages_after",
    "summarized_count", "dropped_count", "fallback_used", "summarizer", "summary_tokens",
    "summarizer_input_tokens", "summarizer_calls", "redactions", "aux_model_failed",
    "error_class", "error", "enqueued_at", "started_at", "finished_at",
    "queue_wait_ms", "run_ms", "llm_ms", "worker",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Timings:
    """Measured by the worker; ``run_ms`` defaults to started_at..finished_at."""

    run_ms: float | None = None
    llm_ms: float | None = None


def create_job(
    db: Database,
    *,
    session_id: str,
    trigger: str,
    focus_topic: str | None = None,
    force: bool = False,
    target_tokens: int | None = None,
) -> JobRow:
    """A queued job; ``OpenJobExistsError`` when the session already has one open."""
    with db.write() as s:
        if s.get(SessionRow, session_id) is None:
            raise SessionNotFoundError(session_id)
        return add_job(s, session_id=session_id, trigger=trigger, focus_topic=focus_topic,
                       force=force, target_tokens=target_tokens)  # fmt: skip


def add_job(
    s: Session,
    *,
    session_id: str,
    trigger: str,
    focus_topic: str | None = None,
    force: bool = False,
    target_tokens: int | None = None,
) -> JobRow:
    """``create_job`` inside the caller's transaction: a refusal leaves that transaction usable.

    The focus topic is stored redacted: the job's telemetry shows it and the summarizer reads
    it, so a secret pasted into it must reach neither. ``target_tokens`` is the size asked for
    (the API checked it against the session's window); None: a share of the window.
    """
    if trigger not in JOB_TRIGGERS:
        raise ValueError(f"trigger must be one of {', '.join(JOB_TRIGGERS)}, got {trigger!r}")
    if focus_topic is not None:
        focus_topic = redact_text(focus_topic).text
    open_id = open_job_id(s, session_id)
    if open_id is not None:
        raise OpenJobExistsError(open_id, session_id)
    row = JobRow(
        id=str(uuid.uuid4()),
        session_id=session_id,
        trigger=trigger,
        status="queued",
        focus_topic=focus_topic,
        force=force,
        target_tokens=target_tokens,
        attempt=0,
        enqueued_at=utcnow(),
        callback_attempts=0,
    )
    try:
        with s.begin_nested():  # a savepoint: losing the race undoes this insert only
            s.add(row)
    except IntegrityError as exc:
        # A concurrent creator won (PostgreSQL: our insert waited on the partial unique index).
        if violated_constraint(exc) != _OPEN_JOB_INDEX:
            raise translate_integrity_error(exc) from exc
        raise OpenJobExistsError(open_job_id(s, session_id) or "unknown", session_id) from exc
    return row


@dataclass(frozen=True, slots=True)
class Rows:
    """Compacted messages as stored (wire dicts in the session's format), and their counts."""

    messages: Sequence[Any]
    token_counts: Sequence[int]


def write_back(
    db: Database,
    *,
    job_id: str,
    attempt: int,
    result: CompactionResult,
    timings: Timings | None = None,
    thrash_strikes: int = 2,
    ineffective_savings_pct: float = 10.0,
    archive_texts: Mapping[int, SearchText] | None = None,
    rows: Rows | None = None,
) -> JobRow:
    """Apply a compaction in ONE transaction and finish the job; returns the finished row.

    ``archive_texts``: the search text of the claimed messages by seq, made before the write
    transaction so that it does less while it holds the lock (archive_index.search_texts).
    ``rows``: the compacted messages as the session stores them, in its wire format (default:
    ``result``'s messages and counts, in OpenAI Chat form).

    A result that changed nothing finishes the job as ``aborted`` or ``skipped`` (its
    ``noop_reason``). If a snapshot PUT or another compaction rewrote the session since the
    claim, the job is ``skipped``/``superseded`` and the transcript is left alone. Raises
    ``JobFencedError`` when this attempt is no longer the job's running attempt.
    """
    report = result.report
    if report.aborted or not report.changed:
        status = "aborted" if report.aborted else "skipped"
        return finish_job(
            db, job_id=job_id, attempt=attempt, status=status,
            skip_reason=report.noop_reason, report=report, timings=timings,
            thrash_strikes=thrash_strikes,
        )  # fmt: skip
    if rows is None:
        rows = Rows(to_wire_list(result.messages), list(result.token_counts))
    if len(rows.token_counts) != len(rows.messages):
        raise ValueError("one token count per compacted message is needed")
    try:
        with db.write() as s:
            job = _fenced_job(s, job_id, attempt, statuses=("running",))
            session = _lock_session_of(s, job)
            if session.rewrite_count != job.snapshot_rewrite_count:
                _finish(job, "skipped", skip_reason="superseded", report=report, timings=timings)
                return job
            _replace_compacted(s, job, session, result, rows, archive_texts)
            _update_thrash_state(
                session,
                savings_pct=report.savings_pct,
                tripped=report.thrash_guard_tripped,
                strikes=thrash_strikes,
                ineffective_below_pct=ineffective_savings_pct,
            )
            _finish(job, "succeeded", report=report, timings=timings)
            job.version_after = session.version
            return job
    except IntegrityError as exc:  # the transaction rolled back whole: nothing was written
        raise translate_integrity_error(exc) from exc


def finish_job(
    db: Database,
    *,
    job_id: str,
    attempt: int,
    status: str,
    skip_reason: str | None = None,
    error_class: str | None = None,
    error: str | None = None,
    report: CompactionReport | None = None,
    timings: Timings | None = None,
    worker: str | None = None,
    thrash_strikes: int = 2,
) -> JobRow:
    """Finish an open job as skipped, aborted or failed (fenced by ``attempt`` like write-back).

    A pass that ran but found nothing to do counts as an ineffective pass for the thrash guard,
    so hygiene cannot re-queue it on every turn.
    """
    with db.write() as s:
        return finish_job_in(
            s, job_id=job_id, attempt=attempt, status=status, skip_reason=skip_reason,
            error_class=error_class, error=error, report=report, timings=timings,
            worker=worker, thrash_strikes=thrash_strikes,
        )  # fmt: skip


def finish_job_in(
    s: Session,
    *,
    job_id: str,
    attempt: int,
    status: str,
    skip_reason: str | None = None,
    error_class: str | None = None,
    error: str | None = None,
    report: CompactionReport | None = None,
    timings: Timings | None = None,
    worker: str | None = None,
    thrash_strikes: int = 2,
) -> JobRow:
    """``finish_job`` inside the caller's transaction."""
    if status not in ("skipped", "aborted", "failed"):
        raise ValueError(f"finish_job takes skipped, aborted or failed, not {status!r}")
    job = _fenced_job(s, job_id, attempt, statuses=OPEN_JOB_STATUSES)
    if worker is not None:
        job.worker = worker
    _finish(
        job, status, skip_reason=skip_reason, error_class=error_class, error=error,
        report=report, timings=timings,
    )  # fmt: skip
    if status == "skipped" and report is not None and report.noop_reason is not None:
        session = _lock_session_of(s, job)
        _update_thrash_state(
            session, savings_pct=0.0, tripped=False, strikes=thrash_strikes,
            ineffective_below_pct=float("inf"),
        )  # fmt: skip
    return job


def record_callback(db: Database, *, job_id: str, status: str) -> JobRow:
    """Count one callback delivery attempt and remember how it went."""
    with db.write() as s:
        job = _locked_job(s, job_id)
        job.callback_attempts += 1
        job.callback_status = status
        return job


def get_job(db: Database, *, job_id: str) -> JobRow:
    with db.read() as s:
        job = s.get(JobRow, job_id)
        if job is None:
            raise JobNotFoundError(job_id)
        return job


def list_jobs(
    db: Database,
    *,
    session_id: str | None = None,
    status: str | None = None,
    limit: int = 50,
    before: str | None = None,
) -> list[JobRow]:
    """Newest first. ``before`` is a job id: the page continues after that job."""
    query = select(JobRow)
    if session_id is not None:
        query = query.where(JobRow.session_id == session_id)
    if status is not None:
        query = query.where(JobRow.status == status)
    with db.read() as s:
        if before is not None:
            anchor = s.get(JobRow, before)
            if anchor is None:
                raise JobNotFoundError(before)
            query = query.where(
                or_(
                    JobRow.enqueued_at < anchor.enqueued_at,
                    and_(JobRow.enqueued_at == anchor.enqueued_at, JobRow.id < anchor.id),
                )
            )
        query = query.order_by(JobRow.enqueued_at.desc(), JobRow.id.desc()).limit(limit)
        return list(s.scalars(query))


def latest_job(db: Database, *, session_id: str) -> JobRow | None:
    jobs = list_jobs(db, session_id=session_id, limit=1)
    return jobs[0] if jobs else None


def job_telemetry(row: JobRow) -> dict[str, Any]:
    """The DESIGN.md telemetry fields, JSON-ready (times as ISO 8601 UTC)."""
    out: dict[str, Any] = {}
    for name in TELEMETRY_FIELDS:
        value = getattr(row, name)
        out[name] = value.isoformat() if isinstance(value, datetime) else value
    return out


# ---------------------------------------------------------------------------------------------
# queries for the hygiene decision and the beat tasks


@dataclass(frozen=True, slots=True)
class HygieneState:
    session: SessionRow
    open_job_id: str | None
    auto_jobs_last_hour: int


def hygiene_state(db: Database, *, session_id: str, now: datetime | None = None) -> HygieneState:
    """Everything ``worker.hygiene.decide`` needs from the database, read in one transaction."""
    with db.read() as s:
        return hygiene_state_in(s, session_id=session_id, now=now)


def hygiene_state_in(s: Session, *, session_id: str, now: datetime | None = None) -> HygieneState:
    """``hygiene_state`` inside the caller's transaction (it sees what that one wrote)."""
    since = (now or utcnow()) - timedelta(hours=1)
    session = s.get(SessionRow, session_id)
    if session is None:
        raise SessionNotFoundError(session_id)
    auto = s.scalar(
        select(func.count())
        .select_from(JobRow)
        .where(
            JobRow.session_id == session_id,
            JobRow.trigger.in_(AUTO_TRIGGERS),
            JobRow.enqueued_at >= since,
            # A job the broker never received was not a compaction.
            or_(JobRow.error_class.is_(None), JobRow.error_class != _BROKER_UNAVAILABLE),
        )
    )
    return HygieneState(session, open_job_id(s, session_id), int(auto or 0))


def open_job_id(s: Session, session_id: str) -> str | None:
    return s.scalar(
        select(JobRow.id).where(
            JobRow.session_id == session_id, JobRow.status.in_(OPEN_JOB_STATUSES)
        )
    )


def stuck_jobs(db: Database, *, older_than: timedelta, now: datetime | None = None) -> list[JobRow]:
    """Open jobs that have not moved for ``older_than``: running since, or queued since."""
    cutoff = (now or utcnow()) - older_than
    query = (
        select(JobRow)
        .where(
            or_(
                and_(JobRow.status == "running", JobRow.started_at < cutoff),
                and_(JobRow.status == "queued", JobRow.enqueued_at < cutoff),
            )
        )
        .order_by(JobRow.enqueued_at)
    )
    with db.read() as s:
        return list(s.scalars(query))


def idle_sessions(
    db: Database,
    *,
    idle_for: timedelta,
    min_utilization: float,
    limit: int,
    now: datetime | None = None,
) -> list[SessionRow]:
    """Sessions quiet for ``idle_for`` holding at least ``min_utilization`` of their window,
    with no open job and activity since their last compaction; the longest idle first."""
    cutoff = (now or utcnow()) - idle_for
    has_open_job = (
        select(JobRow.id)
        .where(JobRow.session_id == SessionRow.id, JobRow.status.in_(OPEN_JOB_STATUSES))
        .exists()
    )
    query = (
        select(SessionRow)
        .where(
            SessionRow.last_activity_at < cutoff,
            SessionRow.token_total >= SessionRow.context_length * min_utilization,
            # Compacted after its last turn: nothing new to compact, and it must not crowd the
            # batch out for sessions that have something.
            or_(
                SessionRow.last_compacted_at.is_(None),
                SessionRow.last_compacted_at < SessionRow.last_activity_at,
            ),
            ~has_open_job,
        )
        .order_by(SessionRow.last_activity_at)
        .limit(limit)
    )
    with db.read() as s:
        return list(s.scalars(query))


# ---------------------------------------------------------------------------------------------
# inside the transactions


def _locked_job(s: Session, job_id: str) -> JobRow:
    job = s.scalars(select(JobRow).where(JobRow.id == job_id).with_for_update()).one_or_none()
    if job is None:
        raise JobNotFoundError(job_id)
    return job


def _lock_session_of(s: Session, job: JobRow) -> SessionRow:
    session = lock_session(s, job.session_id)
    if session is None:  # the foreign key (ON DELETE RESTRICT) makes this impossible
        raise SessionNotFoundError(job.session_id)
    return session


def _fenced_job(s: Session, job_id: str, attempt: int, *, statuses: Sequence[str]) -> JobRow:
    job = _locked_job(s, job_id)
    if job.status not in statuses or job.attempt != attempt:
        raise JobFencedError(job_id, attempt, job.status, job.attempt)
    return job


def _replace_compacted(
    s: Session,
    job: JobRow,
    session: SessionRow,
    result: CompactionResult,
    rows: Rows,
    archive_texts: Mapping[int, SearchText] | None,
) -> None:
    """Archive up to upto_seq, insert the compacted set, then move later appends after it."""
    upto_seq = job.upto_seq or 0
    now = utcnow()
    archive_active(
        s, session_id=session.id, upto_seq=upto_seq, job_id=job.id, now=now,
        prepared=archive_texts,
    )  # fmt: skip
    later = s.execute(
        select(MessageRow.id, MessageRow.tokens)
        .where(
            MessageRow.session_id == session.id,
            MessageRow.active.is_(True),
            MessageRow.seq > upto_seq,
        )
        .order_by(MessageRow.seq)
    ).all()
    generation = session.compaction_count + 1
    compacted = rows.messages
    insert_rows(s, session, compacted, rows.token_counts, generation=generation)
    if later:
        # Fresh seqs above every existing one: they order after the compacted part and can
        # never collide with a seq already taken.
        renumbered = [{"id": row.id, "seq": session.next_seq + i} for i, row in enumerate(later)]
        s.execute(update(MessageRow), renumbered)
        session.next_seq += len(later)
    session.version += 1
    session.rewrite_count += 1
    session.compaction_count = generation
    session.token_total = sum(rows.token_counts) + sum(row.tokens for row in later)
    session.message_count = len(compacted) + len(later)
    if result.summary is not None:
        session.previous_summary = result.summary
    session.last_compacted_at = session.updated_at = now


def _update_thrash_state(
    session: SessionRow,
    *,
    savings_pct: float,
    tripped: bool,
    strikes: int,
    ineffective_below_pct: float,
) -> None:
    """Count low-savings passes; once the guard trips, automatic compaction waits until the
    session grows 10% of its window past where this pass left it."""
    session.last_savings_pct = savings_pct
    if savings_pct < ineffective_below_pct:
        session.ineffective_count += 1
    else:
        session.ineffective_count = 0
        session.thrash_until_tokens = None
    if tripped or session.ineffective_count >= strikes:
        session.thrash_until_tokens = session.token_total + session.context_length // 10


def _finish(
    job: JobRow,
    status: str,
    *,
    skip_reason: str | None = None,
    error_class: str | None = None,
    error: str | None = None,
    report: CompactionReport | None = None,
    timings: Timings | None = None,
) -> None:
    now = utcnow()
    job.status, job.skip_reason, job.finished_at = status, skip_reason, now
    if report is not None:
        _copy_report(job, report)
    job.error_class = error_class or job.error_class
    job.error = error or job.error
    timings = timings or Timings()
    if timings.llm_ms is not None:
        job.llm_ms = as_ms(timings.llm_ms)
    start = job.started_at or job.enqueued_at
    job.run_ms = as_ms(timings.run_ms) if timings.run_ms is not None else elapsed_ms(start, now)


def _copy_report(job: JobRow, r: CompactionReport) -> None:
    job.tokens_before, job.tokens_after = r.tokens_before, r.tokens_after
    job.messages_before, job.messages_after = r.messages_before, r.messages_after
    job.savings_pct = r.savings_pct
    job.summarized_count, job.dropped_count = r.summarized_count, r.dropped_count
    job.fallback_used, job.summarizer = r.fallback_used, r.summarizer
    job.summary_tokens, job.summarizer_calls = r.summary_tokens, r.summarizer_calls
    job.summarizer_input_tokens = r.summarizer_input_tokens
    job.redactions, job.aux_model_failed = r.redactions, r.aux_model_failed
    job.error_class, job.error = r.error_class, r.error
    job.llm_ms = r.llm_ms
