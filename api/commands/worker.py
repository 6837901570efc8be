"""``compaction worker``: one Celery worker on the compaction queue (threads pool by default)
and, with a metrics port, its Prometheus endpoint (worker/metrics_export.py)."""

from __future__ import annotations

import argparse
import os
import sys

from worker.errors import LaunchError
from worker.metrics_export import start_exporter
from worker.settings import Settings, get_settings

HELP = "a Celery worker"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pool",
        choices=("threads", "prefork", "solo"),
        default="threads",
        help="threads (default): jobs wait on the LLM, not the CPU",
    )
    parser.add_argument(
        "--concurrency",
        type=_positive_int,
        default=None,
        help="threads (or processes), each with its own LLM and database connection; "
        "default: COMPACTION_WORKER_CONCURRENCY",
    )
    parser.add_argument(
        "--queues",
        default=None,
        help="comma-separated; default both: compaction (jobs) and compaction.service "
        "(callbacks, sweep, reaper). A worker of its own for the service queue keeps callbacks "
        "prompt under any backlog of jobs",
    )
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help="serve Prometheus metrics on this port (host: COMPACTION_WORKER_METRICS_HOST); "
        "default: COMPACTION_WORKER_METRICS_PORT, unset: none",
    )
    parser.add_argument("--loglevel", default="INFO")
    parser.add_argument(
        "--hostname", default=None, help="Celery node name; default compaction-<pid>@<host>"
    )


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def worker_settings(args: argparse.Namespace, settings: Settings) -> Settings:
    """The settings this worker runs on: ``--concurrency`` replaces the environment's, so the
    threads, the LLM connection pool and the database pool all follow the one number."""
    if args.concurrency is None:
        return settings
    return settings.model_copy(update={"worker_concurrency": args.concurrency})


def celery_argv(args: argparse.Namespace, concurrency: int) -> list[str]:
    from worker import keys

    return [
        "worker",
        f"--pool={args.pool}",
        f"--concurrency={concurrency}",
        f"--queues={args.queues or f'{keys.QUEUE},{keys.SERVICE_QUEUE}'}",
        f"--loglevel={args.loglevel}",
        # Unique per process, so several workers on one host do not collide in Flower.
        f"--hostname={args.hostname or f'compaction-{os.getpid()}@%h'}",
        "--task-events",
        "--without-mingle",  # nothing to sync at start; saves a broadcast round trip
    ]


def run(args: argparse.Namespace) -> int:
    settings = worker_settings(args, get_settings())
    port = args.metrics_port or settings.worker_metrics_port
    try:
        # First: it chooses where metric values live, before anything makes one.
        exporter = start_exporter(host=settings.worker_metrics_host, port=port) if port else None
    except LaunchError as exc:
        print(f"compaction worker: {exc}", file=sys.stderr)
        return 2
    if exporter is not None:
        print(f"compaction worker: metrics on {exporter.url}", flush=True)
    try:
        return _run_worker(args, settings)
    finally:
        if exporter is not None:
            exporter.close()


def _run_worker(args: argparse.Namespace, settings: Settings) -> int:
    from worker import runtime
    from worker.celery_app import broker_url, celery_app

    try:
        broker_url(settings)
    except LaunchError as exc:
        print(f"compaction worker: {exc}", file=sys.stderr)
        return 2
    runtime.configure(settings)  # the jobs' pools are sized from these, not the environment
    celery_app.worker_main(celery_argv(args, settings.worker_concurrency))
    return 0
