"""The four measurements of the worker benchmark (bench/service_worker.py runs them).

Each returns plain numbers; the caller prints them beside their targets.
"""

from __future__ import annotations

import statistics
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import redis
from sqlalchemy import func, select

from bench import worker_sessions as ws
from bench.ours import StubSummarizer
from tests.support.stack import StackProcess, descendants
from worker import compaction
from worker.compressor.summarizer import Summarizer
from worker.enqueue import enqueue_job
from worker.redis_server import RedisServer
from worker.runtime import Runtime, redis_client
from worker.settings import Settings
from worker.store import jobs
from worker.store.db import Database
from worker.store.models import JobRow, utcnow
from worker.sweeps import preview_idle_sessions

SUMMARY = "Summary: the conversation so far. " * 20


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def wait_finished(db: Database, job_ids: Sequence[str], *, timeout_s: float) -> list[JobRow]:
    """The jobs once all have finished (polled); raises after ``timeout_s``.

    A poll is one query: the load generator shares the machine with the worker it measures,
    and reading each job's row on every poll (320 transactions five times a second) took
    nearly half a core on a 2-core machine, and as much again from the database.
    """
    deadline = time.monotonic() + timeout_s
    while (open_ := open_jobs(db, job_ids)) > 0:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{open_} of {len(job_ids)} jobs still open after {timeout_s:.0f}s")
        time.sleep(0.2)
    return [jobs.get_job(db, job_id=j) for j in job_ids]


def open_jobs(db: Database, job_ids: Sequence[str]) -> int:
    """How many of ``job_ids`` have not finished."""
    with db.read() as s:
        return (
            s.scalar(
                select(func.count())
                .select_from(JobRow)
                .where(JobRow.id.in_(job_ids), JobRow.status.not_in(jobs.FINISHED_STATUSES))
            )
            or 0
        )


def last_finish_s(rows: Sequence[JobRow], since: datetime) -> float:
    return max((r.finished_at or since) - since for r in rows).total_seconds()


# ---------------------------------------------------------------------------------------------
# (a) jobs in flight in one worker process


@dataclass(frozen=True, slots=True)
class InFlight:
    jobs: int
    wall_s: float
    ideal_rate: float  # jobs/s: the worker's threads / the LLM's answer time
    pool_timeouts: int  # jobs whose summary model was given up on, and pool waits in the log
    not_succeeded: int
    rss_peak_mb: float

    @property
    def rate(self) -> float:
        return self.jobs / self.wall_s


class PeakRss:
    """Samples the resident memory of a process and its children until stopped."""

    def __init__(self, pid: int, every_s: float = 0.2) -> None:
        self.pid, self.every_s, self.peak_kb = pid, every_s, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.peak_kb = max(self.peak_kb, sum(map(rss_kb, [self.pid, *descendants(self.pid)])))


