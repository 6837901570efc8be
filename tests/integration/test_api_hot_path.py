"""The gateway's hot path: what one append costs the database, and the pool it draws from.

Statements are counted with SQLAlchemy's own events on the app's engines; transactions by the
engine's ``begin`` and ``commit`` events. A pooled PostgreSQL connection is cut with
``pg_terminate_backend``, found by an ``application_name`` of this test's own.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import make_url

from tests.api_support import api_settings, serve
from tests.store_factories import make_transcript

pytestmark = pytest.mark.integration

_TABLE = re.compile(r"^(SELECT|DELETE)\b.*?\bFROM (\w+)|^(INSERT) INTO (\w+)|^(UPDATE) (\w+)", re.S)


@dataclass
class Seen:
    statements: list[str] = field(default_factory=list)  # "SELECT sessions", "INSERT messages"
    transactions: int = 0
    commits: int = 0


@contextmanager
def recorded(app: FastAPI) -> Iterator[Seen]:
    """What the app's engines run while the block runs (BEGIN, which SQLite's is, left out)."""
    seen = Seen()
    db = app.state.context.db
    engines = {db.engine, db._read_engine}  # SQLite reads have an engine of their own

    def on_statement(_c: Any, _cur: Any, statement: str, *_: Any) -> None:
        found = _TABLE.match(statement)
        if found is not None:
            seen.statements.append(" ".join(part for part in found.groups() if part))
        elif not statement.startswith("BEGIN"):
            seen.statements.append(statement)

    def on_begin(_conn: Any) -> None:
        seen.transactions += 1

    def on_commit(_conn: Any) -> None:
        seen.commits += 1

    hooks = [("before_cursor_execute", on_statement), ("begin", on_begin), ("commit", on_commit)]
    for engine in engines:
        for name, hook in hooks:
            event.listen(engine, name, hook)
    try:
        yield seen
    finally:
        for engine in engines:
            for name, hook in hooks:
                event.remove(engine, name, hook)


@pytest.fixture
def app(database_url: str, broker_url: str, tmp_path: Path) -> FastAPI:
    from api.main import create_app

    return create_app(api_settings(database_url, broker_url, tmp_path))


def snapshot() -> dict[str, Any]:
    return {"model": "gpt-4", "context_length": 100_000, "messages": make_transcript(2)}


def turn(content: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": content}]}


LOCK, TURNS, COUNTERS = "SELECT sessions", "INSERT messages", "UPDATE sessions"
KEY_LOOKUP, KEY_KEPT = "SELECT idempotency_keys", "INSERT idempotency_keys"


def test_an_append_is_one_transaction_of_three_statements(app: FastAPI) -> None:
    with serve(app) as client:
        assert client.put("/v1/sessions/s1", json=snapshot()).status_code == 200
        with recorded(app) as seen:
            r = client.post("/v1/sessions/s1/messages", json=turn("one more"))
    assert r.status_code == 200 and r.json()["hygiene"]["decision"] == "below_threshold"
    assert (seen.transactions, seen.commits) == (1, 1)
    # The lock, the turns, the counters and version in one UPDATE that returns the open job.
    assert seen.statements == [LOCK, TURNS, COUNTERS]


def test_a_keyed_append_adds_the_key_lookup_and_the_kept_answer(app: FastAPI) -> None:
    keyed = {"Idempotency-Key": "k-1", "If-Match": '"1"'}
    with serve(app) as client:
        assert client.put("/v1/sessions/s1", json=snapshot()).status_code == 200
        with recorded(app) as seen:
            first = client.post("/v1/sessions/s1/messages", json=turn("x"), headers=keyed)
        assert first.status_code == 200, first.text
        assert (seen.transactions, seen.commits) == (1, 1)
        assert seen.statements == [LOCK, KEY_LOOKUP, TURNS, COUNTERS, KEY_KEPT]
        with recorded(app) as seen:
            again = client.post("/v1/sessions/s1/messages", json=turn("x"), headers=keyed)
    assert again.headers["idempotent-replayed"] == "true" and again.json() == first.json()
    assert seen.transactions == 1 and seen.statements == [LOCK, KEY_LOOKUP]  # nothing written


def test_an_append_below_the_threshold_answers_the_open_job(app: FastAPI) -> None:
    """The UPDATE of the counters returns the session's open job: 202, already_queued."""
    over = snapshot() | {"messages": make_transcript(3), "prompt_tokens": 90_000}
    with serve(app) as client:
        first = client.put("/v1/sessions/s1", json=over)
        assert first.status_code == 202, first.text
        job_id = first.json()["hygiene"]["job_id"]
        client.put("/v1/sessions/s2", json=snapshot())  # another session's job is not this one's
        with recorded(app) as seen:
            r = client.post("/v1/sessions/s1/messages", json=turn("small"))
        other = client.post("/v1/sessions/s2/messages", json=turn("small"))
    assert r.status_code == 202, r.text
    assert r.json()["hygiene"] == {"decision": "already_queued", "job_id": job_id}
    assert seen.statements == [LOCK, TURNS, COUNTERS]
    assert other.status_code == 200 and other.json()["hygiene"]["job_id"] is None


