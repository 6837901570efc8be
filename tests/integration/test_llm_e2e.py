"""Summarizer failures end to end: the fake provider, a real Celery worker process, Redis, SQLite.

Each test stores a real agent session, scripts what the provider answers, sends the job to the
broker and reads the job's telemetry once the worker finishes it. The worker builds its
summarizer from the environment exactly as in production (``COMPACTION_LLM_BASE_URL`` pointing
at the fake server), so the whole chain runs: task, lock, core, LLM client, cooldowns, write-back.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.stack import StackProcess, stack_env, start_worker
from tests.support.worker_fixtures import seed_job, seed_session
from worker import cooldowns, keys
from worker.celery_app import make_celery
from worker.enqueue import enqueue_job
from worker.redis_server import RedisServer
from worker.settings import Settings
from worker.store import jobs, sessions
from worker.store.db import Database

pytestmark = pytest.mark.integration

SMALL, MAIN = "small-summarizer", "main-model"
READ_TIMEOUT_S = 1.0


@dataclass
class Stack:
    llm: FakeOpenAI
    db: Database
    redis: redis.Redis
    celery: Any
    settings: Settings
    worker: StackProcess

    @property
    def endpoint(self) -> str:
        return cooldowns.endpoint_id(self.settings)

    def run(self, session_id: str, *, force: bool = True, timeout_s: float = 60) -> dict[str, Any]:
        """One job through the worker; its telemetry when it has finished."""
        trigger = "manual" if force else "hygiene"
        job_id = seed_job(self.db, session_id, trigger=trigger, force=force)
        enqueue_job(job_id, app=self.celery)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            row = jobs.get_job(self.db, job_id=job_id)
            if row.status in jobs.FINISHED_STATUSES:
                return jobs.job_telemetry(row)
            time.sleep(0.05)
        raise AssertionError(f"job {job_id} not finished in {timeout_s}s:\n{self.worker.log()}")

    def cooldown(self, session_id: str) -> cooldowns.Cooldown | None:
        return cooldowns.active_cooldown(self.redis, session_id=session_id, endpoint=self.endpoint)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, sqlite_template: Path) -> Iterator[Stack]:
    base = tmp_path_factory.mktemp("llm-e2e")
    shutil.copyfile(sqlite_template, base / "compaction.db")
    database_url = f"sqlite:///{base / 'compaction.db'}"
    with (
        RedisServer(base / "redis", appendonly=False) as redis_server,
        FakeOpenAI() as llm,
    ):
        chosen: dict[str, Any] = {
            "llm_base_url": llm.base_url,
            "summary_model": SMALL,
            "main_model": MAIN,
            "llm_read_timeout_s": READ_TIMEOUT_S,
            "llm_request_deadline_s": 10,
            "llm_retry_after_max_wait_s": 0.5,
        }
        env = stack_env(
            redis_url=redis_server.url, database_url=database_url, var_dir=base / "var", **chosen
        )
        settings = Settings(
            database_url=database_url, redis_url=redis_server.url, var_dir=base / "var", **chosen
        )
        worker = start_worker(env, base, name="llm-e2e-worker", concurrency=2)
        db = Database(database_url)
        client = redis.Redis.from_url(redis_server.url)
        celery = make_celery(settings)
        try:
            yield Stack(llm, db, client, celery, settings, worker)
        finally:
            celery.close()
            client.close()
            db.dispose()
            worker.stop()


@pytest.fixture
def e2e(stack: Stack) -> Iterator[Stack]:
    """The shared stack, with a clean script and no endpoint-wide cooldown left by a test."""
    stack.llm.clear()
    yield stack
    stack.redis.delete(keys.endpoint_cooldown(stack.endpoint), keys.timeout_streak(stack.endpoint))


def active_version(stack: Stack, session_id: str) -> tuple[int, int]:
    row = sessions.get_session(stack.db, session_id=session_id)
    return row.version, row.compaction_count


# -- the healthy path --------------------------------------------------------------------------


def test_summary_model_answers_with_usage(e2e: Stack) -> None:
    e2e.llm.script(SMALL, Reply.ok("## Goal\nFix the bug.\n## Completed Actions\nRan tests."))
    session_id = seed_session(e2e.db)
    t = e2e.run(session_id)
    assert t["status"] == "succeeded", t
    assert (t["summarizer"], t["fallback_used"], t["dropped_count"]) == (SMALL, False, 0)
    assert t["aux_model_failed"] is None and t["error_class"] is None
    assert t["summarizer_calls"] == 1 and t["llm_ms"] > 0
    assert t["tokens_after"] < t["tokens_before"]
    (sent,) = e2e.llm.requests
    assert sent.model == SMALL and sent.stream
    # A 16,000-token window: the summary is held to the room under the 25% target (what head
    # and tail leave), above the 256-token floor and below the 2,000 a large window would get;
    # the model may write 1.3x that.
    assert sent.max_tokens is not None and int(256 * 1.3) <= sent.max_tokens < int(2000 * 1.3)
    assert e2e.cooldown(session_id) is None


# -- failures where the main model stands in ---------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "error_class"),
    [
        (Reply.error(404, code="model_not_found"), "model_not_found"),
        (Reply.error(503), "server_error"),
        (Reply.rate_limited(120), "rate_limited"),
        (Reply.invalid_json(), "protocol_error"),
        (Reply.stream_cut(), "protocol_error"),
        (Reply.empty("   "), "empty_summary"),
        (Reply.reasoning_only(), "empty_summary"),
        (Reply.ok().after(READ_TIMEOUT_S + 1), "timeout"),
    ],
    ids=["404", "503", "429", "invalid-json", "stream-cut", "empty", "reasoning-only", "slow"],
)
def test_main_model_stands_in_and_the_aux_failure_is_recorded(
    e2e: Stack, reply: Reply, error_class: str
) -> None:
    e2e.llm.script(SMALL, reply)
    e2e.llm.script(MAIN, Reply.ok("## Goal\nWritten by the main model."))
    session_id = seed_session(e2e.db)
    t = e2e.run(session_id)
    assert t["status"] == "succeeded", t
    assert (t["summarizer"], t["fallback_used"], t["dropped_count"]) == (MAIN, False, 0)
    assert t["aux_model_failed"] is not None and t["aux_model_failed"].startswith(error_class)
    assert t["error_class"] is None
    assert [r.model for r in e2e.llm.requests] == [SMALL, MAIN]
    assert e2e.cooldown(session_id) is None


# -- failures on both models: the extractive fallback, a marker, a cooldown --------------------


@pytest.mark.parametrize(
    ("reply", "error_class"),
    [
        (Reply.error(500), "server_error"),
        (Reply.error(404, code="model_not_found"), "model_not_found"),
        (Reply.rate_limited(120), "rate_limited"),
        (Reply.invalid_json(stream=False), "protocol_error"),
        (Reply.truncated(), "protocol_error"),
        (Reply.empty(), "empty_summary"),
        (Reply.reasoning_only(), "empty_summary"),
        (Reply.ok().after(READ_TIMEOUT_S + 1), "timeout"),
    ],
    ids=["500", "404", "429", "invalid-json", "truncated", "empty", "reasoning-only", "slow"],
)
def test_both_models_failing_degrades_to_the_fallback_and_cools_down(
    e2e: Stack, reply: Reply, error_class: str
) -> None:
    e2e.llm.script(SMALL, reply)
    e2e.llm.script(MAIN, reply)
    session_id = seed_session(e2e.db)
    t = e2e.run(session_id)
    assert t["status"] == "succeeded", t
    assert t["fallback_used"] is True and t["dropped_count"] > 0
    assert t["error_class"] == error_class
    assert t["aux_model_failed"] is not None and t["aux_model_failed"].startswith(error_class)
    cooldown = e2e.cooldown(session_id)
    assert cooldown is not None and cooldown.error_class == error_class
    if error_class == "rate_limited":  # the provider's Retry-After (120 s), not the default 60
        assert 115 < cooldown.remaining_s() <= 120
    else:
        expected_s = cooldowns.cooldown_seconds(error_class, settings=e2e.settings)
        assert expected_s - 5 < cooldown.remaining_s() <= expected_s


# -- auth: abort, transcript untouched -----------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
def test_auth_failure_aborts_and_leaves_the_transcript_unchanged(e2e: Stack, status: int) -> None:
    e2e.llm.script(SMALL, Reply.error(status, code="invalid_api_key"))
    session_id = seed_session(e2e.db)
    before = active_version(e2e, session_id)
    t = e2e.run(session_id)
    assert (t["status"], t["error_class"]) == ("aborted", "auth"), t
    assert active_version(e2e, session_id) == before
    assert [r.model for r in e2e.llm.requests] == [SMALL]  # never the main model
    cooldown = e2e.cooldown("any-other-session")  # provider-wide: every session waits
    assert cooldown is not None and cooldown.scope == "endpoint"


# -- context too long: the core splits smaller and carries on ----------------------------------


def test_context_too_long_is_split_smaller_and_still_summarized(e2e: Stack) -> None:
    e2e.llm.script(SMALL, Reply.context_too_long("llamacpp"))
    session_id = seed_session(e2e.db)
    t = e2e.run(session_id)
    assert t["status"] == "succeeded", t
    assert (t["fallback_used"], t["dropped_count"], t["error_class"]) == (False, 0, None)
    assert t["summarizer_calls"] >= 3  # the refused call, then at least two smaller ones
    sizes = [len(r.messages[0]["content"]) for r in e2e.llm.requests]
    assert max(sizes[1:]) < sizes[0]
    assert all(r.model == SMALL for r in e2e.llm.requests)


def test_a_server_window_smaller_than_ours_converges(e2e: Stack) -> None:
    """The provider's real window is smaller than COMPACTION_SUMMARY_CONTEXT_LENGTH claims."""
    e2e.llm.context_window = 3_000  # rough tokens; our settings say 32k
    try:
        session_id = seed_session(e2e.db)
        t = e2e.run(session_id)
    finally:
        e2e.llm.context_window = None
    assert t["status"] == "succeeded", t
    assert t["fallback_used"] is False and t["summarizer_calls"] >= 2


