"""What a worker counts for Prometheus: job outcomes, the summarizer, locks, sweeps, callbacks.

Each function below records one event and is called from the one place where that event
happens. The metric families are made on first use, so a worker that exports them
(``worker.metrics_export``) can first choose where their values live. A process that exports
nothing (``compaction sweep``, tests that run a job in-process) counts into memory that nobody
reads. docs/operations.md says what each metric means and which alert reads it.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec

from prometheus_client import CollectorRegistry, Counter, Histogram

from worker.compressor.report import CompactionReport
from worker.store.models import JOB_TRIGGERS, JobRow

log = logging.getLogger(__name__)
P = ParamSpec("P")

# Seconds. Queue waits run from milliseconds (an idle worker) to an hour (a backlog); a run is
# bounded by the hard time limit (900 s by default); one job's LLM time by its soft limit.
QUEUE_WAIT_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)
RUN_BUCKETS_S = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 900)
LLM_BUCKETS_S = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)

CALLBACK_OUTCOMES = ("delivered", "retrying", "failed")
ENQUEUE_TASKS = ("callback", "sweep_job")  # follow-up messages a worker sends itself


@dataclass(frozen=True)
class WorkerMetrics:
    """Every family a worker exports (registered in ``registry``, which only tests read: an
    exporting worker serves what every process of it wrote, see ``worker.metrics_export``)."""

    registry: CollectorRegistry
    jobs_finished: Counter
    fallbacks: Counter
    dropped_messages: Counter
    tokens_saved: Counter
    queue_wait: Histogram
    run_time: Histogram
    llm_time: Histogram
    summarizer_calls: Counter
    summarizer_input_tokens: Counter
    summarizer_errors: Counter
    thrash_guard_trips: Counter
    lock_busy: Counter
    job_errors: Counter
    fenced: Counter
    outage_waits: Counter
    enqueue_failures: Counter
    sweep_runs: Counter
    sweep_candidates: Counter
    sweep_queued: Counter
    reaper_runs: Counter
    reaper_failed_stuck: Counter
    reaper_requeued: Counter
    reaper_expired_keys: Counter
    callback_attempts: Counter


def make_metrics() -> WorkerMetrics:
    """A fresh set of families in a registry of their own."""
    r = CollectorRegistry()

    def counter(name: str, doc: str, labels: tuple[str, ...] = ()) -> Counter:
        return Counter(name, doc, labels, registry=r)

    def histogram(
        name: str, doc: str, labels: tuple[str, ...], buckets: tuple[float, ...]
    ) -> Histogram:
        return Histogram(name, doc, labels, registry=r, buckets=buckets)

    m = WorkerMetrics(
        registry=r,
        jobs_finished=counter(
            "compaction_worker_jobs_finished",
            "Jobs finished, by trigger, status and reason (skip reason, else error class)",
            ("trigger", "status", "reason"),
        ),
        fallbacks=counter(
            "compaction_worker_fallbacks",
            "Succeeded jobs whose LLM summary failed and the deterministic fallback stood in",
            ("trigger",),
        ),
        dropped_messages=counter(
            "compaction_worker_dropped_messages",
            "Messages removed by succeeded jobs whose content reached no LLM summary",
            ("trigger",),
        ),
        tokens_saved=counter(
            "compaction_worker_tokens_saved",
            "Tokens removed from transcripts by succeeded jobs (before minus after)",
            ("trigger",),
        ),
        queue_wait=histogram(
            "compaction_worker_queue_wait_seconds",
            "From a job's enqueue to its claim by a worker",
            ("trigger",),
            QUEUE_WAIT_BUCKETS_S,
        ),
        run_time=histogram(
            "compaction_worker_run_seconds",
            "From a job's claim to its outcome, by status",
            ("status",),
            RUN_BUCKETS_S,
        ),
        llm_time=histogram(
            "compaction_worker_llm_seconds",
            "Time one compaction spent in summarizer calls (runs that made at least one)",
            ("summarizer",),
            LLM_BUCKETS_S,
        ),
        summarizer_calls=counter(
            "compaction_worker_summarizer_calls",
            "Summarizer calls made by compactions, by the summarizer that answered",
            ("summarizer",),
        ),
        summarizer_input_tokens=counter(
            "compaction_worker_summarizer_input_tokens",
            "Input tokens sent to the summarizer (our count, every call)",
            ("summarizer",),
        ),
        summarizer_errors=counter(
            "compaction_worker_summarizer_errors",
            "Compactions whose summarizer failed, by error class (fallback or abort followed)",
            ("error_class",),
        ),
        thrash_guard_trips=counter(
            "compaction_worker_thrash_guard_trips",
            "Compactions after which the thrash guard stops automatic compaction of the session",
        ),
        lock_busy=counter(
            "compaction_worker_lock_busy",
            "Job attempts that found the session locked by another job and were deferred",
        ),
        job_errors=counter(
            "compaction_worker_job_errors",
            "Job attempts ended by an operational error (retried; the last one fails the job)",
            ("error_class",),
        ),
        fenced=counter(
            "compaction_worker_fenced",
            "Job attempts stopped because a newer attempt owns the job",
        ),
        outage_waits=counter(
            "compaction_worker_outage_waits",
            "Job steps that met a database or Redis outage and waited it out",
            ("error_class",),
        ),
        enqueue_failures=counter(
            "compaction_worker_enqueue_failures",
            "Follow-up messages the worker could not send to the broker, by task",
            ("task",),
        ),
        sweep_runs=counter("compaction_sweep_runs", "Idle sweeps run"),
        sweep_candidates=counter(
            "compaction_sweep_candidates", "Idle, large sessions the sweeps considered"
        ),
        sweep_queued=counter("compaction_sweep_jobs_queued", "Jobs the idle sweeps queued"),
        reaper_runs=counter("compaction_reaper_runs", "Stuck-job reaper runs"),
        reaper_failed_stuck=counter(
            "compaction_reaper_failed_stuck",
            "Running jobs the reaper failed as stuck (their worker is gone)",
        ),
        reaper_requeued=counter(
            "compaction_reaper_requeued",
            "Open jobs the reaper sent again (the broker had no message for them)",
        ),
        reaper_expired_keys=counter(
            "compaction_reaper_expired_idempotency_keys",
            "Idempotency-Keys the reaper forgot after their retention",
        ),
        callback_attempts=counter(
            "compaction_callback_attempts",
            "Callback delivery attempts, by outcome (delivered, retrying, failed: given up)",
            ("outcome",),
        ),
    )
    _start_at_zero(m)
    return m


def _start_at_zero(m: WorkerMetrics) -> None:
    """Series an alert rates over exist from the start: ``increase()`` misses a series' first
    sample, so one that appears with the first failure would never fire."""
    for trigger in JOB_TRIGGERS:
        m.jobs_finished.labels(trigger, "succeeded", "")
        for family in (m.fallbacks, m.dropped_messages, m.tokens_saved):
            family.labels(trigger)
    for outcome in CALLBACK_OUTCOMES:
        m.callback_attempts.labels(outcome)
    for task in ENQUEUE_TASKS:
        m.enqueue_failures.labels(task)


_metrics: WorkerMetrics | None = None
_metrics_lock = threading.Lock()


def current() -> WorkerMetrics:
    """This process's families, made on first use."""
    global _metrics
    with _metrics_lock:
        if _metrics is None:
            _metrics = make_metrics()
        return _metrics


