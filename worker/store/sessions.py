"""Sessions and their messages: snapshots, appends and reads. Each function taking ``db`` is
one transaction; those taking ``s`` run inside the caller's.

Token counts arrive with the messages (counted once, at ingestion, by the caller) and the
session's ``token_total`` and ``message_count`` are kept in step incrementally, so no read has to
sum a transcript. Nothing here deletes a message: a snapshot archives the previous active set
(and indexes its text for search: worker/store/archive_index.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from worker.store.archive_index import archive_active
from worker.store.db import Database
from worker.store.errors import (
    SessionNotFoundError,
    VersionConflictError,
    violated_constraint,
)
from worker.store.models import MessageRow, SessionRow, utcnow

_SESSION_PK = "sessions_pkey"


@dataclass(frozen=True, slots=True)
class StoredMessage:
    seq: int
    message: dict[str, Any]  # the wire message, verbatim
    tokens: int
    generation: int
    archived_by_job: str | None = None
    archived_at: datetime | None = None


def effective_tokens(row: SessionRow) -> int:
    """The gateway's prompt_tokens when it reported them for this version, else our own count."""
    if row.reported_tokens is not None and row.reported_version == row.version:
        return row.reported_tokens
    return row.token_total


def put_snapshot(
    db: Database,
    *,
    session_id: str,
    model: str,
    context_length: int,
    messages: Sequence[dict[str, Any]],
    token_counts: Sequence[int],
    prompt_tokens: int | None = None,
    if_match: int | None = None,
    callback_url: str | None = None,
) -> SessionRow:
    """Replace the active transcript (the old one is archived, not deleted); create if new."""
    for attempt in range(2):
        try:
            with db.write() as s:
                return write_snapshot(
                    s, lock_session(s, session_id), session_id=session_id, model=model,
                    context_length=context_length, messages=messages, token_counts=token_counts,
                    prompt_tokens=prompt_tokens, if_match=if_match, callback_url=callback_url,
                )  # fmt: skip
        except IntegrityError as exc:
            if attempt or not first_put_raced(exc):
                raise
    raise AssertionError("unreachable")


def append_messages(
    db: Database,
    *,
    session_id: str,
    messages: Sequence[dict[str, Any]],
    token_counts: Sequence[int],
    prompt_tokens: int | None = None,
    if_match: int | None = None,
) -> SessionRow:
    """Append turns to the active transcript; bumps ``version`` but not ``rewrite_count``."""
    with db.write() as s:
        return write_append(
            s, lock_session(s, session_id), session_id=session_id, messages=messages,
            token_counts=token_counts, prompt_tokens=prompt_tokens, if_match=if_match,
        )  # fmt: skip


def first_put_raced(exc: IntegrityError) -> bool:
    """Two first PUTs of one session raced on PostgreSQL: the loser may run again, and then
    finds (and locks) the winner's row."""
    return violated_constraint(exc) == _SESSION_PK


def write_snapshot(
    s: Session,
    row: SessionRow | None,
    *,
    session_id: str,
    model: str,
    context_length: int,
    messages: Sequence[dict[str, Any]],
    token_counts: Sequence[int],
    prompt_tokens: int | None = None,
    if_match: int | None = None,
    callback_url: str | None = None,
) -> SessionRow:
    """``put_snapshot`` inside the caller's transaction; ``row`` is ``lock_session``'s."""
    _check_counts(messages, token_counts)
    _check_if_match(row, if_match)
    if row is None:
        row = _new_session(s, session_id, model, context_length)
    else:
        _archive_active(s, session_id)
        row.version += 1
        row.rewrite_count += 1
        row.token_total, row.message_count = 0, 0
    row.model, row.context_length = model, context_length
    if callback_url is not None:
        row.callback_url = callback_url
    _insert_messages(s, row, messages, token_counts)
    _touch(row, prompt_tokens)
    return row


def write_append(
    s: Session,
    row: SessionRow | None,
    *,
    session_id: str,
    messages: Sequence[dict[str, Any]],
    token_counts: Sequence[int],
    prompt_tokens: int | None = None,
    if_match: int | None = None,
) -> SessionRow:
    """``append_messages`` inside the caller's transaction; ``row`` is ``lock_session``'s."""
    _check_counts(messages, token_counts)
    if row is None:
        raise SessionNotFoundError(session_id)
    _check_if_match(row, if_match)
    row.version += 1
    _insert_messages(s, row, messages, token_counts)
    _touch(row, prompt_tokens)
    return row


def get_session(db: Database, *, session_id: str) -> SessionRow:
    with db.read() as s:
        row = s.get(SessionRow, session_id)
        if row is None:
            raise SessionNotFoundError(session_id)
        return row


