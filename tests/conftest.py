"""Shared fixtures: token counter, a private redis-server, hypothesis profiles."""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

# The real API app on the test database with a private Redis broker (tests/api_support.py).
from tests.api_support import api, authed_api, broker_url  # noqa: F401

# A real local OpenAI chat-completions server with scripted answers (tests/support/fake_openai.py).
from tests.support.fake_openai import fake_openai  # noqa: F401
from worker import logs
from worker.compressor.tokens import TokenCounter
from worker.encodings import counter_for_model
from worker.redis_server import RedisServer
from worker.store.db import Database, migrate

# CI runs thousands of generated transcripts per property; a local run stays quick.
settings.register_profile(
    "ci", max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=150, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "dev")


@pytest.fixture(autouse=True)
def _no_log_ids_from_earlier_tests() -> None:
    # A job run in-process binds its ids to the log context, as a task does, and nothing
    # clears them (a worker clears them when the task ends): each test starts without any.
    logs.clear()


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    return counter_for_model("gpt-4")


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A private redis-server for the whole test session (never the machine's shared one)."""
    with RedisServer(tmp_path_factory.mktemp("redis"), appendonly=False) as server:
        yield server


# ---------------------------------------------------------------------------------------------
# Databases: every store test runs on SQLite and, when COMPACTION_TEST_POSTGRES_URL is set (CI
# sets it), on PostgreSQL in a schema of its own for this test session, dropped at the end.

POSTGRES_URL_ENV = "COMPACTION_TEST_POSTGRES_URL"


def _postgres_unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but PostgreSQL is unusable: {reason}", pytrace=False)
    pytest.skip(reason)


def _drop_abandoned_schemas(conn: Connection, max_age_s: float = 6 * 3600) -> None:
    """Schemas of test runs that died before their teardown (named cq_test_<epoch>_<hex>)."""
    names = conn.execute(
        text("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'cq\\_test\\_%'")
    )
    for (name,) in names.all():
        stamp = name.split("_")[2]
        if stamp.isdigit() and time.time() - int(stamp) > max_age_s:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{name}" CASCADE'))


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A migrated, private schema on the test PostgreSQL (search_path points at it)."""
    base = os.environ.get(POSTGRES_URL_ENV)
    if not base:
        _postgres_unavailable(f"{POSTGRES_URL_ENV} is not set")
        return
    schema = f"cq_test_{int(time.time())}_{uuid.uuid4().hex[:8]}"
    admin = create_engine(base, connect_args={"connect_timeout": 5})
    try:
        with admin.begin() as conn:
            _drop_abandoned_schemas(conn)
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    except SQLAlchemyError as exc:  # cannot reach it: fail in CI, skip elsewhere
        admin.dispose()
        _postgres_unavailable(f"cannot reach {make_url(base).host}: {exc}")
        return
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    rendered = url.render_as_string(hide_password=False)
    try:
        migrate(rendered)
        yield rendered
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file, copied for each test (faster than migrating each time)."""
    path = tmp_path_factory.mktemp("sqlite-template") / "template.db"
    migrate(f"sqlite:///{path}")
    return path


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A migrated, empty database: a fresh SQLite file, or the session's PostgreSQL schema
    (its tables are emptied after each test)."""
    if request.param == "sqlite":
        path = tmp_path / "compaction.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite:///{path}"
        return
    url: str = request.getfixturevalue("postgres_url")
    yield url
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "TRUNCATE archive_text, archive_keys, idempotency_keys, jobs, messages, sessions"
                )
            )
    finally:
        engine.dispose()


@pytest.fixture
def db(database_url: str) -> Iterator[Database]:
    database = Database(database_url)
    yield database
    database.dispose()
