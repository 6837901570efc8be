"""Sessions and their messages: snapshots, appends and reads. Each function taking ``db`` is
one transaction; those taking ``s`` run inside the caller's.

Token counts arrive with the messages (counted once, at ingestion, by the caller) and the
session's ``token_total`` and ``message_count`` are kept in step incrementally, so no read has to
sum a transcript. Nothing here deletes a message: a snapshot archives the previous active set
(and indexes its text for search: worker/store/archive_index.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from worker.compressor import formats
from worker.compressor.formats import CHAT
from worker.store.archive_index import archive_active
from worker.store.db import Database
from worker.store.errors import (
    SessionNotFoundError,
    VersionConflictError,
    violated_constraint,
)
from worker.store.models import OPEN_JOB_STATUSES, Base, JobRow, MessageRow, SessionRow, utcnow

_SESSION_PK = "sessions_pkey"


@dataclass(frozen=True, slots=True)
class StoredMessage:
    seq: int
    message: dict[str, Any]  # the wire message, verbatim
    tokens: int
    generation: int
    archived_by_job: str | None = None
    archived_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SessionState:
    """A session row's columns that a gateway's write reads under its lock and leaves behind:
    what the If-Match check, the hygiene decision and the answer need."""

    id: str
    model: str
    context_length: int
    version: int
    rewrite_count: int
    next_seq: int
    token_total: int
    message_count: int
    reported_tokens: int | None
    reported_version: int | None
    ineffective_count: int
    thrash_until_tokens: int | None
    format: str  # the wire format its messages are in (worker.compressor.formats)


# Built once: a statement made per request costs more CPU to build and key for the compiled
# cache than to run. An UPDATE or INSERT without .values() sets the columns its parameters name.
_SESSIONS = Base.metadata.tables[SessionRow.__tablename__]
_JOBS = Base.metadata.tables[JobRow.__tablename__]
_THIS_SESSION = _SESSIONS.c.id == bindparam("this_session")
_LOCK_STATE = (
    select(*(_SESSIONS.c[f.name] for f in fields(SessionState)))
    .where(_THIS_SESSION)
    .with_for_update()
)
_INSERT_SESSION = insert(_SESSIONS)
# The open job is read by the UPDATE that writes the counters, a statement after the lock (so
# it sees every job committed before it, as a SELECT of its own would): one round trip fewer.
# Not correlated to the updated row: RETURNING renders column names without their table, and
# "session_id = id" inside the subquery would compare two columns of jobs.
_OPEN_JOB = (
    select(_JOBS.c.id)
    .where(_JOBS.c.session_id == bindparam("this_session"), _JOBS.c.status.in_(OPEN_JOB_STATUSES))
    .scalar_subquery()
)
_UPDATE_SESSION = update(_SESSIONS).where(_THIS_SESSION).returning(_OPEN_JOB)
_INSERT_MESSAGES = insert(Base.metadata.tables[MessageRow.__tablename__])


@dataclass(frozen=True, slots=True)
class Written:
    """What a gateway's write left: the session's state, and its open job (queued or running:
    at most one, a unique index says so), read in the same transaction after the write."""

    state: SessionState
    open_job_id: str | None


def effective_tokens(row: SessionRow | SessionState) -> int:
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
    format: str = CHAT,
) -> SessionState:
    """Replace the active transcript (the old one is archived, not deleted); create if new.
    ``messages``: as stored (``formats.rows_of``), in ``format``."""
    for attempt in range(2):
        try:
            with db.write() as s:
                return write_snapshot(
                    s, lock_state(s, session_id), session_id=session_id, model=model,
                    context_length=context_length, messages=messages, token_counts=token_counts,
                    prompt_tokens=prompt_tokens, if_match=if_match, callback_url=callback_url,
                    format=format,
                ).state  # fmt: skip
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
) -> SessionState:
    """Append turns to the active transcript; bumps ``version`` but not ``rewrite_count``."""
    with db.write() as s:
        return write_append(
            s, lock_state(s, session_id), session_id=session_id, messages=messages,
            token_counts=token_counts, prompt_tokens=prompt_tokens, if_match=if_match,
        ).state  # fmt: skip


def first_put_raced(exc: IntegrityError) -> bool:
    """Two first PUTs of one session raced on PostgreSQL: the loser may run again, and then
    finds (and locks) the winner's row."""
    return violated_constraint(exc) == _SESSION_PK


