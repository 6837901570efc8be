"""The Celery tasks: compaction, the idle sweep, the stuck-job reaper, callback delivery.

Each task is wiring: it takes this process's runtime, calls one function that does the work,
and turns that function's outcome into Celery's terms (return value, retry, failure). What an
exception means is decided once, in ``worker.compaction.decide``.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

from celery import Task
from celery.exceptions import Ignore
from celery.signals import (
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)

from worker import (
    backoff,
    callbacks,
    compaction,
    compiled,
    encodings,
    keys,
    logs,
    metrics,
    runtime,
    sweeps,
    task_outcome,
)
from worker.celery_app import celery_app
from worker.compaction import Decision
from worker.errors import CallbackDeliveryError, JobFailedError
from worker.settings import Settings

log = logging.getLogger(__name__)
MAX_RETRY_BACKOFF_S = 300.0

logs.install_celery_hooks()  # JSON or text logs for worker and beat, with each job's ids


@worker_init.connect
def _warm_up(**_: Any) -> None:
    # Loading and checking the encodings takes a second or so; pay it before the first job, not
    # inside its time limit (prefork children inherit them).
    encodings.warm()


@worker_ready.connect
def _say_which_core(**_: Any) -> None:
    # Logged once logging is set up (not at worker_init): compiled, or the Python and why.
    log.info("%s", compiled.state)


@worker_process_init.connect
def _after_fork(**_: Any) -> None:
    runtime.after_fork()  # a prefork child must not share its parent's sockets


@worker_process_shutdown.connect
@worker_shutdown.connect
def _on_shutdown(**_: Any) -> None:
    runtime.shutdown()  # the LLM client's connections, the database pool, Redis


@celery_app.task(
    bind=True,
    name=keys.COMPACT_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
    throws=(JobFailedError,),  # a failed job is an outcome, not a crash: no traceback
    # Flower shows the telemetry from the task-succeeded event, cut at this many characters.
    resultrepr_maxsize=8192,
)
def compact_session(self: Task, job_id: str, defers: int = 0, failures: int = 0) -> str:
    """Compact one job's session; ends as the job did (worker/task_outcome.py)."""
    started = time.monotonic()
    rt = runtime.current()
    try:
        telemetry = compaction.run_job(rt, job_id, worker=runtime.worker_id())
    except Exception as exc:
        telemetry = _after_error(self, rt, job_id, exc, defers=defers, failures=failures)
    return task_outcome.report(self, telemetry, started=started)


def _after_error(
    task: Task, rt: runtime.Runtime, job_id: str, exc: Exception, *, defers: int, failures: int
) -> dict[str, Any]:
    """Retry, or the telemetry of how the job ended; re-raises what fails the task."""
    decision = compaction.decide(exc)
    metrics.attempt_interrupted(decision.value, exc)
    shown_kwargs = getattr(task.request, "kwargsrepr", None)  # session and trigger, for Flower
    if decision is Decision.FENCED:
        log.info("job %s: %s", job_id, exc)
        raise Ignore() from exc  # the attempt that owns the job reports its outcome
    if decision is Decision.DEFER and defers < max_defers(rt.settings):
        kwargs = {"defers": defers + 1, "failures": failures}
        countdown = rt.settings.lock_busy_retry_s
        raise task.retry(
            args=[job_id], kwargs=kwargs, countdown=countdown, kwargsrepr=shown_kwargs
        ) from exc
    if decision is Decision.DEFER:
        return compaction.give_up_locked(rt, job_id, worker=runtime.worker_id())
    if decision is Decision.RETRY and failures + 1 < rt.settings.max_job_attempts:
        kwargs = {"defers": defers, "failures": failures + 1}
        countdown = retry_backoff_s(rt.settings, failures)
        raise task.retry(
            args=[job_id], kwargs=kwargs, countdown=countdown, exc=exc, kwargsrepr=shown_kwargs
        ) from exc
    compaction.fail_job(rt, job_id, exc)
    raise exc


def max_defers(settings: Settings) -> int:
    """Enough waits to outlast the longest job plus a dead holder's lock TTL."""
    horizon_s = settings.job_hard_time_limit_s + settings.lock_ttl_s
    return math.ceil(horizon_s / max(settings.lock_busy_retry_s, 0.1))


def retry_backoff_s(settings: Settings, failures: int) -> float:
    return backoff.backoff_s(settings.job_retry_backoff_s, failures, MAX_RETRY_BACKOFF_S)


@celery_app.task(bind=True, name=keys.CALLBACK_TASK, acks_late=True, max_retries=None)
def deliver_callback(self: Task, job_id: str) -> dict[str, Any]:
    """POST the finished job to its session's callback URL; retried with backoff."""
    rt = runtime.current()
    attempt = self.request.retries + 1
    try:
        return callbacks.deliver(rt, job_id)
    except CallbackDeliveryError as exc:
        last = exc.final or attempt >= rt.settings.callback_max_attempts
        callbacks.record_failed_attempt(rt, job_id, final=last)
        if last:
            log.warning("callback of job %s failed %d times; giving up: %s", job_id, attempt, exc)
            return {"id": job_id, "callback_status": "failed", "error": str(exc)}
        countdown = callbacks.backoff_s(attempt, base_s=rt.settings.callback_backoff_s)
        raise self.retry(countdown=countdown, exc=exc) from exc


@celery_app.task(name=keys.SWEEP_TASK, acks_late=True)
def sweep_idle_sessions() -> dict[str, Any]:
    """Beat, nightly: queue compactions for idle sessions that are still large."""
    picks = sweeps.sweep_idle_sessions(runtime.current())
    return {"queued": len(picks), "jobs": [p.job_id for p in picks]}


@celery_app.task(name=keys.REAP_TASK, acks_late=True)
def reap_stuck_jobs() -> dict[str, Any]:
    """Beat, every few minutes: fail jobs whose worker vanished, re-send lost messages."""
    reaped = sweeps.reap_stuck_jobs(runtime.current())
    return {
        "failed": reaped.failed,
        "requeued": reaped.requeued,
        "expired_keys": reaped.expired_keys,
    }
