"""``compaction beat``: Celery beat, which queues the nightly idle sweep and the stuck-job reaper.

Run exactly one (or celery-redbeat for high availability): two beats queue every run twice.
"""

from __future__ import annotations

import argparse
import sys

from worker.errors import LaunchError
from worker.settings import get_settings

HELP = "Celery beat: nightly idle sweep and stuck-job reaper"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--loglevel", default="INFO")
    parser.add_argument(
        "--schedule", default=None, help="beat's state file; default var/celerybeat-schedule"
    )


def run(args: argparse.Namespace) -> int:
    settings = get_settings()
    from worker.celery_app import broker_url, celery_app

    try:
        broker_url(settings)
    except LaunchError as exc:
        print(f"compaction beat: {exc}", file=sys.stderr)
        return 2
    schedule = args.schedule or str(settings.var_dir / "celerybeat-schedule")
    settings.var_dir.mkdir(parents=True, exist_ok=True)
    code = celery_app.start(["beat", f"--schedule={schedule}", f"--loglevel={args.loglevel}"])
    return int(code or 0)
