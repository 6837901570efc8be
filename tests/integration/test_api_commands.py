"""``compaction api`` (bind check), ``compaction migrate`` and ``compaction stats``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError
from sqlalchemy import inspect

from api.cli import main
from api.commands.api import check_bind, is_loopback
from tests.store_factories import compaction_of, counts, make_transcript
from tests.support.stack import REPO
from worker.redis_server import free_port
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


def bare_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """No COMPACTION_* or FLOWER_* from the caller's shell: only what the test sets."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPACTION_", "FLOWER_"))}
    env.update(PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", COMPACTION_VAR_DIR=str(tmp_path / "var"))
    env.update(extra)
    return env


@pytest.mark.parametrize("token", ["", "   "])
@pytest.mark.parametrize("command", ["api", "up"])
def test_an_empty_api_token_is_refused_at_start(tmp_path: Path, command: str, token: str) -> None:
    # COMPACTION_API_TOKEN= is set, not unset: it used to open the API on 0.0.0.0 to anyone
    # sending "Authorization: Bearer ".
    env = bare_env(
        tmp_path,
        COMPACTION_API_TOKEN=token,
        COMPACTION_API_HOST="0.0.0.0",
        COMPACTION_API_PORT=str(free_port()),
        COMPACTION_FLOWER_PORT=str(free_port()),
        COMPACTION_DATABASE_URL=f"sqlite:///{tmp_path / 'c.db'}",
    )
    done = subprocess.run(
        [sys.executable, "-m", "api.cli", command], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1, done.stderr  # one line
    assert f"compaction {command}: bad configuration: COMPACTION_API_TOKEN:" in done.stderr
    assert "empty or blank" in done.stderr
    assert not (tmp_path / "var" / "redis").exists()  # up started nothing


def test_blank_credentials_are_refused_and_real_ones_lose_surrounding_white_space() -> None:
    for field in ("api_token", "flower_user", "flower_password", "callback_secret"):
        for blank in ("", " ", "\n"):
            with pytest.raises(ValidationError, match=f"{field}\n  Value error, is set but empty"):
                Settings(**{field: blank})
    # A secret file's trailing newline would make the token impossible to send.
    token = Settings(api_token="t0ken\n").api_token
    assert token is not None and token.get_secret_value() == "t0ken"


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
