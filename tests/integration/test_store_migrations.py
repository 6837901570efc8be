"""Migrations: `alembic upgrade head` builds exactly the models' schema, on both backends."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import insert, inspect, text
from sqlalchemy.exc import SAWarning
from sqlalchemy.schema import CreateIndex

from tests.support.migrations import alembic, empty_url
from worker.store import jobs, sessions
from worker.store.db import Database, make_engine, migrate
from worker.store.models import (
    SWEEP_UTILIZATION_INDEX,
    Base,
    JobRow,
    SessionRow,
    modelled,
    utcnow,
)

pytestmark = pytest.mark.integration
__all__ = ["empty_url"]  # a fixture, imported for pytest


def test_upgrade_head_matches_the_models(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"compare_type": True, "include_name": modelled}
            )
            with warnings.catch_warnings():
                # SQLite's reflection skips expression indexes (with these warnings), so the
                # comparison cannot see this one there; the next test checks it.
                warnings.filterwarnings(
                    "ignore",
                    f"Skipped unsupported reflection of expression-based index "
                    f"{SWEEP_UTILIZATION_INDEX}",
                    SAWarning,
                )
                warnings.filterwarnings(
                    "ignore",
                    f"autogenerate skipping metadata-specified expression-based index "
                    f"'{SWEEP_UTILIZATION_INDEX}'",
                    UserWarning,
                )
                assert compare_metadata(context, Base.metadata) == []
            assert context.get_current_revision() == "0007"
            partial = [
                i
                for i in inspect(conn).get_indexes("jobs")
                if i["name"] == "uq_jobs_one_open_per_session"
            ]
            assert partial and partial[0]["unique"]
    finally:
        engine.dispose()


def test_the_sweep_utilization_index_is_built_as_the_models_spell_it(database_url: str) -> None:
    engine = make_engine(database_url)
    (index,) = [i for i in SessionRow.__table__.indexes if i.name == SWEEP_UTILIZATION_INDEX]
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "sqlite":
                built = conn.exec_driver_sql(
                    "SELECT sql FROM sqlite_master WHERE name = ?", (SWEEP_UTILIZATION_INDEX,)
                ).scalar()
                assert built == str(CreateIndex(index).compile(engine)).strip()
            else:
                built = conn.execute(
                    text("SELECT indexdef FROM pg_indexes WHERE indexname = :name"),
                    {"name": SWEEP_UTILIZATION_INDEX},
                ).scalar()
                assert built is not None and "token_total" in built
                assert "last_compacted_at < last_activity_at" in built
    finally:
        engine.dispose()


def test_migrating_again_changes_nothing(database_url: str) -> None:
    migrate(database_url)
    migrate(database_url)
    db = Database(database_url)
    try:
        with db.read() as s:
            assert s.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [
                "0007"
            ]
    finally:
        db.dispose()


def plant_a_0005_job(url: str) -> None:
    """A session and a finished manual job, written as a 0005 database held them."""
    engine = make_engine(url)
    now = utcnow()
    try:
        with engine.begin() as conn:
            conn.execute(insert(SessionRow.__table__).values(
                id="old", model="gpt-4", context_length=8000, version=1, rewrite_count=0,
                next_seq=1, token_total=0, message_count=0, compaction_count=0,
                ineffective_count=0, created_at=now, updated_at=now, last_activity_at=now,
            ))  # fmt: skip
            conn.execute(insert(JobRow.__table__).values(
                id="old-job", session_id="old", trigger="manual", status="succeeded",
                focus_topic="db", force=True, attempt=1, enqueued_at=now, finished_at=now,
                callback_attempts=0,
            ))  # fmt: skip
    finally:
        engine.dispose()


def job_columns(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return {c["name"] for c in inspect(conn).get_columns("jobs")}
    finally:
        engine.dispose()


def test_migration_0006_adds_the_size_asked_for_and_old_jobs_asked_for_none(
    empty_url: str,
) -> None:
    alembic(empty_url, "upgrade", "0005")
    plant_a_0005_job(empty_url)
    assert "target_tokens" not in job_columns(empty_url)
    alembic(empty_url, "upgrade", "head")
    db = Database(empty_url)
    try:
        old = jobs.get_job(db, job_id="old-job")
        assert (old.target_tokens, old.focus_topic, old.force) == (None, "db", True)
        asked = jobs.create_job(db, session_id="old", trigger="manual", target_tokens=4_000)
        assert jobs.get_job(db, job_id=asked.id).target_tokens == 4_000
    finally:
        db.dispose()
    alembic(empty_url, "downgrade", "0005")
    assert "target_tokens" not in job_columns(empty_url)
    alembic(empty_url, "upgrade", "head")
    db = Database(empty_url)
    try:  # the rows survive the round trip; what was asked goes with the column
        assert jobs.get_job(db, job_id="old-job").status == "succeeded"
        assert jobs.get_job(db, job_id=asked.id).target_tokens is None
    finally:
        db.dispose()


def session_columns(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return {c["name"] for c in inspect(conn).get_columns("sessions")}
    finally:
        engine.dispose()


def test_migration_0007_gives_every_stored_session_the_chat_format(empty_url: str) -> None:
    """Sessions stored before formats existed spoke OpenAI Chat Completions."""
    alembic(empty_url, "upgrade", "0006")
    plant_a_0005_job(empty_url)
    assert "format" not in session_columns(empty_url)
    alembic(empty_url, "upgrade", "head")
    db = Database(empty_url)
    try:
        assert sessions.get_session(db, session_id="old").format == "openai.chat"
    finally:
        db.dispose()
    alembic(empty_url, "downgrade", "0006")
    assert "format" not in session_columns(empty_url)


def test_concurrent_first_migrations_on_sqlite(tmp_path: Path) -> None:
    """The API and every worker migrate at start, in separate processes, possibly at once."""
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    code = f"from worker.store.db import migrate; migrate({url!r})"
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE) for _ in range(4)
    ]
    failures = []
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        if proc.returncode != 0:
            failures.append(err.decode())
    assert failures == []
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            assert set(inspect(conn).get_table_names()) >= {"sessions", "messages", "jobs"}
            assert conn.exec_driver_sql("SELECT count(*) FROM alembic_version").scalar() == 1
    finally:
        engine.dispose()


def test_relative_sqlite_url_creates_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    migrate("sqlite:///var/compaction.db")
    assert (tmp_path / "var" / "compaction.db").exists()
    engine = make_engine("sqlite:///var/compaction.db")
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000
    finally:
        engine.dispose()


def test_a_new_database_switches_to_wal_while_another_connection_holds_a_lock(
    tmp_path: Path,
) -> None:
    # While another connection is mid-write, SQLite refuses the switch at once instead of
    # waiting (its busy handler is skipped to avoid a deadlock): the race that two processes
    # migrating a new database at the same moment sometimes lost (seen once in CI).
    path = tmp_path / "new.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN IMMEDIATE")  # a writer mid-transaction, as a migration is
    holder.execute("INSERT INTO t VALUES (1)")
    release = threading.Timer(0.5, holder.execute, args=("COMMIT",))
    release.start()
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    finally:
        engine.dispose()
        release.join()
        holder.close()
