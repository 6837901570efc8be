"""The one settings class (env prefix ``COMPACTION_``), read by api/ and worker/ only."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated, Literal

from celery.schedules import ParseException, crontab
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="COMPACTION_", extra="ignore")

    # Where things live.
    var_dir: Path = Path("var")
    database_url: str = "sqlite:///var/compaction.db"
    redis_url: str | None = None  # unset: the embedded redis-server started by `compaction up`

    # Database connections of each process. The API keeps database_pool_size open (a request
    # holds one at a time); a worker keeps one per --concurrency thread instead. The overflow
    # is headroom opened under a burst and closed when returned: past size + overflow, a request
    # waits for a connection.
    database_pool_size: int = Field(default=20, ge=1)
    database_max_overflow: int = Field(default=10, ge=0)
    # A connection this old is replaced when next taken (servers and proxies cut long-lived
    # ones). One that sat idle in the pool database_ping_idle_s is checked with a SELECT 1
    # before use (PostgreSQL): a busy pool never pays that round trip. 0: check every use.
    database_pool_recycle_s: int = Field(default=1800, ge=1)
    database_ping_idle_s: float = Field(default=10.0, ge=0)

    # HTTP API and Flower.
    api_host: str = "127.0.0.1"
    api_port: int = Field(default=8000, ge=1, le=65_535)
    api_token: SecretStr | None = None
    flower_port: int = Field(default=5555, ge=1, le=65_535)
    # Containers bind 0.0.0.0 (deploy/ sets it); the embedded default stays on loopback.
    flower_host: str = "127.0.0.1"
    flower_user: str | None = None
    flower_password: SecretStr | None = None
    max_body_bytes: int = Field(default=32 * 1024 * 1024, ge=1)
    max_messages_per_request: int = Field(default=20_000, ge=1)
    max_content_chars: int = Field(default=2_000_000, ge=1)  # per message

    # Logs of the API, workers and beat (worker/logs.py): auto = text on a terminal, else JSON.
    log_format: Literal["auto", "json", "text"] = "auto"

    # Summarizer LLM (OpenAI-compatible). Unset base URL: the extractive summarizer.
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    # A job's telemetry names the model that summarized (jobs.summarizer holds 200 characters).
    summary_model: str | None = Field(default=None, max_length=200)
    main_model: str | None = Field(default=None, max_length=200)
    # A call must hold the prompt's fixed paragraphs (~700 tokens), the room reserved for the
    # smallest summary's answer (2,600) and some turns: below 4,096 none fits.
    summary_context_length: int = Field(default=32_000, ge=4_096)
    # Token counting: "auto" = splintr when it matches tiktoken (checked at load), else tiktoken.
    token_engine: Literal["auto", "tiktoken"] = "auto"
    llm_connect_timeout_s: float = Field(default=10.0, gt=0)
    llm_read_timeout_s: float = Field(default=120.0, gt=0)
    llm_temperature: float = Field(default=0.2, ge=0, le=2)
    llm_stream: bool = True  # stream the answer: read timeout = idle gap; detects cut streams
    llm_request_deadline_s: float = Field(default=300.0, gt=0)  # one attempt, first to last byte
    # A longer Retry-After becomes a cooldown instead.
    llm_retry_after_max_wait_s: float = Field(default=10.0, ge=0)

    # Hygiene.
    hygiene_threshold: float = Field(default=0.85, gt=0, le=1)
    # The share of the window a compaction aims for when no size is asked for (the core may
    # grow it to hold the short things the user said); below the threshold, or the compacted
    # transcript would queue the next job at once.
    target_ratio: float = Field(default=0.25, gt=0)
    min_messages: int = Field(default=4, ge=1)
    thrash_strikes: int = Field(default=2, ge=1)
    ineffective_savings_pct: float = Field(default=10.0, ge=0, le=100)
    max_auto_compactions_per_hour: int = Field(default=4, ge=1)

    # Worker.
    # Threads (jobs wait on the LLM), and the size of the worker's LLM and database pools.
    worker_concurrency: int = Field(default=16, ge=1)
    job_soft_time_limit_s: int = Field(default=840, ge=1)
    job_hard_time_limit_s: int = Field(default=900, ge=1)
    # A dead worker's job is handed out again this long after its worker last re-scored it (a
    # live worker does so every third of it: worker/broker.py), plus up to the restore interval.
    visibility_timeout_s: int = Field(default=60, ge=1)
    unacked_restore_interval_s: float = Field(default=10.0, gt=0)
    # A dead worker's session lock expires after this; a live job extends it every third.
    lock_ttl_s: float = Field(default=60.0, gt=0)
    max_job_attempts: int = Field(default=3, ge=1)
    # A job waits out a database or Redis outage in its own thread this long (tries every
    # few seconds) before it falls back to Celery's retries below.
    job_outage_wait_s: float = Field(default=300.0, ge=0)
    # First retry after a DB/broker error; doubles per retry.
    job_retry_backoff_s: float = Field(default=5.0, ge=0)
    # A job whose session is locked waits this long, again.
    lock_busy_retry_s: float = Field(default=15.0, gt=0)
    # The worker's Prometheus endpoint (`compaction worker --metrics-port`); unset: none.
    # Containers bind 0.0.0.0 (deploy/ sets both); the embedded default stays on loopback.
    worker_metrics_port: int | None = Field(default=None, ge=1, le=65_535)
    worker_metrics_host: str = "127.0.0.1"

    # Cooldowns after summarizer failures (seconds). At least 1: a cooldown is a Redis key's
    # expiry, and Redis refuses an expiry of 0 (a failure would fail the job, not fall back).
    cooldown_protocol_s: int = Field(default=30, ge=1)
    cooldown_default_s: int = Field(default=60, ge=1)
    cooldown_no_provider_s: int = Field(default=600, ge=1)
    cooldown_timeout_ladder_s: list[Annotated[int, Field(ge=1)]] = Field(
        default_factory=lambda: [60, 120, 300, 600], min_length=1
    )

    # Beat: overnight sweep of idle sessions and the stuck-job reaper.
    sweep_cron: str = "0 3 * * *"  # minute hour day month weekday, UTC
    sweep_idle_hours: float = Field(default=6.0, ge=0)
    sweep_threshold: float = Field(default=0.50, gt=0, le=1)
    sweep_batch_limit: int = Field(default=500, ge=1)
    reaper_interval_s: int = Field(default=30, ge=1)
    # Running past the hard limit + this: the worker is gone.
    reaper_stuck_margin_s: int = Field(default=300, ge=0)
    # Open this long, with no message in the broker and no worker holding its session: the
    # message never arrived, or Redis lost it (a wipe, a restart without persistence).
    reaper_requeue_after_s: int = Field(default=30, ge=1)

    # Job-completion callbacks.
    callback_secret: SecretStr | None = None
    callback_timeout_s: float = Field(default=10.0, gt=0)
    callback_max_attempts: int = Field(default=5, ge=1)
    # First retry; doubles per attempt, capped at 5 minutes.
    callback_backoff_s: float = Field(default=2.0, ge=0)

    @field_validator("llm_base_url", "redis_url", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("api_token", "flower_user", "flower_password", "callback_secret")
    @classmethod
    def _credential_not_blank(cls, value: str | SecretStr | None) -> str | SecretStr | None:
        # An empty COMPACTION_API_TOKEN= is set, not unset: it would open the API to anyone
        # sending "Bearer " on any address. Unset it for no auth, or set a real value.
        raw = value.get_secret_value() if isinstance(value, SecretStr) else value
        if raw is None:
            return None
        if not raw.strip():
            raise ValueError("is set but empty or blank; unset it or give it a real value")
        # A trailing newline from a secret file would make the value impossible to send.
        return SecretStr(raw.strip()) if isinstance(value, SecretStr) else raw.strip()

    @field_validator("sweep_cron")
    @classmethod
    def _cron_parses(cls, value: str) -> str:
        try:
            sweep_schedule(value)  # celery's own parser, as beat reads it
        except (ValueError, ParseException) as exc:  # ParseException is not a ValueError
            raise ValueError(f"{value!r} is not a cron expression: {exc}") from exc
        return value

    @model_validator(mode="after")
    def _soft_limit_first(self) -> Settings:
        if self.job_soft_time_limit_s >= self.job_hard_time_limit_s:
            raise ValueError(
                "COMPACTION_JOB_SOFT_TIME_LIMIT_S must be below COMPACTION_JOB_HARD_TIME_LIMIT_S "
                f"({self.job_soft_time_limit_s} >= {self.job_hard_time_limit_s}): the job's own "
                "deadline must come before the worker kills it"
            )
        return self

    @model_validator(mode="after")
    def _target_under_threshold(self) -> Settings:
        if self.target_ratio >= self.hygiene_threshold:
            raise ValueError(
                "COMPACTION_TARGET_RATIO must be below COMPACTION_HYGIENE_THRESHOLD "
                f"({self.target_ratio:g} >= {self.hygiene_threshold:g}): a compacted session "
                "would be over the threshold again and queue the next compaction at once"
            )
        return self

    @model_validator(mode="after")
    def _redelivered_before_stuck(self) -> Settings:
        # A dead worker's job comes back after the visibility timeout (plus a restore scan) and
        # runs once the dead holder's lock expires: all before the reaper would call it stuck.
        back_s = self.visibility_timeout_s + self.unacked_restore_interval_s + self.lock_ttl_s
        stuck_s = self.job_hard_time_limit_s + self.reaper_stuck_margin_s
        if back_s >= stuck_s:
            raise ValueError(
                f"a dead worker's job is redelivered after up to {back_s:g}s (visibility timeout "
                "+ restore interval + lock TTL), not before the reaper fails it as stuck after "
                f"{stuck_s}s (hard limit + stuck margin): lower COMPACTION_VISIBILITY_TIMEOUT_S "
                "or raise COMPACTION_REAPER_STUCK_MARGIN_S"
            )
        return self


def sweep_schedule(cron: str) -> crontab:
    """A crontab from five fields (minute hour day month weekday), in UTC."""
    fields = cron.split()
    if len(fields) != 5:
        raise ValueError("it needs 5 fields: minute hour day-of-month month weekday (UTC)")
    minute, hour, day_of_month, month_of_year, day_of_week = fields
    return crontab(
        minute=minute,
        hour=hour,
        day_of_month=day_of_month,
        month_of_year=month_of_year,
        day_of_week=day_of_week,
    )


@functools.cache
def get_settings() -> Settings:
    return Settings()
