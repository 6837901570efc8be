"""Aggregates over jobs: recent ones for ``compaction stats``, open ones for ``/metrics``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from worker.store.db import Database
from worker.store.models import JOB_STATUSES, OPEN_JOB_STATUSES, JobRow


@dataclass(frozen=True, slots=True)
class Percentiles:
    p50: float | None
    p95: float | None


@dataclass(frozen=True, slots=True)
class JobStats:
    since: datetime
    total: int
    by_status: dict[str, int] = field(default_factory=dict)
    fallback_count: int = 0  # succeeded jobs whose LLM summary failed and the fallback stood in
    fallback_rate: float | None = None  # of succeeded jobs; None when none succeeded
    dropped_total: int = 0
    savings_pct: Percentiles = Percentiles(None, None)
    queue_wait_ms: Percentiles = Percentiles(None, None)
    run_ms: Percentiles = Percentiles(None, None)
    llm_ms: Percentiles = Percentiles(None, None)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["since"] = self.since.isoformat()
        return out


def job_stats(db: Database, *, since: datetime) -> JobStats:
    """Counts by status, fallback rate, dropped totals, savings and latency percentiles of the
    jobs enqueued since ``since``."""
    query = select(
        JobRow.status,
        JobRow.fallback_used,
        JobRow.dropped_count,
        JobRow.savings_pct,
        JobRow.queue_wait_ms,
        JobRow.run_ms,
        JobRow.llm_ms,
    ).where(JobRow.enqueued_at >= since)
    with db.read() as s:
        rows = s.execute(query).all()
    by_status = dict.fromkeys(JOB_STATUSES, 0)
    for row in rows:
        by_status[row.status] = by_status.get(row.status, 0) + 1
    succeeded = [r for r in rows if r.status == "succeeded"]
    fallbacks = sum(1 for r in succeeded if r.fallback_used)
    return JobStats(
        since=since,
        total=len(rows),
        by_status=by_status,
        fallback_count=fallbacks,
        fallback_rate=fallbacks / len(succeeded) if succeeded else None,
        dropped_total=sum(r.dropped_count or 0 for r in rows),
        savings_pct=_percentiles([r.savings_pct for r in succeeded]),
        queue_wait_ms=_percentiles([r.queue_wait_ms for r in rows]),
        run_ms=_percentiles([r.run_ms for r in rows if r.status != "queued"]),
        llm_ms=_percentiles([r.llm_ms for r in rows if r.llm_ms]),
    )


@dataclass(frozen=True, slots=True)
class OpenJobs:
    """The jobs of one open status: how many, and since when the oldest has waited (queued:
    its enqueue) or run (running: its start)."""

    count: int
    oldest_at: datetime | None


def open_jobs(db: Database) -> dict[str, OpenJobs]:
    """Queued and running jobs, by status (both present, zeros included).

    Reads open jobs only, through the (status, enqueued_at) index: what a scrape costs does
    not grow with the finished jobs, which are never deleted.
    """
    query = (
        select(
            JobRow.status,
            func.count(),
            func.min(JobRow.enqueued_at),
            func.min(JobRow.started_at),
        )
        .where(JobRow.status.in_(OPEN_JOB_STATUSES))
        .group_by(JobRow.status)
    )
    with db.read() as s:
        rows = s.execute(query).all()
    out = dict.fromkeys(OPEN_JOB_STATUSES, OpenJobs(0, None))
    for status, n, oldest_enqueued, oldest_started in rows:
        oldest = oldest_enqueued if status == "queued" else oldest_started or oldest_enqueued
        out[status] = OpenJobs(int(n), oldest)
    return out


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks; ``q`` in [0, 1]."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _percentiles(values: Sequence[float | None]) -> Percentiles:
    present = [float(v) for v in values if v is not None]
    return Percentiles(percentile(present, 0.50), percentile(present, 0.95))