# A gateway's write is a handful of Core statements on the transaction's connection: the lock
# (one SELECT), the messages (one INSERT), the session row (one UPDATE that also returns the
# open job, or an INSERT when new).
# The ORM's unit of work would flush the row twice around the INSERT and costs more CPU than
# the statements themselves.


def lock_state(s: Session, session_id: str) -> SessionState | None:
    """The session's state, its row locked for the rest of the transaction (FOR UPDATE on
    PostgreSQL; SQLite's BEGIN IMMEDIATE already holds the database's one write lock)."""
    found = s.connection().execute(_LOCK_STATE, {"this_session": session_id}).first()
    return None if found is None else SessionState(*found)


def write_snapshot(
    s: Session,
    state: SessionState | None,
    *,
    session_id: str,
    model: str,
    context_length: int,
    messages: Sequence[dict[str, Any]],
    token_counts: Sequence[int],
    prompt_tokens: int | None = None,
    if_match: int | None = None,
    callback_url: str | None = None,
    format: str = CHAT,
) -> Written:
    """``put_snapshot`` inside the caller's transaction; ``state`` is ``lock_state``'s. A
    snapshot sets the session's format (its messages are all in it)."""
    _check_counts(messages, token_counts)
    _check_if_match(state, if_match)
    now = utcnow()
    totals = {"token_total": sum(token_counts), "message_count": len(messages)}
    values: dict[str, Any] = {
        "model": model, "context_length": context_length, "format": format, **totals,
    }  # fmt: skip
    if callback_url is not None:
        values["callback_url"] = callback_url
    conn = s.connection()
    if state is None:
        # The row must exist before its messages (foreign key); a racing twin fails here.
        values |= {"version": 1, "rewrite_count": 0, "next_seq": 1 + len(messages)}
        values |= _reported(1, prompt_tokens)
        stamps = {"created_at": now, "updated_at": now, "last_activity_at": now}
        conn.execute(_INSERT_SESSION, {"id": session_id, **values, **stamps})
        _insert_turns(conn, session_id, 1, messages, token_counts, now, format)
        return Written(_state_of(session_id, values), open_job_id=None)  # no job without it
    archive_active(s, session_id=session_id, now=now)
    version = state.version + 1
    values |= {"version": version, "rewrite_count": state.rewrite_count + 1,
               "next_seq": state.next_seq + len(messages)}  # fmt: skip
    values |= _reported(version, prompt_tokens)
    _insert_turns(conn, session_id, state.next_seq, messages, token_counts, now, format)
    open_job_id = _update(conn, session_id, values, now)
    state = replace(state, **{k: v for k, v in values.items() if k != "callback_url"})
    return Written(state, open_job_id)


def write_append(
    s: Session,
    state: SessionState | None,
    *,
    session_id: str,
    messages: Sequence[dict[str, Any]],
    token_counts: Sequence[int],
    prompt_tokens: int | None = None,
    if_match: int | None = None,
) -> Written:
    """``append_messages`` inside the caller's transaction; ``state`` is ``lock_state``'s."""
    _check_counts(messages, token_counts)
    if state is None:
        raise SessionNotFoundError(session_id)
    _check_if_match(state, if_match)
    now = utcnow()
    version = state.version + 1
    values: dict[str, Any] = {
        "version": version,
        "next_seq": state.next_seq + len(messages),
        "token_total": state.token_total + sum(token_counts),
        "message_count": state.message_count + len(messages),
    } | _reported(version, prompt_tokens)
    conn = s.connection()
    _insert_turns(conn, session_id, state.next_seq, messages, token_counts, now, state.format)
    open_job_id = _update(conn, session_id, values, now)
    return Written(replace(state, **values), open_job_id)


