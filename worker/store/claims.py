"""Claiming a job: read its snapshot without the write lock, then take the lock for one UPDATE.

A claim reads the job, the session and the active transcript in a read transaction (on SQLite
a WAL snapshot that waits for no writer), then claims the job with one fenced UPDATE in a short
write transaction. The UPDATE goes through only if the job is still open at the attempt that
was read and the session's rewrite counter is still the one read; otherwise the claim reads
again. What keeps the snapshot right while gateways write:

- an append between the read and the UPDATE takes a seq at or above the ``next_seq`` read, so
  it is not in the snapshot (the read stops below that seq) and stays active after it: the
  write-back moves it after the compacted part;
- a snapshot PUT, a compaction or a revert bumps the rewrite counter: the UPDATE refuses and
  the claim reads again, and the write-back checks the counter once more under the row lock;
- the read takes the session row first and the messages after it, so on PostgreSQL (each
  statement its own snapshot) a rewrite committed between the two reads leaves the counter
  read stale, never newer than the messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import exists, select, update
from sqlalchemy.orm import Session

from worker.store.db import Database
from worker.store.errors import JobNotFoundError, SessionNotFoundError
from worker.store.models import OPEN_JOB_STATUSES, JobRow, MessageRow, SessionRow, utcnow

__all__ = ["RECENT_SAVINGS_PASSES", "JobClaim", "as_ms", "claim_job", "elapsed_ms"]

RECENT_SAVINGS_PASSES = 5
# Optimistic tries before the claim reads under the write lock, as it did before: a session
# rewritten faster than a transcript can be read still gets its job started.
_OPTIMISTIC_TRIES = 3


@dataclass(frozen=True, slots=True)
class JobClaim:
    """What a worker needs to run one attempt of a job: the snapshot and the compressor state."""

    job_id: str
    session_id: str
    attempt: int
    trigger: str
    force: bool
    focus_topic: str | None
    target_tokens: int | None  # the size a manual compaction asked for
    model: str
    context_length: int
    format: str  # the wire format of ``messages`` (worker.compressor.formats)
    upto_seq: int  # 0 when the session had no active message
    snapshot_rewrite_count: int
    messages: tuple[dict[str, Any], ...]  # wire dicts, active, seq <= upto_seq, in order
    seqs: tuple[int, ...]  # each message's seq
    token_counts: tuple[int, ...]
    previous_summary: str | None
    compaction_count: int
    recent_savings_pct: tuple[float, ...]  # this session's last passes, newest last
    callback_url: str | None
    enqueued_at: datetime
    started_at: datetime


@dataclass(frozen=True, slots=True)
class _Read:
    """A job and its session as one read saw them: the claim to make if nothing moved since."""

    claim: JobClaim  # attempt and started_at as they will be once claimed
    read_attempt: int
    first_start: bool  # no attempt had started: the claim records the queue wait


def claim_job(db: Database, *, job_id: str, worker: str | None = None) -> JobClaim | None:
    """Start (or restart) a job: None if it already finished, else a fresh snapshot to compact."""
    for _ in range(_OPTIMISTIC_TRIES):
        with db.read() as s:
            read = _read(s, job_id)
        if read is None:
            return None  # a redelivered message after the job finished: nothing to do
        with db.write() as s:
            if _claimed(s, read, worker):
                return read.claim
    with db.write() as s:  # rewritten under every read: read under the locks this time
        read = _read(s, job_id, lock=True)
        if read is None:
            return None
        if not _claimed(s, read, worker):
            raise AssertionError("a claim made under the job's and the session's locks failed")
        return read.claim


def _read(s: Session, job_id: str, *, lock: bool = False) -> _Read | None:
    """The claim to make, as this transaction sees the job; with ``lock``, the job row and then
    the session row stay locked (FOR UPDATE on PostgreSQL) until it ends."""
    job_query = select(JobRow).where(JobRow.id == job_id)
    job = s.scalars(job_query.with_for_update() if lock else job_query).one_or_none()
    if job is None:
        raise JobNotFoundError(job_id)
    if job.status not in OPEN_JOB_STATUSES:
        return None
    session_query = select(SessionRow).where(SessionRow.id == job.session_id)
    session = s.scalars(session_query.with_for_update() if lock else session_query).one_or_none()
    if session is None:  # the foreign key (ON DELETE RESTRICT) makes this impossible
        raise SessionNotFoundError(job.session_id)
    seqs, messages, counts = _active_below(s, session.id, session.next_seq)
    now = utcnow()
    claim = JobClaim(
        job_id=job.id,
        session_id=session.id,
        attempt=job.attempt + 1,
        trigger=job.trigger,
        force=job.force,
        focus_topic=job.focus_topic,
        target_tokens=job.target_tokens,
        model=session.model,
        context_length=session.context_length,
        format=session.format,
        upto_seq=seqs[-1] if seqs else 0,
        snapshot_rewrite_count=session.rewrite_count,
        messages=messages,
        seqs=seqs,
        token_counts=counts,
        previous_summary=session.previous_summary,
        compaction_count=session.compaction_count,
        recent_savings_pct=_recent_savings(s, session.id),
        callback_url=session.callback_url,
        enqueued_at=job.enqueued_at,
        started_at=now,
    )
    return _Read(claim, read_attempt=job.attempt, first_start=job.started_at is None)


def _active_below(
    s: Session, session_id: str, next_seq: int
) -> tuple[tuple[int, ...], tuple[dict[str, Any], ...], tuple[int, ...]]:
    """The active messages with a seq below ``next_seq``: seqs, wire dicts, token counts.

    Plain rows, not ORM objects: a long transcript is thousands of them.
    """
    query = (
        select(MessageRow.seq, MessageRow.data, MessageRow.tokens)
        .where(
            MessageRow.session_id == session_id,
            MessageRow.active.is_(True),
            MessageRow.seq < next_seq,
        )
        .order_by(MessageRow.seq)
    )
    rows = s.connection().execute(query).all()
    if not rows:
        return (), (), ()
    seqs, messages, counts = zip(*rows, strict=True)
    return seqs, messages, counts


def _claimed(s: Session, read: _Read, worker: str | None) -> bool:
    """The claim's one UPDATE: True if the job and the session are still as they were read."""
    claim = read.claim
    session_unchanged = exists().where(
        SessionRow.id == claim.session_id,
        SessionRow.rewrite_count == claim.snapshot_rewrite_count,
    )
    values: dict[str, Any] = {
        "status": "running",
        "worker": worker,
        "attempt": claim.attempt,
        "started_at": claim.started_at,
        "upto_seq": claim.upto_seq,
        "snapshot_rewrite_count": claim.snapshot_rewrite_count,
    }
    if read.first_start:
        values["queue_wait_ms"] = elapsed_ms(claim.enqueued_at, claim.started_at)
    result = s.connection().execute(
        update(JobRow)
        .where(
            JobRow.id == claim.job_id,
            JobRow.attempt == read.read_attempt,
            JobRow.status.in_(OPEN_JOB_STATUSES),
            session_unchanged,
        )
        .values(**values)
    )
    return bool(result.rowcount == 1)


def _recent_savings(s: Session, session_id: str) -> tuple[float, ...]:
    query = (
        select(JobRow.savings_pct)
        .where(
            JobRow.session_id == session_id,
            JobRow.status == "succeeded",
            JobRow.savings_pct.is_not(None),
        )
        .order_by(JobRow.finished_at.desc())
        .limit(RECENT_SAVINGS_PASSES)
    )
    newest_first = [float(v) for v in s.scalars(query) if v is not None]
    return tuple(reversed(newest_first))


def elapsed_ms(start: datetime, end: datetime) -> float:
    return as_ms((end - start).total_seconds() * 1000.0)


def as_ms(value: float) -> float:
    """A duration as stored and shown: milliseconds to a tenth (what a clock measures; the
    float noise past it, ``128.26399999999998``, says nothing)."""
    return round(max(0.0, value), 1)
