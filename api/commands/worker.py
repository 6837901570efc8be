"""``compaction worker``: one Celery worker on the compaction queue (threads pool by default)."""

from __future__ import annotations

import argparse
import os
import sys

from worker.errors import LaunchError
from worker.settings import get_settings

HELP = "a Celery worker"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pool",
        choices=("threads", "prefork", "solo"),
        default="threads",
        help="threads (default): jobs wait on the LLM, not the CPU",
    )
    parser.add_argument(
        "--concurrency", type=int, default=None, help="default: COMPACTION_WORKER_CONCURRENCY"
    )
    parser.add_argument(
        "--queues",
        default=None,
        help="comma-separated; default both: compaction (jobs) and compaction.service "
        "(callbacks, sweep, reaper). A worker of its own for the service queue keeps callbacks "
        "prompt under any backlog of jobs",
    )
    parser.add_argument("--loglevel", default="INFO")
    parser.add_argument(
        "--hostname", default=None, help="Celery node name; default compaction-<pid>@<host>"
    )


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
    settings = get_settings()
    from worker.celery_app import broker_url, celery_app

    try:
        broker_url(settings)
    except LaunchError as exc:
        print(f"compaction worker: {exc}", file=sys.stderr)
        return 2
    celery_app.worker_main(celery_argv(args, args.concurrency or settings.worker_concurrency))
    return 0
