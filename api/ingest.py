"""What PUT, append and manual compact do between the HTTP layer and the store.

Validate everything first (invalid input changes nothing) and count tokens once (a PUT names
its model; an append counts with the session's, read under the lock). Then ONE transaction:
lock the session, answer a retried ``Idempotency-Key`` from what it stored, else write the
turns, decide hygiene, create the job when it says ``enqueued``, and keep the answer under the
key. An append below the threshold is three statements: the lock, the turns, the session's
counters (whose UPDATE returns the open job); two more with a key, its lookup and the kept
answer. The job is sent to the broker after the commit. Once the write has committed its
answer is the stored result, whatever fails next: a broker that cannot take the job makes the
job ``failed`` (``broker_unavailable``) and the answer says so, with 200 and no Retry-After,
because the turns are stored and must not be sent again. Only a request that stored nothing
answers 503 (the database was unavailable before the commit).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal

import redis
from kombu.exceptions import OperationalError as KombuOperationalError
from pydantic import BaseModel
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session

from api.deps import ApiContext
from api.errors import ApiProblem
from api.limits import check_message_limits
from api.schemas import AppendIn, CompactIn, HygieneAnswer, HygieneOut, SnapshotIn
from worker.compressor import formats
from worker.cooldowns import Cooldown, active_cooldown, endpoint_id
from worker.encodings import counter_for_model
from worker.enqueue import enqueue_job
from worker.hygiene import Decision, decide
from worker.store import idempotency, jobs, sessions
from worker.store.errors import JobFencedError, OpenJobExistsError, SessionNotFoundError
from worker.store.idempotency import Scope, StoredAnswer
from worker.store.models import JobRow
from worker.store.sessions import SessionState, Written, effective_tokens

log = logging.getLogger(__name__)
BROKER_ERRORS = (KombuOperationalError, redis.RedisError, OSError)
RETRY_AFTER_S = "5"
BROKER_UNAVAILABLE: Final = "broker_unavailable"


class HygieneOutcome(HygieneOut):
    """The decision, plus what became of its job when the broker could not take it (these
    three fields appear only then)."""

    job_status: Literal["failed"] | None = None
    error_class: Literal["broker_unavailable"] | None = None
    detail: str | None = None  # what happened and what the client should do next


class HygieneReply(HygieneAnswer):
    """The hygiene answer of PUT and append (DESIGN.md), as stored under an Idempotency-Key."""

    hygiene: HygieneOutcome


@dataclasses.dataclass(frozen=True, slots=True)
class Reply:
    answer: StoredAnswer
    replayed: bool = False  # answered from the Idempotency-Key: nothing was written


WriteTurns = Callable[[Session, SessionState | None], Written]


def check_limits(context: ApiContext, messages: Sequence[Any]) -> None:
    """413 naming the message and the setting when a request carries too much."""
    s = context.settings
    check_message_limits(
        messages, max_messages=s.max_messages_per_request, max_content_chars=s.max_content_chars
    )


def stored_turns(
    fmt: formats.Format, messages: Sequence[Any], system: Any, *, model: str
) -> tuple[list[Any], list[int]]:
    """The rows to store for turns in ``fmt`` and each row's tokens, once the core has read
    them (422 naming the message, its block and the problem)."""
    transcript = formats.Transcript(fmt, list(messages), system)
    records = formats.read(fmt, transcript.messages, system)  # the whole of it, for its errors
    counter = counter_for_model(model)
    if fmt == formats.CHAT:  # a row is a message: its record's count
        return transcript.messages, [counter.count_message(m) for m in records]
    rows = formats.rows_of(transcript)
    return rows, formats.row_tokens(fmt, rows, counter)


def put_snapshot(
    context: ApiContext, session_id: str, body: SnapshotIn, *, if_match: int | None, key: str | None
) -> Reply:
    """Store a full snapshot, decide hygiene; or the stored answer of the same request."""
    check_limits(context, body.messages)
    rows, token_counts = stored_turns(body.format, body.messages, body.system, model=body.model)

    def write(s: Session, state: SessionState | None) -> Written:
        return sessions.write_snapshot(
            s, state, session_id=session_id, model=body.model, context_length=body.context_length,
            messages=rows, token_counts=token_counts, prompt_tokens=body.prompt_tokens,
            if_match=if_match, callback_url=body.callback_url, format=body.format,
        )  # fmt: skip

    return _write(context, session_id, _scope(session_id, "snapshot", key, body), write)


def append(
    context: ApiContext, session_id: str, body: AppendIn, *, if_match: int | None, key: str | None
) -> Reply:
    """Append turns, decide hygiene; or the stored answer of the same request."""
    check_limits(context, body.messages)

    def write(s: Session, state: SessionState | None) -> Written:
        if state is None:
            raise SessionNotFoundError(session_id)
        # Read and counted under the lock, in the format and with the model the session has
        # now: one transaction, and a snapshot that changes either cannot slip in between.
        fmt = formats.check_format(state.format)
        rows, token_counts = stored_turns(fmt, body.messages, None, model=state.model)
        return sessions.write_append(
            s, state, session_id=session_id, messages=rows, token_counts=token_counts,
            prompt_tokens=body.prompt_tokens, if_match=if_match,
        )  # fmt: skip

    return _write(context, session_id, _scope(session_id, "append", key, body), write)


def manual_compaction(context: ApiContext, session_id: str, body: CompactIn) -> JobRow:
    """A manual job. ``force`` bypasses cooldown and thrash guard, never the one-open-job rule.

    Nothing but the job is written, so a broker that cannot take it is a 503 to retry.
    """
    state = jobs.hygiene_state(context.db, session_id=session_id)
    _check_target(body.target_tokens, state.session.context_length)
    if state.open_job_id is not None:
        raise OpenJobExistsError(state.open_job_id, session_id)
    if not body.force:
        _refuse_if_guarded(context, state)
    job = jobs.create_job(
        context.db,
        session_id=session_id,
        trigger="manual",
        focus_topic=body.focus_topic,
        force=body.force,
        target_tokens=body.target_tokens,
    )
    error = _send(context, job.id, session_id=session_id, trigger="manual")
    if error is not None:
        # JobFencedError: the reaper re-sent it meanwhile and a worker has it; leave it be.
        with contextlib.suppress(JobFencedError), context.db.write() as s:
            _fail_unsent(s, job.id, error)
        raise ApiProblem(
            503,
            "broker-unavailable",
            f"compaction job {job.id} could not be queued: the broker is unreachable "
            f"({error}); the job is marked failed",
            headers={"Retry-After": RETRY_AFTER_S},
            extra={"job_id": job.id},
        )
    return job


def _check_target(target_tokens: int | None, context_length: int) -> None:
    """A size asked for fits the session's window: the schema's other bounds, in its words."""
    if target_tokens is None or target_tokens <= context_length:
        return
    msg = f"Input should be less than or equal to {context_length}, the session's context_length"
    raise ApiProblem(
        422,
        "validation-error",
        f"target_tokens: {msg}",
        extra={"errors": [{"loc": "target_tokens", "msg": msg}]},
    )


# ---------------------------------------------------------------------------------------------
# the write transaction and what follows its commit


def _scope(session_id: str, route: str, key: str | None, body: BaseModel) -> Scope | None:
    if key is None:
        return None
    digest = idempotency.body_sha256(body.model_dump(mode="json"))
    return Scope(session_id=session_id, route=route, key=key, body_sha256=digest)


def _write(context: ApiContext, session_id: str, scope: Scope | None, write: WriteTurns) -> Reply:
    replayed, answer, new_job_id = _commit_again_if_a_first_put_raced(
        context, session_id, scope, write
    )
    if replayed:
        return Reply(answer, replayed=True)
    context.metrics.hygiene.labels(answer.body["hygiene"]["decision"]).inc()
    if new_job_id is not None:
        answer = _send_new_job(context, new_job_id, answer, scope)
    return Reply(answer)


def _commit_again_if_a_first_put_raced(
    context: ApiContext, session_id: str, scope: Scope | None, write: WriteTurns
) -> tuple[bool, StoredAnswer, str | None]:
    for attempt in range(2):
        try:
            return _commit(context, session_id, scope, write)
        except IntegrityError as exc:
            if attempt or not sessions.first_put_raced(exc):
                raise
    raise AssertionError("unreachable")


def _commit(
    context: ApiContext, session_id: str, scope: Scope | None, write: WriteTurns
) -> tuple[bool, StoredAnswer, str | None]:
    """(replayed, the answer, the id of a job this write created and must still send)."""
    with context.db.write() as s:
        # The session's row lock comes first: a concurrent request with the same key waits
        # here, then finds the key stored.
        state = sessions.lock_state(s, session_id)
        stored = idempotency.lookup(s, scope) if scope is not None else None
        if stored is not None:
            return True, stored, None
        written = write(s, state)
        state, tokens = written.state, effective_tokens(written.state)
        decision, new_job_id = _decide_in(context, s, written, tokens)
        answer = _answer(state, tokens, decision)
        if scope is not None:
            idempotency.remember(s, scope, answer)
        return False, answer, new_job_id


def _decide_in(
    context: ApiContext, s: Session, written: Written, tokens: int
) -> tuple[Decision, str | None]:
    """The hygiene decision for the state just written, and the job it created (same
    transaction).

    The open job comes back from every write (the counters' UPDATE returns it: it decides the
    answer); the automatic jobs of the last hour and the cooldown (Redis, within the client's
    socket timeout) are read only when the decision would otherwise enqueue: the rules before
    them do not depend on them.
    """
    state, open_id = written.state, written.open_job_id
    decision = _decide(context, state, tokens, open_job_id=open_id)
    if decision.enqueue:
        recent = jobs.hygiene_state_in(s, session_id=state.id).auto_jobs_last_hour
        cooldown = _cooldown(context, state.id)
        decision = _decide(
            context, state, tokens, open_job_id=open_id, auto_jobs_last_hour=recent,
            cooldown=cooldown,
        )  # fmt: skip
    if not decision.enqueue:
        return decision, None
    try:
        job = jobs.add_job(s, session_id=state.id, trigger="hygiene")
    except OpenJobExistsError as exc:  # a manual or sweep job got there first
        already = dataclasses.replace(
            decision,
            decision="already_queued",
            job_id=exc.job_id,
            reason=f"compaction job {exc.job_id} is already open",
        )
        return already, None
    return dataclasses.replace(decision, job_id=job.id), job.id


def _answer(state: SessionState, tokens: int, decision: Decision) -> StoredAnswer:
    """The hygiene answer: 202 while a job is open for the session, else 200."""
    body = HygieneReply(
        session_id=state.id,
        version=state.version,
        tokens=tokens,
        threshold_tokens=decision.threshold_tokens,
        utilization=round(tokens / state.context_length, 4),
        hygiene=HygieneOutcome(decision=decision.decision, job_id=decision.job_id),
    )
    status = 202 if decision.job_id is not None else 200
    return StoredAnswer(status, body.model_dump(mode="json", exclude_unset=True), decision.reason)


def _send_new_job(
    context: ApiContext, job_id: str, answer: StoredAnswer, scope: Scope | None
) -> StoredAnswer:
    """Send the committed job; if the broker cannot take it, fail the job and say so in the
    answer (also the one kept under the key), never asking for the stored turns again."""
    error = _send(context, job_id, session_id=answer.body["session_id"], trigger="hygiene")
    if error is None:
        return answer
    log.warning("job %s could not be queued, marking it failed: %s", job_id, error)
    unqueued = _unqueued(answer, job_id, error)
    try:
        with context.db.write() as s:
            _fail_unsent(s, job_id, error)
            if scope is not None:
                idempotency.replace_answer(s, scope, unqueued)
    except JobFencedError:
        return answer  # the reaper re-sent it meanwhile and a worker has it: the job is live
    except DBAPIError as exc:
        # The database went away too. The job stays queued, the reaper sends it once the
        # broker is back, and the committed answer (also kept under the key) says just that.
        log.error("job %s: neither sent nor marked failed (%s)", job_id, exc)
        return answer
    return unqueued


def _unqueued(answer: StoredAnswer, job_id: str, error: Exception) -> StoredAnswer:
    body = answer.body
    detail = (
        f"compaction job {job_id} could not be queued: the broker is unreachable "
        f"({type(error).__name__}); "
        f"the job is marked failed. The turns are stored (version {body['version']}): do not "
        "send them again. The next write to this session decides hygiene again; "
        f"POST /v1/sessions/{body['session_id']}/compact queues a compaction once the broker "
        "is back (GET /readyz)."
    )
    hygiene = HygieneOutcome(
        **body["hygiene"], job_status="failed", error_class=BROKER_UNAVAILABLE, detail=detail
    )
    reason = (
        f"{answer.reason}; compaction job {job_id} could not be queued "
        "(the broker is unreachable) and is marked failed"
    )
    # 200: no job is open for the session any more.
    failed_body = body | {"hygiene": hygiene.model_dump(mode="json", exclude_unset=True)}
    return StoredAnswer(200, failed_body, reason)


def _send(context: ApiContext, job_id: str, *, session_id: str, trigger: str) -> Exception | None:
    """Hand the job to the broker; None once it has it, else why not."""
    recent = context.breaker.down()
    if recent is not None:
        context.metrics.unqueued.inc()
        return recent  # failed a moment ago: do not make this request wait on it too
    try:
        if context.celery is None:
            raise ConnectionError("no broker is configured (COMPACTION_REDIS_URL)")
        enqueue_job(job_id, session_id=session_id, trigger=trigger, app=context.celery)
    except BROKER_ERRORS as exc:
        context.breaker.failed(exc)
        context.metrics.unqueued.inc()
        return exc
    return None


def _fail_unsent(s: Session, job_id: str, error: Exception) -> None:
    jobs.finish_job_in(
        s, job_id=job_id, attempt=0, status="failed", error_class=BROKER_UNAVAILABLE,
        error=str(error) or type(error).__name__,
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# the hygiene rules


def _refuse_if_guarded(context: ApiContext, state: jobs.HygieneState) -> None:
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
    state: SessionState,
    tokens: int,
    *,
    open_job_id: str | None,
    auto_jobs_last_hour: int = 0,
    cooldown: Cooldown | None = None,
) -> Decision:
    s = context.settings
    return decide(
        tokens=tokens,
        context_length=state.context_length,
        threshold=s.hygiene_threshold,
        active_messages=state.message_count,
        min_messages=s.min_messages,
        open_job_id=open_job_id,
        cooldown=cooldown,
        ineffective_count=state.ineffective_count,
        thrash_until_tokens=state.thrash_until_tokens,
        thrash_strikes=s.thrash_strikes,
        auto_jobs_last_hour=auto_jobs_last_hour,
        max_auto_per_hour=s.max_auto_compactions_per_hour,
    )


def _cooldown(context: ApiContext, session_id: str) -> Cooldown | None:
    """The session's or the endpoint's active cooldown (kept in Redis, next to the broker).

    Redis unreachable: no cooldown is known; the enqueue that follows then fails, and the job
    is recorded as failed with ``broker_unavailable``.
    """
    if context.redis is None or context.breaker.down() is not None:
        return None
    try:
        return active_cooldown(
            context.redis, session_id=session_id, endpoint=endpoint_id(context.settings)
        )
    except BROKER_ERRORS as exc:
        context.breaker.failed(exc)
        log.warning("cooldown of session %s unknown: %s", session_id, exc)
        return None
