"""Erasing a session: its messages, archive, search text, remembered answers and job rows.

A user's data must be deletable, and nothing of it may stay readable in a table. Job rows go
too, not only their texts (focus topic, error, summarizer): each names its session, the
gateway's key, and that key is often the user's own id; Prometheus keeps the counts.

The rows are gone from every table at commit. The bytes they filled may outlive them on disk
for a while, as with any delete: PostgreSQL reuses them after VACUUM, SQLite after its pages
are reused (and its FTS5 index drops the words of deleted rows when it merges segments).
"""

from __future__ import annotations

from sqlalchemy import delete

from worker.store.db import Database
from worker.store.errors import OpenJobExistsError, SessionNotFoundError, VersionConflictError
from worker.store.jobs import open_job_id
from worker.store.models import (
    ArchiveKeyRow,
    ArchiveTextRow,
    IdempotencyKeyRow,
    JobRow,
    MessageRow,
    SessionRow,
)
from worker.store.sessions import lock_session

# Children before parents: every foreign key is satisfied at each step.
_ERASED_IN_ORDER = (ArchiveTextRow, ArchiveKeyRow, IdempotencyKeyRow, MessageRow, JobRow)


def erase_session(db: Database, *, session_id: str, if_match: int | None = None) -> None:
    """Delete the session and everything stored for it, in one transaction.

    Raises ``SessionNotFoundError``, ``VersionConflictError`` (If-Match) and
    ``OpenJobExistsError``: a queued or running job would write back into a session that no
    longer exists; erase once it finished.
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
        for model in _ERASED_IN_ORDER:
            s.execute(delete(model).where(model.session_id == session_id))
        s.execute(delete(SessionRow).where(SessionRow.id == session_id))
