"""One compaction job, start to finish: load, check, lock, compress, save, notify.

``run_job`` is the body of the ``compact_session`` task. It returns the job's telemetry or
raises; ``decide`` is the one place that says what an exception means (retry, defer, fail),
and the task acts on it. Redelivery is safe at every step: a finished job returns its telemetry
and does nothing, the per-session lock keeps two attempts from overlapping, and the store
fences every write by attempt, so a stale attempt cannot finish or write back a job.

An outage of the database or Redis is waited out where it hits (``patiently``), in the job's
own thread, for up to ``job_outage_wait_s``: a retry through Celery would need the broker,
which may be the thing that is down, and a summary in hand is never thrown away for a
bookkeeping step that failed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import Any, TypeVar

import redis
import sqlalchemy.exc
from celery.exceptions import SoftTimeLimitExceeded
from kombu.exceptions import OperationalError as BrokerError

from worker import backoff, cooldowns, logs, metrics
from worker.compressor import formats
from worker.compressor.compress import compress
from worker.compressor.config import CompressConfig
from worker.compressor.report import CompactionReport, CompactionResult
from worker.compressor.summarizer import Summarizer, SummaryRequest, SummaryResponse
from worker.encodings import counter_for_model
from worker.enqueue import enqueue_callback
from worker.errors import JobDeadlineError, LLMPoolBusyError, LockBusyError, LockLostError
from worker.locks import Lease, acquire, held
from worker.runtime import Runtime
from worker.store import jobs
from worker.store.archive_index import SearchText, search_texts
from worker.store.errors import JobFencedError, JobNotFoundError
from worker.store.models import JobRow
from worker.store.sessions import callback_url

log = logging.getLogger(__name__)

# Operational trouble that a later attempt can get past: a database or broker that is down,
# restarting or locked, or no free connection to the LLM (our capacity, not the model's
# failure). Everything else is a property of the job and will not change.
RETRYABLE: tuple[type[BaseException], ...] = (
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
    redis.ConnectionError,
    redis.TimeoutError,
    BrokerError,
    LLMPoolBusyError,
)


class Decision(Enum):
    RETRY = "retry"  # operational: try again with backoff, up to max_job_attempts
    DEFER = "defer"  # the session is locked by another job: try again later, never overlap
    FENCED = "fenced"  # another attempt owns the job now: stop, write nothing
    FAIL = "fail"  # the job fails with the exception's class; the exception propagates


def decide(exc: BaseException) -> Decision:
    """What an exception out of ``run_job`` means. Timeouts never get here (they fail inside)."""
    if isinstance(exc, LockBusyError):
        return Decision.DEFER
    if isinstance(exc, JobFencedError):
        return Decision.FENCED
    if isinstance(exc, RETRYABLE):
        return Decision.RETRY
    return Decision.FAIL


T = TypeVar("T")

# Waits between tries while the database or Redis is away: short first (a blip), then at
# most this long, so a job resumes within seconds of the service coming back.
_OUTAGE_FIRST_BACKOFF_S = 0.5
_OUTAGE_MAX_BACKOFF_S = 10.0


def patiently(rt: Runtime, step: Callable[[], T], *, what: str) -> T:
    """``step()``, tried again through an outage of the database or Redis (``RETRYABLE``) for
    up to ``job_outage_wait_s``; the last error after that."""
    deadline = time.monotonic() + rt.settings.job_outage_wait_s
    tries = 0
    while True:
        try:
            return step()
        except RETRYABLE as exc:
            wait_s = _outage_backoff_s(tries)
            if time.monotonic() + wait_s > deadline:
                raise
            if tries == 0:
                metrics.outage_wait(exc)
                log.warning("%s: %s; trying again for up to %.0fs", what, _one_line(exc),
                            rt.settings.job_outage_wait_s)  # fmt: skip
            tries += 1
            time.sleep(wait_s)


def _outage_backoff_s(tries: int) -> float:
    return backoff.backoff_s(_OUTAGE_FIRST_BACKOFF_S, tries, _OUTAGE_MAX_BACKOFF_S)


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def run_job(rt: Runtime, job_id: str, *, worker: str) -> dict[str, Any]:
    """Compact the job's session once; the job's telemetry (also for a job already done).

    The job's ids stay bound to the log records after it returns (Celery's own line about the
    task carries them); the task's end clears them (``worker.logs``).
    """
    what = f"job {job_id}"
    job = patiently(rt, lambda: jobs.get_job(rt.db, job_id=job_id), what=what)
    logs.bind(job_id=job_id, session_id=job.session_id, trigger=job.trigger, attempt=job.attempt)
    if job.status in jobs.FINISHED_STATUSES:
        return jobs.job_telemetry(job)  # a redelivered message: the work is done
    # Only a job nobody has started may be skipped here; a running one is a redelivery.
    cooling = lambda: _cooling_down(rt, job.session_id)  # noqa: E731
    if job.status == "queued" and not job.force and patiently(rt, cooling, what=what):
        row = _finish(
            rt, job_id, attempt=job.attempt, status="skipped",
            skip_reason="cooldown", worker=worker,
        )  # fmt: skip
        return finished(rt, row)
    ttl_s = rt.settings.lock_ttl_s
    lease = patiently(
        rt, lambda: acquire(rt.redis, job.session_id, ttl_s=ttl_s, owner=job_id), what=what
    )
    with held(lease):
        claim = patiently(rt, lambda: jobs.claim_job(rt.db, job_id=job_id, worker=worker),
                          what=what)  # fmt: skip
        if claim is None:
            return jobs.job_telemetry(patiently(rt, lambda: jobs.get_job(rt.db, job_id=job_id),
                                                what=what))  # fmt: skip
        logs.bind(attempt=claim.attempt)
        row = _run_claimed(rt, claim, lease)
    return finished(rt, row)


def _cooling_down(rt: Runtime, session_id: str) -> bool:
    endpoint = cooldowns.endpoint_id(rt.settings)
    return cooldowns.active_cooldown(rt.redis, session_id=session_id, endpoint=endpoint) is not None


def _run_claimed(rt: Runtime, claim: jobs.JobClaim, lease: Lease) -> JobRow:
    settings = rt.settings
    if claim.attempt > settings.max_job_attempts:
        # Delivered again and again without finishing: each attempt killed its worker.
        return _fail(rt, claim, "too_many_attempts", f"claimed {claim.attempt} times")
    started = time.monotonic()
    guard = JobGuard(lease=lease, deadline=started + settings.job_soft_time_limit_s)
    # Made from the snapshot as claimed, before the core runs on it and outside the write-back.
    archive_texts = search_texts(zip(claim.seqs, claim.messages, strict=True), claim.format)
    try:
        result = compress_claim(rt, claim, guard=guard)
    except (JobDeadlineError, SoftTimeLimitExceeded):
        return _fail(rt, claim, "timeout", f"ran past {settings.job_soft_time_limit_s}s")
    except LockLostError as exc:
        return _abort_lock_lost(rt, claim, exc, jobs.Timings(run_ms=_ms_since(started)))
    except Exception as exc:
        if decide(exc) is Decision.FAIL:
            finished(rt, _fail(rt, claim, type(exc).__name__, str(exc)))
        raise
    metrics.compressed(result.report)
    for note in result.report.notes:  # re-splits, repaired tool pairs: worth an operator's look
        log.info("job %s (session %s): %s", claim.job_id, claim.session_id, note)
    timings = jobs.Timings(run_ms=_ms_since(started), llm_ms=result.report.llm_ms)
    # Before the write-back, so that the cooldown is in place when the job is seen finished
    # (a gateway's next write must not queue straight into the failing summarizer).
    record_summarizer_outcome(rt, claim.session_id, result.report)
    try:
        return _save(rt, claim, lease, result, timings, archive_texts)
    except LockLostError as exc:
        return _abort_lock_lost(rt, claim, exc, timings)


def _save(
    rt: Runtime,
    claim: jobs.JobClaim,
    lease: Lease,
    result: CompactionResult,
    timings: jobs.Timings,
    archive_texts: Mapping[int, SearchText],
) -> JobRow:
    """Write the result back, through an outage (the lock is checked again before each try)."""
    settings = rt.settings

    def save() -> JobRow:
        lease.ensure_held()
        return jobs.write_back(
            rt.db, job_id=claim.job_id, attempt=claim.attempt, result=result, timings=timings,
            thrash_strikes=settings.thrash_strikes,
            ineffective_savings_pct=settings.ineffective_savings_pct, archive_texts=archive_texts,
            rows=rows,
        )  # fmt: skip

    rows = stored_rows(claim, result)

    return _written_once(
        rt, claim.job_id, claim.attempt, save,
        done=lambda job: job.status in jobs.FINISHED_STATUSES, what="write-back",
    )  # fmt: skip


def stored_rows(claim: jobs.JobClaim, result: CompactionResult) -> jobs.Rows | None:
    """The compacted messages as the rows the session stores, with their counts, in its
    format (None in OpenAI Chat form: the core's messages and counts are the rows)."""
    fmt = formats.check_format(claim.format)
    if fmt == formats.CHAT or not result.report.changed:
        return None
    rows = formats.write_rows(fmt, result.messages)
    return jobs.Rows(rows, formats.row_tokens(fmt, rows, counter_for_model(claim.model)))


def _written_once(
    rt: Runtime,
    job_id: str,
    attempt: int,
    write: Callable[[], JobRow],
    *,
    done: Callable[[JobRow], bool],
    what: str,
) -> JobRow:
    """``write()`` through an outage: a try whose commit went through but whose answer was lost
    is found on the next try (this attempt's job row, ``done``) instead of written again."""
    tried = False

    def once() -> JobRow:
        nonlocal tried
        if tried:
            job = jobs.get_job(rt.db, job_id=job_id)
            if job.attempt == attempt and done(job):
                return job
        tried = True
        return write()

    return patiently(rt, once, what=f"job {job_id}: {what}")


def _abort_lock_lost(
    rt: Runtime, claim: jobs.JobClaim, exc: LockLostError, timings: jobs.Timings
) -> JobRow:
    """Another holder may own the session now: leave the transcript exactly as it is."""
    return _finish(
        rt, claim.job_id, attempt=claim.attempt, status="aborted",
        error_class="lock_lost", error=str(exc), timings=timings,
    )  # fmt: skip


def compress_claim(rt: Runtime, claim: jobs.JobClaim, *, guard: JobGuard) -> CompactionResult:
    """Run the core on the claimed snapshot."""
    settings = rt.settings
    target_tokens = claim.target_tokens
    if target_tokens is not None:  # checked against the window when asked; a PUT may shrink it
        target_tokens = min(target_tokens, claim.context_length)
    config = CompressConfig(
        context_length=claim.context_length,
        target_ratio=settings.target_ratio,
        target_tokens=target_tokens,
        summarizer_context_tokens=settings.summary_context_length,
        min_messages=settings.min_messages,
        ineffective_savings_pct=settings.ineffective_savings_pct,
        thrash_strikes=settings.thrash_strikes,
    )
    fmt = formats.check_format(claim.format)
    return compress(
        formats.read_rows(fmt, claim.messages),
        config=config,
        summarizer=GuardedSummarizer(rt.summarizer, guard),
        counter=counter_for_model(claim.model),
        today=datetime.now(UTC).date(),
        # Stored counts are a row's: in another format a row may hold several records.
        token_counts=claim.token_counts if fmt == formats.CHAT else None,
        focus_topic=claim.focus_topic,
        previous_summary=claim.previous_summary,
        compaction_count=claim.compaction_count,
        recent_savings_pct=claim.recent_savings_pct,
    )


@dataclass(frozen=True)
class JobGuard:
    """What must still hold before the job spends more time on the LLM."""

    lease: Lease
    deadline: float  # time.monotonic()
    clock: Callable[[], float] = time.monotonic

    def check(self) -> None:
        if self.lease.lost:  # the heartbeat found the lock gone: nothing we make can be saved
            raise LockLostError(self.lease.session_id)
        if self.clock() >= self.deadline:
            raise JobDeadlineError("the job's soft time limit passed before a summarizer call")


@dataclass(frozen=True)
class GuardedSummarizer:
    """Checks the job's guard before each summarizer call.

    The threads pool cannot interrupt a running task, so the soft time limit and the lock are
    checked where the time goes: before each call to the LLM (each call is bounded by the
    client's own timeouts). The errors raised are not SummarizerErrors, so the core lets them
    through instead of falling back.
    """

    inner: Summarizer
    guard: JobGuard

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def is_llm(self) -> bool:
        return self.inner.is_llm

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        self.guard.check()
        return self.inner.summarize(request)


def record_summarizer_outcome(rt: Runtime, session_id: str, report: CompactionReport) -> None:
    """A failed summarizer puts the session (maybe the endpoint) on cooldown; a summary clears it.

    Bookkeeping: Redis refusing it (down, out of memory) loses the cooldown, never the summary.
    """
    try:
        _record_summarizer_outcome(rt, session_id, report)
    except redis.RedisError as exc:
        log.warning("session %s: summarizer outcome not recorded (%s): no cooldown is set",
                    session_id, _one_line(exc))  # fmt: skip


def _record_summarizer_outcome(rt: Runtime, session_id: str, report: CompactionReport) -> None:
    endpoint = cooldowns.endpoint_id(rt.settings)
    if report.error_class is not None:
        cooldowns.record_failure(
            rt.redis, settings=rt.settings, session_id=session_id, endpoint=endpoint,
            error_class=report.error_class, retry_after_s=report.retry_after_s,
        )  # fmt: skip
    elif report.summarizer_calls > 0:
        cooldowns.record_success(rt.redis, session_id=session_id, endpoint=endpoint)


def finished(rt: Runtime, row: JobRow) -> dict[str, Any]:
    """After a job finishes: count it, queue its callback if the session wants one; its
    telemetry."""
    metrics.job_finished(row)
    notify(rt, row)
    return jobs.job_telemetry(row)


def notify(rt: Runtime, row: JobRow) -> None:
    try:
        if callback_url(rt.db, session_id=row.session_id) is None:
            return
        enqueue_callback(row.id, app=rt.celery)
    except RETRYABLE as exc:
        # The job is done; a callback that cannot even be queued must not undo that.
        metrics.enqueue_failed("callback")
        log.warning("could not queue the callback of job %s: %s", row.id, exc)


def _fail(rt: Runtime, claim: jobs.JobClaim, error_class: str, error: str) -> JobRow:
    return _finish(
        rt, claim.job_id, attempt=claim.attempt, status="failed",
        error_class=error_class, error=error[:2000],
    )  # fmt: skip


def _finish(rt: Runtime, job_id: str, *, attempt: int, **outcome: Any) -> JobRow:
    """``jobs.finish_job`` through an outage (see ``_written_once``)."""
    status = outcome["status"]
    return _written_once(
        rt, job_id, attempt,
        lambda: jobs.finish_job(rt.db, job_id=job_id, attempt=attempt, **outcome),
        done=lambda job: job.status == status, what=f"recording {status}",
    )  # fmt: skip


def fail_job(rt: Runtime, job_id: str, exc: BaseException) -> dict[str, Any] | None:
    """Give up on a job after its retries: failed with the exception's class, if still open."""
    try:
        job = patiently(rt, lambda: jobs.get_job(rt.db, job_id=job_id), what=f"job {job_id}")
    except JobNotFoundError:
        return None  # nothing to mark; the task's own exception says what went wrong
    if job.status in jobs.FINISHED_STATUSES:
        return jobs.job_telemetry(job)
    try:
        row = _finish(
            rt, job_id, attempt=job.attempt, status="failed",
            error_class=type(exc).__name__, error=str(exc)[:2000],
        )  # fmt: skip
    except JobFencedError:
        return None  # an attempt started meanwhile; it owns the outcome
    return finished(rt, row)


def _ms_since(start: float) -> float:
    return (time.monotonic() - start) * 1000.0


def give_up_locked(rt: Runtime, job_id: str, *, worker: str) -> dict[str, Any]:
    """The session stayed locked past every wait: skip a job nobody started, with a reason."""
    job = patiently(rt, lambda: jobs.get_job(rt.db, job_id=job_id), what=f"job {job_id}")
    if job.status != "queued":
        return jobs.job_telemetry(job)  # done, or running under another attempt that owns it
    row = _finish(
        rt, job_id, attempt=job.attempt, status="skipped", skip_reason="locked", worker=worker
    )
    return finished(rt, row)
