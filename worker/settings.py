"""The one settings class (env prefix ``COMPACTION_``), read by api/ and worker/ only."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="COMPACTION_", extra="ignore")

    # Where things live.
    var_dir: Path = Path("var")
    database_url: str = "sqlite:///var/compaction.db"
    redis_url: str | None = None  # unset: the embedded redis-server started by `compaction up`

    # HTTP API and Flower.
    api_host: str = "127.0.0.1"
    api_port: int = 8000
    api_token: SecretStr | None = None
    flower_port: int = 5555
    # Containers bind 0.0.0.0 (deploy/ sets it); the embedded default stays on loopback.
    flower_host: str = "127.0.0.1"
    flower_user: str | None = None
    flower_password: SecretStr | None = None
    max_body_bytes: int = 32 * 1024 * 1024
    max_messages_per_request: int = 20_000
    max_content_chars: int = 2_000_000  # per message

    # Summarizer LLM (OpenAI-compatible). Unset base URL: the extractive summarizer.
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    # A job's telemetry names the model that summarized (jobs.summarizer holds 200 characters).
    summary_model: str | None = Field(default=None, max_length=200)
    main_model: str | None = Field(default=None, max_length=200)
    summary_context_length: int = 32_000
    # Token counting: "auto" = splintr when it matches tiktoken (checked at load), else tiktoken.
    token_engine: Literal["auto", "tiktoken"] = "auto"
    llm_connect_timeout_s: float = 10.0
    llm_read_timeout_s: float = 120.0
    llm_temperature: float = 0.2
    llm_stream: bool = True  # stream the answer: read timeout = idle gap; detects cut streams
    llm_request_deadline_s: float = 300.0  # one HTTP attempt, start to last byte
    llm_retry_after_max_wait_s: float = 10.0  # a longer Retry-After becomes a cooldown instead

    # Hygiene.
    hygiene_threshold: float = 0.85
    min_messages: int = 4
    thrash_strikes: int = 2
    ineffective_savings_pct: float = 10.0
    max_auto_compactions_per_hour: int = 4

    # Worker.
    worker_concurrency: int = 16  # threads: jobs wait on the LLM, not on the CPU
    job_soft_time_limit_s: int = 840
    job_hard_time_limit_s: int = 900
    visibility_timeout_s: int = 1_200  # above the hard limit, or a slow job is redelivered
    unacked_restore_interval_s: float = 10.0
    lock_ttl_s: float = 120.0
    max_job_attempts: int = 3
    job_retry_backoff_s: float = 5.0  # first retry after a DB/broker error; doubles per retry
    lock_busy_retry_s: float = 15.0  # a job whose session is locked waits this long, again

    # Cooldowns after summarizer failures (seconds).
    cooldown_protocol_s: int = 30
    cooldown_default_s: int = 60
    cooldown_no_provider_s: int = 600
    cooldown_timeout_ladder_s: list[int] = Field(default_factory=lambda: [60, 120, 300, 600])

    # Beat: overnight sweep of idle sessions and the stuck-job reaper.
    sweep_cron: str = "0 3 * * *"  # minute hour day month weekday, UTC
    sweep_idle_hours: float = 6.0
    sweep_threshold: float = 0.50
    sweep_batch_limit: int = 500
    reaper_interval_s: int = 300
    reaper_stuck_margin_s: int = 300  # running past the hard limit + this: the worker is gone
    reaper_requeue_after_s: int = 300  # queued this long: the message may never have arrived

    # Job-completion callbacks.
    callback_secret: SecretStr | None = None
    callback_timeout_s: float = 10.0
    callback_max_attempts: int = 5
    callback_backoff_s: float = 2.0  # first retry; doubles per attempt, capped at 5 minutes

    @field_validator("llm_base_url", "redis_url", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value


@functools.cache
def get_settings() -> Settings:
    return Settings()
