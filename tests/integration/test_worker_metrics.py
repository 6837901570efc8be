"""A real `compaction worker --metrics-port` on a private Redis, a SQLite file and a fake LLM:
its own Prometheus endpoint, scraped after real jobs (threads pool, and prefork, whose jobs run
in child processes the endpoint's process must add up)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import update

from tests.support.callback_receiver import CallbackReceiver
from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.stack import (
    REPO,
    StackProcess,
    broker,
    stack_env,
    start_worker,
    wait_until,
)
from tests.support.worker_fixtures import (
    private_redis,
    rt,
    sample_messages,
    seed_job,
    seed_session,
    settings,
)
from worker import keys, metrics
from worker.enqueue import enqueue_job
from worker.locks import acquire
from worker.redis_server import RedisServer, free_port
from worker.runtime import Runtime, redis_client
from worker.store import jobs
from worker.store.db import Database
from worker.store.models import JobRow, SessionRow, utcnow
from worker.sweeps import reap_stuck_jobs, sweep_idle_sessions

pytestmark = pytest.mark.integration
__all__ = ["private_redis", "rt", "settings"]  # fixtures, imported for pytest

SUMMARY_MODEL = "fake-summary"
SECRET = "callback-secret"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture
def db(tmp_path: Path, sqlite_template: Path) -> Iterator[Database]:
    path = tmp_path / "compaction.db"
    shutil.copyfile(sqlite_template, path)
    database = Database(f"sqlite:///{path}")
    yield database
    database.dispose()


def metrics_env(
    db: Database, redis_server: RedisServer, llm: FakeOpenAI, tmp_path: Path, port: int
) -> dict[str, str]:
    return stack_env(
        redis_url=redis_server.url, database_url=db.url, var_dir=tmp_path / "var",
        llm_base_url=llm.base_url, summary_model=SUMMARY_MODEL, llm_stream="false",
        lock_busy_retry_s=0.3, job_retry_backoff_s=0.2, callback_secret=SECRET,
        worker_metrics_port=port,
    )  # fmt: skip


def scrape(port: int) -> Samples:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    want = set(labels.items())
    return sum(v for (n, got), v in samples.items() if n == name and want <= got)


def run(db: Database, redis_url: str, job_id: str, worker: StackProcess, *, status: str) -> JobRow:
    with broker(redis_url) as app:
        enqueue_job(job_id, app=app)
    wait_until(
        lambda: jobs.get_job(db, job_id=job_id).status in jobs.FINISHED_STATUSES,
        timeout_s=60, what=f"job {job_id} finishing", logs=[worker],
    )  # fmt: skip
    row = jobs.get_job(db, job_id=job_id)
    assert row.status == status, (jobs.job_telemetry(row), worker.log())
    return row


def wait_metric(port: int, worker: StackProcess, name: str, at_least: float, **labels: str) -> None:
    wait_until(
        lambda: total(scrape(port), name, **labels) >= at_least,
        timeout_s=30, what=f"{name}{labels} >= {at_least}", logs=[worker],
    )  # fmt: skip


def test_the_workers_endpoint_counts_what_its_jobs_did(
    db: Database, private_redis: RedisServer, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    port = free_port()
    env = metrics_env(db, private_redis, fake_openai, tmp_path, port)
    with CallbackReceiver(secret=SECRET) as receiver:
        worker = start_worker(env, tmp_path)
        try:
            assert f"metrics on http://127.0.0.1:{port}/metrics" in worker.log()
            before = scrape(port)  # the families an alert rates over exist, at zero
            assert total(before, "compaction_worker_fallbacks_total", trigger="hygiene") == 0
            assert ("compaction_callback_attempts_total", frozenset({("outcome", "failed")})) in (
                before
            )
            rows = _play_jobs(db, private_redis, fake_openai, receiver, worker, port)
            with broker(private_redis.url) as app:
                app.send_task(keys.REAP_TASK, queue=keys.SERVICE_QUEUE)
                app.send_task(keys.SWEEP_TASK, queue=keys.SERVICE_QUEUE)
            wait_metric(port, worker, "compaction_reaper_runs_total", 1)
            wait_metric(port, worker, "compaction_sweep_runs_total", 1)
            wait_metric(port, worker, "compaction_callback_attempts_total", 2, outcome="failed")
            wait_metric(port, worker, "compaction_callback_attempts_total", 1, outcome="delivered")
            samples = scrape(port)
        finally:
            worker.stop()
    _check_job_metrics(samples, rows)
    assert total(samples, "compaction_worker_lock_busy_total") >= 1
    assert total(samples, "compaction_reaper_runs_total") == 1
    assert total(samples, "compaction_reaper_failed_stuck_total") == 0
    # Nothing has been idle for hours: the sweep ran and found nothing to queue.
    assert total(samples, "compaction_sweep_runs_total") == 1
    assert total(samples, "compaction_sweep_jobs_queued_total") == 0
    # The failing session's two jobs each had their callback refused.
    for outcome, n in (("delivered", 1), ("failed", 2), ("retrying", 0)):
        assert total(samples, "compaction_callback_attempts_total", outcome=outcome) == n


def _play_jobs(
    db: Database,
    redis_server: RedisServer,
    llm: FakeOpenAI,
    receiver: CallbackReceiver,
    worker: StackProcess,
    port: int,
) -> dict[str, JobRow]:
    """A succeeded job (callback delivered), a skipped one, a fallback (callback refused), a
    cooldown skip, and a job that waits for a lock the test holds."""
    url = redis_server.url
    rows = {}
    ok = seed_session(db, callback_url=receiver.url)
    rows["ok"] = run(db, url, seed_job(db, ok), worker, status="succeeded")
    short = seed_session(db, messages=sample_messages()[:2])
    rows["short"] = run(db, url, seed_job(db, short), worker, status="skipped")

    llm.script(SUMMARY_MODEL, *[Reply.error(500)] * 3)
    # A link-local address: the worker refuses it at once, a final callback failure.
    failing = seed_session(db, callback_url="http://169.254.169.254/hook")
    rows["fallback"] = run(db, url, seed_job(db, failing), worker, status="succeeded")
    assert rows["fallback"].fallback_used is True, jobs.job_telemetry(rows["fallback"])
    rows["cooling"] = run(
        db, url, seed_job(db, failing, trigger="manual"), worker, status="skipped"
    )
    llm.clear()  # no scripted error is left for the next job

    locked = seed_session(db)
    with redis_client(url) as client:
        lease = acquire(client, locked, ttl_s=60, owner="the-test")
        job_id = seed_job(db, locked)
        with broker(url) as app:
            enqueue_job(job_id, app=app)
        try:
            wait_metric(port, worker, "compaction_worker_lock_busy_total", 1)
        finally:
            lease.release()
    rows["locked"] = run(db, url, job_id, worker, status="succeeded")
    return rows


def _check_job_metrics(samples: Samples, rows: dict[str, JobRow]) -> None:
    finished = "compaction_worker_jobs_finished_total"
    assert total(samples, finished, trigger="hygiene", status="succeeded", reason="") == 3
    assert total(samples, finished, status="skipped", reason=rows["short"].skip_reason or "") == 1
    assert rows["cooling"].skip_reason == "cooldown"
    assert total(samples, finished, trigger="manual", status="skipped", reason="cooldown") == 1
    assert total(samples, finished) == len(rows)

    fallback = rows["fallback"]
    assert total(samples, "compaction_worker_fallbacks_total", trigger="hygiene") == 1
    assert total(samples, "compaction_worker_dropped_messages_total") == fallback.dropped_count
    assert (
        total(samples, "compaction_worker_summarizer_errors_total", error_class="server_error") == 1
    )
    succeeded = [r for r in rows.values() if r.status == "succeeded"]
    saved = sum((r.tokens_before or 0) - (r.tokens_after or 0) for r in succeeded)
    assert saved > 0 and total(samples, "compaction_worker_tokens_saved_total") == saved

    calls = sum(r.summarizer_calls or 0 for r in rows.values())
    assert calls >= 3 and total(samples, "compaction_worker_summarizer_calls_total") == calls
    largest = sum(r.summarizer_input_tokens or 0 for r in rows.values())
    assert total(samples, "compaction_worker_summarizer_input_tokens_total") >= largest > 0
    llm_runs = sum(1 for r in rows.values() if r.summarizer_calls)
    assert total(samples, "compaction_worker_llm_seconds_count") == llm_runs

    # Every job but the cooldown skip was claimed (it never reached a worker's claim).
    assert total(samples, "compaction_worker_queue_wait_seconds_count") == len(rows) - 1
    assert total(samples, "compaction_worker_run_seconds_count") == len(rows)
    waited = sum((r.queue_wait_ms or 0) / 1000 for r in rows.values())
    assert total(samples, "compaction_worker_queue_wait_seconds_sum") == pytest.approx(waited)


def test_a_prefork_workers_endpoint_adds_up_its_child_processes(
    db: Database, private_redis: RedisServer, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    port = free_port()
    env = metrics_env(db, private_redis, fake_openai, tmp_path, port)
    worker = start_worker(env, tmp_path, pool="prefork", concurrency=2)
    try:
        rows = [
            run(db, private_redis.url, seed_job(db, seed_session(db)), worker, status="succeeded")
            for _ in range(2)
        ]
        wait_metric(port, worker, "compaction_worker_jobs_finished_total", 2, status="succeeded")
        samples = scrape(port)
    finally:
        worker.stop()
    for row in rows:  # the jobs ran in pool children, not in the process that serves metrics
        assert row.worker is not None and not row.worker.endswith(f"/{worker.pid}")
    assert total(samples, "compaction_worker_jobs_finished_total", status="succeeded") == 2
    assert total(samples, "compaction_worker_run_seconds_count") == 2
    calls = sum(r.summarizer_calls or 0 for r in rows)
    assert total(samples, "compaction_worker_summarizer_calls_total") == calls


def counted(name: str, **labels: str) -> float:
    """This process's value of a worker metric (tests run the sweep and the reaper in-process)."""
    return metrics.current().registry.get_sample_value(name, labels) or 0.0


