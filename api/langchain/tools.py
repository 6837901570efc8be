"""The service's tools (``recall``, ``recall_message``, ``compaction_history``) as LangChain
tools of the middleware.

An agent's tools are fixed when ``create_agent`` builds it, before the service need be
reachable, so the middleware registers one executor per tool name with an open argument
schema; the model never sees those. On each model call the middleware offers, in their place,
the definitions the service serves (``GET /v1/tools``, asked once and kept), which is what the
model's calls then follow; while the service cannot be asked, the tools are not offered.

A call runs through ``api/client/tools.py`` for the conversation that made it (the tool's
``runtime``, which LangGraph injects, says which one); the model gets the service's JSON
answer, or an ``error`` one.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from api.client.tools import TOOL_NAMES

# Run one call: (the tool's injected runtime, tool name, arguments) -> the answer text.
RunTool = Callable[[Any, str, Mapping[str, Any]], str]

# The executors take what the model sends; the service's definition is what it was shown.
OPEN_ARGS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}


def executors(run: RunTool) -> list[Any]:
    """One LangChain ``StructuredTool`` per tool of the service, each running its calls with
    ``run``."""
    structured_tool = importlib.import_module("langchain_core.tools").StructuredTool
    return [
        structured_tool(
            name=name,
            description=f"compaction-queue's {name} tool (the service defines it: GET /v1/tools).",
            args_schema=OPEN_ARGS,
            func=func,
            coroutine=coroutine,
        )
        for name in TOOL_NAMES
        for func, coroutine in [_callables(name, run)]
    ]


def _callables(name: str, run: RunTool) -> tuple[Callable[..., str], Callable[..., Any]]:
    # LangGraph injects the ``runtime`` parameter by its name; the rest is the model's call.
    def call(runtime: Any = None, **args: Any) -> str:
        return run(runtime, name, args)

    async def acall(runtime: Any = None, **args: Any) -> str:
        return await asyncio.to_thread(run, runtime, name, args)

    return call, acall


def offered(tools: Sequence[Any], definitions: Sequence[Mapping[str, Any]] | None) -> list[Any]:
    """A model request's tools with each executor of ours replaced by the service's definition
    of its tool, or left out when the service has none (or cannot be asked). Definitions
    already in the list (dicts) pass as they are."""
    by_name = {str(d.get("function", {}).get("name")): dict(d) for d in definitions or ()}
    out: list[Any] = []
    for tool in tools:
        name = None if isinstance(tool, Mapping) else getattr(tool, "name", None)
        if name not in TOOL_NAMES:
            out.append(tool)
        elif name in by_name:
            out.append(by_name[name])
    return out
