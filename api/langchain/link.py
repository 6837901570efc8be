"""The service's side of an agent's conversations: what it holds of each, what to send so it
holds the rest, and whether a finished compaction waits to be taken.

One ``QueueLink`` serves every conversation of a middleware (one per session id), each with
its own ``Mirror`` (kept in step by ``api/client/mirror.py``, as the Hermes engine's is) and its
own lock, so conversations run in parallel while one conversation's writes stay in order. Nothing
here raises to the agent: a failed call is logged and the link stays quiet for
``pause_after_failure_s`` (the next write then sends everything it missed): every conversation
when the service is out of reach (no answer, a 5xx, a refused token), only the one whose
request was refused otherwise (a 4xx about what it sent).

Only httpx and the standard library (through ``api.client``): LangChain is not imported here.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from api.client import (
    CompactionClient,
    CompactionClientError,
    ProblemError,
    RetryPolicy,
    Transcript,
)
from api.client.mirror import Message, Mirror, Window, compaction_ready, sync, to_wire
from api.client.sync import DEFAULT_BASE_URL
from api.client.tools import run_tool

DEFAULT_CONTEXT_LENGTH = 128_000  # when neither the config nor the model's profile says
MAX_CONVERSATIONS = 4096  # mirrors kept in memory; a forgotten one is re-read from the service
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class QueueConfig:
    """Where the service is and how patient to be with it (``from_env`` documents the names)."""

    api_url: str = DEFAULT_BASE_URL
    token: str | None = None
    session_prefix: str = "langchain-"
    context_length: int | None = None  # None: the model's profile (max_input_tokens)
    timeout_s: float = 10.0
    pause_after_failure_s: float = 30.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> QueueConfig:
        """``COMPACTION_API_URL``, ``COMPACTION_API_TOKEN`` (the service's token),
        ``COMPACTION_LANGCHAIN_SESSION_PREFIX``, ``COMPACTION_LANGCHAIN_CONTEXT_LENGTH``,
        ``COMPACTION_LANGCHAIN_TIMEOUT_S``, ``COMPACTION_LANGCHAIN_PAUSE_S``."""
        default = cls()
        window = env.get("COMPACTION_LANGCHAIN_CONTEXT_LENGTH")
        return cls(
            api_url=env.get("COMPACTION_API_URL") or default.api_url,
            token=(env.get("COMPACTION_API_TOKEN") or "").strip() or None,
            session_prefix=env.get("COMPACTION_LANGCHAIN_SESSION_PREFIX", default.session_prefix),
            context_length=int(window) if window else None,
            timeout_s=float(env.get("COMPACTION_LANGCHAIN_TIMEOUT_S") or default.timeout_s),
            pause_after_failure_s=float(
                env.get("COMPACTION_LANGCHAIN_PAUSE_S") or default.pause_after_failure_s
            ),
        )


@dataclass(slots=True)
class Conversation:
    """One conversation as this process knows it; changed only under its ``lock``."""

    mirror: Mirror
    model: str = "unknown"
    context_length: int = DEFAULT_CONTEXT_LENGTH
    compactions: int = 0  # compacted transcripts adopted by this process
    paused_until: float = 0.0  # time.monotonic(): quiet after the service refused its request
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


def out_of_reach(exc: CompactionClientError) -> bool:
    """True when no conversation can use the service now (no answer, a server error, a
    refused token), rather than one request being refused for what it sent."""
    if isinstance(exc, ProblemError):
        return exc.status >= 500 or exc.status in (401, 403)
    return True


class QueueLink:
    """Every conversation of one middleware, as the service holds them."""

    def __init__(self, config: QueueConfig, *, client: CompactionClient | None = None) -> None:
        self.config = config
        self._client = client
        self._conversations: OrderedDict[str, Conversation] = OrderedDict()
        self._lock = threading.Lock()  # guards the dict only, never held across a request
        self._paused_until = 0.0

    # -- what the agent does ---------------------------------------------------------------

    def record(
        self,
        session_id: str,
        wire: Sequence[Message],
        *,
        model: str,
        context_length: int,
        prompt_tokens: int | None,
    ) -> None:
        """A model call was answered: the service gets the turns it lacks, with the call's
        real ``prompt_tokens``, and its hygiene may queue a compaction. Never raises."""
        conversation = self._conversation(session_id, create=True)
        assert conversation is not None  # created
        if not wire or self._quiet(conversation):
            return
        with conversation.lock:
            conversation.model, conversation.context_length = model, context_length
            try:
                conversation.mirror = self._sync(conversation, to_wire(wire), prompt_tokens)
            except CompactionClientError as exc:
                self._pause(exc, conversation)

    def compaction_ready(self, session_id: str) -> bool:
        """True once a compaction of this conversation has finished and its transcript waits
        in the service; never because of size alone. Never raises."""
        conversation = self._conversation(session_id)
        if conversation is None or self._quiet(conversation):
            return False
        with conversation.lock:
            try:
                return self._ready(conversation)
            except CompactionClientError as exc:
                self._pause(exc, conversation)
                return False

    def take_compaction(self, session_id: str, wire: Sequence[Message]) -> Transcript | None:
        """The service's compacted transcript, once it holds every turn in ``wire`` too (the
        ones not sent yet go first); None when there is none to take now. Never raises.
        The caller says how it holds the result with ``adopted``."""
        conversation = self._conversation(session_id)
        if conversation is None or self._quiet(conversation):
            return None
        with conversation.lock:
            try:
                conversation.mirror = self._sync(conversation, to_wire(wire), None)
                if not self._ready(conversation):
                    return None
                return self._api().get_messages(session_id)
            except CompactionClientError as exc:
                self._pause(exc, conversation)
                return None

    def adopted(self, session_id: str, version: int, wire: Sequence[Message]) -> None:
        """The agent now holds ``wire`` in place of version ``version`` of the service's
        transcript (the same messages in the agent's own form): later turns extend it."""
        conversation = self._conversation(session_id)
        if conversation is None:
            return
        with conversation.lock:
            conversation.mirror = Mirror(
                session_id=session_id, version=version, synced=tuple(to_wire(wire))
            )
            conversation.compactions += 1
        log.info("compaction-queue: adopted %s v%d (%d messages)", session_id, version, len(wire))

    def run_tool(self, session_id: str, name: str, args: Mapping[str, Any]) -> str:
        """One of the service's tools run for this conversation: a JSON answer for the model,
        an ``error`` one when it cannot be run (never an exception)."""
        if self._paused():
            return json.dumps({"error": "the compaction service is not reachable just now"})
        try:
            answer = run_tool(self._api(), session_id, name, args)
        except CompactionClientError as exc:  # bad arguments too (ToolCallError)
            detail = exc.detail if isinstance(exc, ProblemError) else str(exc)
            return json.dumps({"error": detail})
        return json.dumps(answer, ensure_ascii=False)

    def tool_definitions(self) -> list[dict[str, Any]] | None:
        """The service's tools in the OpenAI tools format (``GET /v1/tools``); None while it
        cannot be asked."""
        if self._paused():
            return None
        try:
            return self._api().list_tools()
        except CompactionClientError as exc:
            self._pause(exc)
            return None

    def status(self, session_id: str) -> dict[str, Any]:
        """What this process knows of a conversation (for logs and tests)."""
        conversation = self._conversation(session_id)
        mirror = conversation.mirror if conversation else None
        return {
            "session_id": session_id,
            "version": mirror.version if mirror else None,
            "open_job_id": mirror.open_job_id if mirror else None,
            "compactions": conversation.compactions if conversation else 0,
        }

    # -- talking to the service ------------------------------------------------------------

    def _sync(
        self, conversation: Conversation, wire: list[Message], prompt_tokens: int | None
    ) -> Mirror:
        window = Window(conversation.model, conversation.context_length)
        mirror, _ = sync(self._api(), conversation.mirror, wire, prompt_tokens, window, log)
        return mirror

    def _ready(self, conversation: Conversation) -> bool:
        ready, conversation.mirror = compaction_ready(self._api(), conversation.mirror, log)
        return ready

    def _conversation(self, session_id: str, *, create: bool = False) -> Conversation | None:
        with self._lock:
            conversation = self._conversations.get(session_id)
            if conversation is None and create:
                conversation = Conversation(mirror=Mirror(session_id=session_id))
                self._conversations[session_id] = conversation
            if conversation is not None:
                self._conversations.move_to_end(session_id)
            while len(self._conversations) > MAX_CONVERSATIONS:
                self._conversations.popitem(last=False)
            return conversation

    def _api(self) -> CompactionClient:
        with self._lock:
            if self._client is None:
                self._client = CompactionClient(
                    self.config.api_url,
                    token=self.config.token,
                    timeout_s=self.config.timeout_s,
                    retry=RetryPolicy(attempts=2, backoff_s=0.2, max_wait_s=1.0),
                )
            return self._client

    def _paused(self) -> bool:
        return time.monotonic() < self._paused_until

    def _quiet(self, conversation: Conversation) -> bool:
        return self._paused() or time.monotonic() < conversation.paused_until

    def _pause(self, exc: CompactionClientError, conversation: Conversation | None = None) -> None:
        until = time.monotonic() + self.config.pause_after_failure_s
        if conversation is None or out_of_reach(exc):
            self._paused_until = until
        else:
            conversation.paused_until = until
        log.warning(
            "compaction-queue: %s; the agent goes on, the next try in %gs",
            exc,
            self.config.pause_after_failure_s,
        )

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
