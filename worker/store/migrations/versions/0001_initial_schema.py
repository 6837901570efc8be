"""Initial schema: sessions, messages (never deleted) and jobs (one telemetry row each).

Revision ID: 0001
Revises:
Create Date: 2026-01-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OPEN = sa.text("status IN ('queued', 'running')")


def _at(name: str, *, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(255), primary_key=True),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("context_length", sa.Integer(), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("rewrite_count", sa.BigInteger(), nullable=False),
        sa.Column("next_seq", sa.BigInteger(), nullable=False),
        sa.Column("token_total", sa.BigInteger(), nullable=False),
        sa.Column("message_count", sa.Integer(), nullable=False),
        sa.Column("reported_tokens", sa.BigInteger(), nullable=True),
        sa.Column("reported_version", sa.BigInteger(), nullable=True),
        sa.Column("compaction_count", sa.Integer(), nullable=False),
        sa.Column("previous_summary", sa.Text(), nullable=True),
        sa.Column("ineffective_count", sa.Integer(), nullable=False),
        sa.Column("last_savings_pct", sa.Float(), nullable=True),
        sa.Column("thrash_until_tokens", sa.BigInteger(), nullable=True),
        sa.Column("callback_url", sa.Text(), nullable=True),
        _at("created_at"),
        _at("updated_at"),
        _at("last_activity_at"),
        _at("last_compacted_at", nullable=True),
    )
    op.create_index("ix_sessions_last_activity_at", "sessions", ["last_activity_at"])

    op.create_table(
        "messages",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column(
            "session_id",
            sa.String(255),
            sa.ForeignKey("sessions.id", ondelete="RESTRICT"),
            nullable=False,
        ),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("archived_by_job", sa.String(36), nullable=True),
        _at("archived_at", nullable=True),
        _at("created_at"),
        sa.UniqueConstraint("session_id", "seq", name="uq_messages_session_seq"),
        sa.CheckConstraint(
            "role IN ('system', 'user', 'assistant', 'tool')", name="ck_messages_role"
        ),
        sa.CheckConstraint("tokens >= 0", name="ck_messages_tokens"),
    )
    op.create_index("ix_messages_session_active_seq", "messages", ["session_id", "active", "seq"])

    op.create_table(
        "jobs",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column(
            "session_id",
            sa.String(255),
            sa.ForeignKey("sessions.id", ondelete="RESTRICT"),
            nullable=False,
        ),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("skip_reason", sa.String(64), nullable=True),
        sa.Column("focus_topic", sa.Text(), nullable=True),
        sa.Column("force", sa.Boolean(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("upto_seq", sa.BigInteger(), nullable=True),
        sa.Column("snapshot_rewrite_count", sa.BigInteger(), nullable=True),
        sa.Column("version_after", sa.BigInteger(), nullable=True),
        sa.Column("tokens_before", sa.BigInteger(), nullable=True),
        sa.Column("tokens_after", sa.BigInteger(), nullable=True),
        sa.Column("savings_pct", sa.Float(), nullable=True),
        sa.Column("messages_before", sa.Integer(), nullable=True),
        sa.Column("messages_after", sa.Integer(), nullable=True),
        sa.Column("summarized_count", sa.Integer(), nullable=True),
        sa.Column("dropped_count", sa.Integer(), nullable=True),
        sa.Column("fallback_used", sa.Boolean(), nullable=True),
        sa.Column("summarizer", sa.String(200), nullable=True),
        sa.Column("summary_tokens", sa.Integer(), nullable=True),
        sa.Column("summarizer_input_tokens", sa.Integer(), nullable=True),
        sa.Column("summarizer_calls", sa.Integer(), nullable=True),
        sa.Column("redactions", sa.Integer(), nullable=True),
        sa.Column("aux_model_failed", sa.Text(), nullable=True),
        sa.Column("error_class", sa.String(64), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        _at("enqueued_at"),
        _at("started_at", nullable=True),
        _at("finished_at", nullable=True),
        sa.Column("queue_wait_ms", sa.Float(), nullable=True),
        sa.Column("run_ms", sa.Float(), nullable=True),
        sa.Column("llm_ms", sa.Float(), nullable=True),
        sa.Column("worker", sa.String(255), nullable=True),
        sa.Column("callback_status", sa.String(32), nullable=True),
        sa.Column("callback_attempts", sa.Integer(), nullable=False),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'succeeded', 'skipped', 'aborted', 'failed')",
            name="ck_jobs_status",
        ),
        sa.CheckConstraint("trigger IN ('hygiene', 'manual', 'sweep')", name="ck_jobs_trigger"),
    )
    # One open job per session, enforced by the database.
    op.create_index(
        "uq_jobs_one_open_per_session",
        "jobs",
        ["session_id"],
        unique=True,
        sqlite_where=OPEN,
        postgresql_where=OPEN,
    )
    op.create_index("ix_jobs_session_enqueued", "jobs", ["session_id", "enqueued_at"])
    op.create_index("ix_jobs_status_enqueued", "jobs", ["status", "enqueued_at"])


def downgrade() -> None:
    op.drop_table("jobs")
    op.drop_table("messages")
    op.drop_table("sessions")
