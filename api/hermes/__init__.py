"""compaction-queue as a Hermes Agent plugin: the context engine ``compaction-queue``.

Hermes finds it through the ``hermes_agent.plugins`` entry point of this package and calls
``register``; a user enables it (``hermes plugins enable compaction-queue``) and selects it
(``context.engine: compaction-queue`` in ``config.yaml``). See docs/hermes.md.

Only httpx and the standard library are imported (through ``api.client``), so the plugin works
in Hermes' own environment without the service's dependencies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from api.hermes.engine import NAME, EngineConfig, QueueEngine, engine_for, hermes_engine

__all__ = ["NAME", "EngineConfig", "QueueEngine", "hermes_engine", "register"]


def register(ctx: Any) -> None:
    """Hermes' plugin entry: the engine, and the hooks that show it each request."""
    ctx.register_context_engine(hermes_engine(EngineConfig.from_env()))
    ctx.register_hook("pre_api_request", before_request)
    ctx.register_hook("post_api_request", after_request)


def before_request(
    session_id: str = "", conversation_history: Sequence[dict[str, Any]] | None = None, **_: Any
) -> None:
    """The transcript this request sends (its token count comes with the answer)."""
    engine = engine_for(session_id)
    if engine is not None:
        engine.stash(conversation_history)


def after_request(session_id: str = "", **_: Any) -> None:
    """The request was answered: its transcript goes to the service with the real usage."""
    engine = engine_for(session_id)
    if engine is not None:
        engine.flush()
