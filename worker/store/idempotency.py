"""Idempotency keys: the answer a write gave, kept so that a retry of it gets the same answer.

A client names a PUT or an append with an ``Idempotency-Key``. The answer is stored under
(session, route, key) in the same transaction as the write, beside a hash of the request body,
so a write and its remembered answer exist together or not at all. A retry with the same key
and body is answered from here and writes nothing; the same key with another body is refused
(``IdempotencyKeyReusedError``). Only writes are remembered: a refused request stored nothing,
so its key stays free.

A key is kept ``RETENTION`` (24 hours) after its write. An older one is forgotten lazily (when
it is looked up again, and whenever its session stores a new key) and in bulk by
``delete_expired``, which a periodic sweep calls.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, tuple_, update
from sqlalchemy.orm import Session

from worker.store.db import Database
from worker.store.errors import IdempotencyKeyReusedError
from worker.store.models import IdempotencyKeyRow, utcnow

RETENTION = timedelta(hours=24)
MAX_KEY_CHARS = 255  # the column's width


@dataclass(frozen=True, slots=True)
class Scope:
    """One key of one route of one session, and the body it was sent with."""

    session_id: str
    route: str  # snapshot | append
    key: str
    body_sha256: str


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    """What the write answered: HTTP status, JSON body, and the reason header."""

    status: int
    body: dict[str, Any]
    reason: str


def body_sha256(body: Any) -> str:
    """sha256 of the body's canonical JSON (sorted keys, no spaces, ASCII escapes), so the same
    body hashes alike however the client spaced or ordered it."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def lookup(
    s: Session, scope: Scope, *, retention: timedelta = RETENTION, now: datetime | None = None
) -> StoredAnswer | None:
    """The answer remembered under this key, or None for a key not (or no longer) known.

    Call it holding the session's row lock, so a concurrent first use of the key has either
    committed (and is found) or not begun.
    """
    row = s.get(IdempotencyKeyRow, (scope.session_id, scope.route, scope.key))
    if row is None:
        return None
    if row.created_at < (now or utcnow()) - retention:
        s.delete(row)
        s.flush()  # the write that follows may store the same key again
        return None
    if row.body_sha256 != scope.body_sha256:
        raise IdempotencyKeyReusedError(scope.key, scope.session_id, scope.route)
    return StoredAnswer(row.status, row.answer, row.reason)


def remember(
    s: Session,
    scope: Scope,
    answer: StoredAnswer,
    *,
    retention: timedelta = RETENTION,
    now: datetime | None = None,
) -> None:
    """Keep the answer of the write made in this same transaction; drops the session's
    expired keys on the way."""
    now = now or utcnow()
    s.execute(
        delete(IdempotencyKeyRow).where(
            IdempotencyKeyRow.session_id == scope.session_id,
            IdempotencyKeyRow.created_at < now - retention,
        )
    )
    s.add(
        IdempotencyKeyRow(
            session_id=scope.session_id,
            route=scope.route,
            idempotency_key=scope.key,
            body_sha256=scope.body_sha256,
            status=answer.status,
            answer=answer.body,
            reason=answer.reason,
            created_at=now,
        )
    )


def replace_answer(s: Session, scope: Scope, answer: StoredAnswer) -> None:
    """What became true of the same write after its commit (its job could not be queued):
    retries get this answer from now on."""
    s.execute(
        update(IdempotencyKeyRow)
        .where(
            IdempotencyKeyRow.session_id == scope.session_id,
            IdempotencyKeyRow.route == scope.route,
            IdempotencyKeyRow.idempotency_key == scope.key,
        )
        .values(status=answer.status, answer=answer.body, reason=answer.reason)
    )


def delete_expired(
    db: Database,
    *,
    retention: timedelta = RETENTION,
    now: datetime | None = None,
    batch: int = 1000,
) -> int:
    """Forget every key older than ``retention``, ``batch`` rows per transaction; how many."""
    cutoff = (now or utcnow()) - retention
    columns = (IdempotencyKeyRow.session_id, IdempotencyKeyRow.route,
               IdempotencyKeyRow.idempotency_key)  # fmt: skip
    oldest = select(*columns).where(IdempotencyKeyRow.created_at < cutoff).limit(batch)
    total = 0
    while True:
        with db.write() as s:
            result = s.execute(
                delete(IdempotencyKeyRow).where(tuple_(*columns).in_(oldest)),
                execution_options={"synchronize_session": False},
            )
            deleted = int(getattr(result, "rowcount", 0) or 0)
        total += deleted
        if deleted < batch:
            return total