def test_the_sweep_and_the_reaper_count_what_they_did(rt: Runtime) -> None:
    idle = seed_session(rt.db)
    stuck = seed_job(rt.db, seed_session(rt.db))
    assert jobs.claim_job(rt.db, job_id=stuck, worker="w/1") is not None
    with rt.db.write() as s:
        long_ago = utcnow() - timedelta(hours=9)
        s.execute(update(SessionRow).where(SessionRow.id == idle).values(last_activity_at=long_ago))
        s.execute(update(JobRow).where(JobRow.id == stuck).values(started_at=long_ago))
    names = ("compaction_sweep_runs_total", "compaction_sweep_candidates_total",
             "compaction_sweep_jobs_queued_total", "compaction_reaper_runs_total",
             "compaction_reaper_failed_stuck_total")  # fmt: skip
    before = {name: counted(name) for name in names}
    stuck_before = counted(
        "compaction_worker_jobs_finished_total", trigger="hygiene", status="failed", reason="stuck"
    )

    sweep_idle_sessions(rt, dry_run=True)  # a preview counts nothing
    assert [p.session_id for p in sweep_idle_sessions(rt)] == [idle]
    assert reap_stuck_jobs(rt).failed == [stuck]

    after = {name: counted(name) - before[name] for name in names}
    assert after == dict(zip(names, (1, 1, 1, 1, 1), strict=True))
    assert (
        counted(
            "compaction_worker_jobs_finished_total",
            trigger="hygiene",
            status="failed",
            reason="stuck",
        )
        == stuck_before + 1
    )


def test_the_worker_commands_import_no_metric_library_before_the_exporter_starts() -> None:
    """prometheus_client decides where values live when it is first imported, so `compaction
    worker` (and `up`'s worker child) must reach ``start_exporter`` before anything imports it."""
    code = (
        "import sys, api.cli, api.commands.up, api.commands.worker, worker.launcher; "
        "print(sorted(m for m in sys.modules if m.startswith('prometheus_client')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
