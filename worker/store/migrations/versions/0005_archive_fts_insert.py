"""SQLite: the archive's search text enters FTS5 from the store, not from an insert trigger.

Each row a statement inserts through a trigger opens a savepoint on the FTS5 table, and FTS5
writes its pending terms out as a new segment at every savepoint: a compaction that archived
500 messages wrote 500 segments and merged them, 250-450 ms where one batch of inserts into the
FTS5 table takes 40-120 ms. The store writes both tables itself now
(worker/store/archive_index.py); deletes and body updates keep their triggers (few rows each).
PostgreSQL's GIN index needs nothing.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_INSERT_TRIGGER = (
    "CREATE TRIGGER archive_text_ai AFTER INSERT ON archive_text WHEN new.body IS NOT NULL "
    "BEGIN INSERT INTO archive_fts(rowid, body) VALUES (new.id, new.body); END"
)


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER archive_text_ai")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(_INSERT_TRIGGER)
