"""``compaction flower``: Flower, the Celery monitor, behind basic auth.

Flower's pages show session ids and every job's telemetry. Without
``COMPACTION_FLOWER_USER``/``COMPACTION_FLOWER_PASSWORD`` it refuses to listen anywhere but on a
loopback address, as the API does without its token; ``/metrics`` needs the credentials too
(``api/flower_auth.py``). ``compaction up`` always sets credentials (generated under var/).
"""

from __future__ import annotations

import argparse
import os
import sys

from api.flower_auth import flower_refusal, require_auth_on_metrics
from worker.errors import LaunchError
from worker.settings import Settings, get_settings

HELP = "Flower, the Celery monitor"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--address", default=None, help="interface to listen on; default COMPACTION_FLOWER_HOST"
    )
    parser.add_argument("--port", type=int, default=None, help="default: COMPACTION_FLOWER_PORT")


# The task list shows each job's session and trigger (kwargs) and its outcome (result): see
# worker/task_outcome.py. FLOWER_TASKS_COLUMNS in the environment overrides it.
TASK_COLUMNS = "name,uuid,state,kwargs,result,received,runtime,worker"


def flower_argv(args: argparse.Namespace, settings: Settings) -> list[str]:
    address = args.address or settings.flower_host
    return ["flower", f"--address={address}", f"--port={args.port or settings.flower_port}"]


def export_basic_auth(settings: Settings) -> bool:
    """Hand the credentials to Flower through its environment (argv would show them in ps)."""
    if not (settings.flower_user and settings.flower_password):
        return False
    password = settings.flower_password.get_secret_value()
    os.environ["FLOWER_BASIC_AUTH"] = f"{settings.flower_user}:{password}"
    return True


def run(args: argparse.Namespace) -> int:
    settings = get_settings()
    from worker.celery_app import broker_url, celery_app

    try:
        broker_url(settings)
    except LaunchError as exc:
        print(f"compaction flower: {exc}", file=sys.stderr)
        return 2
    refusal = flower_refusal(settings, args.address or settings.flower_host)
    if refusal is not None:
        print(f"compaction flower: {refusal}", file=sys.stderr)
        return 2
    if not export_basic_auth(settings):
        print(
            "compaction flower: no COMPACTION_FLOWER_USER/PASSWORD: the UI and /metrics are open "
            "to anyone on this host and /api/* answers 401",
            file=sys.stderr,
        )
    require_auth_on_metrics()
    os.environ.setdefault("FLOWER_TASKS_COLUMNS", TASK_COLUMNS)
    return int(celery_app.start(flower_argv(args, settings)) or 0)
