"""What PUT, append and manual compact do between the HTTP layer and the store.

Validate everything first (invalid input changes nothing), count tokens once, store, then
decide hygiene; ``enqueued`` creates the job and sends it. If the broker is down the session
data stays stored, the job is marked ``failed`` (``broker_unavailable``) and the caller gets 503.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

import redis
from kombu.exceptions import OperationalError as KombuOperationalError

from api.deps import ApiContext
from api.errors import ApiProblem
from api.limits import check_message_limits
from api.schemas import CompactIn, HygieneAnswer, HygieneOut
from worker.compressor.messages import parse_messages
from worker.cooldowns import Cooldown, active_cooldown, endpoint_id
from worker.encodings import counter_for_model
from worker.enqueue import enqueue_job
from worker.hygiene import Decision, decide
from worker.store.errors import JobFencedError, OpenJobExistsError
from worker.store.jobs import HygieneState, create_job, finish_job, hygiene_state
from worker.store.models import JobRow, SessionRow
from worker.store.sessions import effective_tokens

log = logging.getLogger(__name__)
BROKER_ERRORS = (KombuOperationalError, redis.RedisError, OSError)
RETRY_AFTER_S = "5"


def count_tokens(context: ApiContext, messages: Sequence[Any], *, model: str) -> list[int]:
    """Check limits and the wire format (422/413 naming the message), then count each one."""
    s = context.settings
    check_message_limits(
        messages, max_messages=s.max_messages_per_request, max_content_chars=s.max_content_chars
    )
    parsed = parse_messages(list(messages))
    counter = counter_for_model(model)
    return [counter.count_message(m) for m in parsed]


def hygiene(context: ApiContext, row: SessionRow) -> tuple[int, HygieneAnswer, str]:
    """Decide for the session just written; (HTTP status, answer, the decision's reason)."""
    state = hygiene_state(context.db, session_id=row.id)
    tokens = effective_tokens(row)
    decision = _decide(context, state, row, tokens, cooldown=None)
    if decision.enqueue:  # only now is Redis worth asking
        cooldown = _cooldown(context, row.id)
        if cooldown is not None:
            decision = _decide(context, state, row, tokens, cooldown=cooldown)
    if decision.enqueue:
        decision = _create_and_enqueue(context, row, decision)
    context.metrics.hygiene.labels(decision.decision).inc()
    answer = HygieneAnswer(
        session_id=row.id,
        version=row.version,
        tokens=tokens,
        threshold_tokens=decision.threshold_tokens,
        utilization=round(tokens / row.context_length, 4),
        hygiene=HygieneOut(decision=decision.decision, job_id=decision.job_id),
    )
    return (202 if decision.job_id is not None else 200), answer, decision.reason


def manual_compaction(context: ApiContext, session_id: str, body: CompactIn) -> JobRow:
    """A manual job. ``force`` bypasses cooldown and thrash guard, never the one-open-job rule."""
    state = hygiene_state(context.db, session_id=session_id)
    if state.open_job_id is not None:
        raise OpenJobExistsError(state.open_job_id, session_id)
    if not body.force:
        _refuse_if_guarded(context, state)
    job = create_job(
        context.db,
        session_id=session_id,
        trigger="manual",
        focus_topic=body.focus_topic,
        force=body.force,
    )
    _enqueue(context, job.id, stored_version=None)
    return job


def _refuse_if_guarded(context: ApiContext, state: HygieneState) -> None:
    session = state.session
    guard = decide(
        tokens=effective_tokens(session),
        context_length=session.context_length,
        threshold=0.0,  # size and frequency rules are for automatic compaction only
        active_messages=session.message_count,
        min_messages=0,
        open_job_id=None,
        cooldown=_cooldown(context, session.id),
        ineffective_count=session.ineffective_count,
        thrash_until_tokens=session.thrash_until_tokens,
        thrash_strikes=context.settings.thrash_strikes,
        auto_jobs_last_hour=0,
        max_auto_per_hour=1,
    )
    if not guard.enqueue:
        raise ApiProblem(
            409,
            guard.decision.replace("_", "-"),
            f'{guard.reason}; send "force": true to compact anyway',
            extra={"decision": guard.decision},
        )


def _decide(
    context: ApiContext,
    state: HygieneState,
    row: SessionRow,
    tokens: int,
    *,
    cooldown: Cooldown | None,
) -> Decision:
    s = context.settings
    return decide(
        tokens=tokens,
        context_length=row.context_length,
        threshold=s.hygiene_threshold,
        active_messages=row.message_count,
        min_messages=s.min_messages,
        open_job_id=state.open_job_id,
        cooldown=cooldown,
        ineffective_count=state.session.ineffective_count,
        thrash_until_tokens=state.session.thrash_until_tokens,
        thrash_strikes=s.thrash_strikes,
        auto_jobs_last_hour=state.auto_jobs_last_hour,
        max_auto_per_hour=s.max_auto_compactions_per_hour,
    )


def _create_and_enqueue(context: ApiContext, row: SessionRow, decision: Decision) -> Decision:
    try:
        job = create_job(context.db, session_id=row.id, trigger="hygiene")
    except OpenJobExistsError as exc:  # another request for this session got there first
        return dataclasses.replace(
            decision,
            decision="already_queued",
            job_id=exc.job_id,
            reason=f"compaction job {exc.job_id} is already open",
        )
    _enqueue(context, job.id, stored_version=row.version)
    return dataclasses.replace(decision, job_id=job.id)


def _cooldown(context: ApiContext, session_id: str) -> Cooldown | None:
    """The session's or the endpoint's active cooldown (kept in Redis, next to the broker).

    Redis unreachable: no cooldown is known; the enqueue that follows then fails, and the job
    is recorded as failed with ``broker_unavailable``.
    """
    if context.redis is None:
        return None
    try:
        return active_cooldown(
            context.redis, session_id=session_id, endpoint=endpoint_id(context.settings)
        )
    except BROKER_ERRORS as exc:
        log.warning("cooldown of session %s unknown: %s", session_id, exc)
        return None


def _enqueue(context: ApiContext, job_id: str, *, stored_version: int | None) -> None:
    try:
        if context.celery is None:
            raise ConnectionError("no broker is configured (COMPACTION_REDIS_URL)")
        enqueue_job(job_id, app=context.celery)
    except BROKER_ERRORS as exc:
        # JobFencedError: the reaper re-sent it meanwhile and a worker has it; leave it be.
        with contextlib.suppress(JobFencedError):
            finish_job(
                context.db, job_id=job_id, attempt=0, status="failed",
                error_class="broker_unavailable", error=str(exc) or type(exc).__name__,
            )  # fmt: skip
        raise _no_broker(job_id, stored_version=stored_version, cause=exc) from exc


def _no_broker(job_id: str, *, stored_version: int | None, cause: Exception) -> ApiProblem:
    stored = (
        "" if stored_version is None else f"the session was stored (version {stored_version}); "
    )
    return ApiProblem(
        503,
        "broker-unavailable",
        f"{stored}compaction job {job_id} could not be queued: the broker is unreachable "
        f"({cause}); the job is marked failed",
        headers={"Retry-After": RETRY_AFTER_S},
        extra={"job_id": job_id, "version": stored_version},
    )
