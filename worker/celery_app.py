"""The Celery application: Redis broker, late acks, events on for Flower, beat's schedule."""

from __future__ import annotations

from typing import Any

from celery import Celery

from worker import broker, keys
from worker.errors import LaunchError
from worker.runtime import API_REDIS, WORKER_REDIS, RedisTimeouts
from worker.settings import Settings, get_settings, sweep_schedule


def broker_url(settings: Settings) -> str:
    """The broker URL, or a clear error when a component is started without one."""
    if settings.redis_url:
        return settings.redis_url
    raise missing_broker_error(settings)


def missing_broker_error(settings: Settings) -> LaunchError:
    """What a component without a broker URL says: where the running stack's Redis is, if any."""
    # The embedded launcher exports COMPACTION_REDIS_URL for its children; a component run on
    # its own without one would silently talk to nothing.
    from worker.launcher import embedded_redis_url

    running = embedded_redis_url(settings)
    hint = (
        f"; the `compaction up` running here uses {running}: export COMPACTION_REDIS_URL={running}"
        if running
        else ": run `compaction up` (which starts a private redis-server) or point it at a Redis"
    )
    return LaunchError(f"COMPACTION_REDIS_URL is not set{hint}")


def beat_schedule(settings: Settings) -> dict[str, dict[str, Any]]:
    return {
        "nightly-idle-sweep": {
            "task": keys.SWEEP_TASK,
            "schedule": sweep_schedule(settings.sweep_cron),
            "options": {"queue": keys.SERVICE_QUEUE},
        },
        "stuck-job-reaper": {
            "task": keys.REAP_TASK,
            "schedule": float(settings.reaper_interval_s),
            # With no worker up, reaper runs pile up; one is enough when workers return.
            "options": {
                "queue": keys.SERVICE_QUEUE,
                "expires": float(settings.reaper_interval_s),
            },
        },
    }


def transport_options(settings: Settings, timeouts: RedisTimeouts = WORKER_REDIS) -> dict[str, Any]:
    # A job whose worker died stays unacked until the visibility timeout, then any live worker
    # restores it on its next scan; a live worker re-scores the messages it holds, so a job may
    # run longer than the timeout (worker/broker.py). The throttle of 1 makes the restore
    # interval the real scan period.
    return {
        "visibility_timeout": settings.visibility_timeout_s,
        "unacked_restore_interval": settings.unacked_restore_interval_s,
        "unacked_restore_throttle": 1,
        # Each synchronous command (publish, ack, restore) gives up after these; the consumer's
        # BRPOP, which no socket timeout covers, is dropped by kombu's health check when its
        # reply is overdue (brpop timeout + health_check_interval).
        "socket_timeout": timeouts.reply_s,
        "socket_connect_timeout": timeouts.connect_s,
        "socket_keepalive": True,
        "health_check_interval": 25,
    }


# A request waits for its publish, so the API's app makes one attempt, with the API's timeouts:
# a job it could not send is marked failed and the caller is told so (api/ingest.py).
# One producer and connection for each request thread (FastAPI runs plain-def routes on anyio's
# 40 threads): a request never queues behind publishes that wait on a frozen Redis (kombu
# waits for a pooled connection without any timeout). A thread beyond those waits this long.
API_PRODUCERS = 50
API_PRODUCER_WAIT_S = 0.5


def api_publish_bound_s() -> float:
    """The longest the API's ``send_task`` takes: a producer, a connection, one command."""
    return API_PRODUCER_WAIT_S + API_REDIS.bound_s()


def _api_publishing(settings: Settings) -> dict[str, Any]:
    return {
        "task_publish_retry": False,
        "broker_pool_limit": API_PRODUCERS,
        "broker_pool_acquire_timeout": API_PRODUCER_WAIT_S,
        "broker_connection_timeout": API_REDIS.connect_s,
        # max_retries 0: a channel that cannot be opened fails at once instead of trying again
        # until broker_connection_timeout has passed.
        "broker_transport_options": transport_options(settings, API_REDIS) | {"max_retries": 0},
    }


def make_celery(settings: Settings | None = None, *, api: bool = False) -> Celery:
    """The app of a worker, beat or Flower; with ``api``, the API's, which only sends tasks and
    gives up on a publish within ``api_publish_bound_s()``."""
    settings = settings or get_settings()
    broker.install()  # kombu's Redis transport, repaired: see worker/broker.py
    app = Celery("compaction", include=["worker.tasks"])
    app.conf.update(
        # Without a URL (a module that imports this one but never sends), every connection
        # fails with broker_url()'s error rather than reaching some default address.
        broker_url=settings.redis_url or broker.NO_BROKER_URL,
        result_backend=None,
        task_ignore_result=True,
        task_default_queue=keys.QUEUE,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_track_started=True,
        # Enforced by the prefork pool; the threads pool ignores them, so the task also keeps
        # its own deadline (see worker.job).
        task_time_limit=settings.job_hard_time_limit_s,
        task_soft_time_limit=settings.job_soft_time_limit_s,
        broker_transport_options=transport_options(settings),
        worker_prefetch_multiplier=1,
        worker_cancel_long_running_tasks_on_connection_loss=True,
        broker_connection_retry_on_startup=True,
        # Flower needs these.
        worker_send_task_events=True,
        task_send_sent_event=True,
        timezone="UTC",
        enable_utc=True,
        beat_schedule=beat_schedule(settings),
    )
    if api:
        app.conf.update(_api_publishing(settings))
    return app


# The app the tasks are registered on, and that worker, beat and Flower run (each checks
# broker_url() first). A client that sends on its own behalf makes its app from its settings.
celery_app = make_celery()
