"""A LangChain agent middleware backed by compaction-queue, in place of
``SummarizationMiddleware``.

LangChain's own summarization runs inline: when the history passes its trigger,
``before_model`` calls a model to summarize and the user waits. This middleware never makes
a model call wait for a summary:

- every model call's messages go to the service (``wrap_model_call``, after the model
  answered), with the call's real ``prompt_tokens`` from the answer's usage; the service's
  hygiene queues a compaction job at its threshold, and the agent carries on;
- ``before_model`` takes the compacted transcript only once that job has finished: it sends
  the turns the service lacks, reads ``GET …/messages`` (the summary plus every turn posted
  since the job began) and replaces the state's messages with it, as LangChain's summarization
  does (``RemoveMessage(REMOVE_ALL_MESSAGES)`` then the new list); until then it returns
  nothing and the call goes ahead at once;
- the model is offered the service's tools (``recall``, ``recall_message``,
  ``compaction_history``): the summary's prefix tells it that the exact earlier messages can
  be searched.

The service being down never stops the agent (``link.py``: logged, then quiet for a while).
Its name is ``SummarizationMiddleware``, so ``create_deep_agent(middleware=[...])`` puts it in
the place of the deep agent's own summarization (and its general-purpose subagent's).

``QueueMiddleware`` imports no LangChain; ``middleware_class`` makes the class that is also
LangChain's ``AgentMiddleware`` (``api.langchain.CompactionQueueMiddleware``), importing
LangChain then: only an application that has LangChain uses it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import importlib
import logging
import types
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from api.client import CompactionClient
from api.langchain.link import DEFAULT_CONTEXT_LENGTH, QueueConfig, QueueLink
from api.langchain.sessions import session_id_for
from api.langchain.tools import executors, offered
from api.langchain.wire import from_wire, to_wire

DEFAULT_NAME = "SummarizationMiddleware"  # the slot it takes in a deep agent's stack
log = logging.getLogger(__name__)


class QueueMiddleware:
    """The middleware's hooks, answered by a compaction-queue service (LangChain's
    ``AgentMiddleware`` is mixed in by ``middleware_class``)."""

    def __init__(
        self,
        api_url: str | None = None,
        *,
        token: str | None = None,
        context_length: int | None = None,
        session_id: str | None = None,
        config: QueueConfig | None = None,
        client: CompactionClient | None = None,
        name: str = DEFAULT_NAME,
    ) -> None:
        """Args:
        api_url, token, context_length: override ``config`` (by default
            ``QueueConfig.from_env()``); ``context_length`` is the model's window, by default
            its profile's ``max_input_tokens``.
        session_id: the service's session of every run (one middleware per conversation); by
            default a thread's runs are ``<prefix><thread_id>``, and runs without a thread
            are a conversation of this instance's own.
        client: a client of the service to use instead of one made from the config.
        name: the middleware's name; a deep agent replaces its middleware of the same name.
        """
        base = config or QueueConfig.from_env()
        self.config = dataclasses.replace(
            base,
            api_url=api_url or base.api_url,
            token=token or base.token,
            context_length=context_length or base.context_length,
        )
        self._link = QueueLink(self.config, client=client)
        self._session_id = session_id
        self._own_id = uuid.uuid4().hex[:16]
        self._name = name
        self._definitions: list[dict[str, Any]] | None = None
        self.tools = executors(self._run_tool)

    @property
    def name(self) -> str:
        return self._name

    # -- LangChain's hooks -----------------------------------------------------------------

    def before_model(self, state: Mapping[str, Any], runtime: Any) -> dict[str, Any] | None:
        """The compacted transcript in place of the state's messages, once a finished job's
        result waits in the service; otherwise nothing (the call goes ahead at once)."""
        session_id = self._session_of(runtime)
        if not self._link.compaction_ready(session_id):
            return None
        messages = list(state["messages"])
        held = self._link.take_compaction(session_id, to_wire(messages))
        if held is None:
            return None
        try:
            adopted = from_wire(held.messages, held=messages, seed=f"{session_id}@{held.version}")
        except (ValueError, TypeError, NotImplementedError) as exc:  # a message LangChain refuses
            log.warning("compaction-queue: cannot take %s v%d: %s", session_id, held.version, exc)
            return None
        self._link.adopted(session_id, held.version, to_wire(adopted))
        remove = _module("langchain_core.messages").RemoveMessage
        remove_all = _module("langgraph.graph.message").REMOVE_ALL_MESSAGES
        return {"messages": [remove(id=remove_all), *adopted]}

    async def abefore_model(self, state: Mapping[str, Any], runtime: Any) -> dict[str, Any] | None:
        return await asyncio.to_thread(self.before_model, state, runtime)

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """The call, with the service's tools offered; then its messages go to the service
        with the answer's real prompt token count."""
        request = self._offering_tools(request)
        response = handler(request)
        self._record(request, response)
        return response

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        request = await asyncio.to_thread(self._offering_tools, request)
        response = await handler(request)
        await asyncio.to_thread(self._record, request, response)
        return response

    # -- for the application ---------------------------------------------------------------

    def session_id(self, thread_id: str | None = None) -> str:
        """The service's session id of a thread's top-level runs (or of runs without one)."""
        return session_id_for(
            prefix=self.config.session_prefix,
            own=self._own_id,
            fixed=self._session_id,
            thread_id=thread_id,
        )

    def status(self, thread_id: str | None = None) -> dict[str, Any]:
        """What the middleware knows of a thread's conversation: the service's session id,
        the version it last wrote, an open job, how many compactions it took."""
        return self._link.status(self.session_id(thread_id))

    def close(self) -> None:
        self._link.close()

    # -- inside ----------------------------------------------------------------------------

    def _record(self, request: Any, response: Any) -> None:
        model = request.model
        self._link.record(
            self._session_of(request.runtime),
            to_wire(request.state["messages"]),
            model=model_name(model),
            context_length=self.config.context_length or profile_window(model),
            prompt_tokens=prompt_tokens(response),
        )

    def _offering_tools(self, request: Any) -> Any:
        if self._definitions is None:
            self._definitions = self._link.tool_definitions()
        return request.override(tools=offered(request.tools, self._definitions))

    def _run_tool(self, runtime: Any, name: str, args: Mapping[str, Any]) -> str:
        return self._link.run_tool(self._session_of(runtime), name, args)

    def _session_of(self, runtime: Any) -> str:
        thread_id, checkpoint_ns = run_facts(runtime)
        return session_id_for(
            prefix=self.config.session_prefix,
            own=self._own_id,
            fixed=self._session_id,
            thread_id=thread_id,
            checkpoint_ns=checkpoint_ns,
        )


