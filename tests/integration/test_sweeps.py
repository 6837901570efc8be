"""The nightly idle sweep and the stuck-job reaper, against a real database and Redis."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from tests.support.stack import REPO, stack_env
from tests.support.worker_fixtures import private_redis, rt, seed_job, seed_session, settings
from worker import cooldowns
from worker.enqueue import enqueue_job
from worker.locks import acquire
from worker.runtime import Runtime
from worker.store import idempotency, jobs
from worker.store.idempotency import Scope, StoredAnswer
from worker.store.models import IdempotencyKeyRow, JobRow, SessionRow, utcnow
from worker.sweeps import in_broker, reap_stuck_jobs, sweep_idle_sessions

pytestmark = pytest.mark.integration
__all__ = ["private_redis", "rt", "settings"]  # fixtures, imported for pytest


def set_session(rt: Runtime, session_id: str, **values: object) -> None:
    with rt.db.write() as s:
        s.execute(update(SessionRow).where(SessionRow.id == session_id).values(**values))


def set_job(rt: Runtime, job_id: str, **values: object) -> None:
    with rt.db.write() as s:
        s.execute(update(JobRow).where(JobRow.id == job_id).values(**values))


@pytest.fixture
def population(rt: Runtime) -> dict[str, str]:
    """One session of each kind the sweep must tell apart."""
    long_ago = utcnow() - timedelta(hours=10)
    ids = {
        "idle_big": seed_session(rt.db),
        "active_big": seed_session(rt.db),
        "idle_small": seed_session(rt.db, context_length=100_000),
        "idle_compacted": seed_session(rt.db),
        "idle_with_open_job": seed_session(rt.db),
        "idle_on_cooldown": seed_session(rt.db),
    }
    for name, session_id in ids.items():
        if name != "active_big":
            set_session(rt, session_id, last_activity_at=long_ago)
    set_session(rt, ids["idle_compacted"], last_compacted_at=long_ago + timedelta(minutes=5))
    seed_job(rt.db, ids["idle_with_open_job"])
    cooldowns.record_failure(
        rt.redis, settings=rt.settings, session_id=ids["idle_on_cooldown"],
        endpoint=cooldowns.endpoint_id(rt.settings), error_class="server_error",
    )  # fmt: skip
    return ids


def test_dry_run_names_only_idle_large_uncompacted_sessions(
    rt: Runtime, population: dict[str, str]
) -> None:
    picks = sweep_idle_sessions(rt, dry_run=True)
    assert [p.session_id for p in picks] == [population["idle_big"]]
    assert picks[0].job_id is None and picks[0].tokens >= picks[0].threshold_tokens
    assert jobs.list_jobs(rt.db, session_id=population["idle_big"]) == []


def test_sweep_queues_a_sweep_job_and_sends_it(rt: Runtime, population: dict[str, str]) -> None:
    picks = sweep_idle_sessions(rt)
    assert [p.session_id for p in picks] == [population["idle_big"]]
    job = jobs.get_job(rt.db, job_id=str(picks[0].job_id))
    assert (job.trigger, job.status) == ("sweep", "queued")
    assert in_broker(rt.redis, job.id)
    assert sweep_idle_sessions(rt) == []  # its open job keeps it out of the next sweep


def test_sweep_respects_its_batch_limit(rt: Runtime) -> None:
    for _ in range(3):
        set_session(rt, seed_session(rt.db), last_activity_at=utcnow() - timedelta(hours=9))
    limited = dataclasses.replace(
        rt, settings=rt.settings.model_copy(update={"sweep_batch_limit": 2})
    )
    assert len(sweep_idle_sessions(limited, dry_run=True)) == 2


def test_compacted_sessions_do_not_crowd_a_small_batch_out(rt: Runtime) -> None:
    oldest = utcnow() - timedelta(hours=20)
    for _ in range(2):  # idle the longest, but compacted after their last turn
        done = seed_session(rt.db)
        set_session(
            rt, done, last_activity_at=oldest, last_compacted_at=oldest + timedelta(hours=1)
        )
    waiting = seed_session(rt.db)
    set_session(rt, waiting, last_activity_at=utcnow() - timedelta(hours=9))
    one = dataclasses.replace(rt, settings=rt.settings.model_copy(update={"sweep_batch_limit": 1}))
    assert [p.session_id for p in sweep_idle_sessions(one, dry_run=True)] == [waiting]


def test_reaper_fails_running_jobs_whose_worker_is_gone(rt: Runtime) -> None:
    stuck = seed_job(rt.db, seed_session(rt.db))
    alive = seed_job(rt.db, seed_session(rt.db))
    for job_id in (stuck, alive):
        assert jobs.claim_job(rt.db, job_id=job_id, worker="w/1") is not None
    set_job(rt, stuck, started_at=utcnow() - timedelta(hours=2))

    reaped = reap_stuck_jobs(rt)

    assert reaped.failed == [stuck]
    gone = jobs.get_job(rt.db, job_id=stuck)
    assert (gone.status, gone.error_class) == ("failed", "stuck")
    assert jobs.get_job(rt.db, job_id=alive).status == "running"
    # The session is free again: a new job can be created for it.
    assert seed_job(rt.db, gone.session_id)


def test_reaper_resends_queued_jobs_the_broker_does_not_have(rt: Runtime) -> None:
    lost = seed_job(rt.db, seed_session(rt.db))
    waiting = seed_job(rt.db, seed_session(rt.db))
    fresh = seed_job(rt.db, seed_session(rt.db))
    enqueue_job(waiting, app=rt.celery)  # its message is in the queue, just not consumed yet
    for job_id in (lost, waiting):
        set_job(rt, job_id, enqueued_at=utcnow() - timedelta(minutes=30))

    reaped = reap_stuck_jobs(rt)

    assert reaped.requeued == [lost] and reaped.failed == []
    assert in_broker(rt.redis, lost) and not in_broker(rt.redis, fresh)
    assert reap_stuck_jobs(rt).requeued == []  # now it is there: not sent twice


def test_reaper_resends_running_jobs_nobody_holds_that_the_broker_lost(rt: Runtime) -> None:
    # Redis was wiped while these ran: their messages are gone. One's worker is alive (it
    # holds the session lock); the other's died with it.
    orphan = seed_job(rt.db, seed_session(rt.db))
    alive = seed_job(rt.db, seed_session(rt.db))
    for job_id in (orphan, alive):
        assert jobs.claim_job(rt.db, job_id=job_id, worker="w/1") is not None
        set_job(rt, job_id, started_at=utcnow() - timedelta(minutes=2))
    lease = acquire(rt.redis, jobs.get_job(rt.db, job_id=alive).session_id, ttl_s=30, owner=alive)
    try:
        reaped = reap_stuck_jobs(rt)
    finally:
        lease.release()

    assert reaped.requeued == [orphan] and reaped.failed == []
    assert in_broker(rt.redis, orphan) and not in_broker(rt.redis, alive)
    assert jobs.get_job(rt.db, job_id=orphan).status == "running"  # the next claim fences it


def test_reaper_forgets_idempotency_keys_past_their_retention(rt: Runtime) -> None:
    session_id = seed_session(rt.db)
    old, fresh = (
        Scope(session_id=session_id, route="append", key=k, body_sha256="0" * 64)
        for k in ("old", "fresh")
    )
    answer = StoredAnswer(200, {"version": 1}, "below the threshold")
    with rt.db.write() as s:
        idempotency.remember(s, old, answer)
        idempotency.remember(s, fresh, answer)
        s.execute(
            update(IdempotencyKeyRow)
            .where(IdempotencyKeyRow.idempotency_key == "old")
            .values(created_at=utcnow() - idempotency.RETENTION - timedelta(minutes=1))
        )
    assert reap_stuck_jobs(rt).expired_keys == 1
    with rt.db.read() as s:
        assert idempotency.lookup(s, fresh) is not None
        assert idempotency.lookup(s, old) is None


def test_sweep_command_dry_run_prints_the_picks(
    rt: Runtime, population: dict[str, str], tmp_path: Path
) -> None:
    assert rt.settings.redis_url is not None
    env = stack_env(
        redis_url=rt.settings.redis_url, database_url=rt.settings.database_url, var_dir=tmp_path
    )
    done = subprocess.run(
        [sys.executable, "-m", "api.cli", "sweep", "--dry-run"], cwd=REPO, env=env,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "would queue 1 session(s)" in done.stdout
    assert population["idle_big"] in done.stdout
    assert population["active_big"] not in done.stdout
