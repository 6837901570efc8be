"""The one place that sends tasks to the broker on behalf of a job."""

from __future__ import annotations

import json
from typing import Any

from worker import keys


def _app(app: Any) -> Any:
    if app is not None:
        return app
    from worker.celery_app import celery_app

    return celery_app


def enqueue_job(
    job_id: str,
    *,
    session_id: str | None = None,
    trigger: str | None = None,
    countdown_s: float | None = None,
    app: Any = None,
) -> None:
    """Send ``compact_session(job_id)``; the Celery task id is the job id, so Flower shows it.

    Args:
        session_id, trigger: shown as the task's kwargs in Flower's task list (they are not
            arguments: the task reads the job's row).
        app: the Celery app to send with; this process's ``celery_app`` by default (a worker's
            runtime passes its own, so tests can point one at a private broker).
    """
    _app(app).send_task(
        keys.COMPACT_TASK,
        args=[job_id],
        task_id=job_id,
        queue=keys.QUEUE,
        countdown=countdown_s,
        kwargsrepr=job_kwargsrepr(session_id=session_id, trigger=trigger),
    )


def job_kwargsrepr(*, session_id: str | None, trigger: str | None) -> str | None:
    """What Celery's events show as a job task's kwargs: its session and trigger, as JSON."""
    shown = {k: v for k, v in (("session_id", session_id), ("trigger", trigger)) if v is not None}
    return json.dumps(shown, ensure_ascii=False) if shown else None


def enqueue_callback(job_id: str, *, app: Any = None) -> None:
    """Send ``deliver_callback(job_id)`` for a finished job whose session wants a callback."""
    _app(app).send_task(keys.CALLBACK_TASK, args=[job_id], queue=keys.SERVICE_QUEUE)
