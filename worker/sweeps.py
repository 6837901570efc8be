"""What beat runs: the nightly sweep of idle sessions and the stuck-job reaper.

The sweep catches sessions that grew large and then went quiet, so they are compact when their
user comes back; it applies the same hygiene decision as the API, with its own (lower)
threshold. The reaper repairs what crashes and outages leave behind: a job whose message the
broker no longer has (it never arrived, or Redis lost it) would wait forever, and a ``running``
job nobody works on keeps its session from ever getting another job.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import redis
from kombu.exceptions import OperationalError as BrokerError

from worker import hygiene, keys, metrics
from worker.cooldowns import Cooldown, active_cooldowns, endpoint_id
from worker.enqueue import enqueue_job
from worker.runtime import Runtime
from worker.settings import Settings
from worker.store import idempotency, jobs
from worker.store.db import Database
from worker.store.errors import JobFencedError, OpenJobExistsError
from worker.store.sessions import effective_tokens
from worker.store.sweep_candidates import SweepCandidate, SweepRules, sweep_candidates

log = logging.getLogger(__name__)
BROKER_ERRORS = (BrokerError, redis.RedisError, OSError)


@dataclass(frozen=True, slots=True)
class SweepPick:
    session_id: str
    tokens: int
    threshold_tokens: int
    idle_since: datetime
    job_id: str | None  # None in a dry run


def sweep_idle_sessions(
    rt: Runtime, *, dry_run: bool = False, now: datetime | None = None
) -> list[SweepPick]:
    """Queue ``trigger="sweep"`` jobs for idle, large sessions (at most one batch); the picks."""
    found, candidates = _pick(rt.db, rt.settings, rt.redis, now=now)
    picks = found
    if not dry_run:
        queued = ((p, _create_and_enqueue(rt, p.session_id)) for p in found)
        picks = [replace(p, job_id=job_id) for p, job_id in queued if job_id]
        metrics.swept(candidates=candidates, queued=len(picks))
    log.info("idle sweep: %d of %d candidates %s", len(picks), candidates,
             "would be queued" if dry_run else "queued")  # fmt: skip
    return picks


def preview_idle_sessions(
    db: Database,
    settings: Settings,
    *,
    redis_client: redis.Redis | None,
    now: datetime | None = None,
) -> list[SweepPick]:
    """What a sweep would queue now, changing nothing. Without ``redis_client`` the cooldowns
    (which live there) are not checked: a session on cooldown is listed too."""
    return _pick(db, settings, redis_client, now=now)[0]


def _pick(
    db: Database, settings: Settings, redis_client: redis.Redis | None, *, now: datetime | None
) -> tuple[list[SweepPick], int]:
    """The sessions the sweep's hygiene decision says to compact, and how many the database
    offered: one query for the batch, one Redis read for its cooldowns."""
    candidates = sweep_candidates(
        db, rules=_rules(settings), limit=settings.sweep_batch_limit, now=now
    )
    cooldowns: dict[str, Cooldown] = {}
    if redis_client is not None:
        cooldowns = active_cooldowns(
            redis_client,
            session_ids=[c.session.id for c in candidates],
            endpoint=endpoint_id(settings),
        )
    picks = []
    for c in candidates:
        decision = _sweep_decision(settings, c, cooldowns.get(c.session.id))
        if decision is not None:
            picks.append(SweepPick(c.session.id, effective_tokens(c.session),
                                   decision.threshold_tokens, c.session.last_activity_at,
                                   job_id=None))  # fmt: skip
    return picks, len(candidates)


def _rules(s: Settings) -> SweepRules:
    return SweepRules(
        idle_for=timedelta(hours=s.sweep_idle_hours),
        threshold=s.sweep_threshold,
        min_messages=s.min_messages,
        thrash_strikes=s.thrash_strikes,
        max_auto_per_hour=s.max_auto_compactions_per_hour,
    )


def _sweep_decision(
    s: Settings, candidate: SweepCandidate, cooldown: Cooldown | None
) -> hygiene.Decision | None:
    """The hygiene decision at the sweep's threshold, when it says enqueue."""
    session = candidate.session
    decision = hygiene.decide(
        tokens=effective_tokens(session),
        context_length=session.context_length,
        threshold=s.sweep_threshold,
        active_messages=session.message_count,
        min_messages=s.min_messages,
        open_job_id=None,  # the query leaves out sessions with one
        cooldown=cooldown,
        ineffective_count=session.ineffective_count,
        thrash_until_tokens=session.thrash_until_tokens,
        thrash_strikes=s.thrash_strikes,
        auto_jobs_last_hour=candidate.auto_jobs_last_hour,
        max_auto_per_hour=s.max_auto_compactions_per_hour,
    )
    return decision if decision.enqueue else None


