"""Job-completion callbacks: signing, and delivery by a real worker to a real local server."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.callback_receiver import CallbackReceiver
from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.stack import broker, stack_env, start_worker, wait_until
from tests.support.worker_fixtures import private_redis, seed_job, seed_session
from worker.callbacks import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    backoff_s,
    callback_body,
    sign,
    verify,
)
from worker.enqueue import enqueue_job
from worker.redis_server import RedisServer
from worker.store import jobs, sessions
from worker.store.db import Database

__all__ = ["private_redis"]  # a fixture, imported for pytest
SECRET = "test-callback-secret"


def test_a_signature_verifies_only_the_exact_body_and_secret() -> None:
    body = callback_body({"id": "j1", "status": "succeeded"}, session_id="s", version=7, sent_at=1)
    signature = sign(body, SECRET)
    assert signature.startswith("sha256=") and len(signature) == 7 + 64
    assert verify(body, signature, SECRET)
    assert not verify(body.replace(b"7", b"8"), signature, SECRET)
    assert not verify(body, signature, "another-secret")
    assert not verify(body, None, SECRET)


def test_the_body_is_canonical_and_carries_its_timestamp() -> None:
    one = callback_body({"b": 1, "a": 2}, session_id="s", version=3, sent_at=1700000000)
    two = callback_body({"a": 2, "b": 1}, session_id="s", version=3, sent_at=1700000000)
    assert one == two
    assert b'"sent_at":1700000000' in one and b" " not in one


def test_backoff_doubles_is_capped_and_jittered() -> None:
    for attempt, ceiling in [(1, 2.0), (2, 4.0), (3, 8.0), (4, 16.0), (30, 300.0)]:
        waits = [backoff_s(attempt) for _ in range(200)]
        assert all(0 <= w < ceiling for w in waits)
        assert max(waits) > 0.75 * ceiling and min(waits) < 0.25 * ceiling  # spread over it


@pytest.fixture
def db(tmp_path: Path, sqlite_template: Path) -> Iterator[Database]:
    path = tmp_path / "compaction.db"
    shutil.copyfile(sqlite_template, path)
    database = Database(f"sqlite:///{path}")
    yield database
    database.dispose()


def env_for(
    db: Database, redis_server: RedisServer, tmp_path: Path, **settings: object
) -> dict[str, str]:
    return stack_env(
        redis_url=redis_server.url, database_url=db.url, var_dir=tmp_path / "var",
        callback_secret=SECRET, callback_backoff_s=0.2, **settings,
    )  # fmt: skip


def compact_and_wait(
    db: Database,
    redis_server: RedisServer,
    tmp_path: Path,
    callback_url: str,
    *,
    until: str,
    **settings: object,
) -> tuple[str, str, str]:
    """Seed a session with ``callback_url``, run its job on a real worker until the job's
    ``callback_status`` is ``until``; the session id, job id and the worker's log."""
    session_id = seed_session(db, callback_url=callback_url)
    job_id = seed_job(db, session_id)
    worker = start_worker(env_for(db, redis_server, tmp_path, **settings), tmp_path)
    try:
        with broker(redis_server.url) as app:
            enqueue_job(job_id, app=app)
        wait_until(lambda: jobs.get_job(db, job_id=job_id).callback_status == until,
                   timeout_s=60, what=f"callback_status={until}", logs=[worker])  # fmt: skip
    finally:
        worker.stop()
    return session_id, job_id, worker.log()


