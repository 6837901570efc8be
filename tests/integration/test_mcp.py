"""``compaction mcp`` driven by the official MCP Python SDK's own client, over stdio and over
streamable HTTP, against a real API and worker (private Redis; SQLite and PostgreSQL).

A real agent session is compacted by the worker; the MCP server's tools, the same definitions
as ``GET /v1/tools``, find an exact error line of an archived message, read that message
whole, and list the compaction. Over HTTP the endpoint refuses a client without the token.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from api.client import CompactionClient
from api.tools import TOOLS
from tests.support.stack import REPO, StackProcess, stack_env, start_stack
from tests.support.worker_fixtures import MODEL, private_redis, sample_messages
from worker.redis_server import RedisServer, free_port

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]
__all__ = ["private_redis"]  # a fixture, imported for pytest

TOKEN = "mcp-test-token"
SESSION = "agent-1"


@pytest.fixture
def env(database_url: str, private_redis: RedisServer, tmp_path: Path) -> dict[str, str]:
    return stack_env(
        redis_url=private_redis.url, database_url=database_url, var_dir=tmp_path / "var",
        api_token=TOKEN,
    )  # fmt: skip


@pytest.fixture
def compacted(env: dict[str, str], tmp_path: Path) -> Iterator[tuple[str, str]]:
    """The API's URL once the worker compacted the sample session; and an error line that the
    compacted transcript no longer holds word for word but the archive does."""
    port = free_port()
    procs = start_stack(env, tmp_path, api_port=port)
    url = f"http://127.0.0.1:{port}"
    try:
        messages = sample_messages()
        with CompactionClient(url, token=TOKEN) as client:
            client.put_session(SESSION, model=MODEL, context_length=200_000, messages=messages)
            job = client.compact(SESSION, force=True, target_tokens=4_000).job_id
            deadline = time.monotonic() + 60
            while client.get_job(job).status in ("queued", "running"):
                assert time.monotonic() < deadline, "the job did not finish"
                time.sleep(0.2)
            assert client.get_job(job).status == "succeeded"
            after = json.dumps(client.get_messages(SESSION).messages)
        line = next(
            line.strip()
            for m in messages
            if m["role"] == "tool"
            for line in str(m["content"]).splitlines()
            if "Error" in line and len(line.strip()) > 25 and line.strip() not in after
        )
        yield url, line
    finally:
        for proc in reversed(procs):
            proc.stop()


async def exercise(client: Client, line: str, *, bound: bool) -> dict[str, Any]:
    """List the tools and run each; what was found."""
    listed = await client.list_tools()
    names = [t.name for t in listed.tools]
    where = {} if bound else {"session_id": SESSION}
    query = json.dumps(line)  # an exact string: quoted, its words side by side
    found = await client.call_tool("recall", {**where, "query": query, "limit": 3})
    hits = json.loads(found.content[0].text)["hits"]  # type: ignore[union-attr]
    whole = await client.call_tool(
        "recall_message", {**where, "seq": hits[0]["seq"], "before": 0, "after": 0}
    )
    history = await client.call_tool("compaction_history", {**where, "limit": 5})
    missing = await client.call_tool("recall", {"query": "x"}) if not bound else None
    return {
        "tools": listed.tools,
        "names": names,
        "hits": hits,
        "message": whole.structured_content,
        "history": history.structured_content,
        "missing_session": missing,
    }


def holds(value: Any, line: str) -> bool:
    """``line`` is in one of the strings of ``value`` (a tool call's JSON arguments read)."""
    if isinstance(value, str):
        if line in value:
            return True
        try:
            decoded = json.loads(value)
        except ValueError:
            return False
        return not isinstance(decoded, str) and holds(decoded, line)
    if isinstance(value, dict):
        return any(holds(v, line) for v in value.values())
    if isinstance(value, list):
        return any(holds(v, line) for v in value)
    return False


def check(seen: dict[str, Any], line: str, *, bound: bool) -> None:
    assert seen["names"] == [t["function"]["name"] for t in TOOLS]
    for tool, ours in zip(seen["tools"], TOOLS, strict=True):  # one source of definitions
        assert tool.description == ours["function"]["description"]
        properties = dict(tool.input_schema["properties"])
        assert ("session_id" in properties) is not bound
        properties.pop("session_id", None)
        assert properties == ours["function"]["parameters"]["properties"]
    assert seen["hits"]
    [archived] = seen["message"]["messages"]
    assert holds(archived["message"], line)
    [compaction] = seen["history"]["compactions"]
    assert (compaction["trigger"], compaction["status"]) == ("manual", "succeeded")
    assert compaction["tokens_after"] < compaction["tokens_before"]
    if not bound:
        assert seen["missing_session"].is_error


@pytest.mark.parametrize("bound", [False, True])
def test_over_stdio_the_tools_find_an_archived_error_line(
    compacted: tuple[str, str], env: dict[str, str], bound: bool
) -> None:
    url, line = compacted
    args = ["-m", "api.cli", "mcp", "--url", url] + (["--session", SESSION] if bound else [])
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(REPO))

    async def body() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=30) as client:
            return await exercise(client, line, bound=bound)

    check(anyio.run(body), line, bound=bound)


def test_over_http_the_tools_answer_with_the_token_and_refuse_without(
    compacted: tuple[str, str], env: dict[str, str], tmp_path: Path
) -> None:
    url, line = compacted
    port = free_port()
    mcp_url = f"http://127.0.0.1:{port}/mcp"
    with StackProcess(
        "mcp", ["mcp", "--http", "--port", str(port), "--url", url], env=env, log_dir=tmp_path
    ) as proc:
        proc.wait_for(
            lambda: httpx.get(mcp_url, timeout=2).status_code == 401, timeout_s=30, what="/mcp"
        )
        refused = httpx.post(mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == 'Bearer realm="compaction"'
        wrong = httpx.post(
            mcp_url, json={}, headers={"Authorization": "Bearer nope", "Accept": "*/*"}
        )
        assert wrong.status_code == 401

        async def body() -> dict[str, Any]:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                transport = streamable_http_client(mcp_url, http_client=http)
                async with Client(transport, read_timeout_seconds=30) as client:
                    return await exercise(client, line, bound=False)

        check(anyio.run(body), line, bound=False)
