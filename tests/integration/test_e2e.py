"""End to end over real processes: the API (uvicorn) and a worker, a private Redis, a fake LLM
server, on SQLite and on PostgreSQL. Only HTTP is used to drive and to check."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.invariants import check_transcript
from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.stack import stack_env, start_stack, wait_until
from tests.support.worker_fixtures import SAMPLE_WINDOW, private_redis, sample_messages
from worker.redis_server import RedisServer, free_port

pytestmark = pytest.mark.integration
__all__ = ["private_redis"]  # a fixture, imported for pytest

SUMMARY_MODEL = "fake-summary"
TELEMETRY = ("tokens_before", "tokens_after", "savings_pct", "messages_before", "messages_after",
             "summarized_count", "queue_wait_ms", "run_ms", "llm_ms", "worker", "summarizer",
             "summarizer_calls", "started_at", "finished_at")  # fmt: skip


@pytest.fixture
def llm() -> Iterator[FakeOpenAI]:
    # Slow enough that the test can append turns while the job waits on it.
    with FakeOpenAI(
        default=Reply.ok("## Goal\nFix the admin view.\n## Progress\nDone.").after(2)
    ) as server:
        yield server


@pytest.fixture
def stack(
    database_url: str, private_redis: RedisServer, llm: FakeOpenAI, tmp_path: Path
) -> Iterator[httpx.Client]:
    port = free_port()
    env = stack_env(
        redis_url=private_redis.url, database_url=database_url, var_dir=tmp_path / "var",
        llm_base_url=llm.base_url, summary_model=SUMMARY_MODEL, llm_stream="false",
    )  # fmt: skip
    procs = start_stack(env, tmp_path, api_port=port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            yield client
    finally:
        for proc in procs:
            proc.stop()


def ok(response: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_session_over_the_threshold_is_compacted_end_to_end_keeping_later_turns(
    stack: httpx.Client, llm: FakeOpenAI
) -> None:
    before = sample_messages()
    body = {"model": "gpt-4o", "context_length": SAMPLE_WINDOW, "messages": before}
    answer = ok(stack.put("/v1/sessions/e2e", json=body), 202)
    assert answer["hygiene"]["decision"] == "enqueued" and answer["utilization"] >= 0.85
    job_id = answer["hygiene"]["job_id"]

    wait_until(lambda: len(llm.requests) >= 1, timeout_s=60, what="the summarizer call")
    appended = [
        {"role": "user", "content": "While you were compacting: also check the changelog."},
        {"role": "assistant", "content": "Will do, right after this."},
    ]
    during = ok(stack.post("/v1/sessions/e2e/messages", json={"messages": appended}), 202)
    assert during["hygiene"] == {"decision": "already_queued", "job_id": job_id}

    job = poll_job(stack, job_id)
    assert job["status"] == "succeeded", job
    assert all(job[name] is not None for name in TELEMETRY), job
    assert job["summarizer"] == SUMMARY_MODEL and job["fallback_used"] is False
    assert job["llm_ms"] >= 2000 and job["tokens_after"] < job["tokens_before"]

    transcript = ok(stack.get("/v1/sessions/e2e/messages"))
    after = transcript["messages"]
    assert check_transcript([*before, *appended], after) == []
    assert after[-2:] == appended  # invariant 6: kept, after the compacted part
    archive = ok(stack.get("/v1/sessions/e2e/archive"))["messages"]
    assert [a["message"] for a in archive] == before[: len(archive)]
    assert {a["archived_by_job"] for a in archive} == {job_id}
    session = ok(stack.get("/v1/sessions/e2e"))
    assert session["version"] == transcript["version"] and session["compaction_count"] == 1


def test_a_manual_compaction_ends_at_or_under_the_size_it_asked_for(
    stack: httpx.Client, llm: FakeOpenAI
) -> None:
    before = sample_messages()  # 15,034 tokens: under the threshold of a 32,000-token window
    body = {"model": "gpt-4o", "context_length": 32_000, "messages": before}
    assert (
        ok(stack.put("/v1/sessions/sized", json=body))["hygiene"]["decision"] == "below_threshold"
    )
    too_big = stack.post("/v1/sessions/sized/compact", json={"target_tokens": 32_001})
    assert too_big.status_code == 422 and "context_length" in too_big.json()["detail"]

    queued = ok(stack.post("/v1/sessions/sized/compact", json={"target_tokens": 6_500}), 202)
    job = poll_job(stack, queued["job_id"])

    assert job["status"] == "succeeded", job
    assert (job["trigger"], job["target_tokens"], job["force"]) == ("manual", 6_500, False)
    assert job["summarizer"] == SUMMARY_MODEL and job["tokens_after"] <= 6_500, job
    session = ok(stack.get("/v1/sessions/sized"))
    assert session["tokens"] == job["tokens_after"] and session["compaction_count"] == 1
    after = ok(stack.get("/v1/sessions/sized/messages"))["messages"]
    assert check_transcript(before, after) == []


def poll_job(client: httpx.Client, job_id: str, timeout_s: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = ok(client.get(f"/v1/jobs/{job_id}"))
        if job["status"] in ("succeeded", "skipped", "aborted", "failed"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} still {job['status']} after {timeout_s}s")
