"""The one place that sends the compaction task to the broker."""

from __future__ import annotations

from worker import keys
from worker.celery_app import celery_app


def enqueue_job(job_id: str, *, countdown_s: float | None = None) -> None:
    """Send ``compact_session(job_id)``; the Celery task id is the job id, so Flower shows it."""
    celery_app.send_task(
        keys.COMPACT_TASK, args=[job_id], task_id=job_id, queue=keys.QUEUE, countdown=countdown_s
    )
