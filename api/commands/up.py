"""``compaction up``: the whole embedded stack in the foreground; Ctrl-C stops all of it."""

from __future__ import annotations

import argparse
import sys

from worker.errors import LaunchError
from worker.redis_server import RedisServerError
from worker.settings import get_settings

HELP = "the whole embedded stack in the foreground (Redis, API, worker, beat, Flower)"
CHILDREN = ("api", "worker", "beat", "flower")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # How the launcher starts its own children: the component, tied to the launcher's life.
    parser.add_argument("--child", choices=CHILDREN, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    if args.child:
        return run_child(args.child)
    from sqlalchemy.exc import SQLAlchemyError

    from worker.launcher import run_stack

    try:
        return run_stack(get_settings())
    except (LaunchError, RedisServerError) as exc:
        print(f"compaction up: {exc}", file=sys.stderr)
        return 2
    except SQLAlchemyError as exc:  # the migration before anything else starts
        print(f"compaction up: cannot migrate the database: {exc}", file=sys.stderr)
        return 1


def run_child(name: str) -> int:
    from api.cli import main
    from worker.launcher import die_with_parent

    die_with_parent()
    return main([name])
