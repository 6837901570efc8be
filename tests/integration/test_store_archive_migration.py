"""Migration 0003 on a database that already has archived messages: the backfill indexes them,
down and up again work, on SQLite and on PostgreSQL (in a schema of its own)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import insert, inspect, text

from tests.support.migrations import alembic, empty_url
from worker.store.archive import search_archive
from worker.store.db import Database, make_engine
from worker.store.models import MessageRow, SessionRow, utcnow
from worker.store.search_text import parse_query

pytestmark = pytest.mark.integration
__all__ = ["empty_url"]  # a fixture, imported for pytest


TOOL_OUTPUT = json.dumps({"output": 'File "/srv/app/db.py", line 7\nOperationalError: locked'})
CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "terminal", "arguments": '{"command": "alembic upgrade head"}'},
}
OLD_MESSAGES: list[tuple[int, dict[str, Any], bool]] = [  # seq, message, active
    (1, {"role": "user", "content": "why does the migration lock?"}, False),
    (2, {"role": "assistant", "content": None, "tool_calls": [CALL]}, False),
    (3, {"role": "tool", "tool_call_id": "c1", "content": TOOL_OUTPUT}, False),
    (4, {"role": "user", "content": "why does the migration lock?"}, False),  # archived again
    (5, {"role": "user", "content": "still active, not archived"}, True),
]


def plant_old_rows(url: str) -> None:
    """A session with archived and active messages, written as a 0002 database held them."""
    engine = make_engine(url)
    now = utcnow()
    try:
        with engine.begin() as conn:
            conn.execute(insert(SessionRow.__table__).values(
                id="old", model="gpt-4", context_length=8000, version=3, rewrite_count=1,
                next_seq=6, token_total=4, message_count=1, compaction_count=0,
                ineffective_count=0, created_at=now, updated_at=now, last_activity_at=now,
            ))  # fmt: skip
            conn.execute(insert(MessageRow.__table__), [
                {"session_id": "old", "seq": seq, "role": m["role"], "data": m, "tokens": 1,
                 "active": active, "generation": 0, "archived_at": None if active else now,
                 "created_at": now}
                for seq, m, active in OLD_MESSAGES
            ])  # fmt: skip
    finally:
        engine.dispose()


def search_text_rows(url: str) -> list[tuple[int, str | None, bool]]:
    """(seq, tool name, holds the text) of every archive_text row."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT seq, tool_name, body IS NOT NULL FROM archive_text ORDER BY seq")
            )
            return [(seq, tool, bool(held)) for seq, tool, held in rows]
    finally:
        engine.dispose()


def test_the_backfill_indexes_what_was_archived_before(empty_url: str) -> None:
    alembic(empty_url, "upgrade", "0002")
    plant_old_rows(empty_url)
    alembic(empty_url, "upgrade", "head")
    assert search_text_rows(empty_url) == [
        (1, None, True), (2, "terminal", True), (3, "terminal", True), (4, None, False),
    ]  # fmt: skip
    db = Database(empty_url)
    try:
        for q, seqs in [
            ('File "/srv/app/db.py", line 7', [3]),
            ("alembic upgrade head", [2]),
            ("migration lock", [1]),
            ("still active", []),
        ]:
            page = search_archive(db, session_id="old", query=parse_query(q))
            assert [h.seq for h in page.hits] == seqs, q
    finally:
        db.dispose()


def test_migration_0003_goes_down_and_up_again(empty_url: str) -> None:
    alembic(empty_url, "upgrade", "0002")
    plant_old_rows(empty_url)
    alembic(empty_url, "upgrade", "head")
    alembic(empty_url, "downgrade", "0002")
    engine = make_engine(empty_url)
    try:
        with engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
            assert not {t for t in tables if t.startswith("archive_")}
            assert {"sessions", "messages", "jobs", "idempotency_keys"} <= tables
            indexes = {i["name"] for i in inspect(conn).get_indexes("messages")}
            assert "ix_messages_archived_by_job" not in indexes
    finally:
        engine.dispose()
    alembic(empty_url, "upgrade", "head")
    assert [seq for seq, _, _ in search_text_rows(empty_url)] == [1, 2, 3, 4]


def test_each_database_has_its_own_search_index(empty_url: str) -> None:
    alembic(empty_url, "upgrade", "head")
    engine = make_engine(empty_url)
    try:
        with engine.connect() as conn:
            if conn.dialect.name == "sqlite":
                sql = conn.exec_driver_sql(
                    "SELECT sql FROM sqlite_master WHERE name = 'archive_fts'"
                ).scalar_one()
                assert "fts5" in sql and "trigram" in sql
                triggers = conn.exec_driver_sql(
                    "SELECT name FROM sqlite_master WHERE type = 'trigger'"
                ).scalars()
                # Inserts are indexed by the store itself (migration 0005).
                assert set(triggers) == {"archive_text_ad", "archive_text_au"}
            else:
                definition = conn.exec_driver_sql(
                    "SELECT indexdef FROM pg_indexes "
                    "WHERE indexname = 'ix_archive_text_session_body_trgm' "
                    "AND schemaname = current_schema()"
                ).scalar_one()
                assert "USING gin (session_id, body" in definition, definition
                assert "gin_trgm_ops" in definition
    finally:
        engine.dispose()
