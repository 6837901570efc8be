"""Fixtures and factories for worker tests: a private Redis, a runtime, seeded sessions.

Import the fixtures into a test module (``from tests.support.worker_fixtures import rt, ...``).
Summarizers here are stand-ins for the outside world (the LLM), passed in the way httpx passes
a transport: a blocking one to hold a job mid-run, failing ones to play provider errors.
"""

from __future__ import annotations

import copy
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.data import real_transcripts
from worker.celery_app import make_celery
from worker.compressor.extractive import ExtractiveSummarizer
from worker.compressor.messages import parse_messages
from worker.compressor.summarizer import Summarizer, SummaryRequest, SummaryResponse
from worker.encodings import counter_for_model
from worker.redis_server import RedisServer
from worker.runtime import Runtime, redis_client
from worker.settings import Settings
from worker.store import jobs, sessions
from worker.store.db import Database

MODEL = "gpt-4o"
# A real 64-message agent session of ~15k tokens: with a 16k window it sits above 85%.
SAMPLE_ID = "deepseek_chat_test_1-100__django__django-14752"
SAMPLE_WINDOW = 16_000


def sample_messages() -> list[dict[str, Any]]:
    # A deep copy: the loaded transcripts are shared by the whole test session.
    return copy.deepcopy(list(dict(real_transcripts())[SAMPLE_ID]))


def token_counts(messages: list[dict[str, Any]], model: str = MODEL) -> list[int]:
    return counter_for_model(model).count_messages(parse_messages(messages))


def seed_session(
    db: Database,
    *,
    session_id: str | None = None,
    messages: list[dict[str, Any]] | None = None,
    context_length: int = SAMPLE_WINDOW,
    callback_url: str | None = None,
) -> str:
    """A stored session (the real sample by default); its id."""
    session_id = session_id or f"s-{uuid.uuid4().hex[:10]}"
    messages = sample_messages() if messages is None else messages
    sessions.put_snapshot(
        db, session_id=session_id, model=MODEL, context_length=context_length,
        messages=messages, token_counts=token_counts(messages), callback_url=callback_url,
    )  # fmt: skip
    return session_id


def seed_job(
    db: Database,
    session_id: str,
    *,
    trigger: str = "hygiene",
    force: bool = False,
    target_tokens: int | None = None,
) -> str:
    job = jobs.create_job(
        db, session_id=session_id, trigger=trigger, force=force, target_tokens=target_tokens
    )
    return job.id


class BlockingSummarizer:
    """Waits for ``release`` before answering, so a test can act while a job is mid-run."""

    name = "blocking"
    is_llm = True

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self._inner = ExtractiveSummarizer()

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        self.started.set()
        if not self.release.wait(30):
            raise AssertionError("the test never released the summarizer")
        return self._inner.summarize(request)


class RaisingSummarizer:
    """Raises ``exc`` on every call (a provider error, or a bug)."""

    is_llm = True

    def __init__(self, exc: BaseException, name: str = "raising") -> None:
        self.exc = exc
        self.name = name

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        raise self.exc


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test's own: workers of other tests never see its queue."""
    with RedisServer(tmp_path / "redis", appendonly=False) as server:
        yield server


def runtime_for(settings: Settings, summarizer: Summarizer | None = None) -> Runtime:
    assert settings.redis_url is not None
    return Runtime(
        settings=settings,
        db=Database(settings.database_url),
        redis=redis_client(settings.redis_url),
        make_summarizer=lambda: summarizer or ExtractiveSummarizer(),
        celery=make_celery(settings),
    )


def close_runtime(rt: Runtime) -> None:
    rt.celery.close()
    rt.close()


@pytest.fixture
def settings(database_url: str, private_redis: RedisServer, tmp_path: Path) -> Settings:
    return Settings(
        database_url=database_url, redis_url=private_redis.url, var_dir=tmp_path / "var"
    )


@pytest.fixture
def rt(settings: Settings) -> Iterator[Runtime]:
    runtime = runtime_for(settings)
    yield runtime
    close_runtime(runtime)


def in_background(fn: Any, *args: Any, **kwargs: Any) -> tuple[threading.Thread, dict[str, Any]]:
    """Run ``fn`` in a thread; its result or exception lands in the returned dict."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = fn(*args, **kwargs)
        except BaseException as exc:  # handed to the test, which asserts on it
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    return thread, box
