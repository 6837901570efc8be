"""jobs.target_tokens: the size a manual compaction asked for (null: none was, the worker aims
for COMPACTION_TARGET_RATIO of the window). Nullable and without a default, so the jobs of
before read as asking for nothing and no row is rewritten.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("target_tokens", sa.Integer(), nullable=True))


def downgrade() -> None:
    # SQLite 3.35+ drops a column in place (it is in no index or constraint).
    op.drop_column("jobs", "target_tokens")
