"""A real `compaction worker --concurrency N` keeps N jobs' LLM calls in flight at once.

Every thread a worker runs may hold one LLM call: the client's connection pool must be at least
that large, or the jobs past the pool's size wait for a connection, time out, and are counted
as the summary model's failures (the main model, a fallback, a cooldown).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.stack import broker, stack_env, start_worker, wait_until
from tests.support.worker_fixtures import private_redis, sample_messages, seed_job, seed_session
from worker.enqueue import enqueue_job
from worker.redis_server import RedisServer
from worker.store import jobs
from worker.store.db import Database

pytestmark = pytest.mark.integration
__all__ = ["private_redis"]  # a fixture, imported for pytest

SUMMARY_MODEL = "fake-summary"
MAIN_MODEL = "fake-main"
CONCURRENCY = 32  # twice the default COMPACTION_WORKER_CONCURRENCY
LLM_ANSWER_S = 2.5  # longer than the connect timeout below, which also bounds a pool wait
CONNECT_TIMEOUT_S = 1.5


@pytest.fixture
def db(tmp_path: Path, sqlite_template: Path) -> Iterator[Database]:
    path = tmp_path / "compaction.db"
    shutil.copyfile(sqlite_template, path)
    database = Database(f"sqlite:///{path}")
    yield database
    database.dispose()


def test_every_thread_of_the_worker_gets_a_connection_to_the_summary_model(
    db: Database, private_redis: RedisServer, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.default = Reply.ok("Summary: the conversation so far.").after(LLM_ANSWER_S)
    env = stack_env(
        redis_url=private_redis.url, database_url=db.url, var_dir=tmp_path / "var",
        llm_base_url=fake_openai.base_url, summary_model=SUMMARY_MODEL, main_model=MAIN_MODEL,
        llm_stream="false", llm_connect_timeout_s=CONNECT_TIMEOUT_S,
    )  # fmt: skip
    messages = sample_messages()
    job_ids = [seed_job(db, seed_session(db, messages=messages)) for _ in range(CONCURRENCY)]

    worker = start_worker(env, tmp_path, concurrency=CONCURRENCY)
    try:
        with broker(private_redis.url) as app:
            for job_id in job_ids:
                enqueue_job(job_id, app=app)
        wait_until(
            lambda: all(jobs.get_job(db, job_id=j).status in jobs.FINISHED_STATUSES
                        for j in job_ids),
            timeout_s=60, what="every job finishing", logs=[worker],
        )  # fmt: skip
    finally:
        worker.stop()

    done = [jobs.get_job(db, job_id=j) for j in job_ids]
    outcomes = {(j.status, j.summarizer, j.fallback_used, j.aux_model_failed) for j in done}
    assert outcomes == {("succeeded", SUMMARY_MODEL, False, None)}, worker.log()[-4000:]
    assert {r.model for r in fake_openai.requests} == {SUMMARY_MODEL}
    # All in flight together: the last call was sent before the first one was answered.
    sent = sorted(r.received_at for r in fake_openai.requests)
    assert len(sent) >= CONCURRENCY
    assert sent[CONCURRENCY - 1] - sent[0] < LLM_ANSWER_S