def _never_fails(record: Callable[P, None]) -> Callable[P, None]:
    """A metric that cannot be written (its directory full or gone) must not fail the job."""

    @functools.wraps(record)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            record(*args, **kwargs)
        except OSError as exc:
            log.warning("metrics: %s not recorded: %s", record.__name__, exc)

    return wrapper


@_never_fails
def job_finished(row: JobRow) -> None:
    """A job reached its outcome (called once per job, where it finished)."""
    m = current()
    trigger = row.trigger
    m.jobs_finished.labels(trigger, row.status, outcome_reason(row)).inc()
    if row.queue_wait_ms is not None:
        m.queue_wait.labels(trigger).observe(row.queue_wait_ms / 1000.0)
    if row.run_ms is not None:
        m.run_time.labels(row.status).observe(row.run_ms / 1000.0)
    if row.status != "succeeded":
        return  # a transcript left unchanged lost and saved nothing
    if row.fallback_used:
        m.fallbacks.labels(trigger).inc()
    m.dropped_messages.labels(trigger).inc(row.dropped_count or 0)
    if row.tokens_before is not None and row.tokens_after is not None:
        m.tokens_saved.labels(trigger).inc(max(0, row.tokens_before - row.tokens_after))


def outcome_reason(row: JobRow) -> str:
    """``reason``: why a job did not succeed (a succeeded job's summarizer error was a
    fallback, not the job's outcome)."""
    if row.status == "succeeded":
        return ""
    if row.status == "skipped":
        return row.skip_reason or ""
    return row.error_class or row.skip_reason or ""


@_never_fails
def compressed(report: CompactionReport) -> None:
    """The core ran on a claimed job (whatever then became of the write-back)."""
    m = current()
    summarizer = report.summarizer or ""
    if report.summarizer_calls:
        m.summarizer_calls.labels(summarizer).inc(report.summarizer_calls)
        m.summarizer_input_tokens.labels(summarizer).inc(report.summarizer_input_tokens_total)
        m.llm_time.labels(summarizer).observe(report.llm_ms / 1000.0)
    if report.error_class is not None:
        m.summarizer_errors.labels(report.error_class).inc()
    if report.thrash_guard_tripped:
        m.thrash_guard_trips.inc()


@_never_fails
def attempt_interrupted(decision: str, exc: BaseException) -> None:
    """A job attempt raised; ``decision`` is what the task does about it (``Decision.value``)."""
    m = current()
    if decision == "defer":
        m.lock_busy.inc()
    elif decision == "retry":
        m.job_errors.labels(type(exc).__name__).inc()
    elif decision == "fenced":
        m.fenced.inc()
    # "fail": the job's outcome says it (job_finished)


@_never_fails
def outage_wait(exc: BaseException) -> None:
    """A job step met an outage of the database or Redis and waits it out."""
    current().outage_waits.labels(type(exc).__name__).inc()


@_never_fails
def enqueue_failed(task: str) -> None:
    """A follow-up message (``ENQUEUE_TASKS``) could not be sent."""
    current().enqueue_failures.labels(task).inc()


@_never_fails
def swept(*, candidates: int, queued: int) -> None:
    m = current()
    m.sweep_runs.inc()
    m.sweep_candidates.inc(candidates)
    m.sweep_queued.inc(queued)


@_never_fails
def reaped(*, failed: int, requeued: int, expired_keys: int) -> None:
    m = current()
    m.reaper_runs.inc()
    m.reaper_failed_stuck.inc(failed)
    m.reaper_requeued.inc(requeued)
    m.reaper_expired_keys.inc(expired_keys)


@_never_fails
def callback_attempt(outcome: str) -> None:
    """One delivery attempt of a job's callback ended (``CALLBACK_OUTCOMES``)."""
    current().callback_attempts.labels(outcome).inc()
