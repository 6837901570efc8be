"""``/v1/jobs``: one job with its telemetry, pages of jobs."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text

from tests.api_support import Api
from tests.store_factories import compaction_of, counts, make_transcript
from worker.store.db import Database
from worker.store.jobs import TELEMETRY_FIELDS, claim_job, create_job, finish_job, write_back
from worker.store.sessions import put_snapshot

pytestmark = pytest.mark.integration


def test_a_job_carries_its_telemetry(api: Api) -> None:
    body = {"model": "gpt-4", "context_length": 2000, "messages": make_transcript(40)}
    job_id = api.client.put("/v1/sessions/s1", json=body).json()["hygiene"]["job_id"]
    db = Database(api.settings.database_url)
    try:
        claim = claim_job(db, job_id=job_id, worker="host/1")
        assert claim is not None
        write_back(
            db,
            job_id=job_id,
            attempt=1,
            result=compaction_of(claim, fallback_used=True, dropped_count=7),
        )
    finally:
        db.dispose()
    job = api.client.get(f"/v1/jobs/{job_id}").json()
    assert set(TELEMETRY_FIELDS) <= set(job)
    assert (job["status"], job["attempt"], job["worker"], job["version_after"]) == (
        "succeeded",
        1,
        "host/1",
        2,
    )
    assert (job["fallback_used"], job["dropped_count"], job["summarizer"]) == (
        True,
        7,
        "extractive",
    )
    assert job["tokens_after"] < job["tokens_before"] and job["savings_pct"] > 0
    assert job["upto_seq"] == 81 and job["started_at"] and job["finished_at"]


def test_jobs_page_newest_first_with_filters(api: Api) -> None:
    db = Database(api.settings.database_url)
    try:
        for sid in ("a", "b"):
            api.client.put(
                f"/v1/sessions/{sid}",
                json={"model": "gpt-4", "context_length": 9000, "messages": make_transcript(1)},
            )
        ids = []
        for _ in range(3):
            job = create_job(db, session_id="a", trigger="manual")
            finish_job(db, job_id=job.id, attempt=0, status="failed")
            ids.append(job.id)
        other = create_job(db, session_id="b", trigger="sweep").id
    finally:
        db.dispose()
    page = api.client.get("/v1/jobs", params={"session_id": "a", "limit": 2}).json()
    assert [j["id"] for j in page["jobs"]] == ids[::-1][:2] and page["next_before"] == ids[1]
    rest = api.client.get(
        "/v1/jobs", params={"session_id": "a", "limit": 2, "before": page["next_before"]}
    ).json()
    assert [j["id"] for j in rest["jobs"]] == [ids[0]] and rest["next_before"] is None
    queued = api.client.get("/v1/jobs", params={"status": "queued"}).json()["jobs"]
    assert [(j["id"], j["trigger"]) for j in queued] == [(other, "sweep")]
    assert len(api.client.get("/v1/jobs").json()["jobs"]) == 4
    assert api.client.get("/v1/jobs", params={"before": "nope"}).status_code == 404


SECRET = "sk-proj-Zq8sT2vX9wLm4nR7pK1yB6cD3fG5hJ0a"


def test_a_secret_in_the_focus_topic_is_never_stored_nor_shown(api: Api) -> None:
    body = {"model": "gpt-4", "context_length": 90_000, "messages": make_transcript(3)}
    assert api.client.put("/v1/sessions/s1", json=body).status_code == 200
    topic = f"why the deploy with OPENAI_API_KEY={SECRET} failed"
    r = api.client.post("/v1/sessions/s1/compact", json={"focus_topic": topic, "force": True})
    assert r.status_code == 202, r.text
    job_id = r.json()["job_id"]
    shown = api.client.get(f"/v1/jobs/{job_id}")
    assert SECRET not in shown.text and SECRET[8:] not in shown.text
    assert shown.json()["focus_topic"].startswith("why the deploy with OPENAI_API_KEY=")
    assert "[REDACTED]" in shown.json()["focus_topic"]
    assert SECRET[8:] not in api.client.get("/v1/jobs", params={"session_id": "s1"}).text
    assert SECRET[8:] not in api.client.get("/v1/sessions/s1").text
    engine = create_engine(api.settings.database_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT focus_topic FROM jobs")).scalars().all()
    finally:
        engine.dispose()
    assert len(rows) == 1 and SECRET[8:] not in str(rows)


def test_create_job_redacts_the_focus_topic_whoever_calls_it(db: Database) -> None:
    msgs = make_transcript(2)
    for sid in ("s1", "s2"):
        put_snapshot(
            db, session_id=sid, model="gpt-4", context_length=9000, messages=msgs,
            token_counts=counts(msgs),
        )  # fmt: skip
    job = create_job(db, session_id="s1", trigger="manual", focus_topic=f"token {SECRET}")
    claim = claim_job(db, job_id=job.id)
    assert claim is not None  # what the worker hands the summarizer
    assert job.focus_topic == claim.focus_topic == "token sk-proj-[REDACTED]"
    plain = create_job(db, session_id="s2", trigger="manual", focus_topic="the auth bug")
    assert plain.focus_topic == "the auth bug"
