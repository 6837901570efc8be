"""`compaction worker --concurrency N` sizes every pool a job thread draws from to N."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from api.commands.worker import add_arguments, worker_settings
from worker.runtime import build_runtime, db_pool
from worker.settings import Settings
from worker.summarizers.llm import LLMSummarizer


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def file_settings(tmp_path: Path, *, concurrency: int = 16) -> Settings:
    return Settings(
        database_url=f"sqlite:///{tmp_path / 'c.db'}",
        redis_url="redis://127.0.0.1:1/0",  # never contacted: clients connect on first use
        llm_base_url="http://127.0.0.1:1/v1",
        summary_model="small",
        worker_concurrency=concurrency,
    )


def test_the_concurrency_option_sizes_threads_llm_pool_and_database_pool(tmp_path: Path) -> None:
    settings = worker_settings(parse("--concurrency", "32"), file_settings(tmp_path))
    assert settings.worker_concurrency == 32
    rt = build_runtime(settings)
    try:
        assert rt.db.engine.pool.size() == 32  # type: ignore[attr-defined]
        summarizer = rt.summarizer
        assert isinstance(summarizer, LLMSummarizer)
        assert summarizer.config.max_connections == 32
    finally:
        rt.close()


def test_without_the_option_the_environments_concurrency_stays(tmp_path: Path) -> None:
    settings = file_settings(tmp_path, concurrency=5)
    assert worker_settings(parse(), settings) is settings


@pytest.mark.parametrize("value", ["0", "-3"])
def test_a_concurrency_below_one_is_refused(value: str) -> None:
    with pytest.raises(SystemExit):
        parse("--concurrency", value)


def test_an_in_memory_database_has_no_pool_to_size() -> None:
    assert db_pool(Settings(database_url="sqlite://")) == {}
    settings = Settings(
        database_url="postgresql+psycopg://db/x", worker_concurrency=7, database_max_overflow=3
    )
    assert db_pool(settings) == {
        "pool_size": 7,
        "max_overflow": 3,
        "pool_recycle": settings.database_pool_recycle_s,
        "ping_idle_s": settings.database_ping_idle_s,
    }