# -- cooldowns: automatic jobs wait, a forced manual one does not --------------------------------


def test_cooldown_skips_the_next_automatic_job_and_force_bypasses_it(e2e: Stack) -> None:
    e2e.llm.script(SMALL, Reply.error(500))
    e2e.llm.script(MAIN, Reply.error(500))
    session_id = seed_session(e2e.db)
    first = e2e.run(session_id, force=False)
    assert (first["fallback_used"], first["error_class"]) == (True, "server_error"), first

    e2e.llm.clear()
    automatic = e2e.run(session_id, force=False)
    assert (automatic["status"], automatic["skip_reason"]) == ("skipped", "cooldown")
    assert e2e.llm.requests == []  # the provider was not asked

    forced = e2e.run(session_id, force=True)
    assert forced["skip_reason"] != "cooldown", forced
    assert forced["status"] in ("succeeded", "skipped"), forced


def test_auth_cooldown_then_manual_force_succeeds(e2e: Stack) -> None:
    e2e.llm.script(SMALL, Reply.error(401, code="invalid_api_key"))
    session_id = seed_session(e2e.db)
    assert e2e.run(session_id, force=False)["status"] == "aborted"
    automatic = e2e.run(session_id, force=False)
    assert (automatic["status"], automatic["skip_reason"]) == ("skipped", "cooldown")

    forced = e2e.run(session_id, force=True)  # the operator fixed the key and compacts by hand
    assert forced["status"] == "succeeded", forced
    assert (forced["summarizer"], forced["fallback_used"]) == (SMALL, False)
    assert e2e.cooldown(session_id) is not None  # the endpoint's own cooldown runs its course
