"""Archive search: the searchable text of every archived message, and its index; an index of
what each compaction archived.

``archive_text`` holds it (written with the archiving, in the same transaction; a text the
session's archive already holds is written as a copy without a body); SQLite indexes
it in an FTS5 table with the trigram tokenizer (SQLite 3.34+), kept in step by triggers;
PostgreSQL in one GIN index over (session_id, body): pg_trgm's trigrams of the body, btree_gin's
session id, so a lookup meets only the session's own rows (both extensions ship with
PostgreSQL's contrib and are trusted: the database owner may create them, which this migration
does when they are missing). Existing archived messages are backfilled.

Revision ID: 0003
Revises: 0002
Create Date: 2026-03-01
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from worker.compressor.jsonvalue import text_without_lone_surrogates
from worker.store.search_text import (
    searchable_text,
    text_digest,
    tool_name_of,
    tool_names_by_call_id,
)

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SEQ_BITS = 32
BACKFILL_BATCH = 2_000
MIN_SQLITE = (3, 34, 0)  # the FTS5 trigram tokenizer

# Contentless (the text stays in archive_text alone), and only rows with a body are indexed: a
# later copy of a text has none until it takes the text over from a restored holder (the
# update trigger).
_SQLITE_FTS = [
    "CREATE VIRTUAL TABLE archive_fts USING fts5(body, content='', tokenize='trigram')",
    "CREATE TRIGGER archive_text_ai AFTER INSERT ON archive_text WHEN new.body IS NOT NULL "
    "BEGIN INSERT INTO archive_fts(rowid, body) VALUES (new.id, new.body); END",
    "CREATE TRIGGER archive_text_ad AFTER DELETE ON archive_text WHEN old.body IS NOT NULL "
    "BEGIN INSERT INTO archive_fts(archive_fts, rowid, body) "
    "VALUES ('delete', old.id, old.body); END",
    "CREATE TRIGGER archive_text_au AFTER UPDATE OF body ON archive_text BEGIN "
    "INSERT INTO archive_fts(archive_fts, rowid, body) "
    "SELECT 'delete', old.id, old.body WHERE old.body IS NOT NULL; "
    "INSERT INTO archive_fts(rowid, body) SELECT new.id, new.body WHERE new.body IS NOT NULL; "
    "END",
]

# Lightweight tables for the backfill: this migration must not change with the models.
_messages = sa.table(
    "messages",
    sa.column("id", sa.BigInteger()),
    sa.column("session_id", sa.String()),
    sa.column("seq", sa.BigInteger()),
    sa.column("data", sa.JSON()),
    sa.column("active", sa.Boolean()),
)
_keys = sa.table("archive_keys", sa.column("id", sa.BigInteger()), sa.column("session_id"))
_text = sa.table(
    "archive_text",
    sa.column("id", sa.BigInteger()),
    sa.column("message_id", sa.BigInteger()),
    sa.column("session_id", sa.String()),
    sa.column("seq", sa.BigInteger()),
    sa.column("tool_name", sa.String()),
    sa.column("digest", sa.String()),
    sa.column("body", sa.Text()),
)


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite" and sqlite3.sqlite_version_info < MIN_SQLITE:
        raise RuntimeError(
            f"archive search needs SQLite 3.34+ (FTS5 trigram); this Python links "
            f"{sqlite3.sqlite_version}"
        )
    if dialect == "postgresql":
        op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        op.execute("CREATE EXTENSION IF NOT EXISTS btree_gin")
    op.create_table(
        "archive_keys",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column(
            "session_id",
            sa.String(255),
            sa.ForeignKey("sessions.id", ondelete="CASCADE"),
            nullable=False,
            unique=True,
        ),
    )
    op.create_table(
        "archive_text",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=False,
        ),
        sa.Column(
            "message_id",
            sa.BigInteger(),
            sa.ForeignKey("messages.id", ondelete="CASCADE"),
            nullable=False,
            unique=True,
        ),
        sa.Column(
            "session_id",
            sa.String(255),
            sa.ForeignKey("sessions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("tool_name", sa.String(200), nullable=True),
        sa.Column("digest", sa.String(32), nullable=False),
        sa.Column("body", sa.Text(), nullable=True),
        sa.UniqueConstraint("session_id", "seq", name="uq_archive_text_session_seq"),
    )
    op.create_index(
        "uq_archive_text_session_digest",
        "archive_text",
        ["session_id", "digest"],
        unique=True,
        sqlite_where=sa.text("body IS NOT NULL"),
        postgresql_where=sa.text("body IS NOT NULL"),
    )
    op.create_index(
        "ix_messages_archived_by_job",
        "messages",
        ["archived_by_job"],
        sqlite_where=sa.text("archived_by_job IS NOT NULL"),
        postgresql_where=sa.text("archived_by_job IS NOT NULL"),
    )
    if dialect == "sqlite":
        for statement in _SQLITE_FTS:
            op.execute(statement)
    backfill(op.get_bind())
    if dialect == "postgresql":  # after the backfill: one index build, not a row at a time
        create_trigram_index(op.get_bind())


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER archive_text_au")
        op.execute("DROP TRIGGER archive_text_ad")
        op.execute("DROP TRIGGER archive_text_ai")
        op.execute("DROP TABLE archive_fts")
    op.drop_table(
        "archive_text"
    )  # its GIN index goes with it; the extensions stay (others may use them)
    op.drop_table("archive_keys")
    op.drop_index("ix_messages_archived_by_job", table_name="messages")


def create_trigram_index(conn: sa.Connection) -> None:
    """The GIN index. pg_trgm's operator class is named with its schema: the extension may live
    outside the search_path (say in ``public``, with the tables in a schema of their own);
    btree_gin's is the default for the column's type, found wherever it lives."""
    trigram_ops = f"{_extension_schema(conn, 'pg_trgm')}.gin_trgm_ops"
    op.execute(
        "CREATE INDEX ix_archive_text_session_body_trgm ON archive_text "
        f"USING gin (session_id, body {trigram_ops})"
    )


def _extension_schema(conn: sa.Connection, name: str) -> str:
    schema = conn.execute(
        sa.text(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
            "WHERE e.extname = :name"
        ),
        {"name": name},
    ).scalar_one()
    return str(conn.dialect.identifier_preparer.quote_identifier(schema))


def backfill(conn: sa.Connection) -> None:
    """Index the messages archived before this migration, session by session."""
    sessions = conn.execute(
        sa.select(_messages.c.session_id)
        .where(_messages.c.active.is_(False))
        .group_by(_messages.c.session_id)
        .order_by(_messages.c.session_id)
    ).scalars()
    for session_id in list(sessions):
        key = conn.execute(
            sa.insert(_keys).values(session_id=session_id).returning(_keys.c.id)
        ).scalar_one()
        _backfill_session(conn, session_id, int(key))


def _backfill_session(conn: sa.Connection, session_id: str, key: int) -> None:
    by_call_id: dict[str, str] = {}  # tool calls seen so far: a result names its tool
    held: set[str] = set()  # digests of the texts indexed so far: later copies hold no body
    after = -1
    while True:
        rows = conn.execute(
            sa.select(_messages.c.id, _messages.c.seq, _messages.c.data)
            .where(
                _messages.c.session_id == session_id,
                _messages.c.active.is_(False),
                _messages.c.seq > after,
            )
            .order_by(_messages.c.seq)
            .limit(BACKFILL_BATCH)
        ).all()
        if not rows:
            return
        messages = [data if isinstance(data, Mapping) else {} for _, _, data in rows]
        by_call_id.update(tool_names_by_call_id(messages))
        values = [_row(session_id, key, r, by_call_id) for r in rows]
        for value in values:
            if value["digest"] in held:
                value["body"] = None
            held.add(value["digest"])
        conn.execute(sa.insert(_text), values)
        after = rows[-1].seq


def _row(
    session_id: str, key: int, row: sa.Row[Any, Any, Any], by_call_id: Mapping[str, str]
) -> dict[str, Any]:
    message_id, seq, data = row
    message: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    tool_name = tool_name_of(message, by_call_id)
    tool_name = tool_name[:200] if tool_name else None
    body = searchable_text(message, tool_name=tool_name)
    return {
        "id": (key << SEQ_BITS) | seq,
        "message_id": message_id,
        "session_id": session_id,
        "seq": seq,
        "tool_name": tool_name,
        "digest": text_digest(str(message.get("role")), tool_name, body),
        # What PostgreSQL cannot store (as DerivedText in the models does).
        "body": text_without_lone_surrogates(body.replace("\x00", "\ufffd")),
    }
