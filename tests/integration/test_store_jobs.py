"""Jobs on a real database: create, claim, the one-transaction write-back, fencing, queries."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy.exc import IntegrityError

from tests.store_factories import compaction_of, counts, make_transcript, noop_result
from worker.compressor.messages import Message, parse_messages, to_wire_list
from worker.compressor.report import CompactionReport, CompactionResult
from worker.store.db import Database
from worker.store.errors import (
    IntegrityViolationError,
    JobFencedError,
    JobNotFoundError,
    OpenJobExistsError,
    SessionNotFoundError,
)
from worker.store.jobs import (
    TELEMETRY_FIELDS,
    JobClaim,
    Timings,
    claim_job,
    create_job,
    finish_job,
    get_job,
    hygiene_state,
    idle_sessions,
    job_stats,
    job_telemetry,
    list_jobs,
    open_jobs,
    stuck_jobs,
    write_back,
)
from worker.store.models import JobRow, MessageRow, SessionRow
from worker.store.sessions import (
    active_messages,
    append_messages,
    archived_messages,
    get_session,
    put_snapshot,
)

pytestmark = pytest.mark.integration

DESIGN_TELEMETRY = (
    "id, session_id, trigger, status, skip_reason, attempt, tokens_before, tokens_after, "
    "savings_pct, messages_before, messages_after, summarized_count, dropped_count, "
    "fallback_used, summarizer, summary_tokens, summarizer_input_tokens, summarizer_calls, "
    "redactions, aux_model_failed, error_class, error, enqueued_at, started_at, finished_at, "
    "queue_wait_ms, run_ms, llm_ms, worker"
)


def session(db: Database, session_id: str = "s1", turns: int = 5) -> list[dict[str, Any]]:
    msgs = make_transcript(turns)
    put_snapshot(
        db,
        session_id=session_id,
        model="gpt-4",
        context_length=1000,
        messages=msgs,
        token_counts=counts(msgs),
    )
    return msgs


def claimed(db: Database, session_id: str = "s1", trigger: str = "hygiene") -> JobClaim:
    job = create_job(db, session_id=session_id, trigger=trigger)
    claim = claim_job(db, job_id=job.id, worker="w1")
    assert claim is not None
    return claim


def say(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


# --- create ------------------------------------------------------------------------------------


def test_one_open_job_per_session(db: Database) -> None:
    session(db)
    first = create_job(db, session_id="s1", trigger="hygiene")
    assert (first.status, first.attempt, first.enqueued_at.tzinfo is not None) == (
        "queued",
        0,
        True,
    )
    with pytest.raises(OpenJobExistsError) as caught:
        create_job(db, session_id="s1", trigger="manual")
    assert caught.value.job_id == first.id
    finish_job(db, job_id=first.id, attempt=0, status="failed", error_class="broker_unavailable")
    assert create_job(db, session_id="s1", trigger="manual").id != first.id


def test_a_job_needs_a_session_and_a_known_trigger(db: Database) -> None:
    with pytest.raises(SessionNotFoundError):
        create_job(db, session_id="ghost", trigger="hygiene")
    session(db)
    with pytest.raises(ValueError, match="trigger"):
        create_job(db, session_id="s1", trigger="cron")


def test_racing_creators_make_exactly_one_job(database_url: str) -> None:
    setup = Database(database_url)
    session(setup)
    setup.dispose()
    start, created, refused = threading.Barrier(4), [], []

    def create() -> None:
        own = Database(database_url)  # each creator has its own engine, like separate processes
        try:
            start.wait()
            created.append(create_job(own, session_id="s1", trigger="hygiene").id)
        except OpenJobExistsError as exc:
            refused.append(exc.job_id)
        finally:
            own.dispose()

    threads = [threading.Thread(target=create) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(created) == 1 and len(refused) == 3
    assert set(refused) == set(created)  # every loser names the winner's job


# --- claim ---------------------------------------------------------------------------------------


def test_claim_snapshots_the_session(db: Database) -> None:
    msgs = session(db, turns=3)
    job = create_job(db, session_id="s1", trigger="manual", focus_topic="the database", force=True)
    claim = claim_job(db, job_id=job.id, worker="w1")
    assert claim is not None
    assert (claim.attempt, claim.upto_seq, claim.snapshot_rewrite_count) == (1, 7, 0)
    assert list(claim.messages) == msgs and claim.token_counts == (10,) * 7
    assert (claim.focus_topic, claim.force, claim.model, claim.context_length) == (
        "the database",
        True,
        "gpt-4",
        1000,
    )
    assert claim.previous_summary is None and claim.compaction_count == 0
    row = get_job(db, job_id=job.id)
    assert (row.status, row.worker, row.upto_seq) == ("running", "w1", 7)
    assert row.started_at is not None and row.queue_wait_ms is not None and row.queue_wait_ms >= 0


def test_claim_after_success_does_nothing(db: Database) -> None:
    session(db)
    claim = claimed(db)
    write_back(db, job_id=claim.job_id, attempt=1, result=compaction_of(claim))
    version = get_session(db, session_id="s1").version
    assert claim_job(db, job_id=claim.job_id, worker="w2") is None  # a redelivered message
    assert get_job(db, job_id=claim.job_id).attempt == 1
    assert get_session(db, session_id="s1").version == version


def test_a_redelivered_running_job_is_claimed_again_with_a_new_attempt(db: Database) -> None:
    session(db)
    first = claimed(db)
    second = claim_job(db, job_id=first.job_id, worker="w2")
    assert second is not None and second.attempt == 2
    with pytest.raises(JobNotFoundError):
        claim_job(db, job_id="no-such-job")


# --- write-back ----------------------------------------------------------------------------------


def test_write_back_replaces_the_snapshot_and_keeps_later_appends_after_it(db: Database) -> None:
    original = session(db, turns=5)  # 11 messages, seq 1..11
    claim = claimed(db)
    late = [say("late 1"), {"role": "assistant", "content": "late 2"}]
    append_messages(db, session_id="s1", messages=late, token_counts=[3, 4])
    result = compaction_of(claim, keep_last=2, summary_tokens=5)

    row = write_back(
        db, job_id=claim.job_id, attempt=1, result=result, timings=Timings(run_ms=12.5, llm_ms=3.0)
    )

    active = active_messages(db, session_id="s1")
    compacted = [m for m in active if m.generation == 1]
    assert [m.message for m in active] == [original[0], *to_wire_list(result.messages)[1:], *late]
    assert active[: len(compacted)] == compacted  # the compacted part comes first
    assert [m.message for m in active[len(compacted) :]] == late  # appends survive, after it
    assert [m.seq for m in active] == sorted(m.seq for m in active)
    assert min(m.seq for m in active) > 13  # fresh seqs, above everything ever used
    s = get_session(db, session_id="s1")
    assert (s.version, s.rewrite_count, s.compaction_count) == (3, 1, 1)
    assert s.message_count == 6 and s.token_total == 10 + 5 + 20 + 7
    assert s.previous_summary == "the middle, summarized" and s.last_compacted_at is not None
    assert (row.status, row.version_after, row.run_ms, row.llm_ms) == ("succeeded", 3, 12.5, 3.0)
    assert (row.tokens_before, row.tokens_after, row.messages_before, row.messages_after) == (
        110,
        35,
        11,
        4,
    )


def test_archive_keeps_everything_ever_replaced(db: Database) -> None:
    original = session(db, turns=4)
    claim = claimed(db)
    write_back(db, job_id=claim.job_id, attempt=1, result=compaction_of(claim))
    archived = archived_messages(db, session_id="s1")
    assert [m.message for m in archived] == original
    assert {m.archived_by_job for m in archived} == {claim.job_id}
    assert {m.generation for m in archived} == {0}
    second = claimed(db)
    assert second.previous_summary == "the middle, summarized" and second.compaction_count == 1
    write_back(db, job_id=second.job_id, attempt=1, result=compaction_of(second, keep_last=1))
    archived = archived_messages(db, session_id="s1")
    assert len(archived) == len(original) + len(second.messages)
    assert {m.generation for m in archived} == {0, 1}
    assert {m.generation for m in active_messages(db, session_id="s1")} == {2}


def test_a_snapshot_put_during_the_job_supersedes_it(db: Database) -> None:
    session(db)
    claim = claimed(db)
    replacement = make_transcript(2)
    put_snapshot(
        db,
        session_id="s1",
        model="gpt-4",
        context_length=1000,
        messages=replacement,
        token_counts=counts(replacement),
    )
    row = write_back(db, job_id=claim.job_id, attempt=1, result=compaction_of(claim))
    assert (row.status, row.skip_reason) == ("skipped", "superseded")
    assert [m.message for m in active_messages(db, session_id="s1")] == replacement
    assert get_session(db, session_id="s1").compaction_count == 0


def test_a_stale_attempt_is_fenced_out(db: Database) -> None:
    session(db)
    stale = claimed(db)
    fresh = claim_job(db, job_id=stale.job_id, worker="w2")  # the lock expired; redelivered
    assert fresh is not None
    before = [m.message for m in active_messages(db, session_id="s1")]
    with pytest.raises(JobFencedError):
        write_back(db, job_id=stale.job_id, attempt=stale.attempt, result=compaction_of(stale))
    with pytest.raises(JobFencedError):
        finish_job(db, job_id=stale.job_id, attempt=stale.attempt, status="failed")
    assert [m.message for m in active_messages(db, session_id="s1")] == before
    row = write_back(db, job_id=fresh.job_id, attempt=fresh.attempt, result=compaction_of(fresh))
    assert row.status == "succeeded" and row.worker == "w2"
    with pytest.raises(JobFencedError):  # finished: nobody writes again
        write_back(db, job_id=fresh.job_id, attempt=fresh.attempt, result=compaction_of(fresh))


def test_write_back_is_all_or_nothing(db: Database) -> None:
    session(db, turns=3)  # seq 1..7, next_seq 8
    claim = claimed(db)
    append_messages(db, session_id="s1", messages=[say("late")], token_counts=[2])  # seq 8
    result = compaction_of(claim, keep_last=2)  # 4 compacted messages will take seq 9..12
    # Plant an archived row on seq 13, where the late message will be moved: the unique
    # (session_id, seq) constraint fails after the archive and the inserts already ran.
    with db.write() as s:
        s.add(
            MessageRow(
                session_id="s1",
                seq=13,
                role="user",
                data=say("planted"),
                tokens=1,
                active=False,
                generation=0,
            )
        )
    before_active = active_messages(db, session_id="s1")
    before_session = snapshot(get_session(db, session_id="s1"))

    with pytest.raises(IntegrityViolationError) as caught:
        write_back(db, job_id=claim.job_id, attempt=1, result=result)

    assert caught.value.constraint == "uq_messages_session_seq"
    assert active_messages(db, session_id="s1") == before_active
    assert archived_messages(db, session_id="s1")[0].message == say("planted")
    assert len(archived_messages(db, session_id="s1")) == 1
    assert snapshot(get_session(db, session_id="s1")) == before_session
    job = get_job(db, job_id=claim.job_id)
    assert (job.status, job.attempt, job.finished_at) == ("running", 1, None)


def snapshot(row: SessionRow) -> tuple[object, ...]:
    return (
        row.version,
        row.rewrite_count,
        row.next_seq,
        row.token_total,
        row.message_count,
        row.compaction_count,
    )


def test_results_that_change_nothing_finish_the_job(db: Database) -> None:
    session(db)
    claim = claimed(db)
    row = write_back(db, job_id=claim.job_id, attempt=1, result=noop_result(claim))
    assert (row.status, row.skip_reason) == ("skipped", "nothing_to_summarize")
    s = get_session(db, session_id="s1")
    assert (s.version, s.ineffective_count) == (1, 1)  # a no-op pass counts for the thrash guard

    claim = claimed(db)
    aborted = CompactionResult(
        claim_messages(claim),
        CompactionReport(
            110, 110, 11, 11, aborted=True, error_class="auth", error="401 from the LLM"
        ),
    )
    row = write_back(db, job_id=claim.job_id, attempt=1, result=aborted)
    assert (row.status, row.error_class, row.error) == ("aborted", "auth", "401 from the LLM")
    assert get_session(db, session_id="s1").version == 1


def claim_messages(claim: JobClaim) -> tuple[Message, ...]:
    return tuple(parse_messages(list(claim.messages)))


def test_ineffective_passes_trip_the_thrash_guard_and_an_effective_one_resets_it(
    db: Database,
) -> None:
    session(db, turns=10)
    claim = claimed(db)
    write_back(db, job_id=claim.job_id, attempt=1, result=compaction_of(claim, savings_pct=5.0))
    s = get_session(db, session_id="s1")
    assert (s.ineffective_count, s.thrash_until_tokens, s.last_savings_pct) == (1, None, 5.0)
    claim = claimed(db)
    write_back(db, job_id=claim.job_id, attempt=1, result=compaction_of(claim, savings_pct=4.0))
    s = get_session(db, session_id="s1")
    assert s.ineffective_count == 2 and s.thrash_until_tokens == s.token_total + 100
    claim = claimed(db)
    write_back(db, job_id=claim.job_id, attempt=1, result=compaction_of(claim, savings_pct=30.0))
    s = get_session(db, session_id="s1")
    assert (s.ineffective_count, s.thrash_until_tokens) == (0, None)


def test_the_compressor_can_trip_the_guard_itself(db: Database) -> None:
    session(db)
    claim = claimed(db)
    write_back(
        db,
        job_id=claim.job_id,
        attempt=1,
        result=compaction_of(claim, savings_pct=50.0, tripped=True),
    )
    s = get_session(db, session_id="s1")
    assert s.thrash_until_tokens == s.token_total + 100


def test_recent_savings_reach_the_next_claim_newest_last(db: Database) -> None:
    session(db, turns=10)
    for pct in (40.0, 30.0):
        claim = claimed(db)
        write_back(
            db,
            job_id=claim.job_id,
            attempt=1,
            result=compaction_of(claim, keep_last=3, savings_pct=pct),
        )
        append_messages(db, session_id="s1", messages=make_transcript(2)[1:], token_counts=[10] * 4)
    assert claimed(db).recent_savings_pct == (40.0, 30.0)


def test_finish_job_records_failures(db: Database) -> None:
    session(db)
    job = create_job(db, session_id="s1", trigger="hygiene")
    with pytest.raises(ValueError, match="finish_job"):
        finish_job(db, job_id=job.id, attempt=0, status="succeeded")
    row = finish_job(
        db,
        job_id=job.id,
        attempt=0,
        status="failed",
        error_class="broker_unavailable",
        error="down",
    )
    assert (row.status, row.error_class, row.error, row.finished_at is not None) == (
        "failed",
        "broker_unavailable",
        "down",
        True,
    )
    with pytest.raises(JobFencedError):
        finish_job(db, job_id=job.id, attempt=0, status="failed")


# --- telemetry and queries -----------------------------------------------------------------------


def test_telemetry_has_exactly_the_design_fields(db: Database) -> None:
    assert tuple(DESIGN_TELEMETRY.split(", ")) == TELEMETRY_FIELDS
    session(db)
    claim = claimed(db)
    row = write_back(
        db,
        job_id=claim.job_id,
        attempt=1,
        result=compaction_of(claim, fallback_used=True, dropped_count=3),
    )
    telemetry = job_telemetry(row)
    assert tuple(telemetry) == TELEMETRY_FIELDS
    assert telemetry["fallback_used"] is True and telemetry["dropped_count"] == 3
    assert isinstance(telemetry["enqueued_at"], str) and telemetry["enqueued_at"].endswith("+00:00")


def test_list_jobs_pages_newest_first(db: Database) -> None:
    session(db)
    ids = []
    for _ in range(5):
        job = create_job(db, session_id="s1", trigger="manual")
        finish_job(db, job_id=job.id, attempt=0, status="failed")
        ids.append(job.id)
    session(db, session_id="other")
    create_job(db, session_id="other", trigger="sweep")
    page = list_jobs(db, session_id="s1", limit=3)
    assert [j.id for j in page] == ids[::-1][:3]
    rest = list_jobs(db, session_id="s1", limit=3, before=page[-1].id)
    assert [j.id for j in rest] == ids[::-1][3:]
    assert [j.session_id for j in list_jobs(db, status="queued")] == ["other"]
    counted = open_jobs(db)
    assert {status: o.count for status, o in counted.items()} == {"queued": 1, "running": 0}
    assert counted["queued"].oldest_at is not None and counted["running"].oldest_at is None


def test_job_stats(db: Database) -> None:
    for i, (savings, fallback, dropped) in enumerate(
        [(50.0, False, 0), (30.0, True, 4), (10.0, False, 0)]
    ):
        session(db, session_id=f"s{i}")
        claim = claimed(db, session_id=f"s{i}")
        write_back(
            db, job_id=claim.job_id, attempt=1,
            result=compaction_of(claim, savings_pct=savings, fallback_used=fallback, dropped_count=dropped),
            timings=Timings(run_ms=100.0 * (i + 1)),
        )  # fmt: skip
    session(db, session_id="q")
    create_job(db, session_id="q", trigger="hygiene")
    since = get_job(db, job_id=list_jobs(db, limit=10)[-1].id).enqueued_at
    stats = job_stats(db, since=since)
    assert stats.total == 4 and stats.by_status["succeeded"] == 3 and stats.by_status["queued"] == 1
    assert stats.fallback_count == 1 and stats.fallback_rate == pytest.approx(1 / 3)
    assert stats.dropped_total == 4
    assert stats.savings_pct.p50 == 30.0 and stats.savings_pct.p95 == pytest.approx(48.0)
    assert stats.run_ms.p50 == 200.0
    assert stats.to_dict()["savings_pct"] == {"p50": 30.0, "p95": pytest.approx(48.0)}
    assert job_stats(db, since=since + timedelta(days=1)).total == 0


def test_stuck_jobs_and_idle_sessions(db: Database) -> None:
    session(db, session_id="busy", turns=50)  # 1010 tokens of a 1000 window
    session(db, session_id="small", turns=1)
    session(db, session_id="queued", turns=50)
    job = create_job(db, session_id="queued", trigger="hygiene")
    later = get_job(db, job_id=job.id).enqueued_at + timedelta(hours=7)
    assert [j.id for j in stuck_jobs(db, older_than=timedelta(hours=1), now=later)] == [job.id]
    assert stuck_jobs(db, older_than=timedelta(hours=8), now=later) == []
    idle = idle_sessions(db, idle_for=timedelta(hours=6), min_utilization=0.5, limit=10, now=later)
    assert [s.id for s in idle] == ["busy"]  # "small" is small, "queued" has an open job
    assert idle_sessions(db, idle_for=timedelta(hours=6), min_utilization=0.5, limit=10) == []


def test_hygiene_state_counts_automatic_jobs_of_the_last_hour(db: Database) -> None:
    session(db)
    for trigger in ("hygiene", "sweep", "manual"):
        job = create_job(db, session_id="s1", trigger=trigger)
        finish_job(db, job_id=job.id, attempt=0, status="skipped")
    job = create_job(db, session_id="s1", trigger="hygiene")
    finish_job(db, job_id=job.id, attempt=0, status="failed", error_class="broker_unavailable")
    open_job = create_job(db, session_id="s1", trigger="hygiene")
    state = hygiene_state(db, session_id="s1")
    assert state.open_job_id == open_job.id
    assert state.auto_jobs_last_hour == 3  # hygiene, sweep and the open one; not manual, not unsent
    later = get_job(db, job_id=open_job.id).enqueued_at + timedelta(hours=2)
    assert hygiene_state(db, session_id="s1", now=later).auto_jobs_last_hour == 0
    with pytest.raises(SessionNotFoundError):
        hygiene_state(db, session_id="ghost")


def test_the_database_refuses_a_second_open_job_even_behind_our_back(db: Database) -> None:
    session(db)
    create_job(db, session_id="s1", trigger="hygiene")
    with pytest.raises(IntegrityError), db.write() as s:
        s.add(JobRow(id="x" * 36, session_id="s1", trigger="manual", status="running"))
