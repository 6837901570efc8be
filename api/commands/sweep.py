"""``compaction sweep [--dry-run]``: run the idle-session sweep now and show what it queued."""

from __future__ import annotations

import argparse
import sys

from worker.errors import LaunchError
from worker.settings import get_settings

HELP = "run the idle-session sweep now"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run", action="store_true", help="show what would be queued; change nothing"
    )


def run(args: argparse.Namespace) -> int:
    from worker import runtime, sweeps
    from worker.launcher import embedded_redis_url

    settings = get_settings()
    if not settings.redis_url:  # the embedded stack running from here, if any
        settings = settings.model_copy(update={"redis_url": embedded_redis_url(settings)})
    try:
        rt = runtime.build_runtime(settings)
    except LaunchError as exc:
        print(f"compaction sweep: {exc}", file=sys.stderr)
        return 2
    try:
        picks = sweeps.sweep_idle_sessions(rt, dry_run=args.dry_run)
    finally:
        rt.close()
    verb = "would queue" if args.dry_run else "queued"
    print(f"{verb} {len(picks)} session(s)")
    if picks:
        print(f"{'session':<40} {'tokens':>9} {'threshold':>9}  {'idle since (UTC)':<20} job")
    for p in picks:
        idle = p.idle_since.strftime("%Y-%m-%d %H:%M:%S")
        print(
            f"{p.session_id:<40} {p.tokens:>9} {p.threshold_tokens:>9}  {idle:<20} {p.job_id or '-'}"
        )
    return 0
