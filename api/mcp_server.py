"""The service's tools as an MCP server (``compaction mcp``), for agents that take their tools
over the Model Context Protocol (Claude Code, Codex CLI, ...).

The tools are the ones ``GET /v1/tools`` serves, from the same definitions (api/tools.py):
``recall`` (search the archived originals), ``recall_message`` (one of them with its
neighbours) and ``compaction_history``. A call runs against the service's HTTP API through the
package's client (api/client/tools.py), so the server runs wherever the agent does: beside it
over stdio, or as a streamable-HTTP endpoint that takes the API's bearer token.

Which conversation: a server started for one session (``--session``) answers for it alone;
otherwise each tool takes a ``session_id`` argument (the gateway's id of the conversation).
"""

from __future__ import annotations

import copy
import hmac
import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server import Server

from api.client import CompactionClient, CompactionClientError, ProblemError
from api.client.tools import run_tool
from api.tools import TOOLS

NAME = "compaction-queue"
SESSION_ARGUMENT = "session_id"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def tool_schemas(*, bound: bool) -> dict[str, dict[str, Any]]:
    """Each tool's input schema, by name: its ``parameters`` as ``GET /v1/tools`` gives them,
    plus a required ``session_id`` when the server is not bound to one session."""
    out: dict[str, dict[str, Any]] = {}
    for tool in TOOLS:
        function = tool["function"]
        schema = copy.deepcopy(function["parameters"])
        if not bound:
            schema["properties"] = {
                SESSION_ARGUMENT: {
                    "type": "string",
                    "minLength": 1,
                    "description": "The conversation: the id its gateway stores it under.",
                },
                **schema["properties"],
            }
            schema["required"] = [SESSION_ARGUMENT, *schema.get("required", [])]
        out[function["name"]] = schema
    return out


def build_server(client: CompactionClient, *, session_id: str | None = None) -> Server[Any]:
    """An MCP server whose tools run against the service ``client`` talks to; bound to
    ``session_id`` when given."""
    schemas = tool_schemas(bound=session_id is not None)
    tools = [
        types.Tool(
            name=t["function"]["name"],
            description=t["function"]["description"],
            input_schema=schemas[t["function"]["name"]],
        )
        for t in TOOLS
    ]

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = dict(params.arguments or {})
        session = session_id or str(args.pop(SESSION_ARGUMENT, "") or "")
        args.pop(SESSION_ARGUMENT, None)
        if not session:
            return _error(f"{SESSION_ARGUMENT} is required: which conversation to look in")
        try:
            answer = await anyio.to_thread.run_sync(run_tool, client, session, params.name, args)
        except ProblemError as exc:
            return _error(exc.detail)
        except CompactionClientError as exc:  # unreachable service, bad arguments
            return _error(str(exc))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(answer, ensure_ascii=False))],
            structured_content=answer,
        )

    return Server(
        NAME,
        instructions=(
            "The exact earlier messages of a compacted conversation: search them with recall, "
            "read one with recall_message, list the compactions with compaction_history."
        ),
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _error(detail: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps({"error": detail}))],
        is_error=True,
    )


def bearer_only(app: App, token: str) -> App:
    """``app`` behind ``Authorization: Bearer <token>`` (compared in constant time): a
    request without it is a 401 with ``WWW-Authenticate``, as the API answers."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers: Mapping[bytes, bytes] = dict(scope.get("headers") or ())
        given = headers.get(b"authorization", b"")
        if hmac.compare_digest(given, expected):
            await app(scope, receive, send)
            return
        body = json.dumps(
            {"error": "unauthorized", "detail": "an Authorization: Bearer <token> header is needed"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="compaction"'),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    return guarded
