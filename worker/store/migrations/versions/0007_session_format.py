"""Sessions remember their wire format (openai.chat, anthropic.messages, openai.responses).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every session stored so far spoke OpenAI Chat Completions, the one format there was.
    op.add_column(
        "sessions",
        sa.Column("format", sa.String(32), nullable=False, server_default="openai.chat"),
    )


def downgrade() -> None:
    op.drop_column("sessions", "format")
