"""Real `compaction worker` processes on a private Redis, a SQLite file and a fake LLM server.

These check what only real processes can show: a worker killed with SIGKILL mid-job, its message
redelivered to another worker; duplicate deliveries that must not overlap; a heartbeat that
keeps a long job's lock. Broker timings are tuned through settings so each test takes seconds.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.stack import broker, stack_env, start_worker, start_workers, wait_until
from tests.support.worker_fixtures import private_redis, sample_messages, seed_job, seed_session
from worker import keys
from worker.enqueue import enqueue_job
from worker.redis_server import RedisServer
from worker.store import jobs, sessions
from worker.store.db import Database

pytestmark = pytest.mark.integration
__all__ = ["private_redis"]  # a fixture, imported for pytest

SUMMARY_MODEL = "fake-summary"


@pytest.fixture
def db(tmp_path: Path, sqlite_template: Path) -> Iterator[Database]:
    path = tmp_path / "compaction.db"
    shutil.copyfile(sqlite_template, path)
    database = Database(f"sqlite:///{path}")
    yield database
    database.dispose()


def worker_env(
    db: Database, redis_server: RedisServer, llm: FakeOpenAI, tmp_path: Path, **settings: object
) -> dict[str, str]:
    return stack_env(
        redis_url=redis_server.url, database_url=db.url, var_dir=tmp_path / "var",
        llm_base_url=llm.base_url, summary_model=SUMMARY_MODEL, llm_stream="false",
        lock_busy_retry_s=0.3, job_retry_backoff_s=0.2, **settings,
    )  # fmt: skip


def finished(db: Database, job_id: str) -> bool:
    return jobs.get_job(db, job_id=job_id).status in jobs.FINISHED_STATUSES


def drained(redis_server: RedisServer) -> bool:
    """No message waiting or out for delivery: every copy of every task was handled."""
    with redis.Redis.from_url(redis_server.url) as client:
        return bool(client.llen(keys.QUEUE) == 0 and client.hlen(keys.BROKER_UNACKED) == 0)


def test_a_killed_workers_job_is_redelivered_and_completes_once(
    db: Database, private_redis: RedisServer, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.script(SUMMARY_MODEL, Reply.ok("never delivered").after(120))  # A hangs here
    base = worker_env(db, private_redis, fake_openai, tmp_path, lock_ttl_s=2)
    # A never restores its own message; B restores A's abandoned one after 2 s.
    env_a = {**base, "COMPACTION_VISIBILITY_TIMEOUT_S": "300"}
    env_b = {**base, "COMPACTION_VISIBILITY_TIMEOUT_S": "2",
             "COMPACTION_UNACKED_RESTORE_INTERVAL_S": "0.5"}  # fmt: skip
    before = sample_messages()
    session_id = seed_session(db, messages=before)
    job_id = seed_job(db, session_id)

    worker_a = start_worker(env_a, tmp_path, name="worker-a")
    try:
        with broker(private_redis.url) as app:
            enqueue_job(job_id, app=app)
        wait_until(lambda: len(fake_openai.requests) == 1, timeout_s=60, what="A's LLM call",
                   logs=[worker_a])  # fmt: skip
        assert jobs.get_job(db, job_id=job_id).status == "running"
        worker_a.kill_hard()
    finally:
        worker_a.stop()

    worker_b = start_worker(env_b, tmp_path, name="worker-b")
    try:
        wait_until(lambda: finished(db, job_id), timeout_s=60, what="the job finishing",
                   logs=[worker_b])  # fmt: skip
        wait_until(lambda: drained(private_redis), timeout_s=30, what="an empty queue",
                   logs=[worker_b])  # fmt: skip
    finally:
        worker_b.stop()

    job = jobs.get_job(db, job_id=job_id)
    assert (job.status, job.attempt) == ("succeeded", 2), worker_b.log()
    assert job.worker is not None and str(worker_b.pid) in job.worker
    session = sessions.get_session(db, session_id=session_id)
    assert session.compaction_count == 1
    archived = sessions.archived_messages(db, session_id=session_id)
    assert [m.message for m in archived] == before[: len(archived)]  # each original once
    assert session.message_count == job.messages_after


def test_with_the_default_timings_a_killed_workers_job_is_back_within_two_minutes(
    db: Database, private_redis: RedisServer, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    # No broker timing is tuned here: the visibility timeout, the restore scan and the lock
    # TTL are the defaults a user runs with.
    fake_openai.script(
        SUMMARY_MODEL, Reply.ok("never delivered").after(300), Reply.ok("Summary: B's.")
    )
    env = worker_env(db, private_redis, fake_openai, tmp_path)
    session_id = seed_session(db, messages=sample_messages())
    job_id = seed_job(db, session_id)
    worker_a = start_worker(env, tmp_path, name="worker-a")
    try:
        with broker(private_redis.url) as app:
            enqueue_job(job_id, app=app)
        wait_until(lambda: len(fake_openai.requests) == 1, timeout_s=60, what="A's LLM call",
                   logs=[worker_a])  # fmt: skip
        worker_b = start_worker(env, tmp_path, name="worker-b")
        worker_a.kill_hard()
    finally:
        worker_a.stop()
    try:
        # The bound the defaults promise (docs/worker.md): well under two minutes.
        wait_until(lambda: finished(db, job_id), timeout_s=120, what="the job, redelivered",
                   logs=[worker_b])  # fmt: skip
    finally:
        worker_b.stop()
    job = jobs.get_job(db, job_id=job_id)
    assert (job.status, job.attempt) == ("succeeded", 2), worker_b.log()
    assert sessions.get_session(db, session_id=session_id).compaction_count == 1


def test_a_live_job_longer_than_the_visibility_timeout_is_never_handed_out_again(
    db: Database, private_redis: RedisServer, tmp_path: Path
) -> None:
    # A 3 s visibility timeout and a 9 s summary: the worker re-scores the message it holds,
    # so no other delivery (and no deferred copy) ever appears.
    with FakeOpenAI(default=Reply.ok("Summary: slow.").after(9)) as llm:
        env = worker_env(
            db, private_redis, llm, tmp_path, visibility_timeout_s=3,
            unacked_restore_interval_s=0.5,
        )  # fmt: skip
        job_id = seed_job(db, seed_session(db))
        workers = start_workers(env, tmp_path, names=["worker-1", "worker-2"])
        try:
            with broker(private_redis.url) as app:
                enqueue_job(job_id, app=app)
            wait_until(lambda: finished(db, job_id), timeout_s=60, what="the job", logs=workers)
            time.sleep(4.0)  # a restore after the ack would show up here
        finally:
            for worker in workers:
                worker.stop()
        logs = "".join(w.log() for w in workers)
        assert logs.count(f"[{job_id}] received") == 1, logs
        assert "Retry in" not in logs
        assert drained(private_redis)
        job = jobs.get_job(db, job_id=job_id)
        assert (job.status, job.attempt) == ("succeeded", 1)
        assert len(llm.requests) == 1


def test_duplicate_deliveries_of_a_job_never_overlap(
    db: Database, private_redis: RedisServer, tmp_path: Path
) -> None:
    with FakeOpenAI(default=Reply.ok("Summary: slow but fine.").after(1.5)) as llm:
        env = worker_env(db, private_redis, llm, tmp_path)
        job_id = seed_job(db, seed_session(db))
        workers = start_workers(env, tmp_path, names=["worker-1", "worker-2"])
        try:
            with broker(private_redis.url) as app:
                for _ in range(4):  # the same message four times, as a flaky broker might
                    enqueue_job(job_id, app=app)
            wait_until(lambda: finished(db, job_id), timeout_s=60, what="the job", logs=workers)
            wait_until(lambda: drained(private_redis), timeout_s=30, what="an empty queue",
                       logs=workers)  # fmt: skip
        finally:
            for worker in workers:
                worker.stop()
        job = jobs.get_job(db, job_id=job_id)
        assert (job.status, job.attempt) == ("succeeded", 1)  # claimed once, run once
        assert len(llm.requests) == job.summarizer_calls
        assert sessions.get_session(db, session_id=job.session_id).compaction_count == 1
        logs = "".join(w.log() for w in workers)
        assert "Retry in" in logs  # the copies that found the session locked waited


def test_the_heartbeat_keeps_a_long_jobs_lock(
    db: Database, private_redis: RedisServer, tmp_path: Path
) -> None:
    with FakeOpenAI(default=Reply.ok("Summary: took a while.").after(3.0)) as llm:
        env = worker_env(db, private_redis, llm, tmp_path, lock_ttl_s=1)
        session_id = seed_session(db)
        job_id = seed_job(db, session_id)
        worker = start_worker(env, tmp_path)
        holders: list[str | None] = []
        try:
            with broker(private_redis.url) as app:
                enqueue_job(job_id, app=app)
            wait_until(lambda: len(llm.requests) == 1, timeout_s=60, what="the LLM call",
                       logs=[worker])  # fmt: skip
            with redis.Redis.from_url(private_redis.url, decode_responses=True) as client:
                for _ in range(25):  # 2.5 s of a 1 s TTL
                    holders.append(client.get(keys.session_lock(session_id)))
                    time.sleep(0.1)
            wait_until(lambda: finished(db, job_id), timeout_s=60, what="the job", logs=[worker])
        finally:
            worker.stop()
        assert all(h is not None and h.startswith(f"{job_id}@") for h in holders), holders
        assert jobs.get_job(db, job_id=job_id).status == "succeeded"


def test_a_prefork_worker_fails_a_job_past_its_soft_time_limit_as_timeout(
    db: Database, private_redis: RedisServer, tmp_path: Path
) -> None:
    with FakeOpenAI(default=Reply.ok("Summary: too late.").after(8)) as llm:
        env = worker_env(
            db, private_redis, llm, tmp_path, job_soft_time_limit_s=3, job_hard_time_limit_s=30
        )
        session_id = seed_session(db)
        version = sessions.get_session(db, session_id=session_id).version
        job_id = seed_job(db, session_id)
        worker = start_worker(env, tmp_path, pool="prefork", concurrency=1)
        try:
            with broker(private_redis.url) as app:
                enqueue_job(job_id, app=app)
            wait_until(lambda: finished(db, job_id), timeout_s=60, what="the job", logs=[worker])
        finally:
            worker.stop()
        job = jobs.get_job(db, job_id=job_id)
        assert (job.status, job.error_class) == ("failed", "timeout"), worker.log()
        assert sessions.get_session(db, session_id=session_id).version == version


def test_a_job_survives_a_broker_restart_mid_job_and_completes_once(
    db: Database, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    # Redis goes away while the summarizer runs (a failover, an upgrade) and comes back with
    # its append-only file. Whatever Celery does with the running task (it cancels long-running
    # tasks on connection loss), the message is redelivered and the job completes exactly once.
    fake_openai.script(SUMMARY_MODEL, Reply.ok("Summary: made across a restart.").after(4))
    with RedisServer(tmp_path / "redis", appendonly=True) as server:
        env = worker_env(
            db, server, fake_openai, tmp_path, visibility_timeout_s=3,
            unacked_restore_interval_s=0.5, lock_ttl_s=2,
        )  # fmt: skip
        before = sample_messages()
        session_id = seed_session(db, messages=before)
        job_id = seed_job(db, session_id)
        worker = start_worker(env, tmp_path)
        try:
            with broker(server.url) as app:
                enqueue_job(job_id, app=app)
            wait_until(lambda: len(fake_openai.requests) == 1, timeout_s=60,
                       what="the first LLM call", logs=[worker])  # fmt: skip
            server.stop()  # SIGTERM: the append-only file is flushed
            time.sleep(1.0)
            server.start()
            wait_until(lambda: finished(db, job_id), timeout_s=90, what="the job finishing",
                       logs=[worker])  # fmt: skip
            wait_until(lambda: drained(server), timeout_s=60, what="an empty queue",
                       logs=[worker])  # fmt: skip
            time.sleep(2.0)  # a late redelivery would show up here
            # Stock kombu 5.7 under Celery 5.7 stops the worker here ("Unrecoverable error"):
            # worker/broker.py repairs that.
            assert worker.alive and "Unrecoverable error" not in worker.log(), worker.log()
        finally:
            worker.stop()

    job = jobs.get_job(db, job_id=job_id)
    assert job.status == "succeeded", (job.status, job.error_class, job.error, worker.log())
    session = sessions.get_session(db, session_id=session_id)
    assert session.compaction_count == 1
    archived = sessions.archived_messages(db, session_id=session_id)
    assert [m.message for m in archived] == before[: len(archived)]  # each original once
    assert session.message_count == job.messages_after
