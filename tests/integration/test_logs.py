"""Logs of real processes: JSON lines with the ids of what they are about, and no secret.

A real API and a real worker (private redis-server, SQLite file, the fake LLM server, a callback
receiver) run a hygiene job and a manual one whose summarizer errors, focus topic and callback URL
carry secrets from the redaction tests' corpus, and answer requests whose query strings and
bodies carry the whole corpus. Neither log may hold one of those secrets; every log record is a
JSON object; the worker's records name job, session, trigger and attempt; the API's name the
request id, which the answer echoes.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.callback_receiver import CallbackReceiver
from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.stack import StackProcess, stack_env, start_stack, wait_until
from tests.support.worker_fixtures import SAMPLE_WINDOW, private_redis, sample_messages
from tests.unit.test_redact import AWS_ID, GITHUB, JWT, MUST_REDACT, OPENAI
from worker import compiled
from worker.redis_server import RedisServer, free_port
from worker.store.db import Database

pytestmark = pytest.mark.integration
__all__ = ["private_redis"]  # a fixture, imported for pytest

SMALL, BIG = "small-model", "big-model"
SESSION = "s-logged"
CORPUS = [text for text, _, _ in MUST_REDACT]
# Secrets short and plain enough to turn up by chance inside a uuid or a timestamp.
_CHANCE = re.compile(r"[0-9a-f]{1,11}")
SECRETS = sorted({s for _, s, _ in MUST_REDACT if not _CHANCE.fullmatch(s)})
# Celery's own text format: "[2025-01-01 12:00:00,123: INFO/MainProcess] ..."
CELERY_TEXT_LINE = re.compile(r"^\[\d{4}-\d\d-\d\d [\d:,]+: [A-Z]+/")


@pytest.fixture
def db(tmp_path: Path, sqlite_template: Path) -> Iterator[Database]:
    path = tmp_path / "compaction.db"
    shutil.copyfile(sqlite_template, path)
    database = Database(f"sqlite:///{path}")
    yield database
    database.dispose()


def records(proc: StackProcess) -> list[dict[str, Any]]:
    """The process's log records. Lines that are not records (Celery's startup banner on
    stdout) start with anything but "{"."""
    out = []
    for line in proc.log().splitlines():
        assert not CELERY_TEXT_LINE.match(line), line  # a record in Celery's text format
        if line.startswith("{"):
            record = json.loads(line)  # each record is one JSON object
            assert {"ts", "level", "logger", "message"} <= record.keys(), record
            out.append(record)
    return out


def leaked(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def finished_job(api: str, job_id: str) -> dict[str, Any] | None:
    job: dict[str, Any] = httpx.get(f"{api}/v1/jobs/{job_id}", timeout=10).json()
    return job if job["status"] in ("succeeded", "skipped", "aborted", "failed") else None


def test_logs_are_json_records_with_ids_and_never_hold_a_secret(
    db: Database,
    private_redis: RedisServer,
    fake_openai: FakeOpenAI,
    tmp_path: Path,
) -> None:
    # Every summary call fails first with a provider error quoting a secret; the main model
    # then answers. Only the first few are used: a job makes a call or two.
    fake_openai.script(
        SMALL, *(Reply.error(404, code="model_not_found", message=t) for t in CORPUS)
    )
    port = free_port()
    env = stack_env(
        redis_url=private_redis.url, database_url=db.url, var_dir=tmp_path / "var",
        llm_base_url=fake_openai.base_url, summary_model=SMALL, main_model=BIG,
        llm_stream="false", callback_max_attempts=2, callback_backoff_s=0.1,
    )  # fmt: skip
    api = f"http://127.0.0.1:{port}"
    with CallbackReceiver(secret="cb", fail_first=100) as receiver:  # every delivery fails
        callback_url = f"{receiver.url}?token={GITHUB}&key={OPENAI}&id={AWS_ID}&jwt={JWT}"
        procs = start_stack(env, tmp_path, api_port=port)
        try:
            hygiene_job, manual_job = run_jobs(api, callback_url)
            wait_until(lambda: len(receiver.received) >= 4, timeout_s=60,
                       what="both jobs' callbacks tried twice", logs=procs)  # fmt: skip
            request_ids = make_requests(api)
            wait_until(lambda: "giving up" in procs[1].log(), timeout_s=30,
                       what="the last callback given up", logs=procs)  # fmt: skip
        finally:
            for proc in procs:
                proc.stop()
    api_proc, worker = procs

    assert len(fake_openai.requests) >= 2  # the summarizer's errors were met
    for proc in procs:
        assert leaked(proc.log()) == [], proc.name
    worker_records = records(worker)
    assert any("[REDACTED]" in r["message"] for r in worker_records)  # secrets reached the log

    for job_id, trigger in ((hygiene_job, "hygiene"), (manual_job, "manual")):
        ours = [r for r in worker_records if r.get("job_id") == job_id]
        assert any(r["logger"] == "celery.app.trace" for r in ours), trigger  # Celery's own
        with_ids = [r for r in ours if "attempt" in r]
        assert with_ids, f"no record of the {trigger} job names its attempt"
        assert {(r["session_id"], r["trigger"], r["attempt"]) for r in with_ids} == {
            (SESSION, trigger, 1)
        }
    hygiene_records = [r for r in worker_records if r.get("job_id") == hygiene_job]
    assert any("summary model" in r["message"] for r in hygiene_records)  # logged by our code
    # Which compressor core runs, as this process found it (the same build and sources).
    assert {"logger": "worker.tasks", "message": str(compiled.state)} in [
        {"logger": r["logger"], "message": r["message"]} for r in worker_records
    ]

    api_records = records(api_proc)
    assert any(r["logger"].startswith("uvicorn") for r in api_records)  # uvicorn's, as JSON
    access = [r for r in api_records if r["logger"] == "api.access"]
    assert all("?" not in r["message"] for r in access)  # never a query string
    given, made = request_ids
    assert any(r.get("request_id") == given and "/archive" in r["message"] for r in access)
    assert any(r.get("request_id") == made for r in access)


def run_jobs(api: str, callback_url: str) -> tuple[str, str]:
    """A hygiene job, then a manual one with a focus topic full of secrets; their ids."""
    body = {
        "model": "gpt-4o", "context_length": SAMPLE_WINDOW, "messages": sample_messages(),
        "callback_url": callback_url,
    }  # fmt: skip
    answer = httpx.put(f"{api}/v1/sessions/{SESSION}", json=body, timeout=30)
    assert answer.status_code == 202, answer.text
    hygiene_job = answer.json()["hygiene"]["job_id"]
    wait_until(lambda: finished_job(api, hygiene_job) is not None, timeout_s=60,
               what="the hygiene job")  # fmt: skip
    topic = "\n".join(CORPUS)[:2000]
    answer = httpx.post(
        f"{api}/v1/sessions/{SESSION}/compact", json={"focus_topic": topic, "force": True},
        timeout=30,
    )  # fmt: skip
    assert answer.status_code == 202, answer.text
    manual_job = answer.json()["job_id"]
    wait_until(lambda: finished_job(api, manual_job) is not None, timeout_s=60,
               what="the manual job")  # fmt: skip
    return hygiene_job, manual_job


def make_requests(api: str) -> tuple[str, str]:
    """Searches and a refused body carrying every secret; the request ids (given, made)."""
    with httpx.Client(base_url=api, timeout=30) as client:
        for text in CORPUS:
            answer = client.get(f"/v1/sessions/{SESSION}/archive", params={"q": text})
            assert answer.status_code == 200, answer.text
        bad = {"model": "gpt-4o", "context_length": 1000,
               "messages": [{"role": "robot", "content": "\n".join(CORPUS)}]}  # fmt: skip
        assert client.put("/v1/sessions/s-bad", json=bad).status_code == 422
        given = "gw-7f3a9c:req/42"
        answer = client.get(
            f"/v1/sessions/{SESSION}/archive", params={"q": CORPUS[0]},
            headers={"X-Request-ID": given},
        )  # fmt: skip
        assert answer.headers["X-Request-ID"] == given
        forged = client.get(f"/v1/sessions/{SESSION}", headers={"X-Request-ID": 'x" injected'})
        made = forged.headers["X-Request-ID"]
        assert re.fullmatch(r"[0-9a-f]{32}", made), made  # replaced, not echoed
    return given, made


def test_beat_logs_json_records(db: Database, private_redis: RedisServer, tmp_path: Path) -> None:
    env = stack_env(
        redis_url=private_redis.url, database_url=db.url, var_dir=tmp_path / "var",
        reaper_interval_s=1,
    )  # fmt: skip
    with StackProcess("beat", ["beat"], env=env, log_dir=tmp_path) as beat:
        beat.wait_for(lambda: "stuck-job-reaper" in beat.log(), timeout_s=60,
                      what="the reaper sent")  # fmt: skip
    sent = [r for r in records(beat) if "stuck-job-reaper" in r["message"]]
    assert sent and sent[0]["logger"] == "celery.beat"
