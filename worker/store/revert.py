"""Undoing a compaction: the transcript it replaced comes back, what it wrote is archived.

A compaction archives the active messages up to its ``upto_seq`` (``archived_by_job``) and
inserts its output as generation k, the session's k-th compaction; turns appended later are
generation 0 and order after that output. At any moment at most one generation above 0 is
active: the output of the compaction in effect. Reverting job J therefore needs J's output to
be that generation (else a later compaction or a snapshot replaced it: revert that one first,
or there is nothing of J left to undo). The revert archives J's output (``archived_by_job``
null, like a snapshot's), makes the messages J archived active again under their old seqs,
which order before everything appended since, and bumps version and rewrite counter, so a
job claimed before the revert cannot write over it. Reverts stack: undoing the newest
compaction brings the previous one's output back into effect, which can then be undone too.

``compaction_count`` stays: it counts compactions that ran, and generation k stays the k-th
one's. The previous summary is cleared: the next compaction reads the summary the restored
transcript carries, if any.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from worker.store.archive_index import archive_active, unindex
from worker.store.db import Database
from worker.store.errors import (
    JobNotFoundError,
    OpenJobExistsError,
    RevertRefusedError,
    SessionNotFoundError,
    VersionConflictError,
)
from worker.store.jobs import open_job_id
from worker.store.models import JobRow, MessageRow, SessionRow, utcnow
from worker.store.sessions import lock_session


@dataclass(frozen=True, slots=True)
class Reverted:
    session_id: str
    job_id: str
    version: int
    restored: int  # messages active again
    archived: int  # the job's output, archived now


def revert_compaction(
    db: Database, *, session_id: str, job_id: str, if_match: int | None = None
) -> Reverted:
    """Restore the transcript ``job_id`` replaced, in one transaction.

    Raises ``SessionNotFoundError``, ``JobNotFoundError`` (also for another session's job),
    ``VersionConflictError`` (If-Match), ``OpenJobExistsError`` (a job is queued or running:
    its write-back would fence out anyway, but its work would be lost) and
    ``RevertRefusedError`` (nothing of this job is in effect).
    """
    with db.write() as s:
        session = lock_session(s, session_id)
        if session is None:
            raise SessionNotFoundError(session_id)
        if if_match is not None and if_match != session.version:
            raise VersionConflictError(session.version, if_match)
        open_id = open_job_id(s, session_id)
        if open_id is not None:
            raise OpenJobExistsError(open_id, session_id)
        job = s.get(JobRow, job_id)
        if job is None or job.session_id != session_id:
            raise JobNotFoundError(job_id)
        generation = _generation_in_effect(s, session, job)
        now = utcnow()
        archived = archive_active(s, session_id=session_id, generation=generation, now=now)
        restored = _restore(s, session_id, job_id)
        _recount(s, session)
        session.version += 1
        session.rewrite_count += 1
        session.previous_summary = None
        session.updated_at = now
        return Reverted(session_id, job_id, session.version, restored, archived)


def _generation_in_effect(s: Session, session: SessionRow, job: JobRow) -> int:
    """The generation ``job`` wrote, when it is the active one; else why not."""
    if job.status != "succeeded" or job.version_after is None:
        raise RevertRefusedError(job.id, f"it {job.status} without changing the transcript")
    # Each succeeded write-back took the next generation (revert leaves the count alone), so
    # the job's generation is its rank among the session's write-backs, in version order.
    generation = s.scalar(
        select(func.count())
        .select_from(JobRow)
        .where(
            JobRow.session_id == session.id,
            JobRow.status == "succeeded",
            JobRow.version_after <= job.version_after,
        )
    )
    active = set(
        s.scalars(
            select(MessageRow.generation)
            .where(
                MessageRow.session_id == session.id,
                MessageRow.active.is_(True),
                MessageRow.generation > 0,
            )
            .distinct()
        )
    )
    still_archived = s.scalar(
        select(func.count())
        .select_from(MessageRow)
        .where(MessageRow.session_id == session.id, MessageRow.archived_by_job == job.id)
    )
    if not still_archived:
        raise RevertRefusedError(job.id, "it was already reverted")
    if active != {generation}:
        raise RevertRefusedError(
            job.id,
            "a later compaction or a snapshot replaced what it wrote (revert the later "
            "compaction first; a snapshot cannot be reverted)",
        )
    return int(generation or 0)


def _restore(s: Session, session_id: str, job_id: str) -> int:
    ids = list(
        s.scalars(
            select(MessageRow.id).where(
                MessageRow.session_id == session_id, MessageRow.archived_by_job == job_id
            )
        )
    )
    unindex(s, session_id=session_id, message_ids=ids)
    s.execute(
        update(MessageRow)
        .where(MessageRow.session_id == session_id, MessageRow.archived_by_job == job_id)
        .values(active=True, archived_by_job=None, archived_at=None)
    )
    return len(ids)


def _recount(s: Session, session: SessionRow) -> None:
    tokens, count = s.execute(
        select(func.coalesce(func.sum(MessageRow.tokens), 0), func.count()).where(
            MessageRow.session_id == session.id, MessageRow.active.is_(True)
        )
    ).one()
    session.token_total, session.message_count = int(tokens), int(count)
