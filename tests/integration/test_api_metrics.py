"""The API's /metrics: the open jobs, read from the database at a cost that does not grow with
the finished ones (jobs are never deleted). Checked on what a scrape asks the database, the SQL
and its query plan, never on time."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine, event, func, select, update

from tests.api_support import Api, api_settings, open_api
from tests.store_factories import counts, make_transcript
from worker.redis_server import free_port
from worker.store import jobs, sessions
from worker.store.db import Database
from worker.store.models import OPEN_JOB_STATUSES, JobRow, utcnow

pytestmark = pytest.mark.integration

FINISHED_JOBS = 40


@dataclass(frozen=True)
class Statement:
    sql: str
    parameters: Any

    def values(self) -> list[Any]:
        p = self.parameters
        return list(p.values()) if isinstance(p, Mapping) else list(p or ())


@contextmanager
def statements_issued() -> Iterator[list[Statement]]:
    """Every statement any engine of this process sends while the block runs."""
    seen: list[Statement] = []

    def record(conn: Any, cursor: Any, sql: str, parameters: Any, *_: Any) -> None:
        seen.append(Statement(sql, parameters))

    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(Engine, "before_cursor_execute", record)


def seed(db: Database) -> None:
    """Many finished jobs, two queued (one waiting two minutes already), one running."""
    for i in range(FINISHED_JOBS + 3):
        messages = make_transcript(2)
        sessions.put_snapshot(
            db, session_id=f"s{i}", model="gpt-4", context_length=8_000,
            messages=messages, token_counts=counts(messages),
        )  # fmt: skip
        job = jobs.create_job(db, session_id=f"s{i}", trigger="hygiene")
        if i < FINISHED_JOBS:
            status = ("failed", "skipped", "aborted")[i % 3]
            jobs.finish_job(db, job_id=job.id, attempt=0, status=status)
        elif i == FINISHED_JOBS:
            jobs.claim_job(db, job_id=job.id, worker="w/1")
        elif i == FINISHED_JOBS + 1:
            with db.write() as s:
                waited = utcnow() - timedelta(seconds=120)
                s.execute(update(JobRow).where(JobRow.id == job.id).values(enqueued_at=waited))


def scrape(api: Api) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = api.client.get("/metrics").text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def plan(db: Database, statement: Statement) -> list[str]:
    """How the database runs ``statement``: SQLite's query plan lines; PostgreSQL's plan
    nodes on ``jobs`` with their index condition, with sequential scans priced out (on a
    small table the planner would rightly prefer one; the question is whether an index
    *can* serve the query)."""
    raw = db.engine.raw_connection()
    try:
        cursor = raw.cursor()
        if db.dialect == "sqlite":
            cursor.execute(f"EXPLAIN QUERY PLAN {statement.sql}", statement.parameters)
            return [str(row[-1]) for row in cursor.fetchall()]
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN (FORMAT JSON) {statement.sql}", statement.parameters)
        row = cursor.fetchone()
        assert row is not None
        return list(_pg_jobs_nodes(row[0][0]["Plan"]))
    finally:
        raw.rollback()
        raw.close()


def _pg_jobs_nodes(node: dict[str, Any]) -> Iterator[str]:
    if node.get("Relation Name") == "jobs":
        # An index scan's condition, or a bitmap heap scan's (its index scan found the rows).
        cond = node.get("Index Cond") or node.get("Recheck Cond") or ""
        yield f"{node['Node Type']} cond={cond}"
    for child in node.get("Plans", []):
        yield from _pg_jobs_nodes(child)


def touches_only_open_jobs(db: Database, statement: Statement) -> bool:
    lines = plan(db, statement)
    if db.dialect == "sqlite":
        on_jobs = [line for line in lines if " jobs " in f"{line} "]
        # SEARCH: a range of the (status, enqueued_at) index; SCAN would read every job.
        return bool(on_jobs) and all(line.startswith("SEARCH jobs") for line in on_jobs)
    return bool(lines) and all("status" in line.split("cond=", 1)[1] for line in lines)


def reads_jobs(statements: Sequence[Statement]) -> list[Statement]:
    return [
        s for s in statements if " jobs" in s.sql and s.sql.lstrip().upper().startswith("SELECT")
    ]


def test_a_scrape_reads_only_the_open_jobs(api: Api) -> None:
    db = Database(api.settings.database_url)
    try:
        seed(db)
        with statements_issued() as issued:
            samples = scrape(api)
        on_jobs = reads_jobs(issued)
        assert on_jobs, issued
        for statement in on_jobs:
            # Asked for queued and running jobs only...
            assert "WHERE jobs.status IN" in statement.sql, statement
            assert set(statement.values()) <= set(OPEN_JOB_STATUSES), statement
            # ...and answered from the index, without reading the finished ones.
            assert touches_only_open_jobs(db, statement), (statement, plan(db, statement))
    finally:
        db.dispose()

    assert samples[("compaction_open_jobs", (("status", "queued"),))] == 2
    assert samples[("compaction_open_jobs", (("status", "running"),))] == 1
    waited = samples[("compaction_oldest_open_job_age_seconds", (("status", "queued"),))]
    assert 120 <= waited < 600
    running = samples[("compaction_oldest_open_job_age_seconds", (("status", "running"),))]
    assert 0 <= running < 600
    assert not any(name == "compaction_jobs" for name, _ in samples)  # the GROUP BY of every job


def test_the_plan_check_catches_a_count_of_every_job(api: Api) -> None:
    """The check above would fail the scrape this replaced: a count of every job by status."""
    db = Database(api.settings.database_url)
    try:
        seed(db)
        with statements_issued() as issued, db.read() as s:
            s.execute(select(JobRow.status, func.count()).group_by(JobRow.status)).all()
        (every_job,) = reads_jobs(issued)
        assert not touches_only_open_jobs(db, every_job), plan(db, every_job)
    finally:
        db.dispose()


def test_the_open_jobs_gauges_read_zero_on_an_empty_database(api: Api) -> None:
    samples = scrape(api)
    for status in OPEN_JOB_STATUSES:
        assert samples[("compaction_open_jobs", (("status", status),))] == 0
        assert samples[("compaction_oldest_open_job_age_seconds", (("status", status),))] == 0


@pytest.fixture
def api_without_broker(database_url: str, tmp_path: Path) -> Iterator[Api]:
    dead = f"redis://127.0.0.1:{free_port()}/0"
    yield from open_api(api_settings(database_url, dead, tmp_path), None)


def test_jobs_the_broker_could_not_take_are_counted(api_without_broker: Api) -> None:
    api = api_without_broker
    body = {"model": "gpt-4", "context_length": 2_000, "messages": make_transcript(40)}
    for session_id in ("s1", "s2"):  # the second finds the breaker open
        r = api.client.put(f"/v1/sessions/{session_id}", json=body)
        assert r.json()["hygiene"]["error_class"] == "broker_unavailable", r.text
    assert scrape(api)[("compaction_api_jobs_unqueued_total", ())] == 2
