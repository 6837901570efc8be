"""Archiving messages and keeping their search text in step, inside the caller's transaction.

Every path that archives goes through ``archive_active`` (a snapshot PUT, a compaction's
write-back, a revert) and every path that brings a message back or erases it removes its text
(``unindex``, and ``ON DELETE CASCADE`` from ``messages``), so ``archive_text`` holds a row for
exactly the archived messages, and each distinct text of a session's archive is indexed once
(models.ArchiveTextRow): a gateway that PUTs its whole transcript every turn pays for the new
turns' text, not for the whole transcript again, and a search finds each text once. The text is extracted here in Python rather than by database triggers:
it decodes the JSON inside tool arguments and outputs (search_text.py), which SQL would have to
do twice, once per dialect, and a trigger that met malformed JSON would fail the write-back.
On SQLite, ``index_messages`` writes the new texts to the FTS5 table itself, in one batch in
the same transaction (an insert trigger made FTS5 write a segment per row: migration 0005);
deletes and body updates follow ``archive_text`` through triggers (migration 0003).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, bindparam, delete, insert, select, text, update
from sqlalchemy.orm import Session

from worker.compressor import formats
from worker.store.models import (
    SQLITE_SEARCH_TABLE,
    ArchiveKeyRow,
    ArchiveTextRow,
    Base,
    DerivedText,
    MessageRow,
    SessionRow,
    utcnow,
)
from worker.store.search_text import (
    MAX_INDEXED_CHARS,
    searchable_text,
    text_digest,
    tool_name_of,
    tool_names_by_call_id,
)

SEQ_BITS = 32  # archive_text.id = archive key << SEQ_BITS | seq
MAX_SEQ = (1 << SEQ_BITS) - 1
_CHUNK = 500  # ids or digests a statement, under every driver's parameter limit
# Core statements: the ORM's bulk insert splits the rows into one batch per set of non-null
# columns, and builds them again.
_INSERT_TEXT = insert(Base.metadata.tables[ArchiveTextRow.__tablename__])
_INSERT_FTS = text(
    f"INSERT INTO {SQLITE_SEARCH_TABLE}(rowid, body) VALUES (:id, :body)"
).bindparams(bindparam("body", type_=DerivedText()))  # as archive_text stores it


def archive_row_id(key: int, seq: int) -> int:
    if not 0 <= seq <= MAX_SEQ:
        raise ValueError(f"seq {seq} is outside the archive index's range 0..{MAX_SEQ}")
    return (key << SEQ_BITS) | seq


@dataclass(frozen=True, slots=True)
class SearchText:
    """What the archive indexes of one message: made from the message alone."""

    tool_name: str | None
    digest: str  # of role, tool name and text
    body: str


def search_texts(rows: Iterable[tuple[int, Any]], fmt: str = formats.CHAT) -> dict[int, SearchText]:
    """The search text of one batch of messages given as (seq, stored row) in the session's
    wire format ``fmt``, by seq.

    A worker makes them for the transcript it claimed before it takes the write lock to
    archive it (``archive_active(prepared=...)``); a tool result is named by its call, which
    must be in the same batch.
    """
    rows = list(rows)
    if fmt == formats.CHAT:
        by_call_id = tool_names_by_call_id([d for _, d in rows if isinstance(d, Mapping)])
        return {seq: _search_text(data, by_call_id) for seq, data in rows}
    known = formats.check_format(fmt)
    chats = {seq: formats.chat_form(known, data) for seq, data in rows}
    by_call_id = tool_names_by_call_id([m for chat in chats.values() for m in chat])
    return {
        seq: _joined(formats.row_role(known, data), chats[seq], by_call_id) for seq, data in rows
    }


def _joined(
    role: str, chat: Sequence[Mapping[str, Any]], by_call_id: Mapping[str, str]
) -> SearchText:
    """One row's search text from the chat messages of its records."""
    texts = [_search_text(m, by_call_id) for m in chat]
    tool_name = next((t.tool_name for t in texts if t.tool_name), None)
    body = "\n".join(t.body for t in texts if t.body)[:MAX_INDEXED_CHARS]
    return SearchText(tool_name, text_digest(role, tool_name, body), body)


def session_format(s: Session, session_id: str) -> str:
    return s.scalar(select(SessionRow.format).where(SessionRow.id == session_id)) or formats.CHAT


def archive_active(
    s: Session,
    *,
    session_id: str,
    upto_seq: int | None = None,
    job_id: str | None = None,
    generation: int | None = None,
    now: datetime | None = None,
    prepared: Mapping[int, SearchText] | None = None,
) -> int:
    """Archive the session's active messages (those up to ``upto_seq``, or of one
    ``generation``) and index their text; returns how many. The session row must be locked.

    ``prepared`` (by seq) is used when it covers exactly the messages archived: a message's
    text never changes under its seq, so only their ids are read; else the texts are read.
    """
    where = [MessageRow.session_id == session_id, MessageRow.active.is_(True)]
    if upto_seq is not None:
        where.append(MessageRow.seq <= upto_seq)
    if generation is not None:
        where.append(MessageRow.generation == generation)
    rows = _archived(s, session_id, where, prepared)
    if not rows:
        return 0
    s.execute(
        update(MessageRow)
        .where(*where)
        .values(active=False, archived_by_job=job_id, archived_at=now or utcnow())
    )
    _write_index(s, session_id, rows)
    return len(rows)


