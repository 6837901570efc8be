"""What the service holds of an agent's conversation, what to send so it holds the rest, and
whether a compaction of it waits: what every agent integration keeps in step (the Hermes engine,
api/hermes/engine.py; the LangChain middleware, api/langchain/link.py).

A ``Mirror`` is replaced, never changed, after each write the service answered. ``sync`` and
``compaction_ready`` do the HTTP through the client; the rest is pure.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from api.client.errors import NotFoundError, VersionConflictError
from api.client.models import HygieneAnswer
from api.client.sync import CompactionClient

Message = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Mirror:
    """One agent conversation as the service holds it."""

    session_id: str  # the service's session id (kept across the host's session rotations)
    version: int | None = None  # the version ``synced`` is; None: not written yet
    synced: tuple[Message, ...] | None = None  # the active transcript; None: not ours (rewrite)
    open_job_id: str | None = None  # a compaction job the service opened for this session
    moved: bool = False  # the service wrote a version of its own (a compaction) since ours


def to_wire(messages: Iterable[Any]) -> list[Message]:
    """Plain JSON copies of the agent's messages (what is sent, and what later turns are
    compared with): a value JSON cannot hold is sent as its text. Keys starting with "_" are
    the host's bookkeeping (Hermes marks a message ``_db_persisted`` once stored), not part of
    the message: they are left out, so marking a message does not make it another one."""
    plain = [
        {k: v for k, v in m.items() if not k.startswith("_")} if isinstance(m, dict) else m
        for m in messages
    ]
    copied: list[Message] = json.loads(json.dumps(plain, default=str))
    return copied


def unsent(synced: Sequence[Message] | None, messages: Sequence[Message]) -> list[Message] | None:
    """The messages to append so the service holds ``messages``; None when appending cannot
    do it (the agent rewrote its history, or the service holds another transcript)."""
    if synced is None or len(synced) > len(messages):
        return None
    if any(a != b for a, b in zip(synced, messages, strict=False)):
        return None
    return list(messages[len(synced) :])


def after_write(
    mirror: Mirror, answer: HygieneAnswer, synced: Sequence[Message], *, moved: bool = False
) -> Mirror:
    """The mirror once the service answered a write of ``synced``."""
    hygiene = answer.hygiene
    job_open = hygiene.job_id is not None and hygiene.job_status != "failed"
    return Mirror(
        session_id=mirror.session_id,
        version=answer.version,
        synced=tuple(synced),
        open_job_id=hygiene.job_id if job_open else None,
        moved=mirror.moved or moved,
    )


@dataclass(frozen=True, slots=True)
class Window:
    """What a snapshot names beside its messages: the main model and its context window."""

    model: str
    context_length: int


def sync(
    client: CompactionClient,
    mirror: Mirror,
    wire: list[Message],
    prompt_tokens: int | None,
    window: Window,
    log: logging.Logger,
) -> tuple[Mirror, HygieneAnswer | None]:
    """Make the service hold ``wire``: the turns it lacks appended (with ``If-Match``), or the
    whole transcript put when the agent rewrote its history or the session is new; the
    answer, None when nothing needed sending. A session this process has not written yet is
    looked up first (a conversation resumed by a new process)."""
    if mirror.version is None:
        mirror = _attach(client, mirror, wire)
    new = unsent(mirror.synced, wire)
    if new == []:
        return mirror, None
    if new is None:
        return _put(client, mirror, wire, prompt_tokens, window, log)
    try:
        answer = client.append(
            mirror.session_id, new, prompt_tokens=prompt_tokens, if_match=mirror.version
        )
    except VersionConflictError:
        # The service wrote a compaction since: our token count describes the history before
        # it, so the service counts these turns itself; the compaction is taken next.
        answer = client.append(mirror.session_id, new)
        return after_write(mirror, answer, wire, moved=True), answer
    return after_write(mirror, answer, wire), answer


def _attach(client: CompactionClient, mirror: Mirror, wire: list[Message]) -> Mirror:
    try:
        held = client.get_messages(mirror.session_id)
    except NotFoundError:
        return mirror
    synced = to_wire(held.messages)
    ours = unsent(synced, wire) is not None
    return dataclasses.replace(mirror, version=held.version, synced=tuple(synced) if ours else None)


def _put(
    client: CompactionClient,
    mirror: Mirror,
    wire: list[Message],
    prompt_tokens: int | None,
    window: Window,
    log: logging.Logger,
) -> tuple[Mirror, HygieneAnswer]:
    """A full snapshot: the agent's transcript wins over anything the service holds (which it
    archives)."""
    put = functools.partial(
        client.put_session,
        mirror.session_id,
        model=window.model,
        context_length=window.context_length,
        messages=wire,
        prompt_tokens=prompt_tokens,
    )
    try:
        answer = put(if_match=mirror.version)
    except VersionConflictError as stale:
        answer = put(if_match=stale.current_version)
    log.info("compaction-queue: session %s written whole (v%d)", mirror.session_id, answer.version)
    return after_write(dataclasses.replace(mirror, moved=False), answer, wire), answer


def compaction_ready(
    client: CompactionClient, mirror: Mirror, log: logging.Logger
) -> tuple[bool, Mirror]:
    """Whether a compacted transcript waits in the service for this conversation (the service
    wrote a version of its own, or the job it opened succeeded); and the mirror, without its
    job once that job ended otherwise."""
    if mirror.version is None:
        return False, mirror
    if mirror.moved:
        return True, mirror
    if mirror.open_job_id is None:
        return False, mirror
    job = client.get_job(mirror.open_job_id)
    if not job.finished:
        return False, mirror
    if job.status != "succeeded":
        log.info("compaction-queue: job %s ended %s", job.id, job.status)
        return False, dataclasses.replace(mirror, open_job_id=None)
    return True, mirror
