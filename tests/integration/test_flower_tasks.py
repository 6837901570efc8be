"""Flower's task list tells a job's outcome: a real worker and a real Flower on a private Redis.

A skipped job must not look like a success at a glance, a failed one looks failed, and each row
shows its outcome, session id and trigger as text a person reads (JSON, not a Python repr).
"""

from __future__ import annotations

import ast
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.stack import StackProcess, broker, stack_env, start_worker, wait_until
from tests.support.worker_fixtures import private_redis, seed_job, seed_session
from worker import cooldowns, keys
from worker.enqueue import enqueue_job
from worker.redis_server import RedisServer, free_port
from worker.runtime import redis_client
from worker.settings import Settings
from worker.store import jobs
from worker.store.db import Database

pytestmark = pytest.mark.integration
__all__ = ["private_redis"]  # a fixture, imported for pytest

AUTH = ("ops", "s3cret-flower")


@pytest.fixture
def db(tmp_path: Path, sqlite_template: Path) -> Iterator[Database]:
    path = tmp_path / "compaction.db"
    shutil.copyfile(sqlite_template, path)
    database = Database(f"sqlite:///{path}")
    yield database
    database.dispose()


@pytest.fixture
def env(db: Database, private_redis: RedisServer, tmp_path: Path) -> dict[str, str]:
    # One claim per job: a job claimed before (by a worker that died) fails on its next claim.
    return stack_env(
        redis_url=private_redis.url, database_url=db.url, var_dir=tmp_path / "var",
        flower_user=AUTH[0], flower_password=AUTH[1], max_job_attempts=1,
    )  # fmt: skip


@pytest.fixture
def flower(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """A real Flower consuming the private Redis's events; its base URL."""
    port = free_port()
    args = ["flower", "--address=127.0.0.1", f"--port={port}"]
    with StackProcess("flower", args, env=env, log_dir=tmp_path) as proc:
        base = f"http://127.0.0.1:{port}"
        proc.wait_for(
            lambda: httpx.get(f"{base}/healthcheck", timeout=2).status_code == 200,
            timeout_s=60,
            what="/healthcheck",
        )
        yield base


def task_list(flower: str) -> dict[str, dict[str, Any]]:
    """The rows of Flower's task list (what its /tasks page draws), by task id."""
    params = {
        "draw": "1", "start": "0", "length": "100", "search[value]": "",
        "order[0][column]": "0", "order[0][dir]": "desc", "columns[0][data]": "received",
    }  # fmt: skip
    answer = httpx.get(f"{flower}/tasks/datatable", params=params, auth=AUTH, timeout=10)
    answer.raise_for_status()
    return {row["uuid"]: row for row in answer.json()["data"]}


def worker_online(flower: str) -> bool:
    metrics = httpx.get(f"{flower}/metrics", auth=AUTH, timeout=10).text
    return any(
        line.startswith("flower_worker_online{") and line.endswith(" 1.0")
        for line in metrics.splitlines()
    )


def test_flower_tells_skipped_and_failed_jobs_from_succeeded_ones(
    db: Database, private_redis: RedisServer, env: dict[str, str], flower: str, tmp_path: Path
) -> None:
    settings = Settings(redis_url=private_redis.url, database_url=db.url)
    succeeding = seed_session(db)
    cooling = seed_session(db)
    failing = seed_session(db)
    with redis_client(private_redis.url) as client:
        cooldowns.record_failure(
            client, settings=settings, session_id=cooling, endpoint="e", error_class="timeout"
        )
    ok_job = seed_job(db, succeeding, trigger="hygiene")
    skip_job = seed_job(db, cooling, trigger="sweep")
    fail_job = seed_job(db, failing, trigger="manual", force=True)
    jobs.claim_job(db, job_id=fail_job, worker="a worker that died")  # its one attempt

    worker = start_worker(env, tmp_path)
    try:
        wait_until(lambda: worker_online(flower), timeout_s=60, what="Flower seeing the worker",
                   logs=[worker])  # fmt: skip
        with broker(private_redis.url) as app:
            for job_id, session_id, trigger in (
                (ok_job, succeeding, "hygiene"),
                (skip_job, cooling, "sweep"),
                (fail_job, failing, "manual"),
            ):
                enqueue_job(job_id, session_id=session_id, trigger=trigger, app=app)

        def all_ended() -> bool:
            rows = task_list(flower)
            ended = {"SUCCESS", "FAILURE", "SKIPPED"}
            return all(rows.get(j, {}).get("state") in ended for j in (ok_job, skip_job, fail_job))

        wait_until(all_ended, timeout_s=90, what="three finished rows in Flower", logs=[worker])
        # Every outcome acknowledges its message: none waits to be delivered again.
        with redis_client(private_redis.url) as client:
            wait_until(
                lambda: client.llen(keys.QUEUE) == 0 and client.hlen(keys.BROKER_UNACKED) == 0,
                timeout_s=30, what="every message acknowledged", logs=[worker],
            )  # fmt: skip
    finally:
        worker.stop()

    assert [jobs.get_job(db, job_id=j).status for j in (ok_job, skip_job, fail_job)] == [
        "succeeded", "skipped", "failed",
    ]  # fmt: skip
    rows = task_list(flower)

    ok = rows[ok_job]
    assert ok["state"] == "SUCCESS"
    shown = json.loads(ast.literal_eval(ok["result"]))  # a returned str: Celery shows its repr
    assert (shown["status"], shown["session_id"], shown["trigger"]) == (
        "succeeded", succeeding, "hygiene",
    )  # fmt: skip
    assert json.loads(ok["kwargs"]) == {"session_id": succeeding, "trigger": "hygiene"}

    skipped = rows[skip_job]
    assert skipped["state"] == "SKIPPED"  # Flower draws it grey, not as a success
    shown = json.loads(skipped["result"])
    assert (shown["status"], shown["skip_reason"]) == ("skipped", "cooldown")
    assert (shown["session_id"], shown["trigger"]) == (cooling, "sweep")
    assert json.loads(skipped["kwargs"]) == {"session_id": cooling, "trigger": "sweep"}
    assert "None" not in skipped["result"] and "False" not in skipped["result"]

    failed = rows[fail_job]
    assert failed["state"] == "FAILURE"
    assert "too_many_attempts" in failed["exception"] and failing in failed["exception"]
    assert json.loads(failed["kwargs"]) == {"session_id": failing, "trigger": "manual"}
    assert "Traceback" not in worker.log()  # an outcome, not a crash

    page = httpx.get(f"{flower}/tasks", auth=AUTH, timeout=10).text
    assert 'data-column="kwargs"' in page and 'data-column="result"' in page  # shown by default
