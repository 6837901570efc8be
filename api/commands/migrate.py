"""``compaction migrate``: apply the database migrations (Alembic upgrade head)."""

from __future__ import annotations

import argparse
import sys

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

HELP = "apply database migrations"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="database URL (default: COMPACTION_DATABASE_URL)")


def run(args: argparse.Namespace) -> int:
    from worker.settings import get_settings
    from worker.store.db import migrate

    url = args.url or get_settings().database_url
    shown = make_url(url).render_as_string(hide_password=True)
    try:
        migrate(url)
    except SQLAlchemyError as exc:
        print(f"compaction migrate: {shown}: {exc}", file=sys.stderr)
        return 1
    print(f"database {shown} is at the newest migration")
    return 0
