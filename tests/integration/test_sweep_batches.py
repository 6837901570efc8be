"""The sweep selects and checks in batches: its cost does not grow with the sessions that do
not qualify. Shown by what it issues (statements, Redis commands) and by the query plan, not
by timing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, event, insert

from tests.support.worker_fixtures import private_redis, rt, settings
from worker import cooldowns
from worker.runtime import Runtime
from worker.store.models import SWEEP_UTILIZATION_INDEX, JobRow, SessionRow, utcnow
from worker.sweeps import sweep_idle_sessions

pytestmark = pytest.mark.integration
__all__ = ["private_redis", "rt", "settings"]  # fixtures, imported for pytest

WINDOW = 16_000
LONG_AGO = timedelta(hours=10)
# Sessions that fail the sweep's decision, each for another reason.
NOT_QUALIFYING = (
    "small", "active", "compacted", "few_messages", "thrash_guard", "open_job", "hourly_cap",
)  # fmt: skip


def session_values(kind: str) -> dict[str, Any]:
    """A session row of ``kind`` (no messages: the sweep reads only the row)."""
    now = utcnow()
    row: dict[str, Any] = {
        "id": f"{kind}-{uuid.uuid4().hex[:12]}", "model": "gpt-4o", "context_length": WINDOW,
        "version": 1, "rewrite_count": 0, "next_seq": 11, "token_total": 12_000,
        "message_count": 10, "compaction_count": 0, "ineffective_count": 0,
        "created_at": now - LONG_AGO, "updated_at": now - LONG_AGO,
        "last_activity_at": now - LONG_AGO,
    }  # fmt: skip
    changes: dict[str, dict[str, Any]] = {
        "small": {"token_total": 2_000},
        "active": {"last_activity_at": now},
        "compacted": {"last_compacted_at": now - LONG_AGO + timedelta(minutes=5)},
        "few_messages": {"message_count": 2},
        "thrash_guard": {"thrash_until_tokens": 13_000},
    }
    return row | changes.get(kind, {})


def seed(rt: Runtime, kinds: list[str]) -> list[str]:
    rows = [session_values(kind) for kind in kinds]
    with rt.db.write() as s:
        s.execute(insert(SessionRow), rows)
        jobs = [
            job_values(r["id"], status="queued") for r in rows if r["id"].startswith("open_job")
        ]
        jobs += [
            job_values(r["id"], status="succeeded", trigger="sweep")
            for r in rows
            if r["id"].startswith("hourly_cap")
            for _ in range(rt.settings.max_auto_compactions_per_hour)
        ]
        if jobs:
            s.execute(insert(JobRow), jobs)
    return [r["id"] for r in rows]


def job_values(session_id: str, *, status: str, trigger: str = "hygiene") -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()), "session_id": session_id, "trigger": trigger,
        "status": status, "force": False, "attempt": 1, "callback_attempts": 0,
        "enqueued_at": utcnow() - timedelta(minutes=10),
    }  # fmt: skip


@dataclass
class Issued:
    statements: list[tuple[str, Any]] = field(default_factory=list)
    redis_commands: int = 0


@contextmanager
def issued_by(rt: Runtime) -> Iterator[Issued]:
    """The SQL statements and the Redis commands issued inside the block."""
    out = Issued()

    def record(conn: Any, cursor: Any, statement: str, params: Any, *args: Any) -> None:
        out.statements.append((statement, params))

    rt.redis.config_resetstat()
    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield out
    finally:
        event.remove(Engine, "before_cursor_execute", record)
    stats = rt.redis.info("commandstats")
    out.redis_commands = sum(  # all but this function's own (keys: "cmdstat_config|resetstat")
        int(v["calls"])
        for k, v in stats.items()
        if not k.startswith(("cmdstat_info", "cmdstat_config"))
    )


@pytest.fixture
def population(rt: Runtime) -> dict[str, list[str]]:
    """Three sessions that qualify, one of them (and one more) on cooldown."""
    ready = seed(rt, ["ready"] * 3)
    for session_id in ready[:1]:
        cooldowns.record_failure(
            rt.redis, settings=rt.settings, session_id=session_id,
            endpoint=cooldowns.endpoint_id(rt.settings), error_class="server_error",
        )  # fmt: skip
    return {"ready": ready[1:], "on_cooldown": ready[:1]}


def sweep_with_others(rt: Runtime, others: int) -> tuple[list[str], Issued]:
    seed(rt, [NOT_QUALIFYING[i % len(NOT_QUALIFYING)] for i in range(others)])
    with issued_by(rt) as issued:
        picks = sweep_idle_sessions(rt, dry_run=True)
    return sorted(p.session_id for p in picks), issued


def test_a_sweep_issues_as_much_with_1000_sessions_that_do_not_qualify_as_with_10(
    rt: Runtime, population: dict[str, list[str]]
) -> None:
    few_picks, few = sweep_with_others(rt, 10)
    many_picks, many = sweep_with_others(rt, 990)  # 1,000 in all

    assert few_picks == many_picks == sorted(population["ready"])
    assert len(many.statements) == len(few.statements)
    assert many.redis_commands == few.redis_commands == 1  # the batch's cooldowns, at once
    selects = [sql for sql, _ in many.statements if "FROM sessions" in sql]
    assert len(selects) == 1  # one query for the whole batch


def test_the_sweep_query_uses_the_utilization_index(
    rt: Runtime, population: dict[str, list[str]]
) -> None:
    seed(rt, [NOT_QUALIFYING[i % len(NOT_QUALIFYING)] for i in range(600)])
    with issued_by(rt) as issued:
        sweep_idle_sessions(rt, dry_run=True)
    ((statement, params),) = [(q, p) for q, p in issued.statements if "FROM sessions" in q]

    plan = query_plan(rt, statement, params)
    if rt.db.dialect == "sqlite":  # SEARCH: a range of the index, not a scan of it
        assert f"SEARCH sessions USING INDEX {SWEEP_UTILIZATION_INDEX} (<expr>>?)" in plan
    else:
        lines = plan.splitlines()
        at = next(i for i, line in enumerate(lines) if SWEEP_UTILIZATION_INDEX in line)
        condition = lines[at + 1].strip()
        assert condition.startswith("Index Cond:") and "token_total" in condition


def query_plan(rt: Runtime, statement: str, params: Any) -> str:
    with rt.db.engine.connect() as conn:
        if rt.db.dialect == "sqlite":
            rows = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", params).all()
            return "\n".join(str(row[-1]) for row in rows)
        conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
        rows = conn.exec_driver_sql(f"EXPLAIN {statement}", params).all()
        return "\n".join(str(row[0]) for row in rows)


def test_an_endpoint_cooldown_holds_the_whole_batch_back_in_one_read(
    rt: Runtime, population: dict[str, list[str]]
) -> None:
    cooldowns.record_failure(
        rt.redis, settings=rt.settings, session_id="elsewhere",
        endpoint=cooldowns.endpoint_id(rt.settings), error_class="auth",
    )  # fmt: skip
    with issued_by(rt) as issued:
        assert sweep_idle_sessions(rt, dry_run=True) == []
    assert issued.redis_commands == 1
