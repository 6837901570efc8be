"""The sweep's size test as an index condition: an index on each session's utilization
(its own token count over its window), over the sessions with activity since their last
compaction.

Revision ID: 0004
Revises: 0003
Create Date: 2026-04-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_NAME = "ix_sessions_sweep_utilization"
# Lightweight table: this migration must not change with the models. The expression is built,
# not written out, so each database gets it rendered exactly as a query renders it (SQLite
# matches an index expression to a query's by shape).
_sessions = sa.table(
    "sessions",
    sa.column("token_total", sa.BigInteger()),
    sa.column("context_length", sa.Integer()),
    sa.column("last_activity_at", sa.DateTime(timezone=True)),
    sa.column("last_compacted_at", sa.DateTime(timezone=True)),
)
_UTILIZATION = sa.cast(_sessions.c.token_total, sa.Float) / _sessions.c.context_length
_UNCOMPACTED = sa.or_(
    _sessions.c.last_compacted_at.is_(None),
    _sessions.c.last_compacted_at < _sessions.c.last_activity_at,
)


def upgrade() -> None:
    op.create_index(
        _NAME,
        "sessions",
        [_UTILIZATION],
        sqlite_where=_UNCOMPACTED,
        postgresql_where=_UNCOMPACTED,
    )


def downgrade() -> None:
    op.drop_index(_NAME, table_name="sessions")
