"""The Celery application: Redis broker, late acks, events on for Flower."""

from __future__ import annotations

from celery import Celery

from worker import keys
from worker.settings import Settings, get_settings


def broker_url(settings: Settings) -> str:
    if settings.redis_url:
        return settings.redis_url
    # The embedded launcher exports COMPACTION_REDIS_URL for its children; a component run on
    # its own without one would silently talk to nothing.
    raise RuntimeError(
        "COMPACTION_REDIS_URL is not set: run `compaction up` (which starts a private "
        "redis-server) or point it at a Redis server"
    )


def make_celery(settings: Settings | None = None) -> Celery:
    settings = settings or get_settings()
    app = Celery("compaction")
    url = settings.redis_url or "redis://127.0.0.1:6379/0"
    app.conf.update(
        broker_url=url,
        result_backend=None,
        task_ignore_result=True,
        task_default_queue=keys.QUEUE,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_track_started=True,
        task_time_limit=settings.job_hard_time_limit_s,
        task_soft_time_limit=settings.job_soft_time_limit_s,
        # A job whose worker died is redelivered after the visibility timeout; it must exceed
        # the longest job or a slow job would run twice.
        broker_transport_options={
            "visibility_timeout": settings.visibility_timeout_s,
            "unacked_restore_interval": settings.unacked_restore_interval_s,
        },
        worker_prefetch_multiplier=1,
        worker_cancel_long_running_tasks_on_connection_loss=True,
        broker_connection_retry_on_startup=True,
        # Flower needs these.
        worker_send_task_events=True,
        task_send_sent_event=True,
        timezone="UTC",
        enable_utc=True,
    )
    return app


celery_app = make_celery()
