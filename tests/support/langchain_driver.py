"""LangChain's real agent loop with our middleware, one turn per request. Runs under the
LangChain venv (``bench/.langchain-venv``), never under ours:

    python langchain_driver.py    # JSON lines: requests on stdin, answers on stdout

The first line is ``{"base_url", "model", "api_url", "agent", "thread_id", "context_length",
"run"}``: the driver builds the agent as an application would, LangChain's ``create_agent``
(``agent: "create_agent"``) or deepagents' ``create_deep_agent`` (``"create_deep_agent"``),
with ``CompactionQueueMiddleware`` in its middleware, an in-memory checkpointer and LangChain's
OpenAI chat model pointed at a local fake OpenAI-compatible server, and answers what it built.
Each ``{"op": "turn", "text"}`` then runs the agent on the thread (``invoke``, or ``ainvoke`` on
one event loop when ``run`` is ``"async"``) and answers the turn's wall time, the thread's
messages after it (wire form and LangChain ids) and the middleware's status.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from importlib.metadata import version
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from api.langchain import CompactionQueueMiddleware
from api.langchain.wire import to_wire


def build(hello: dict[str, Any]) -> tuple[Any, Any]:
    model = ChatOpenAI(
        model=hello["model"], base_url=hello["base_url"], api_key="fake-key", max_retries=0
    )
    queue = CompactionQueueMiddleware(hello["api_url"], context_length=hello["context_length"])
    if hello["agent"] == "create_deep_agent":
        from deepagents import create_deep_agent

        agent = create_deep_agent(model, middleware=[queue], checkpointer=InMemorySaver())
    else:
        agent = create_agent(model, middleware=[queue], checkpointer=InMemorySaver())
    return agent, queue


def describe(agent: Any, queue: Any, thread_id: str) -> dict[str, Any]:
    return {
        "versions": {p: version(p) for p in ("langchain", "langgraph", "deepagents")},
        "middleware_class": f"{type(queue).__module__}.{type(queue).__qualname__}",
        "middleware_name": queue.name,
        "nodes": sorted(agent.get_graph().nodes),
        "session_id": queue.session_id(thread_id),
    }


class Driver:
    def __init__(self, hello: dict[str, Any]) -> None:
        self.agent, self.queue = build(hello)
        self.thread_id = str(hello["thread_id"])
        self.config = {"configurable": {"thread_id": self.thread_id}}
        self.loop = asyncio.new_event_loop() if hello.get("run") == "async" else None

    def turn(self, text: str) -> dict[str, Any]:
        started = time.monotonic()
        state = {"messages": [HumanMessage(text)]}
        if self.loop is None:
            result = self.agent.invoke(state, self.config)
        else:
            result = self.loop.run_until_complete(self.agent.ainvoke(state, self.config))
        seconds = time.monotonic() - started
        messages = result["messages"]
        return {
            "seconds": seconds,
            "messages": to_wire(messages),
            "ids": [m.id for m in messages],
            "status": self.queue.status(self.thread_id),
        }


def main() -> None:
    answers = sys.stdout
    sys.stdout = sys.stderr  # nothing else may reach the answer stream
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s %(message)s"
    )
    logging.getLogger("api.langchain").setLevel(logging.INFO)

    def answer(document: dict[str, Any]) -> None:
        answers.write(json.dumps(document, default=str) + "\n")
        answers.flush()

    hello = json.loads(sys.stdin.readline())
    driver = Driver(hello)
    answer(describe(driver.agent, driver.queue, driver.thread_id))
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "turn":
            answer(driver.turn(request["text"]))
        else:
            answer({"error": f"unknown op {request['op']!r}"})


if __name__ == "__main__":
    main()
