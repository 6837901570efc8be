"""``compaction api`` (bind check), ``compaction migrate`` and ``compaction stats``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from sqlalchemy import inspect

from api.cli import main
from api.commands.api import check_bind, is_loopback
from tests.store_factories import compaction_of, counts, make_transcript
from worker.settings import Settings, get_settings
from worker.store.db import Database, make_engine
from worker.store.jobs import Timings, claim_job, create_job, write_back
from worker.store.sessions import put_snapshot

pytestmark = pytest.mark.integration


@pytest.fixture
def env_database(monkeypatch: pytest.MonkeyPatch, database_url: str) -> Iterator[str]:
    monkeypatch.setenv("COMPACTION_DATABASE_URL", database_url)
    get_settings.cache_clear()
    yield database_url
    get_settings.cache_clear()


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)
    assert check_bind(Settings(api_host=host, api_token=None)) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.5", "api.internal"])
def test_no_token_no_public_bind(host: str) -> None:
    refusal = check_bind(Settings(api_host=host, api_token=None))
    assert refusal is not None and "COMPACTION_API_TOKEN" in refusal
    assert check_bind(Settings(api_host=host, api_token=SecretStr("t"))) is None


def test_api_command_refuses_before_starting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COMPACTION_API_HOST", "0.0.0.0")
    monkeypatch.delenv("COMPACTION_API_TOKEN", raising=False)
    get_settings.cache_clear()
    try:
        assert main(["api"]) == 2
    finally:
        get_settings.cache_clear()
    assert "refusing to listen on 0.0.0.0" in capsys.readouterr().err


def test_migrate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    assert main(["migrate", "--url", url]) == 0
    assert "newest migration" in capsys.readouterr().out
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            assert {"sessions", "messages", "jobs", "alembic_version"} <= set(
                inspect(conn).get_table_names()
            )
    finally:
        engine.dispose()


def test_stats_command(env_database: str, capsys: pytest.CaptureFixture[str]) -> None:
    db = Database(env_database)
    try:
        for i, fallback in enumerate((False, True)):
            msgs = make_transcript(6)
            put_snapshot(
                db,
                session_id=f"s{i}",
                model="gpt-4",
                context_length=1000,
                messages=msgs,
                token_counts=counts(msgs),
            )
            job = create_job(db, session_id=f"s{i}", trigger="hygiene")
            claim = claim_job(db, job_id=job.id)
            assert claim is not None
            result = compaction_of(
                claim, fallback_used=fallback, dropped_count=3 if fallback else 0
            )
            write_back(
                db, job_id=job.id, attempt=1, result=result, timings=Timings(run_ms=100.0 + i * 100)
            )
        create_job(db, session_id="s0", trigger="manual")
    finally:
        db.dispose()
    assert main(["stats", "--since", "1"]) == 0
    table = capsys.readouterr().out
    assert "succeeded" in table and "50.0% (1 of 2 succeeded)" in table
    assert "run time p50 / p95" in table and "150 ms / 195 ms" in table
    assert main(["stats", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["by_status"]["succeeded"] == 2 and data["by_status"]["queued"] == 1
    assert data["dropped_total"] == 3 and data["fallback_rate"] == 0.5
