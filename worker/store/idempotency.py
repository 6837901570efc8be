"""Idempotency keys: the answer a write gave, kept so that a retry of it gets the same answer.

A client names a PUT or an append with an ``Idempotency-Key``. The answer is stored under
(session, route, key) in the same transaction as the write, beside a hash of the request body,
so a write and its remembered answer exist together or not at all. A retry with the same key
and body is answered from here and writes nothing; the same key with another body is refused
(``IdempotencyKeyReusedError``). Only writes are remembered: a refused request stored nothing,
so its key stays free.

A key is kept ``RETENTION`` (24 hours) after its write. An older one is forgotten lazily, when
it is looked up again, and in bulk by ``delete_expired``, which the reaper calls every
``COMPACTION_REAPER_INTERVAL_S``. (A write does not sweep its session's old keys on the way:
that scan grew with the session's traffic of the last day, on every write.)

The statements are Core, on the transaction's connection: they run on every keyed write.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, delete, insert, select, tuple_, update
from sqlalchemy.orm import Session

from worker.store.db import Database
from worker.store.errors import IdempotencyKeyReusedError
from worker.store.models import Base, IdempotencyKeyRow, utcnow

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


_KEYS = Base.metadata.tables[IdempotencyKeyRow.__tablename__]
# Built once (see worker/store/sessions.py): keyed writes run these on every request.
_THIS_KEY = (
    (_KEYS.c.session_id == bindparam("k_session"))
    & (_KEYS.c.route == bindparam("k_route"))
    & (_KEYS.c.idempotency_key == bindparam("k_key"))
)
_LOOKUP = select(
    _KEYS.c.created_at, _KEYS.c.body_sha256, _KEYS.c.status, _KEYS.c.answer, _KEYS.c.reason
).where(_THIS_KEY)
_FORGET = delete(_KEYS).where(_THIS_KEY)
_REMEMBER = insert(_KEYS)
_REPLACE = update(_KEYS).where(_THIS_KEY)


def _this_key(scope: Scope) -> dict[str, str]:
    return {"k_session": scope.session_id, "k_route": scope.route, "k_key": scope.key}


def lookup(
    s: Session,
    scope: Scope,
    *,
    retention: timedelta = RETENTION,
    now: datetime | None = None,
) -> StoredAnswer | None:
    """The answer remembered under this key, or None for a key not (or no longer) known.

    Call it holding the session's row lock, so a concurrent first use of the key has either
    committed (and is found) or not begun.
    """
    conn = s.connection()
    row = conn.execute(_LOOKUP, _this_key(scope)).first()
    if row is None:
        return None
    if row.created_at < (now or utcnow()) - retention:
        # Forgotten now: the write that follows may store the same key again.
        conn.execute(_FORGET, _this_key(scope))
        return None
    if row.body_sha256 != scope.body_sha256:
        raise IdempotencyKeyReusedError(scope.key, scope.session_id, scope.route)
    return StoredAnswer(row.status, row.answer, row.reason)


def remember(
    s: Session, scope: Scope, answer: StoredAnswer, *, now: datetime | None = None
) -> None:
    """Keep the answer of the write made in this same transaction."""
    s.connection().execute(
        _REMEMBER,
        {
            "session_id": scope.session_id,
            "route": scope.route,
            "idempotency_key": scope.key,
            "body_sha256": scope.body_sha256,
            "status": answer.status,
            "answer": answer.body,
            "reason": answer.reason,
            "created_at": now or utcnow(),
        },
    )


def replace_answer(s: Session, scope: Scope, answer: StoredAnswer) -> None:
    """What became true of the same write after its commit (its job could not be queued):
    retries get this answer from now on."""
    values = {"status": answer.status, "answer": answer.body, "reason": answer.reason}
    s.connection().execute(_REPLACE, _this_key(scope) | values)


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
