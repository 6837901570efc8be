"""``compaction sweep [--dry-run]``: run the idle-session sweep now and show what it queued.

Both use ``COMPACTION_REDIS_URL``, else the Redis of the ``compaction up`` running from here:
the jobs go to the broker its workers consume. A dry run only reads; without any Redis it
still answers from the database and says that cooldowns (kept in Redis) were not checked.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from urllib.parse import urlsplit

import redis
from kombu.exceptions import OperationalError as BrokerError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from api.commands.locate import database_problem, existing_database, with_stack_redis
from worker.errors import LaunchError
from worker.settings import Settings, get_settings
from worker.sweeps import SweepPick

HELP = "run the idle-session sweep now"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run", action="store_true", help="show what would be queued; change nothing"
    )


def run(args: argparse.Namespace) -> int:
    settings = with_stack_redis(get_settings())
    sweep: Callable[[Settings], list[SweepPick]] = preview if args.dry_run else queue
    try:
        existing_database(settings)
        picks = sweep(settings)
    except LaunchError as exc:
        return fail(str(exc), 2)
    except SQLAlchemyError as exc:
        shown = make_url(settings.database_url).render_as_string(hide_password=True)
        return fail(f"cannot use the database {shown}: {database_problem(exc)}", 1)
    except (redis.RedisError, BrokerError, OSError) as exc:
        return fail(f"cannot reach Redis at {_shown_redis(settings)}: {exc}", 1)
    show(picks, dry_run=args.dry_run)
    return 0


def queue(settings: Settings) -> list[SweepPick]:
    from worker import runtime, sweeps

    rt = runtime.build_runtime(settings)  # its own Celery app, on the same broker
    try:
        return sweeps.sweep_idle_sessions(rt)
    finally:
        rt.close()


def preview(settings: Settings) -> list[SweepPick]:
    from worker import sweeps
    from worker.runtime import redis_client
    from worker.store.db import Database

    client = redis_client(settings.redis_url) if settings.redis_url else None
    if client is None:
        print(
            "compaction sweep: no Redis (COMPACTION_REDIS_URL is unset and no `compaction up` "
            "runs here): cooldowns were not checked",
            file=sys.stderr,
        )
    db = Database(settings.database_url)
    try:
        return sweeps.preview_idle_sessions(db, settings, redis_client=client)
    finally:
        db.dispose()
        if client is not None:
            client.close()


def show(picks: list[SweepPick], *, dry_run: bool) -> None:
    print(f"{'would queue' if dry_run else 'queued'} {len(picks)} session(s)")
    if picks:
        print(f"{'session':<40} {'tokens':>9} {'threshold':>9}  {'idle since (UTC)':<20} job")
    for p in picks:
        idle = p.idle_since.strftime("%Y-%m-%d %H:%M:%S")
        print(
            f"{p.session_id:<40} {p.tokens:>9} {p.threshold_tokens:>9}  {idle:<20} {p.job_id or '-'}"
        )


def fail(message: str, code: int) -> int:
    print(f"compaction sweep: {message}", file=sys.stderr)
    return code


def _shown_redis(settings: Settings) -> str:
    url = urlsplit(settings.redis_url or "")
    if url.password is None:
        return url.geturl()
    return url._replace(netloc=url.netloc.replace(f":{url.password}@", ":***@", 1)).geturl()