def _create_and_enqueue(rt: Runtime, session_id: str) -> str | None:
    try:
        job = jobs.create_job(rt.db, session_id=session_id, trigger="sweep")
    except OpenJobExistsError:
        return None  # the gateway or a manual call got there first
    try:
        enqueue_job(job.id, session_id=job.session_id, trigger=job.trigger, app=rt.celery)
    except BROKER_ERRORS as exc:
        # The job stays queued; the reaper sends it again once the broker is back.
        metrics.enqueue_failed("sweep_job")
        log.warning(
            "sweep job %s created but not sent (%s); the reaper will resend it", job.id, exc
        )
    return job.id


@dataclass
class Reaped:
    failed: list[str] = field(default_factory=list)  # running past every limit
    requeued: list[str] = field(default_factory=list)  # open jobs the broker did not have
    expired_keys: int = 0  # Idempotency-Keys past their retention, forgotten


def reap_stuck_jobs(rt: Runtime, *, now: datetime | None = None) -> Reaped:
    """Fail running jobs past the hard limit plus a margin; re-send open jobs that nobody holds
    and the broker does not have (the task is idempotent: a duplicate finds the job done)."""
    s = rt.settings
    out = Reaped()
    stuck_after = timedelta(seconds=s.job_hard_time_limit_s + s.reaper_stuck_margin_s)
    for job in jobs.stuck_jobs(rt.db, older_than=stuck_after, now=now):
        if job.status == "running" and _fail_stuck(rt, job.id, job.attempt, stuck_after):
            out.failed.append(job.id)
    lost_after = timedelta(seconds=s.reaper_requeue_after_s)
    waiting = jobs.stuck_jobs(rt.db, older_than=lost_after, now=now)
    present = jobs_in_broker(rt.redis) if waiting else set()
    for job in waiting:
        # A running job whose session lock is held has a live worker (its heartbeat keeps it).
        if job.id in present or (job.status == "running" and _locked(rt, job.session_id)):
            continue
        enqueue_job(job.id, session_id=job.session_id, trigger=job.trigger, app=rt.celery)
        out.requeued.append(job.id)
    out.expired_keys = idempotency.delete_expired(rt.db)
    metrics.reaped(
        failed=len(out.failed), requeued=len(out.requeued), expired_keys=out.expired_keys
    )
    if out.failed or out.requeued:
        log.warning("reaper: failed %s, re-sent %s", out.failed, out.requeued)
    return out


def _locked(rt: Runtime, session_id: str) -> bool:
    return rt.redis.exists(keys.session_lock(session_id)) > 0


def _fail_stuck(rt: Runtime, job_id: str, attempt: int, after: timedelta) -> bool:
    try:
        row = jobs.finish_job(
            rt.db, job_id=job_id, attempt=attempt, status="failed", error_class="stuck",
            error=f"still running {after} after it started: its worker is gone",
        )  # fmt: skip
    except JobFencedError:
        return False  # it moved on (finished, or claimed again) since we looked
    metrics.job_finished(row)
    return True


def in_broker(client: redis.Redis, job_id: str) -> bool:
    """Whether a compaction message for ``job_id`` waits in the queue or is out for delivery."""
    return job_id in jobs_in_broker(client)


def jobs_in_broker(client: redis.Redis) -> set[str]:
    """The jobs whose compaction message waits in the queue or is out for delivery (held by a
    worker, running or waiting for its countdown), read in one pass."""
    # Out for delivery first: a message moves from the queue to there, never back unrestored.
    held = [json.loads(raw)[0] for raw in client.hvals(keys.BROKER_UNACKED)]  # [msg, ex, rk]
    queued = [json.loads(raw) for raw in client.lrange(keys.QUEUE, 0, -1)]
    return {job_id for m in (*held, *queued) if (job_id := _compaction_job(m)) is not None}


def _compaction_job(message: object) -> str | None:
    headers = message.get("headers") if isinstance(message, dict) else None
    if isinstance(headers, dict) and headers.get("task") == keys.COMPACT_TASK:
        job_id = headers.get("id")
        return job_id if isinstance(job_id, str) else None
    return None
