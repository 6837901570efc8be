"""``compaction api``: the HTTP API under uvicorn, after migrating the database.

Without COMPACTION_API_TOKEN the API has no auth, so it refuses to listen anywhere but on a
loopback address. An empty or blank token is no token: the settings refuse it at start (exit 2).
"""

from __future__ import annotations

import argparse
import ipaddress
import sys

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from worker.settings import Settings, get_settings

HELP = "the HTTP API"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help="default: COMPACTION_API_HOST (127.0.0.1)")
    parser.add_argument("--port", type=int, help="default: COMPACTION_API_PORT (8000)")
    parser.add_argument("--log-level", default="info")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a hostname: it may resolve to anything


def check_bind(settings: Settings) -> str | None:
    """Why binding is refused, or None."""
    if settings.api_token is None and not is_loopback(settings.api_host):
        return (
            f"refusing to listen on {settings.api_host} without auth: set COMPACTION_API_TOKEN, "
            "or bind to 127.0.0.1"
        )
    return None


def run(args: argparse.Namespace) -> int:
    update = {k: v for k, v in (("api_host", args.host), ("api_port", args.port)) if v}
    settings = get_settings().model_copy(update=update)
    refusal = check_bind(settings)
    if refusal is not None:
        print(f"compaction api: {refusal}", file=sys.stderr)
        return 2
    from worker import logs
    from worker.store.db import migrate

    logs.configure(settings.log_format, level=args.log_level)

    try:
        migrate(settings.database_url)
    except SQLAlchemyError as exc:
        shown = make_url(settings.database_url).render_as_string(hide_password=True)
        print(f"compaction api: cannot migrate {shown}: {exc}", file=sys.stderr)
        return 1
    import gc

    import uvicorn

    from api.main import create_app

    app = create_app(settings)
    # What was made at start lives as long as the process: out of the collector's sight, a full
    # collection walks only what requests made since. Walking the imports' objects paused a
    # request for ~50 ms about once in a hundred while the heap grew (p99 of appends at one
    # client: 48 ms with, 8 ms without).
    gc.collect()
    gc.freeze()
    uvicorn.run(
        app,
        host=settings.api_host,
        port=settings.api_port,
        log_level=args.log_level,
        # Our logging (worker/logs.py) for uvicorn's records too; the access line is ours
        # (api/request_context.py): it carries the request id and leaves out the query string.
        log_config=None,
        access_log=False,
        proxy_headers=False,
    )
    return 0