def active_messages(
    db: Database, *, session_id: str, upto_seq: int | None = None
) -> list[StoredMessage]:
    """The active transcript in order (optionally only up to ``upto_seq``)."""
    with db.read() as s:
        _require_session(s, session_id)
        return load_active(s, session_id=session_id, upto_seq=upto_seq)


def session_transcript(db: Database, *, session_id: str) -> tuple[SessionRow, list[StoredMessage]]:
    """The session and its active transcript, consistent with each other (the session row is
    share-locked, so no write lands between the two reads)."""
    with db.read() as s:
        query = select(SessionRow).where(SessionRow.id == session_id).with_for_update(read=True)
        row = s.scalars(query).one_or_none()
        if row is None:
            raise SessionNotFoundError(session_id)
        return row, load_active(s, session_id=session_id)


def archived_messages(db: Database, *, session_id: str) -> list[StoredMessage]:
    """Every message ever replaced, batch by batch, each with its generation."""
    with db.read() as s:
        _require_session(s, session_id)
        query = (
            select(MessageRow)
            .where(MessageRow.session_id == session_id, MessageRow.active.is_(False))
            .order_by(MessageRow.archived_at, MessageRow.seq)
        )
        return [_stored(m) for m in s.scalars(query)]


# ---------------------------------------------------------------------------------------------
# helpers shared with jobs.py (they run inside the caller's transaction)


def lock_session(s: Session, session_id: str) -> SessionRow | None:
    """The session row, locked for the rest of the transaction (FOR UPDATE on PostgreSQL;
    SQLite's BEGIN IMMEDIATE already holds the database's one write lock)."""
    query = select(SessionRow).where(SessionRow.id == session_id).with_for_update()
    return s.scalars(query).one_or_none()


def load_active(s: Session, *, session_id: str, upto_seq: int | None = None) -> list[StoredMessage]:
    query = select(MessageRow).where(
        MessageRow.session_id == session_id, MessageRow.active.is_(True)
    )
    if upto_seq is not None:
        query = query.where(MessageRow.seq <= upto_seq)
    return [_stored(m) for m in s.scalars(query.order_by(MessageRow.seq))]


def insert_rows(
    s: Session,
    row: SessionRow,
    messages: Sequence[dict[str, Any]],
    token_counts: Sequence[int],
    *,
    generation: int = 0,
) -> None:
    """Insert messages with fresh seqs from the session's counter (the row must be locked)."""
    if not messages:
        return
    now = utcnow()
    values = [
        {
            "session_id": row.id,
            "seq": row.next_seq + i,
            "role": str(message.get("role")),
            "data": dict(message),
            "tokens": int(tokens),
            "active": True,
            "generation": generation,
            "created_at": now,
        }
        for i, (message, tokens) in enumerate(zip(messages, token_counts, strict=True))
    ]
    s.execute(insert(MessageRow), values)
    row.next_seq += len(values)


def _require_session(s: Session, session_id: str) -> None:
    if s.get(SessionRow, session_id) is None:
        raise SessionNotFoundError(session_id)


def _new_session(s: Session, session_id: str, model: str, context_length: int) -> SessionRow:
    row = SessionRow(
        id=session_id,
        model=model,
        context_length=context_length,
        version=1,
        rewrite_count=0,
        next_seq=1,
        token_total=0,
        message_count=0,
        compaction_count=0,
        ineffective_count=0,
    )
    s.add(row)
    s.flush()  # the row must exist before its messages (foreign key); a racing twin fails here
    return row


def _archive_active(s: Session, session_id: str) -> None:
    archive_active(s, session_id=session_id)


def _insert_messages(
    s: Session, row: SessionRow, messages: Sequence[dict[str, Any]], token_counts: Sequence[int]
) -> None:
    insert_rows(s, row, messages, token_counts)
    row.token_total += sum(token_counts)
    row.message_count += len(messages)


def _touch(row: SessionRow, prompt_tokens: int | None) -> None:
    now = utcnow()
    row.updated_at = row.last_activity_at = now
    if prompt_tokens is not None:
        row.reported_tokens, row.reported_version = prompt_tokens, row.version


def _check_if_match(row: SessionRow | None, if_match: int | None) -> None:
    if if_match is None:
        return
    current = None if row is None else row.version
    if current != if_match:
        raise VersionConflictError(current, if_match)


def _check_counts(messages: Sequence[object], token_counts: Sequence[int]) -> None:
    if len(messages) != len(token_counts):
        raise ValueError(f"{len(messages)} messages but {len(token_counts)} token counts")


def _stored(m: MessageRow) -> StoredMessage:
    return StoredMessage(
        seq=m.seq,
        message=m.data,
        tokens=m.tokens,
        generation=m.generation,
        archived_by_job=m.archived_by_job,
        archived_at=m.archived_at,
    )