def test_the_first_snapshot_of_a_session_writes_its_row_once(app: FastAPI) -> None:
    with serve(app) as client, recorded(app) as seen:
        assert client.put("/v1/sessions/s1", json=snapshot()).status_code == 200
    assert (seen.transactions, seen.commits) == (1, 1)
    assert seen.statements == [LOCK, "INSERT sessions", TURNS]  # a new session has no job


def test_the_api_pool_follows_the_settings(database_url: str, tmp_path: Path) -> None:
    from api.main import build_context

    settings = api_settings(
        database_url, None, tmp_path, database_pool_size=7, database_max_overflow=2
    )
    context = build_context(settings)
    try:
        pool = context.db.engine.pool
        assert (pool.size(), pool._max_overflow) == (7, 2)  # type: ignore[attr-defined]
    finally:
        context.close()


# --- PostgreSQL: connections cut while they sit in the pool -----------------------------------


def _named(url: str, name: str) -> str:
    named = make_url(url).update_query_dict({"application_name": name})
    return named.render_as_string(hide_password=False)


def _cut_connections_named(url: str, name: str) -> int:
    admin = create_engine(url)
    try:
        with admin.begin() as conn:
            query = (
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = :n"
            )
            return len(conn.execute(text(query), {"n": name}).all())
    finally:
        admin.dispose()


@contextmanager
def pg_app(
    database_url: str, broker_url: str, tmp_path: Path, **settings: Any
) -> Iterator[tuple[httpx.Client, str]]:
    from api.main import create_app

    name = f"cq-hot-path-{uuid.uuid4().hex[:8]}"
    url = _named(database_url, name)
    app = create_app(api_settings(url, broker_url, tmp_path, **settings))
    with serve(app) as client:
        yield client, name


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_connection_used_a_moment_ago_is_not_pinged_and_a_cut_one_fails_one_request(
    database_url: str, broker_url: str, tmp_path: Path
) -> None:
    """No SELECT 1 before every use: a connection cut in the pool fails the next request with
    503 (nothing stored); the pool then replaces its connections and the retry is stored."""
    with pg_app(database_url, broker_url, tmp_path, database_ping_idle_s=3600) as (client, name):
        assert client.put("/v1/sessions/s1", json=snapshot()).status_code == 200
        assert _cut_connections_named(database_url, name) >= 1
        cut = client.post("/v1/sessions/s1/messages", json=turn("lost"))
        assert cut.status_code == 503 and cut.headers["retry-after"], cut.text
        again = client.post("/v1/sessions/s1/messages", json=turn("kept"))
        assert again.status_code == 200, again.text
        stored = client.get("/v1/sessions/s1/messages").json()["messages"]
    contents = [m["content"] for m in stored]
    assert contents[-1] == "kept" and "lost" not in contents


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_connection_idle_past_the_ping_threshold_is_checked_before_use(
    database_url: str, broker_url: str, tmp_path: Path
) -> None:
    with pg_app(database_url, broker_url, tmp_path, database_ping_idle_s=0.2) as (client, name):
        assert client.put("/v1/sessions/s1", json=snapshot()).status_code == 200
        assert _cut_connections_named(database_url, name) >= 1
        time.sleep(0.5)
        r = client.post("/v1/sessions/s1/messages", json=turn("after a quiet spell"))
        assert r.status_code == 200, r.text
