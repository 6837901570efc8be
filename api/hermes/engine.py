"""A Hermes Agent context engine backed by compaction-queue.

Hermes (``agent/context_engine.py``) asks its engine, after each model call, whether to compact
(``should_compress``) and then for the new message list (``compress``). This engine never makes
the agent wait for a summary:

- every request's transcript goes to the service (the plugin's ``pre_api_request`` and
  ``post_api_request`` hooks: ``stash`` then ``flush``), with the provider's real
  ``prompt_tokens``; the service's hygiene queues a compaction job at its threshold, and the
  agent carries on;
- ``should_compress`` is true only once that job has finished and its compacted transcript
  waits in the service; ``compress`` then returns that transcript (``GET …/messages``, which
  also holds every turn posted since the job began). Otherwise ``compress`` returns the messages
  unchanged, which Hermes takes as "no progress" and continues with. A manual ``/compress``
  queues a manual compaction, picked up the same way.

The service being down never stops the agent: a failed call is logged and the engine stays
quiet for ``pause_after_failure_s``; the next write then sends everything it missed.

The engine's tools are the service's (``GET /v1/tools``): ``recall`` searches the archived
originals of this conversation, ``recall_message`` reads one in full, ``compaction_history``
lists its compactions. The summary's prefix tells the model they exist.

Appends carry ``If-Match`` with the version the engine last wrote: a 412 means the service
wrote a version of its own (a finished compaction), so the turns go again without the agent's
token count (which describes the uncompacted history) and the compaction is adopted next.

The class here does not import Hermes; ``hermes_engine`` gives an instance of it that is also
Hermes' ``ContextEngine`` (Hermes checks that), built when Hermes loads the plugin.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import logging
import os
import threading
import time
import types
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from api.client import (
    CompactionClient,
    CompactionClientError,
    ConflictError,
    ProblemError,
    RetryPolicy,
)
from api.client.mirror import Message, Mirror, Window, compaction_ready, sync, to_wire, unsent
from api.client.sync import DEFAULT_BASE_URL
from api.client.tools import TOOL_NAMES, run_tool

NAME = "compaction-queue"
DEFAULT_THRESHOLD = 0.85  # until the service answers with its own threshold_tokens
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Where the service is and how patient to be with it (``from_env`` documents the names)."""

    api_url: str = DEFAULT_BASE_URL
    token: str | None = None
    session_prefix: str = "hermes-"
    timeout_s: float = 10.0
    pause_after_failure_s: float = 30.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> EngineConfig:
        """``COMPACTION_API_URL``, ``COMPACTION_API_TOKEN`` (the service's token),
        ``COMPACTION_HERMES_SESSION_PREFIX``, ``COMPACTION_HERMES_TIMEOUT_S``,
        ``COMPACTION_HERMES_PAUSE_S``."""
        default = cls()
        return cls(
            api_url=env.get("COMPACTION_API_URL") or default.api_url,
            token=(env.get("COMPACTION_API_TOKEN") or "").strip() or None,
            session_prefix=env.get("COMPACTION_HERMES_SESSION_PREFIX", default.session_prefix),
            timeout_s=float(env.get("COMPACTION_HERMES_TIMEOUT_S") or default.timeout_s),
            pause_after_failure_s=float(
                env.get("COMPACTION_HERMES_PAUSE_S") or default.pause_after_failure_s
            ),
        )


# The plugin's hooks know Hermes' session id only: each live engine is found by it.
_live: weakref.WeakValueDictionary[str, QueueEngine] = weakref.WeakValueDictionary()
_live_lock = threading.Lock()


def engine_for(hermes_session_id: str) -> QueueEngine | None:
    with _live_lock:
        return _live.get(hermes_session_id)


