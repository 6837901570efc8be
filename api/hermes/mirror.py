"""What the service holds of an agent's conversation, and what to send so it holds the rest.

Pure: the engine (``engine.py``) does the HTTP. A ``Mirror`` is replaced, never changed, after
each write the service answered.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from api.client import HygieneAnswer

Message = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Mirror:
    """One agent conversation as the service holds it."""

    session_id: str  # the service's session id (kept across Hermes' session rotations)
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