def run_facts(runtime: Any) -> tuple[str | None, str | None]:
    """The ``thread_id`` and checkpoint namespace of the node run that ``runtime`` (a
    LangGraph ``Runtime``, or a tool's ``ToolRuntime``) belongs to."""
    info = getattr(runtime, "execution_info", None)
    if info is not None:
        thread_id, checkpoint_ns = info.thread_id, info.checkpoint_ns
    else:
        configurable = (getattr(runtime, "config", None) or {}).get("configurable") or {}
        thread_id, checkpoint_ns = configurable.get("thread_id"), configurable.get("checkpoint_ns")
    return (None if thread_id is None else str(thread_id)), checkpoint_ns


def model_name(model: Any) -> str:
    for attribute in ("model_name", "model", "model_id"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def profile_window(model: Any) -> int:
    """The model's window as its LangChain profile gives it (``max_input_tokens``)."""
    profile = getattr(model, "profile", None)
    window = profile.get("max_input_tokens") if isinstance(profile, Mapping) else None
    return window if isinstance(window, int) and window > 0 else DEFAULT_CONTEXT_LENGTH


def prompt_tokens(response: Any) -> int | None:
    """The provider's input token count of a model call, from its answer's usage."""
    inner = getattr(response, "model_response", response)  # an ExtendedModelResponse
    messages = getattr(inner, "result", None)
    for message in reversed(messages if isinstance(messages, list) else [inner]):
        usage = getattr(message, "usage_metadata", None)
        if isinstance(usage, Mapping) and usage.get("input_tokens"):
            return int(usage["input_tokens"])
    return None


def _module(name: str) -> types.ModuleType:
    return importlib.import_module(name)


@functools.cache
def middleware_class() -> type[QueueMiddleware]:
    """``QueueMiddleware`` that is also LangChain's ``AgentMiddleware`` (imported here: only
    an environment with LangChain has it)."""
    base = _module("langchain.agents.middleware").AgentMiddleware
    cls: type[QueueMiddleware] = types.new_class(
        "CompactionQueueMiddleware", (QueueMiddleware, base)
    )
    cls.__module__ = __name__
    cls.__doc__ = QueueMiddleware.__doc__
    return cls
