"""``/v1/jobs``: one job with its telemetry, pages of jobs."""

from __future__ import annotations

import pytest

from tests.api_support import Api
from tests.store_factories import compaction_of, make_transcript
from worker.store.db import Database
from worker.store.jobs import TELEMETRY_FIELDS, claim_job, create_job, finish_job, write_back

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
