"""The compaction job's script, run in-process against a real database and a real Redis.

The summarizer is the only stand-in (for the LLM); everything else is the code the worker runs.
Real worker processes (redelivery after kill -9, heartbeats) are in test_worker_process.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from typing import Any

import kombu.exceptions
import pytest
import redis
import sqlalchemy.exc

from bench.invariants import check_transcript
from tests.support.summarizers import ScriptedSummarizer
from tests.support.worker_fixtures import (
    BlockingSummarizer,
    RaisingSummarizer,
    close_runtime,
    in_background,
    private_redis,
    rt,
    runtime_for,
    sample_messages,
    seed_job,
    seed_session,
    settings,
    token_counts,
)
from worker import cooldowns, keys
from worker.compaction import (
    Decision,
    GuardedSummarizer,
    JobGuard,
    compress_claim,
    decide,
    give_up_locked,
    run_job,
)
from worker.compressor.errors import (
    InvalidTranscriptError,
    SummarizerAuthError,
    SummarizerServerError,
)
from worker.compressor.summarizer import SummaryRequest
from worker.errors import JobDeadlineError, LockBusyError, LockLostError
from worker.locks import acquire
from worker.runtime import Runtime
from worker.settings import Settings
from worker.store import jobs, sessions
from worker.store.errors import JobFencedError
from worker.tasks import max_defers, retry_backoff_s

pytestmark = pytest.mark.integration
__all__ = ["private_redis", "rt", "settings"]  # fixtures, imported for pytest

WORKER = "test-host/1"


def active(rt: Runtime, session_id: str) -> list[dict[str, Any]]:
    return [m.message for m in sessions.active_messages(rt.db, session_id=session_id)]


@pytest.fixture
def blocking(settings: Settings) -> Iterator[tuple[Runtime, BlockingSummarizer]]:
    summarizer = BlockingSummarizer()
    runtime = runtime_for(settings, summarizer)
    yield runtime, summarizer
    summarizer.release.set()
    close_runtime(runtime)


def test_a_job_compacts_its_session_and_reports_telemetry(rt: Runtime) -> None:
    before = sample_messages()
    session_id = seed_session(rt.db, messages=before)
    job_id = seed_job(rt.db, session_id)

    telemetry = run_job(rt, job_id, worker=WORKER)

    assert telemetry["status"] == "succeeded", telemetry
    assert telemetry["attempt"] == 1 and telemetry["worker"] == WORKER
    assert telemetry["tokens_after"] < telemetry["tokens_before"]
    assert telemetry["summarizer"] == "extractive" and telemetry["fallback_used"] is False
    assert telemetry["run_ms"] > 0 and telemetry["queue_wait_ms"] >= 0
    for key in ("run_ms", "queue_wait_ms"):  # milliseconds to a tenth, no float noise
        assert telemetry[key] == round(telemetry[key], 1), telemetry[key]
    assert len(str(telemetry["run_ms"]).partition(".")[2]) <= 1
    after = active(rt, session_id)
    assert check_transcript(before, after) == []
    archived = sessions.archived_messages(rt.db, session_id=session_id)
    assert [m.message for m in archived] == before[: len(archived)]
    assert {m.archived_by_job for m in archived} == {job_id}
    assert sessions.get_session(rt.db, session_id=session_id).compaction_count == 1


def test_a_manual_job_compacts_to_the_size_it_asked_for(rt: Runtime) -> None:
    # The sample (15,034 tokens) in a 32,000-token window: a quarter of it is 8,000.
    by_share = seed_session(rt.db, context_length=32_000)
    asked = seed_session(rt.db, context_length=32_000)
    unasked = run_job(rt, seed_job(rt.db, by_share, trigger="manual"), worker=WORKER)
    job_id = seed_job(rt.db, asked, trigger="manual", target_tokens=6_500)

    telemetry = run_job(rt, job_id, worker=WORKER)

    assert telemetry["status"] == unasked["status"] == "succeeded", telemetry
    assert telemetry["tokens_after"] <= 6_500 < unasked["tokens_after"]
    assert jobs.get_job(rt.db, job_id=job_id).target_tokens == 6_500
    session = sessions.get_session(rt.db, session_id=asked)
    assert session.token_total == telemetry["tokens_after"]
    assert check_transcript(sample_messages(), active(rt, asked)) == []


def test_a_size_asked_for_is_kept_within_a_window_that_shrank_since(rt: Runtime) -> None:
    session_id = seed_session(rt.db, context_length=32_000)
    job_id = seed_job(rt.db, session_id, trigger="manual", target_tokens=30_000)
    # A snapshot PUT gives the session a smaller window before a worker claims the job.
    sessions.put_snapshot(
        rt.db, session_id=session_id, model="gpt-4o", context_length=16_000,
        messages=sample_messages(), token_counts=token_counts(sample_messages()),
    )  # fmt: skip
    lease = acquire(rt.redis, session_id, ttl_s=30, owner=job_id)
    claim = jobs.claim_job(rt.db, job_id=job_id)
    assert claim is not None and claim.target_tokens == 30_000

    guard = JobGuard(lease=lease, deadline=float("inf"))
    result = compress_claim(rt, claim, guard=guard)

    assert result.report.target_tokens == 16_000  # aimed at the window it runs in
    assert jobs.get_job(rt.db, job_id=job_id).target_tokens == 30_000  # what was asked


def test_tool_arguments_nested_thousands_deep_do_not_fail_the_job(rt: Runtime) -> None:
    # A gateway may store them (they are a string to the API); the compaction failed with a
    # RecursionError every time it was retried.
    deep = '{"command": "x", "rows": ' + "[" * 5_000 + "]" * 5_000 + "}"
    before = sample_messages()
    for msg in before:
        for call in msg.get("tool_calls") or ():
            call["function"]["arguments"] = deep
    session_id = seed_session(rt.db, messages=before)

    telemetry = run_job(rt, seed_job(rt.db, session_id), worker=WORKER)

    assert telemetry["status"] == "succeeded", telemetry
    assert telemetry["tokens_after"] < telemetry["tokens_before"]
    assert check_transcript(before, active(rt, session_id)) == []


def test_a_finished_job_delivered_again_does_nothing(rt: Runtime) -> None:
    session_id = seed_session(rt.db)
    job_id = seed_job(rt.db, session_id)
    first = run_job(rt, job_id, worker=WORKER)
    version = sessions.get_session(rt.db, session_id=session_id).version

    again = run_job(rt, job_id, worker="another/2")

    assert again == first
    row = sessions.get_session(rt.db, session_id=session_id)
    assert (row.version, row.compaction_count) == (version, 1)


def test_cooldown_skips_an_automatic_job_but_not_a_forced_one(rt: Runtime) -> None:
    session_id = seed_session(rt.db)
    cooldowns.record_failure(
        rt.redis, settings=rt.settings, session_id=session_id,
        endpoint=cooldowns.endpoint_id(rt.settings), error_class="server_error",
    )  # fmt: skip
    skipped = run_job(rt, seed_job(rt.db, session_id), worker=WORKER)
    assert (skipped["status"], skipped["skip_reason"]) == ("skipped", "cooldown")
    assert sessions.get_session(rt.db, session_id=session_id).compaction_count == 0

    forced = run_job(rt, seed_job(rt.db, session_id, trigger="manual", force=True), worker=WORKER)
    assert forced["status"] == "succeeded"


def test_a_locked_session_defers_the_job_and_leaves_it_queued(rt: Runtime) -> None:
    session_id = seed_session(rt.db)
    job_id = seed_job(rt.db, session_id)
    lease = acquire(rt.redis, session_id, ttl_s=30, owner="another-job")
    try:
        with pytest.raises(LockBusyError) as busy:
            run_job(rt, job_id, worker=WORKER)
    finally:
        lease.release()
    assert decide(busy.value) is Decision.DEFER
    job = jobs.get_job(rt.db, job_id=job_id)
    assert (job.status, job.attempt) == ("queued", 0)
    assert run_job(rt, job_id, worker=WORKER)["status"] == "succeeded"  # the deferred retry


def test_a_failing_summarizer_puts_the_session_on_cooldown(settings: Settings) -> None:
    failing = runtime_for(settings, RaisingSummarizer(SummarizerServerError("502", status=502)))
    try:
        session_id = seed_session(failing.db)
        telemetry = run_job(failing, seed_job(failing.db, session_id), worker=WORKER)
        assert telemetry["fallback_used"] is True and telemetry["error_class"] == "server_error"
        endpoint = cooldowns.endpoint_id(settings)
        cooldown = cooldowns.active_cooldown(
            failing.redis, session_id=session_id, endpoint=endpoint
        )
        assert cooldown is not None and cooldown.error_class == "server_error"
    finally:
        close_runtime(failing)


def test_an_auth_failure_aborts_and_cools_the_whole_endpoint(settings: Settings) -> None:
    failing = runtime_for(settings, RaisingSummarizer(SummarizerAuthError("401")))
    try:
        session_id = seed_session(failing.db)
        version = sessions.get_session(failing.db, session_id=session_id).version
        telemetry = run_job(failing, seed_job(failing.db, session_id), worker=WORKER)
        assert (telemetry["status"], telemetry["error_class"]) == ("aborted", "auth")
        assert sessions.get_session(failing.db, session_id=session_id).version == version
        other = cooldowns.active_cooldown(
            failing.redis, session_id="any-other", endpoint=cooldowns.endpoint_id(settings)
        )
        assert other is not None and other.scope == "endpoint"
    finally:
        close_runtime(failing)


def test_the_soft_time_limit_fails_the_job_as_timeout(settings: Settings) -> None:
    slow = runtime_for(settings.model_copy(update={"job_soft_time_limit_s": 0}))
    try:
        session_id = seed_session(slow.db)
        version = sessions.get_session(slow.db, session_id=session_id).version
        telemetry = run_job(slow, seed_job(slow.db, session_id), worker=WORKER)
        assert (telemetry["status"], telemetry["error_class"]) == ("failed", "timeout")
        assert sessions.get_session(slow.db, session_id=session_id).version == version
    finally:
        close_runtime(slow)


def test_an_unexpected_error_fails_the_job_with_its_class_and_is_raised(
    settings: Settings,
) -> None:
    broken = runtime_for(settings, RaisingSummarizer(ZeroDivisionError("a bug")))
    try:
        session_id = seed_session(broken.db)
        job_id = seed_job(broken.db, session_id)
        with pytest.raises(ZeroDivisionError) as raised:
            run_job(broken, job_id, worker=WORKER)
        assert decide(raised.value) is Decision.FAIL
        job = jobs.get_job(broken.db, job_id=job_id)
        assert (job.status, job.error_class, job.error) == ("failed", "ZeroDivisionError", "a bug")
    finally:
        close_runtime(broken)


def test_a_job_that_lost_its_lock_aborts_without_writing(
    blocking: tuple[Runtime, BlockingSummarizer],
) -> None:
    rt, summarizer = blocking
    session_id = seed_session(rt.db)
    version = sessions.get_session(rt.db, session_id=session_id).version
    thread, box = in_background(run_job, rt, seed_job(rt.db, session_id), worker=WORKER)
    assert summarizer.started.wait(30)
    rt.redis.set(keys.session_lock(session_id), "someone-else")  # our lease expired, was taken
    summarizer.release.set()
    thread.join(30)

    assert (box["result"]["status"], box["result"]["error_class"]) == ("aborted", "lock_lost")
    row = sessions.get_session(rt.db, session_id=session_id)
    assert (row.version, row.compaction_count) == (version, 0)


def test_a_stale_attempt_is_fenced_out_and_the_new_one_compacts_once(
    blocking: tuple[Runtime, BlockingSummarizer],
) -> None:
    rt, summarizer = blocking
    session_id = seed_session(rt.db)
    job_id = seed_job(rt.db, session_id)
    thread, box = in_background(run_job, rt, job_id, worker="stalled/1")
    assert summarizer.started.wait(30)
    # The stalled worker's lock expires and the redelivered message claims the job again.
    rt.redis.delete(keys.session_lock(session_id))
    assert jobs.claim_job(rt.db, job_id=job_id, worker="redelivered/2") is not None
    summarizer.release.set()
    thread.join(30)

    assert isinstance(box.get("error"), JobFencedError)
    assert decide(box["error"]) is Decision.FENCED
    assert sessions.get_session(rt.db, session_id=session_id).compaction_count == 0
    done = run_job(rt, job_id, worker="redelivered/2")
    assert (done["status"], done["attempt"]) == ("succeeded", 3)
    assert sessions.get_session(rt.db, session_id=session_id).compaction_count == 1


def test_turns_appended_while_a_job_runs_follow_the_compacted_part(
    blocking: tuple[Runtime, BlockingSummarizer],
) -> None:
    rt, summarizer = blocking
    before = sample_messages()
    session_id = seed_session(rt.db, messages=before)
    thread, box = in_background(run_job, rt, seed_job(rt.db, session_id), worker=WORKER)
    assert summarizer.started.wait(30)
    appended = [
        {"role": "user", "content": "A new question, asked while the job was running."},
        {"role": "assistant", "content": "And its answer."},
    ]
    sessions.append_messages(
        rt.db, session_id=session_id, messages=appended, token_counts=token_counts(appended)
    )
    summarizer.release.set()
    thread.join(30)

    assert box["result"]["status"] == "succeeded", box
    after = active(rt, session_id)
    assert after[-2:] == appended
    assert check_transcript([*before, *appended], after) == []
    assert len(after) < len(before)


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (
            sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("server closed")),
            Decision.RETRY,
        ),
        (redis.ConnectionError("refused"), Decision.RETRY),
        (redis.TimeoutError("slow"), Decision.RETRY),
        (kombu.exceptions.OperationalError("broker gone"), Decision.RETRY),
        (LockBusyError("s", "job@host:1:x"), Decision.DEFER),
        (JobFencedError("j", 1, "running", 2), Decision.FENCED),
        (ValueError("a bug"), Decision.FAIL),
        (InvalidTranscriptError(3, "bad role"), Decision.FAIL),
    ],
)
def test_decide_retries_only_operational_trouble(exc: BaseException, expected: Decision) -> None:
    assert decide(exc) is expected


def test_waits_for_a_lock_outlast_the_longest_job_and_retries_back_off() -> None:
    s = Settings(job_hard_time_limit_s=900, lock_ttl_s=120, lock_busy_retry_s=15)
    assert max_defers(s) * s.lock_busy_retry_s >= s.job_hard_time_limit_s + s.lock_ttl_s
    for failures, ceiling in [(0, 5.0), (1, 10.0), (2, 20.0), (3, 40.0), (30, 300.0)]:
        waits = [retry_backoff_s(s, failures) for _ in range(200)]
        assert all(0 <= w < ceiling for w in waits)
        assert max(waits) > 0.75 * ceiling and min(waits) < 0.25 * ceiling  # jittered


def test_a_job_whose_session_stays_locked_is_skipped_with_a_reason(rt: Runtime) -> None:
    job_id = seed_job(rt.db, seed_session(rt.db))
    telemetry = give_up_locked(rt, job_id, worker=WORKER)
    assert (telemetry["status"], telemetry["skip_reason"]) == ("skipped", "locked")


def test_a_job_claimed_too_often_fails_instead_of_looping(rt: Runtime) -> None:
    job_id = seed_job(rt.db, seed_session(rt.db))
    for _ in range(rt.settings.max_job_attempts):  # each attempt's worker died mid-job
        assert jobs.claim_job(rt.db, job_id=job_id, worker="crashed/1") is not None
    telemetry = run_job(rt, job_id, worker=WORKER)
    assert (telemetry["status"], telemetry["error_class"]) == ("failed", "too_many_attempts")


def test_the_guard_stops_llm_calls_after_the_lock_is_lost_or_time_is_up(rt: Runtime) -> None:
    inner = RaisingSummarizer(AssertionError("the LLM must not be called"))
    lease = acquire(rt.redis, "guarded", ttl_s=30, owner="job")
    request = SummaryRequest(
        prompt="p", window=(), previous_summary=None, focus_topic=None, budget_tokens=100,
        max_output_tokens=130, today=date(2026, 1, 1),
    )  # fmt: skip
    late = GuardedSummarizer(inner, JobGuard(lease=lease, deadline=0.0))
    with pytest.raises(JobDeadlineError):
        late.summarize(request)
    rt.redis.set(keys.session_lock("guarded"), "someone-else")
    assert lease.extend() is False  # what the heartbeat does; the lease is now lost
    lost = GuardedSummarizer(inner, JobGuard(lease=lease, deadline=float("inf")))
    with pytest.raises(LockLostError):
        lost.summarize(request)


@pytest.mark.parametrize("odd", ["\x00", "\ud83d"], ids=["nul", "lone-surrogate"])
def test_odd_characters_in_summaries_and_errors_are_stored_on_every_database(
    settings: Settings, odd: str
) -> None:
    # PostgreSQL cannot store U+0000 in text, and no UTF-8 text holds a lone surrogate (half a
    # pair, from an answer's JSON escape): what the service derives (the summary it keeps,
    # error messages) is stored with U+FFFD instead. Messages keep a NUL (JSON escapes it); a
    # lone surrogate never gets into one (the API refuses it).
    before = sample_messages()
    if odd == "\x00":
        before[5] = dict(before[5], content=f"{before[5]['content']}\x00 (a NUL from a tool)")
    scripted = runtime_for(settings, ScriptedSummarizer(default=f"## Active Task\nfix it{odd} now"))
    failing = runtime_for(
        settings, RaisingSummarizer(SummarizerServerError(f"bad{odd}gw", status=502))
    )
    try:
        session_id = seed_session(scripted.db, messages=before)
        telemetry = run_job(scripted, seed_job(scripted.db, session_id), worker=WORKER)
        assert telemetry["status"] == "succeeded", telemetry
        kept = sessions.get_session(scripted.db, session_id=session_id).previous_summary
        assert kept is not None and "fix it\ufffd now" in kept and odd not in kept
        archived = sessions.archived_messages(scripted.db, session_id=session_id)
        assert [m.message for m in archived] == before[: len(archived)]  # a NUL is kept there
        active = sessions.active_messages(scripted.db, session_id=session_id)
        json.dumps([m.message for m in active], ensure_ascii=False).encode("utf-8")  # UTF-8 text

        other = seed_session(failing.db, messages=before)
        telemetry = run_job(failing, seed_job(failing.db, other), worker=WORKER)
        assert telemetry["fallback_used"] is True, telemetry
        row = jobs.get_job(failing.db, job_id=telemetry["id"])
        assert row.error is not None and "bad\ufffdgw" in row.error
    finally:
        close_runtime(scripted)
        close_runtime(failing)
