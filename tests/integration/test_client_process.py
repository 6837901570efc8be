"""The typed client against real ``compaction api`` and ``compaction worker`` processes on a
private redis-server: a session compacted end to end with its signed callback checked by
``verify_callback``, sync and async; and a retried write after the API process was killed
between its commit and its answer, stored once.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy import Connection, create_engine, text

from api.client import (
    AsyncCompactionClient,
    CompactionClient,
    HygieneAnswer,
    RetryPolicy,
    verify_callback,
)
from tests.store_factories import make_transcript
from tests.support.callback_receiver import CallbackReceiver
from tests.support.stack import (
    StackProcess,
    api_process,
    stack_env,
    start_api,
    start_stack,
    wait_api_ready,
    wait_until,
)
from tests.support.worker_fixtures import MODEL, SAMPLE_WINDOW, private_redis, sample_messages
from worker.redis_server import RedisServer, free_port

pytestmark = pytest.mark.integration
__all__ = ["private_redis"]  # a fixture, imported for pytest

SECRET = "client-test-callback-secret"
BIG = " ".join(["lorem"] * 2_000)


@pytest.fixture
def env(database_url: str, private_redis: RedisServer, tmp_path: Path) -> dict[str, str]:
    return stack_env(
        redis_url=private_redis.url, database_url=database_url, var_dir=tmp_path / "var",
        callback_secret=SECRET, hygiene_threshold=0.85, min_messages=4,
    )  # fmt: skip


@pytest.fixture
def stack(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    port = free_port()
    procs = start_stack(env, tmp_path, api_port=port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        for proc in procs:
            proc.stop()


def test_a_session_is_compacted_and_its_callback_verifies(stack: str) -> None:
    with CallbackReceiver(secret=SECRET) as receiver, CompactionClient(stack) as queue:
        answer = queue.put_session(
            "c1", model=MODEL, context_length=SAMPLE_WINDOW, messages=sample_messages(),
            callback_url=receiver.url,
        )  # fmt: skip
        assert answer.job_open and answer.hygiene.decision == "enqueued"
        assert answer.hygiene.job_id is not None
        job = queue.wait_for_job(answer.hygiene.job_id, timeout_s=90)
        assert job.status == "succeeded" and job.version_after == 2, job
        assert job.tokens_after is not None and job.tokens_before is not None
        assert job.tokens_after < job.tokens_before and job.finished_at is not None
        transcript = queue.get_messages("c1")
        assert transcript.version == 2 and len(transcript.messages) == job.messages_after

        wait_until(lambda: bool(receiver.delivered()), timeout_s=60, what="the callback")
        delivered = receiver.delivered()[0]
        event = verify_callback(delivered.body, delivered.headers, secret=SECRET)
        assert (event.session_id, event.version, event.job.id) == ("c1", 2, job.id)
        assert event.job.status == "succeeded" and event.job.tokens_after == job.tokens_after

    async def follow_async() -> None:
        async with AsyncCompactionClient(stack) as aqueue:
            again = await aqueue.wait_for_job(job.id, timeout_s=10)
            assert again.status == "succeeded" and again.version_after == 2
            session = await aqueue.get_session("c1")
            assert session.compaction_count == 1 and session.version == 2
            assert session.last_job is not None and session.last_job.id == job.id

    asyncio.run(follow_async())


def turn_committed(conn: Connection, content: str) -> bool:
    """Seen from another connection: the turn's row is committed."""
    try:
        rows = conn.execute(text("SELECT data FROM messages WHERE role = 'user'")).scalars()
        return any(
            (json.loads(d) if isinstance(d, str) else d).get("content") == content for d in rows
        )
    finally:
        conn.rollback()  # a SQLite reader keeps its snapshot until its transaction ends


def test_a_write_whose_api_was_killed_after_the_commit_is_retried_and_stored_once(
    env: dict[str, str], private_redis: RedisServer, database_url: str, tmp_path: Path
) -> None:
    """The client never got an answer (the process died after the commit) and retries, with
    the same key, until a restarted API answers: the stored result, not a second turn."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc: StackProcess = start_api(env, tmp_path, port=port)
    # Patient enough to outlast a restart of the API (seconds): up to 60 tries, 0.5 s apart.
    patient = RetryPolicy(attempts=60, backoff_s=0.2, max_wait_s=0.5)
    engine = create_engine(database_url)
    watcher = engine.connect()
    admin = redis.Redis.from_url(private_redis.url)
    outcome: list[HygieneAnswer | BaseException] = []
    with CompactionClient(base, retry=patient) as queue:
        try:
            queue.put_session(
                "k1", model="gpt-4", context_length=2_000, messages=make_transcript(2)
            )
            # Redis answers reads (the cooldown, before the commit) and holds writes (the job's
            # message, after it): the request waits after its commit.
            admin.client_pause(60_000, all=False)

            def send() -> None:
                try:
                    outcome.append(queue.append("k1", [{"role": "user", "content": BIG}]))
                except BaseException as exc:  # the test asserts on it below
                    outcome.append(exc)

            sender = threading.Thread(target=send)
            sender.start()
            wait_until(
                lambda: turn_committed(watcher, BIG), timeout_s=60, what="the committed turn"
            )
            proc.kill_hard()
        finally:
            admin.client_unpause()
            admin.close()
            watcher.close()
            engine.dispose()
        proc = api_process(env, tmp_path, port=port).start()
        try:
            wait_api_ready(proc, port)
            sender.join(60)
            assert len(outcome) == 1 and isinstance(outcome[0], HygieneAnswer), outcome
            answer = outcome[0]
            assert answer.replayed and answer.job_open, answer  # as committed: its job is open
            messages: list[dict[str, Any]] = queue.get_messages("k1").messages
            assert sum(m.get("content") == BIG for m in messages) == 1
        finally:
            proc.stop()