@pytest.mark.integration
def test_a_finished_job_is_posted_signed_after_retries(
    db: Database, private_redis: RedisServer, tmp_path: Path
) -> None:
    with CallbackReceiver(secret=SECRET, fail_first=2) as receiver:
        session_id, job_id, _ = compact_and_wait(
            db, private_redis, tmp_path, receiver.url, until="delivered"
        )

    assert [r.answered for r in receiver.received] == [503, 503, 200]
    delivered = receiver.received[-1]
    assert delivered.signature_ok
    assert delivered.headers[SIGNATURE_HEADER.lower()] == sign(delivered.body, SECRET)
    doc = delivered.document
    assert str(doc["sent_at"]) == delivered.headers[TIMESTAMP_HEADER.lower()]
    session = sessions.get_session(db, session_id=session_id)
    assert (doc["session_id"], doc["version"]) == (session_id, session.version)
    assert doc["job"]["id"] == job_id and doc["job"]["status"] == "succeeded"
    assert doc["job"]["tokens_after"] < doc["job"]["tokens_before"]
    job = jobs.get_job(db, job_id=job_id)
    assert (job.status, job.callback_attempts) == ("succeeded", 3)


@pytest.mark.integration
def test_a_callback_that_keeps_failing_gives_up_and_the_job_stays_succeeded(
    db: Database, private_redis: RedisServer, tmp_path: Path
) -> None:
    with CallbackReceiver(secret=SECRET, fail_first=100) as receiver:
        _, job_id, _ = compact_and_wait(
            db, private_redis, tmp_path, receiver.url, until="failed", callback_max_attempts=3
        )

    assert len(receiver.received) == 3
    job = jobs.get_job(db, job_id=job_id)
    assert (job.status, job.callback_attempts) == ("succeeded", 3)


@pytest.mark.integration
def test_a_callback_to_a_metadata_address_fails_at_once_without_a_request(
    db: Database, private_redis: RedisServer, tmp_path: Path
) -> None:
    # Stored before the API refused such URLs, or spelt so that only a resolver sees it:
    # 2852039166 is 169.254.169.254. Nothing listens there; the worker must not even try.
    _, job_id, log = compact_and_wait(
        db, private_redis, tmp_path, "http://2852039166/latest/meta-data",
        until="failed", callback_max_attempts=5,
    )  # fmt: skip

    job = jobs.get_job(db, job_id=job_id)
    assert (job.status, job.callback_attempts) == ("succeeded", 1)
    assert "(169.254.169.254) is link-local" in log


@pytest.mark.integration
def test_a_gateway_answering_with_an_endless_body_is_delivered_on_the_first_attempt(
    db: Database, private_redis: RedisServer, tmp_path: Path
) -> None:
    # Only the status counts: the worker does not read (or wait for) the answer's body.
    with CallbackReceiver(secret=SECRET, endless_answer=True) as receiver:
        _, job_id, _ = compact_and_wait(
            db, private_redis, tmp_path, receiver.url, until="delivered", callback_timeout_s=2
        )

    assert [r.answered for r in receiver.received] == [200]
    assert jobs.get_job(db, job_id=job_id).callback_attempts == 1


@pytest.mark.integration
def test_a_callback_does_not_wait_behind_a_backlog_of_jobs(
    db: Database, private_redis: RedisServer, tmp_path: Path
) -> None:
    # One worker thread, five slow jobs waiting: the first job's callback goes out before the
    # backlog drains (its own queue), not after all five (it used to queue behind them).
    with (
        CallbackReceiver(secret=SECRET) as receiver,
        FakeOpenAI(default=Reply.ok("Summary: slow.").after(1.5)) as llm,
    ):
        env = env_for(
            db, private_redis, tmp_path, llm_base_url=llm.base_url, summary_model="fake",
            llm_stream="false",
        )  # fmt: skip
        first = seed_job(db, seed_session(db, callback_url=receiver.url))
        backlog = [seed_job(db, seed_session(db)) for _ in range(5)]
        worker = start_worker(env, tmp_path, concurrency=1)
        try:
            with broker(private_redis.url) as app:
                for job_id in (first, *backlog):
                    enqueue_job(job_id, app=app)
            wait_until(lambda: bool(receiver.received), timeout_s=60, what="the callback",
                       logs=[worker])  # fmt: skip
            done = [jobs.get_job(db, job_id=j).status for j in backlog].count("succeeded")
        finally:
            worker.stop()
    assert done <= 2, f"{done} of 5 backlog jobs ran before the callback"