def _archived(
    s: Session,
    session_id: str,
    where: Sequence[ColumnElement[bool]],
    prepared: Mapping[int, SearchText] | None,
) -> list[tuple[int, int, SearchText]]:
    """(id, seq, search text) of the messages about to be archived, in seq order."""
    if prepared is not None:
        query = select(MessageRow.id, MessageRow.seq).where(*where).order_by(MessageRow.seq)
        ids = s.execute(query).all()
        if len(ids) == len(prepared) and all(seq in prepared for _, seq in ids):
            return [(message_id, seq, prepared[seq]) for message_id, seq in ids]
    with_data = select(MessageRow.id, MessageRow.seq, MessageRow.data).where(*where)
    found = s.execute(with_data.order_by(MessageRow.seq)).all()
    texts = search_texts(((row.seq, row.data) for row in found), session_format(s, session_id))
    return [(row.id, row.seq, texts[row.seq]) for row in found]


def index_messages(s: Session, *, session_id: str, rows: Sequence[tuple[int, int, Any]]) -> None:
    """Write the search text of archived messages given as (id, seq, data) rows; a text the
    session already holds is written as a copy (no body, nothing to index again)."""
    fmt = session_format(s, session_id)
    texts = search_texts(((seq, data) for _, seq, data in rows), fmt)
    _write_index(s, session_id, [(message_id, seq, texts[seq]) for message_id, seq, _ in rows])


def _write_index(s: Session, session_id: str, rows: Sequence[tuple[int, int, SearchText]]) -> None:
    if not rows:
        return
    key = archive_key(s, session_id)
    entries = [_entry(key, session_id, row) for row in rows]
    held = held_digests(s, session_id, {e["digest"] for e in entries})
    for entry in entries:
        if entry["digest"] in held:
            entry["body"] = None
        else:
            held.add(entry["digest"])
    conn = s.connection()
    conn.execute(_INSERT_TEXT, entries)
    _index_for_search(conn, entries)


def _index_for_search(conn: Connection, entries: Sequence[Mapping[str, Any]]) -> None:
    """SQLite: the new texts into the FTS5 table, one batch. PostgreSQL's GIN index is kept by
    the database."""
    if conn.dialect.name != "sqlite":
        return
    fresh = [{"id": e["id"], "body": e["body"]} for e in entries if e["body"] is not None]
    if fresh:
        conn.execute(_INSERT_FTS, fresh)


def _search_text(data: Any, by_call_id: Mapping[str, str]) -> SearchText:
    message: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    tool_name = tool_name_of(message, by_call_id)
    tool_name = tool_name[:200] if tool_name else None
    body = searchable_text(message, tool_name=tool_name)
    return SearchText(tool_name, text_digest(str(message.get("role")), tool_name, body), body)


def _entry(key: int, session_id: str, row: tuple[int, int, SearchText]) -> dict[str, Any]:
    message_id, seq, text = row
    return {
        "id": archive_row_id(key, seq),
        "message_id": message_id,
        "session_id": session_id,
        "seq": seq,
        "tool_name": text.tool_name,
        "digest": text.digest,
        "body": text.body,
    }


def held_digests(s: Session, session_id: str, digests: set[str]) -> set[str]:
    """Those of ``digests`` whose text the session's index already holds."""
    out: set[str] = set()
    wanted = sorted(digests)
    for start in range(0, len(wanted), _CHUNK):
        out.update(
            s.scalars(
                select(ArchiveTextRow.digest).where(
                    ArchiveTextRow.session_id == session_id,
                    ArchiveTextRow.body.is_not(None),
                    ArchiveTextRow.digest.in_(wanted[start : start + _CHUNK]),
                )
            )
        )
    return out


def unindex(s: Session, *, session_id: str, message_ids: Sequence[int]) -> None:
    """Drop the search text of messages that are active again. A text one of them held and
    another archived copy still has is handed to that copy (the oldest)."""
    released: set[str] = set()
    for start in range(0, len(message_ids), _CHUNK):
        chunk = message_ids[start : start + _CHUNK]
        released.update(
            s.scalars(
                select(ArchiveTextRow.digest).where(
                    ArchiveTextRow.message_id.in_(chunk), ArchiveTextRow.body.is_not(None)
                )
            )
        )
        s.execute(delete(ArchiveTextRow).where(ArchiveTextRow.message_id.in_(chunk)))
    for digest in sorted(released):
        _hand_over(s, session_id, digest)


def _hand_over(s: Session, session_id: str, digest: str) -> None:
    copy = s.execute(
        select(ArchiveTextRow.id, ArchiveTextRow.tool_name, MessageRow.data)
        .join(MessageRow, MessageRow.id == ArchiveTextRow.message_id)
        .where(ArchiveTextRow.session_id == session_id, ArchiveTextRow.digest == digest)
        .order_by(ArchiveTextRow.seq)
        .limit(1)
    ).one_or_none()
    if copy is None:
        return  # no archived copy left: the text is gone from the archive
    fmt = session_format(s, session_id)
    if fmt == formats.CHAT:
        message = copy.data if isinstance(copy.data, Mapping) else {}
        body = searchable_text(message, tool_name=copy.tool_name)
    else:
        body = search_texts([(0, copy.data)], fmt)[0].body
    s.execute(update(ArchiveTextRow).where(ArchiveTextRow.id == copy.id).values(body=body))


def archive_key(s: Session, session_id: str) -> int:
    """The session's archive key, made on first use."""
    key = s.scalar(select(ArchiveKeyRow.id).where(ArchiveKeyRow.session_id == session_id))
    if key is None:
        key = s.execute(
            insert(ArchiveKeyRow).values(session_id=session_id).returning(ArchiveKeyRow.id)
        ).scalar_one()
    return int(key)


def find_archive_key(s: Session, session_id: str) -> int | None:
    return s.scalar(select(ArchiveKeyRow.id).where(ArchiveKeyRow.session_id == session_id))
