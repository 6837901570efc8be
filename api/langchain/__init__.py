"""compaction-queue as a LangChain agent middleware, in place of ``SummarizationMiddleware``.

    from langchain.agents import create_agent
    from api.langchain import CompactionQueueMiddleware

    queue = CompactionQueueMiddleware("http://127.0.0.1:8000", context_length=128_000)
    agent = create_agent(model, tools=tools, middleware=[queue], checkpointer=saver)

    from deepagents import create_deep_agent
    agent = create_deep_agent(model, tools=tools, middleware=[queue])  # replaces its summarization

Every model call's messages go to the service; a compaction runs there in the background and
a later call takes its result; the model gets the service's recall tools (see
``middleware.py`` and docs/langchain.md).

Importing this package needs only httpx and the standard library; LangChain is imported when
``CompactionQueueMiddleware`` is first looked up, so only an environment with LangChain
(``langchain>=1``, ``langgraph``) can use it.
"""

from __future__ import annotations

from typing import Any

from api.langchain.link import QueueConfig
from api.langchain.middleware import QueueMiddleware, middleware_class

__all__ = ["CompactionQueueMiddleware", "QueueConfig", "QueueMiddleware", "middleware_class"]


def __getattr__(name: str) -> Any:
    """``CompactionQueueMiddleware``, made (with LangChain imported) on first use."""
    if name == "CompactionQueueMiddleware":
        return middleware_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
