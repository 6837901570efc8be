"""``compaction mcp``: the service's tools (recall, recall_message, compaction_history) as an
MCP server, over stdio (the default: an agent starts it as a subprocess) or streamable HTTP
(``--http``, at ``/mcp``). Calls go to the service's API (``--url``, else the stack running
here, else COMPACTION_API_HOST/PORT) with COMPACTION_API_TOKEN, which the HTTP endpoint also
asks of its own clients; without a token it listens on loopback only, as the API does.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from api.client import CompactionClient

HELP = "the service's recall tools as an MCP server (stdio, or streamable HTTP with --http)"
DEFAULT_MCP_PORT = 8765


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="the service's API (default: the stack running here)")
    parser.add_argument(
        "--session",
        metavar="ID",
        help="answer for this conversation only (else each tool takes a session_id)",
    )
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp")
    parser.add_argument("--host", default="127.0.0.1", help="with --http (default: %(default)s)")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_MCP_PORT, help="with --http (default: %(default)s)"
    )


def run(args: argparse.Namespace) -> int:
    from api.client import CompactionClient, RetryPolicy
    from api.commands.api import is_loopback
    from api.commands.locate import api_base_url
    from worker.settings import get_settings

    settings = get_settings()
    token = settings.api_token.get_secret_value() if settings.api_token is not None else None
    if args.http and token is None and not is_loopback(args.host):
        print(
            f"compaction mcp: refusing to listen on {args.host} without auth: set "
            "COMPACTION_API_TOKEN, or bind to 127.0.0.1",
            file=sys.stderr,
        )
        return 2
    base_url = api_base_url(settings, args.url)
    with CompactionClient(
        base_url, token=token, timeout_s=30.0, retry=RetryPolicy(attempts=2)
    ) as client:
        if args.http:
            return _serve_http(client, args, token, base_url)
        return _serve_stdio(client, args.session)


def _serve_stdio(client: CompactionClient, session: str | None) -> int:
    import anyio
    from mcp.server.stdio import stdio_server

    from api.mcp_server import build_server

    server = build_server(client, session_id=session)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)
    return 0


def _serve_http(
    client: CompactionClient, args: argparse.Namespace, token: str | None, base_url: str
) -> int:
    import uvicorn

    from api.mcp_server import bearer_only, build_server

    server = build_server(client, session_id=args.session)
    app = server.streamable_http_app(streamable_http_path="/mcp", host=args.host)
    served = bearer_only(app, token) if token is not None else app
    print(
        f"compaction mcp: streamable HTTP at http://{args.host}:{args.port}/mcp, tools run "
        f"against {base_url}" + ("" if token else " (no token: loopback only)"),
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(served, host=args.host, port=args.port, log_level="warning")
    return 0