def _reported(version: int, prompt_tokens: int | None) -> dict[str, int]:
    """The gateway's count describes the version this write makes (none: the last one stays,
    and ``effective_tokens`` sees it describes an older version)."""
    if prompt_tokens is None:
        return {}
    return {"reported_tokens": prompt_tokens, "reported_version": version}


def _insert_turns(
    conn: Connection,
    session_id: str,
    first_seq: int,
    messages: Sequence[dict[str, Any]],
    token_counts: Sequence[int],
    now: datetime,
    format: str,
) -> None:
    if messages:
        values = message_values(
            session_id, first_seq, messages, token_counts, now=now, format=format
        )
        conn.execute(_INSERT_MESSAGES, values)


def _update(conn: Connection, session_id: str, values: dict[str, Any], now: datetime) -> str | None:
    """Write the session's row; its open job's id."""
    stamps = {"updated_at": now, "last_activity_at": now}
    params = {"this_session": session_id, **values, **stamps}
    open_job_id: str | None = conn.execute(_UPDATE_SESSION, params).scalar_one()
    return open_job_id


def _state_of(session_id: str, values: dict[str, Any]) -> SessionState:
    """The state of a session just created with ``values``."""
    return SessionState(
        id=session_id, model=values["model"], context_length=values["context_length"],
        version=values["version"], rewrite_count=values["rewrite_count"],
        next_seq=values["next_seq"], token_total=values["token_total"],
        message_count=values["message_count"], reported_tokens=values.get("reported_tokens"),
        reported_version=values.get("reported_version"), ineffective_count=0,
        thrash_until_tokens=None, format=values["format"],
    )  # fmt: skip


def get_session(db: Database, *, session_id: str) -> SessionRow:
    with db.read() as s:
        row = s.get(SessionRow, session_id)
        if row is None:
            raise SessionNotFoundError(session_id)
        return row


def callback_url(db: Database, *, session_id: str) -> str | None:
    """The session's callback URL (one column: a job's end asks it, not the whole row)."""
    with db.read() as s:
        found = s.execute(
            select(SessionRow.callback_url).where(SessionRow.id == session_id)
        ).one_or_none()
    if found is None:
        raise SessionNotFoundError(session_id)
    url: str | None = found.callback_url
    return url


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
    values = message_values(
        row.id, row.next_seq, messages, token_counts, generation=generation, format=row.format
    )
    s.execute(insert(MessageRow), values)
    row.next_seq += len(values)


def message_values(
    session_id: str,
    first_seq: int,
    messages: Sequence[dict[str, Any]],
    token_counts: Sequence[int],
    *,
    generation: int = 0,
    now: datetime | None = None,
    format: str = CHAT,
) -> list[dict[str, Any]]:
    """The ``messages`` rows of active messages numbered from ``first_seq``; each is filed
    under its role (``formats.row_role``: in OpenAI Chat form, the message's own)."""
    now = now or utcnow()
    fmt = formats.check_format(format)
    return [
        {
            "session_id": session_id,
            "seq": first_seq + i,
            "role": str(message.get("role")) if fmt == CHAT else formats.row_role(fmt, message),
            "data": dict(message),
            "tokens": int(tokens),
            "active": True,
            "generation": generation,
            "created_at": now,
        }
        for i, (message, tokens) in enumerate(zip(messages, token_counts, strict=True))
    ]


def _require_session(s: Session, session_id: str) -> None:
    if s.get(SessionRow, session_id) is None:
        raise SessionNotFoundError(session_id)


def _check_if_match(state: SessionState | None, if_match: int | None) -> None:
    if if_match is None:
        return
    current = None if state is None else state.version
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