def rss_kb(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return 0
    line = next((x for x in status.splitlines() if x.startswith("VmRSS:")), "VmRSS: 0 kB")
    return int(line.split()[1])


POOL_WAIT_MARKS = ("PoolTimeout", "LLMPoolBusyError", "QueuePool limit")


def in_flight(
    db: Database, celery: object, worker: StackProcess, *, jobs_n: int, threads: int,
    llm_s: float, summary_model: str,
) -> InFlight:  # fmt: skip
    """Queue ``jobs_n`` jobs at once; time from the first enqueue to the last finish."""
    t = ws.sample()
    job_ids = [ws.seed_job(db, t) for _ in range(jobs_n)]
    log_before = len(worker.log())
    with PeakRss(worker.pid) as rss:
        started = utcnow()
        for job_id in job_ids:
            enqueue_job(job_id, app=celery)
        rows = wait_finished(db, job_ids, timeout_s=60 + 4 * jobs_n * llm_s / threads)
    log = worker.log()[log_before:]
    gave_up = sum(r.summarizer != summary_model or bool(r.aux_model_failed) for r in rows)
    waits = sum(log.count(mark) for mark in POOL_WAIT_MARKS)
    return InFlight(
        jobs=jobs_n, wall_s=last_finish_s(rows, started), ideal_rate=threads / llm_s,
        pool_timeouts=gave_up + waits, not_succeeded=sum(r.status != "succeeded" for r in rows),
        rss_peak_mb=rss.peak_kb / 1024,
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# (b) what a job costs besides the LLM


@dataclass(frozen=True, slots=True)
class Overhead:
    label: str
    messages: int
    tokens: int
    total_ms: list[float]  # run_job, start to finish
    compress_ms: list[float]  # the job's run_ms: from its claim to its write-back

    def store_ms(self) -> list[float]:
        return [t - c for t, c in zip(self.total_ms, self.compress_ms, strict=True)]


def in_process_runtime(settings: Settings, summarizer: Summarizer) -> Runtime:
    assert settings.redis_url is not None
    from worker.celery_app import make_celery

    return Runtime(
        settings=settings, db=Database(settings.database_url),
        redis=redis_client(settings.redis_url), make_summarizer=lambda: summarizer,
        celery=make_celery(settings), owns_celery=True,
    )  # fmt: skip


def overhead(settings: Settings, *, runs: int, indexed_before: bool) -> Overhead:
    """``run_job`` in this process on the long session, with a stand-in for the LLM that
    answers at once: everything a job does but wait for the model."""
    t = ws.long_session()
    rt = in_process_runtime(settings, StubSummarizer(SUMMARY))
    totals, compress = [], []
    try:
        for i in range(runs + 3):  # the first runs warm the caches up
            job_id = ws.seed_job(rt.db, t, times=2 if indexed_before else 1)
            started = time.perf_counter()
            telemetry = compaction.run_job(rt, job_id, worker="bench")
            elapsed_ms = (time.perf_counter() - started) * 1000
            if telemetry["status"] != "succeeded":
                raise RuntimeError(f"job {job_id} ended {telemetry['status']}: {telemetry}")
            if i >= 3:
                totals.append(elapsed_ms)
                compress.append(float(telemetry["run_ms"]) - float(telemetry["llm_ms"] or 0))
    finally:
        rt.close()
    label = "text already in the archive" if indexed_before else "text new to the archive"
    return Overhead(label, len(t.messages), t.tokens, totals, compress)


# ---------------------------------------------------------------------------------------------
# (c) a burst of sessions crossing the threshold through the API


@dataclass(frozen=True, slots=True)
class Burst:
    sessions: int
    wall_s: float  # first append sent .. last job finished
    serial_s: float  # the same compactions one after another in one process (run_job)
    serial_core_s: float  # the compressor's share of serial_s
    append_p50_ms: float
    append_p99_ms: float
    enqueued: int
    retried: int


def burst(
    db: Database, settings: Settings, summarizer: Callable[[], Summarizer], *, api_port: int,
    sessions_n: int, clients: int,
) -> Burst:  # fmt: skip
    head, tail = ws.below_threshold(ws.sample())
    base = f"http://127.0.0.1:{api_port}/v1/sessions"
    ids = [ws.seed(db, head) for _ in range(sessions_n)]
    with httpx.Client(timeout=60) as client, ThreadPoolExecutor(clients) as pool:
        started = utcnow()

        def append(session_id: str) -> Appended:
            return append_as_a_gateway(client, f"{base}/{session_id}/messages", tail.messages)

        answers = list(pool.map(append, ids))
    job_ids = [a.job_id for a in answers if a.job_id]
    rows = wait_finished(db, job_ids, timeout_s=300)
    latencies = [a.ms for a in answers]
    serial_s, serial_core_s = serial(settings, summarizer, head, tail, sessions_n)
    return Burst(
        sessions=sessions_n, wall_s=last_finish_s(rows, started), serial_s=serial_s,
        serial_core_s=serial_core_s,
        append_p50_ms=pct(latencies, 0.5), append_p99_ms=pct(latencies, 0.99),
        enqueued=len(job_ids), retried=sum(a.retries for a in answers),
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Appended:
    ms: float  # first try to the answer, retries included
    job_id: str | None
    retries: int  # 503 answers (the database was busy past the API's wait): sent again


def append_as_a_gateway(
    client: httpx.Client, url: str, messages: list[dict[str, Any]], *, key: str | None = None
) -> Appended:
    """POST the turns; a 503 is sent again under the same Idempotency-Key, as a gateway would."""
    headers = {"Idempotency-Key": key or uuid.uuid4().hex}
    started = time.perf_counter()
    for retries in range(20):
        answer = client.post(url, json={"messages": messages}, headers=headers)
        if answer.status_code != 503:
            answer.raise_for_status()
            ms = (time.perf_counter() - started) * 1000
            return Appended(ms, answer.json()["hygiene"]["job_id"], retries)
    raise RuntimeError(f"{url}: 503 twenty times")


def serial(
    settings: Settings, summarizer: Callable[[], Summarizer], head: ws.Transcript,
    tail: ws.Transcript, n: int,
) -> tuple[float, float]:  # fmt: skip
    """The burst's compactions, one after another in this process (sessions seeded first):
    their wall time, and the compressor's share of it (the jobs' run_ms less the LLM's)."""
    whole = ws.Transcript(head.messages + tail.messages, head.token_counts + tail.token_counts,
                          head.context_length)  # fmt: skip
    rt = in_process_runtime(settings, summarizer())
    try:
        job_ids = [ws.seed_job(rt.db, whole) for _ in range(n)]
        started = time.perf_counter()
        core_ms = 0.0
        for job_id in job_ids:
            telemetry = compaction.run_job(rt, job_id, worker="bench-serial")
            core_ms += float(telemetry["run_ms"]) - float(telemetry["llm_ms"] or 0)
        return time.perf_counter() - started, core_ms / 1000
    finally:
        rt.close()


# ---------------------------------------------------------------------------------------------
# (d) the idle sweep's selection over many sessions


@dataclass(frozen=True, slots=True)
class SweepCost:
    sessions: int
    qualifying: int
    picks: int
    p50_ms: float
    p95_ms: float


def sweep_costs(
    db: Database, settings: Settings, redis_server: RedisServer, *, sessions_n: int, runs: int
) -> list[SweepCost]:
    """The selection (``preview_idle_sessions``: the query, the cooldowns' MGET, the decision)
    as idle sessions that do not qualify are added and as more of them qualify."""
    client = redis_client(redis_server.url)
    small = sessions_n // 10
    out: list[SweepCost] = []
    try:
        ws.add_idle_sessions(db, start=0, count=small)
        out.append(_sweep_cost(db, settings, client, small, small // 10, runs))
        ws.add_idle_sessions(db, start=small, count=sessions_n - small)
        for share in (0.01, 0.10, 0.50):
            out.append(_sweep_cost(db, settings, client, sessions_n, int(sessions_n * share), runs))
    finally:
        client.close()
    return out


def _sweep_cost(
    db: Database,
    settings: Settings,
    client: redis.Redis,
    sessions_n: int,
    qualifying: int,
    runs: int,
) -> SweepCost:
    ws.set_qualifying(db, count=qualifying)
    with db.write() as s:
        s.connection().exec_driver_sql("ANALYZE")
    times, picks = [], 0
    for _ in range(runs + 2):
        started = time.perf_counter()
        picks = len(preview_idle_sessions(db, settings, redis_client=client))
        times.append((time.perf_counter() - started) * 1000)
    times = times[2:]
    return SweepCost(sessions_n, qualifying, picks, statistics.median(times), pct(times, 0.95))