class QueueEngine:
    """Hermes' context-engine interface, answered by a compaction-queue service."""

    # Hermes reads these (status line, preflight); the service decides when to compact.
    threshold_percent = DEFAULT_THRESHOLD
    protect_first_n = 3
    protect_last_n = 6

    def __init__(
        self, config: EngineConfig | None = None, *, client: CompactionClient | None = None
    ) -> None:
        """Args:
        client: a client of the service to use instead of one made from ``config``.
        """
        self.config = config or EngineConfig.from_env()
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.context_length = 0
        self.threshold_tokens = 0
        self.compression_count = 0
        self.model = ""
        self._hermes_session_id: str | None = None
        self._mirror: Mirror | None = None
        self._stashed: list[Message] | None = None
        self._paused_until = 0.0
        self._client = client

    @property
    def name(self) -> str:
        return NAME

    def __deepcopy__(self, memo: dict[int, Any]) -> QueueEngine:
        """Hermes copies the registered engine for each agent: a fresh one, same settings."""
        return type(self)(self.config)

    # -- lifecycle -------------------------------------------------------------------------

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        """A conversation begins, or Hermes rotated its session id after a compaction (the
        service's session stays the same then)."""
        if kwargs.get("boundary_reason") != "compression" or self._mirror is None:
            self._mirror = Mirror(session_id=self.config.session_prefix + session_id)
        if kwargs.get("model"):
            self.model = str(kwargs["model"])
        if kwargs.get("context_length") and not self.context_length:
            self._set_window(int(kwargs["context_length"]))
        with _live_lock:
            if self._hermes_session_id is not None:
                _live.pop(self._hermes_session_id, None)
            self._hermes_session_id = session_id
            _live[session_id] = self

    def on_session_end(self, session_id: str, messages: Sequence[Message]) -> None:
        """A session ends (exit, /reset, expiry) or Hermes rotates its id around a compaction:
        the service gets turns it has not seen. Only appended ones: at a rotation Hermes passes
        the history from before the compaction, which must not replace it."""
        self.observe(messages, prompt_tokens=None, rewrite=False)
        with _live_lock:
            if self._hermes_session_id is not None and _live.get(self._hermes_session_id) is self:
                del _live[self._hermes_session_id]

    def on_session_reset(self) -> None:
        self.last_prompt_tokens = self.last_completion_tokens = self.last_total_tokens = 0
        self.compression_count = 0
        self._mirror, self._stashed = None, None

    def update_model(self, model: str, context_length: int, **_: Any) -> None:
        self.model = model
        self._set_window(context_length)

    def update_from_response(self, usage: Mapping[str, Any]) -> None:
        self.last_prompt_tokens = int(usage.get("prompt_tokens") or 0)
        self.last_completion_tokens = int(usage.get("completion_tokens") or 0)
        self.last_total_tokens = int(usage.get("total_tokens") or 0)

    # -- the turns, as they happen ---------------------------------------------------------

    def stash(self, messages: Sequence[Message] | None) -> None:
        """The transcript of the request about to be sent (its usage is not known yet)."""
        self._stashed = list(messages) if messages is not None else None

    def flush(self) -> None:
        """The request was answered: send its transcript with its real prompt_tokens."""
        stashed, self._stashed = self._stashed, None
        if stashed is not None:
            self.observe(stashed, prompt_tokens=self._real_prompt_tokens())

    def observe(
        self, messages: Sequence[Message], *, prompt_tokens: int | None, rewrite: bool = True
    ) -> None:
        """Write what the service does not have yet (with ``rewrite``, a whole new transcript
        when the agent's history no longer extends the service's); never raises."""
        mirror = self._mirror
        if mirror is None or not messages or self._paused():
            return
        wire = to_wire(messages)
        if not rewrite and mirror.version is not None and unsent(mirror.synced, wire) is None:
            return
        try:
            self._mirror = self._sync(mirror, wire, prompt_tokens)
        except CompactionClientError as exc:
            self._pause(exc)

    # -- compaction ------------------------------------------------------------------------

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """True once a compacted transcript waits in the service; never because of size
        alone (the service queues the job; the agent does not wait for it)."""
        if self._mirror is None or self._paused():
            return False
        try:
            return self._compaction_ready()
        except CompactionClientError as exc:
            self._pause(exc)
            return False

    def compress(
        self,
        messages: list[Message],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
        memory_context: str = "",
    ) -> list[Message]:
        """The service's compacted transcript when one is ready, else ``messages`` unchanged.
        ``force`` (a manual /compress) queues a manual compaction for a later turn.
        ``memory_context`` (a memory provider's notes) has no way into the service's summary."""
        if self._mirror is None or self._paused():
            return messages
        try:
            self._mirror = self._sync(self._mirror, to_wire(messages), self._real_prompt_tokens())
            if force:
                self._queue_manual(focus_topic)
            if self._compaction_ready():
                return self._adopt()
        except CompactionClientError as exc:
            self._pause(exc)
        return messages

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """The service's tools (``recall``, ``recall_message``, ``compaction_history``), as it
        defines them (``GET /v1/tools``); none while the service cannot be asked."""
        if self._paused():
            return []
        try:
            tools = self._api().list_tools()
        except CompactionClientError as exc:
            self._pause(exc)
            return []
        return [t["function"] for t in tools if t.get("function", {}).get("name") in RECALL_TOOLS]

    def handle_tool_call(self, name: str, args: Mapping[str, Any], **_: Any) -> str:
        """Run one of the service's tools for this conversation (``api/client/tools.py``); a
        JSON answer for the model, an ``error`` one when it cannot (never an exception)."""
        mirror = self._mirror
        if name not in RECALL_TOOLS:
            return json.dumps({"error": f"unknown tool {name!r}"})
        if mirror is None or mirror.version is None:
            return json.dumps({"error": "nothing of this conversation has been compacted yet"})
        try:
            answer = run_tool(self._api(), mirror.session_id, name, args)
        except CompactionClientError as exc:  # bad arguments too (ToolCallError)
            detail = exc.detail if isinstance(exc, ProblemError) else str(exc)
            return json.dumps({"error": detail})
        return json.dumps(answer, ensure_ascii=False)

    def get_status(self) -> dict[str, Any]:
        last = max(self.last_prompt_tokens, 0)
        mirror = self._mirror
        return {
            "last_prompt_tokens": last,
            "threshold_tokens": self.threshold_tokens,
            "context_length": self.context_length,
            "usage_percent": min(100, last / self.context_length * 100)
            if self.context_length
            else 0,
            "compression_count": self.compression_count,
            "queue_session_id": mirror.session_id if mirror else None,
            "queue_version": mirror.version if mirror else None,
            "open_job_id": mirror.open_job_id if mirror else None,
        }

    # -- talking to the service ------------------------------------------------------------

    def _sync(self, mirror: Mirror, wire: list[Message], prompt_tokens: int | None) -> Mirror:
        window = Window(self.model or "unknown", self.context_length or 128_000)
        mirror, answer = sync(self._api(), mirror, wire, prompt_tokens, window, log)
        if answer is not None:
            self.threshold_tokens = answer.threshold_tokens
        return mirror

    def _compaction_ready(self) -> bool:
        mirror = self._mirror
        if mirror is None:
            return False
        ready, self._mirror = compaction_ready(self._api(), mirror, log)
        return ready

    def _adopt(self) -> list[Message]:
        """Take the service's compacted transcript (it holds every turn synced so far)."""
        mirror = self._mirror
        assert mirror is not None  # only called after _compaction_ready
        held = self._api().get_messages(mirror.session_id)
        adopted = to_wire(held.messages)
        self._mirror = Mirror(
            session_id=mirror.session_id, version=held.version, synced=tuple(adopted)
        )
        self.compression_count += 1
        log.info(
            "compaction-queue: adopted %s v%d (%d messages)",
            mirror.session_id,
            held.version,
            len(adopted),
        )
        return to_wire(adopted)  # Hermes marks the dicts it gets; ours stay as the service has them

    def _queue_manual(self, focus_topic: str | None) -> None:
        mirror = self._mirror
        if mirror is None or mirror.version is None:  # nothing written: nothing to compact
            return
        job_id: str | None
        try:
            job_id = (
                self._api().compact(mirror.session_id, focus_topic=focus_topic, force=True).job_id
            )
        except ConflictError as open_job:  # one is open already: follow that one
            job_id = open_job.job_id
        self._mirror = dataclasses.replace(mirror, open_job_id=job_id or mirror.open_job_id)

    def _api(self) -> CompactionClient:
        if self._client is None:
            self._client = CompactionClient(
                self.config.api_url,
                token=self.config.token,
                timeout_s=self.config.timeout_s,
                retry=RetryPolicy(attempts=2, backoff_s=0.2, max_wait_s=1.0),
            )
        return self._client

    def _real_prompt_tokens(self) -> int | None:
        # Hermes sets -1 right after a compaction, until the next answer reports usage.
        return self.last_prompt_tokens if self.last_prompt_tokens > 0 else None

    def _set_window(self, context_length: int) -> None:
        self.context_length = context_length
        self.threshold_tokens = int(context_length * self.threshold_percent)

    def _paused(self) -> bool:
        return time.monotonic() < self._paused_until

    def _pause(self, exc: CompactionClientError) -> None:
        self._paused_until = time.monotonic() + self.config.pause_after_failure_s
        log.warning(
            "compaction-queue: %s; the agent goes on, the next try in %gs",
            exc,
            self.config.pause_after_failure_s,
        )


RECALL_TOOLS = frozenset(TOOL_NAMES)


@functools.cache
def hermes_engine_class() -> type[QueueEngine]:
    """``QueueEngine`` that is also Hermes' ``ContextEngine`` (imported here: only a Hermes
    install has it)."""
    base = importlib.import_module("agent.context_engine").ContextEngine
    cls: type[QueueEngine] = types.new_class("CompactionQueueEngine", (QueueEngine, base))
    cls.__module__ = __name__
    cls.__doc__ = QueueEngine.__doc__
    return cls


def hermes_engine(config: EngineConfig | None = None) -> QueueEngine:
    return hermes_engine_class()(config)
