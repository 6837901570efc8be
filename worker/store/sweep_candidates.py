"""The nightly sweep's selection: the idle sessions its hygiene decision would compact, in one
query.

Everything the decision reads from the database is a condition here (idle, size, no open job,
enough messages, the thrash guard, the hourly cap), so the rows that come back are the ones
that qualify and a session that does not costs no statement of its own. The size test is an
index condition (``SESSION_UTILIZATION``); the decision itself still runs on each row
(worker/sweeps.py) with the cooldowns, which live in Redis.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Exists, ScalarSelect, and_, case, func, or_, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from worker.store.db import Database
from worker.store.jobs import _BROKER_UNAVAILABLE, AUTO_TRIGGERS
from worker.store.models import (
    OPEN_JOB_STATUSES,
    SESSION_UTILIZATION,
    UNCOMPACTED_ACTIVITY,
    JobRow,
    SessionRow,
    UTCDateTime,
    utcnow,
)

# The index bound sits a hair below the threshold (float rounding of the two sides); the exact
# test the sweep has always made is the filter beside it.
_UTILIZATION_SLACK = 1e-9

# sessions.effective_tokens, in SQL.
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


@dataclass(frozen=True, slots=True)
class SweepCandidate:
    session: SessionRow
    auto_jobs_last_hour: int


@dataclass(frozen=True, slots=True)
class SweepRules:
    """The hygiene decision's settings, as the sweep applies them."""

    idle_for: timedelta
    threshold: float  # share of the window
    min_messages: int
    thrash_strikes: int
    max_auto_per_hour: int


def sweep_candidates(
    db: Database, *, rules: SweepRules, limit: int, now: datetime | None = None
) -> list[SweepCandidate]:
    """Idle sessions that pass every database-side check of the decision; the longest idle
    first, at most ``limit``."""
    now = now or utcnow()
    auto = _auto_jobs_since(now - timedelta(hours=1))
    query = (
        select(SessionRow, auto)
        .where(
            UNCOMPACTED_ACTIVITY,  # the index's own predicate: it must be in the query
            rules.threshold - _UTILIZATION_SLACK <= SESSION_UTILIZATION,
            SessionRow.token_total >= SessionRow.context_length * rules.threshold,
            # Nearly every session is idle: that index would walk them all.
            _not_indexed(SessionRow.last_activity_at) < now - rules.idle_for,
            # Within a token of the exact threshold (rounded as hygiene.threshold_tokens
            # rounds it); the decision on the row is exact.
            SessionRow.context_length * rules.threshold - 1 < _TOKENS,
            SessionRow.message_count >= rules.min_messages,
            _thrash_clear(rules.thrash_strikes),
            auto < rules.max_auto_per_hour,
            ~_has_open_job(),
        )
        .order_by(SessionRow.last_activity_at, SessionRow.id)
        .limit(limit)
    )
    with db.read() as s:
        return [SweepCandidate(row, int(count)) for row, count in s.execute(query).all()]


class _not_indexed(FunctionElement[datetime]):
    """A column that the query planner should not pick its index for: SQLite's unary plus (a
    no-op on any value); PostgreSQL weighs the indexes by their statistics."""

    inherit_cache = True
    type = UTCDateTime()


@compiles(_not_indexed)
def _compile_not_indexed(element: _not_indexed, compiler: SQLCompiler, **kw: Any) -> str:
    return compiler.process(element.clauses, **kw)


@compiles(_not_indexed, "sqlite")
def _compile_not_indexed_sqlite(element: _not_indexed, compiler: SQLCompiler, **kw: Any) -> str:
    return "+" + compiler.process(element.clauses, **kw)


def _auto_jobs_since(since: datetime) -> ScalarSelect[int]:
    # As jobs.hygiene_state counts them: a job the broker never received was not a compaction.
    return (
        select(func.count())
        .select_from(JobRow)
        .where(
            JobRow.session_id == SessionRow.id,
            JobRow.trigger.in_(AUTO_TRIGGERS),
            JobRow.enqueued_at >= since,
            or_(JobRow.error_class.is_(None), JobRow.error_class != _BROKER_UNAVAILABLE),
        )
        .scalar_subquery()
    )


def _has_open_job() -> Exists:
    return (
        select(JobRow.id)
        .where(JobRow.session_id == SessionRow.id, JobRow.status.in_(OPEN_JOB_STATUSES))
        .exists()
    )


def _thrash_clear(strikes: int) -> ColumnElement[bool]:
    # hygiene's thrash guard: past the mark once it tripped, else fewer low-savings passes.
    return or_(
        and_(SessionRow.thrash_until_tokens.is_(None), SessionRow.ineffective_count < strikes),
        and_(SessionRow.thrash_until_tokens.is_not(None), SessionRow.thrash_until_tokens < _TOKENS),
    )
