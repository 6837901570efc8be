"""Sessions for operators: a page at a time, filtered, in id order (a cursor, never an offset).

Ordered by id, the one thing about a session that never changes, so a page does not shift
while the sessions on it take turns or get compacted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, and_, case, select
from sqlalchemy.orm import aliased

from worker.store.db import Database
from worker.store.models import OPEN_JOB_STATUSES, JobRow, SessionRow

DEFAULT_SESSIONS, MAX_SESSIONS = 50, 500


@dataclass(frozen=True, slots=True)
class SessionFilter:
    min_utilization: float | None = None  # tokens / context_length at least this
    idle_since: datetime | None = None  # no activity since this moment
    min_compactions: int | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class SessionPage:
    sessions: list[tuple[SessionRow, str | None]]  # each with its open job's id
    next_cursor: str | None  # the last id of this page, when there is more


# The gateway's prompt_tokens when reported for the current version, else our count (as
# sessions.effective_tokens, in SQL).
_TOKENS = case(
    (
        and_(
            SessionRow.reported_tokens.is_not(None),
            SessionRow.reported_version == SessionRow.version,
        ),
        SessionRow.reported_tokens,
    ),
    else_=SessionRow.token_total,
)


def list_sessions(
    db: Database,
    *,
    after_id: str | None = None,
    limit: int = DEFAULT_SESSIONS,
    only: SessionFilter = SessionFilter(),
) -> SessionPage:
    """Sessions with ids after ``after_id`` that pass ``only``, at most ``limit``."""
    open_job = aliased(JobRow)
    query = (
        select(SessionRow, open_job.id)
        .outerjoin(
            open_job,
            and_(open_job.session_id == SessionRow.id, open_job.status.in_(OPEN_JOB_STATUSES)),
        )
        .where(*_filters(only))
        .order_by(SessionRow.id)
        .limit(limit + 1)
    )
    if after_id is not None:
        query = query.where(SessionRow.id > after_id)
    with db.read() as s:
        rows: list[tuple[SessionRow, str | None]] = [(r[0], r[1]) for r in s.execute(query)]
    more = len(rows) > limit
    rows = rows[:limit]
    return SessionPage(rows, rows[-1][0].id if more else None)


def _filters(only: SessionFilter) -> list[ColumnElement[bool]]:
    out: list[ColumnElement[bool]] = []
    if only.min_utilization is not None:
        out.append(SessionRow.context_length * only.min_utilization <= _TOKENS)
    if only.idle_since is not None:
        out.append(SessionRow.last_activity_at <= only.idle_since)
    if only.min_compactions is not None:
        out.append(SessionRow.compaction_count >= only.min_compactions)
    if only.model is not None:
        out.append(SessionRow.model == only.model)
    return out
