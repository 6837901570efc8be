"""The HTTP API on the real app, a real database (SQLite and PostgreSQL) and a private Redis."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.main import API_SQLITE_BUSY_TIMEOUT_S
from tests.api_support import Api, api_settings, dump, open_api
from tests.store_factories import compaction_of, make_transcript
from worker.cooldowns import endpoint_id, record_failure
from worker.redis_server import free_port
from worker.store.db import Database
from worker.store.jobs import claim_job, get_job, write_back
from worker.store.sessions import get_session

pytestmark = pytest.mark.integration

WINDOW = 2_000  # tokens; 40 turns of make_transcript() are ~3,900 tokens by our count


def snapshot(turns: int, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4", "context_length": WINDOW, "messages": make_transcript(turns)} | extra


def put(api: Api, session_id: str, body: dict[str, Any], **kw: Any) -> httpx.Response:
    return api.client.put(f"/v1/sessions/{session_id}", json=body, **kw)


def append(api: Api, session_id: str, messages: list[dict[str, Any]], **kw: Any) -> httpx.Response:
    return api.client.post(f"/v1/sessions/{session_id}/messages", json={"messages": messages}, **kw)


def db_of(api: Api) -> Database:
    return Database(api.settings.database_url)


# --- hygiene answers -------------------------------------------------------------------------------


def test_a_small_session_is_below_threshold(api: Api) -> None:
    r = put(api, "s1", snapshot(2))
    assert r.status_code == 200 and r.headers["etag"] == '"1"'
    body = r.json()
    assert set(body) == {
        "session_id",
        "version",
        "tokens",
        "threshold_tokens",
        "utilization",
        "hygiene",
    }
    assert body["hygiene"] == {"decision": "below_threshold", "job_id": None}
    assert body["threshold_tokens"] == 1700 and 0 < body["tokens"] < 1700
    assert body["utilization"] == round(body["tokens"] / WINDOW, 4)
    assert api.queued_job_ids() == []


def test_a_large_session_with_too_few_messages_is_not_queued(api: Api) -> None:
    big = " ".join(["lorem"] * 2000)
    body = {
        "model": "gpt-4",
        "context_length": WINDOW,
        "messages": [{"role": "user", "content": big}] * 3,
    }
    r = put(api, "s1", body)
    assert (r.status_code, r.json()["hygiene"]["decision"]) == (200, "too_few_messages")


def test_over_the_threshold_a_job_is_enqueued_and_reaches_the_broker(api: Api) -> None:
    r = put(api, "s1", snapshot(40))
    assert r.status_code == 202
    hygiene = r.json()["hygiene"]
    assert hygiene["decision"] == "enqueued" and hygiene["job_id"]
    assert api.queued_job_ids() == [hygiene["job_id"]]
    job = api.client.get(f"/v1/jobs/{hygiene['job_id']}").json()
    assert (job["status"], job["trigger"], job["session_id"]) == ("queued", "hygiene", "s1")


def test_an_open_job_is_not_doubled(api: Api) -> None:
    first = put(api, "s1", snapshot(40)).json()["hygiene"]["job_id"]
    r = append(api, "s1", [{"role": "user", "content": "one more thing"}])
    assert r.status_code == 202 and r.json()["hygiene"] == {
        "decision": "already_queued",
        "job_id": first,
    }
    r = put(api, "s1", snapshot(41))
    assert r.json()["hygiene"] == {"decision": "already_queued", "job_id": first}
    assert api.queued_job_ids() == [first]


def test_racing_requests_create_one_job(api: Api) -> None:
    put(api, "s1", snapshot(2))
    start, answers = threading.Barrier(4), []

    def send() -> None:
        start.wait()
        answers.append(put(api, "s1", snapshot(40)).json()["hygiene"])

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(a["decision"] for a in answers) == ["already_queued"] * 3 + ["enqueued"]
    assert len({a["job_id"] for a in answers}) == 1
    assert len(api.queued_job_ids()) == 1


def test_the_gateways_prompt_tokens_decide(api: Api) -> None:
    r = put(api, "s1", snapshot(3, prompt_tokens=1_900))
    assert r.json()["tokens"] == 1_900 and r.json()["hygiene"]["decision"] == "enqueued"


def test_a_cooldown_holds_automatic_compaction(api: Api) -> None:
    record_failure(
        api.broker, settings=api.settings, session_id="s1",
        endpoint=endpoint_id(api.settings), error_class="timeout",
    )  # fmt: skip
    r = put(api, "s1", snapshot(40))
    assert (r.status_code, r.json()["hygiene"]) == (200, {"decision": "cooldown", "job_id": None})
    assert r.headers["x-hygiene-reason"].startswith("session on cooldown after timeout")
    assert api.queued_job_ids() == []


def test_ineffective_compactions_trip_the_thrash_guard(api: Api) -> None:
    db = db_of(api)
    try:
        for _ in range(2):
            job_id = put(api, "s1", snapshot(40)).json()["hygiene"]["job_id"]
            claim = claim_job(db, job_id=job_id)
            assert claim is not None
            # A pass that keeps almost everything: still over the threshold afterwards.
            result = compaction_of(claim, keep_last=70, savings_pct=3.0)
            write_back(db, job_id=job_id, attempt=1, result=result)
        r = append(api, "s1", [{"role": "user", "content": "still here"}])
        assert r.json()["hygiene"]["decision"] == "thrash_guard"
        assert r.json()["tokens"] > 1700
        assert get_session(db, session_id="s1").thrash_until_tokens is not None
    finally:
        db.dispose()


# --- reads, versions, archive ----------------------------------------------------------------------


def test_messages_and_session_views(api: Api) -> None:
    put(api, "s1", snapshot(2, callback_url="https://gateway.example/compacted"))
    r = api.client.get("/v1/sessions/s1/messages")
    assert (
        r.json() == {"version": 1, "format": "openai.chat", "messages": make_transcript(2)}
        and r.headers["etag"] == '"1"'
    )
    info = api.client.get("/v1/sessions/s1").json()
    assert info["version"] == 1 and info["message_count"] == 5 and info["last_job"] is None
    assert info["threshold_tokens"] == 1700 and info["compaction_count"] == 0
    db = db_of(api)
    try:
        assert get_session(db, session_id="s1").callback_url == "https://gateway.example/compacted"
    finally:
        db.dispose()


def test_control_characters_inside_messages_are_kept_verbatim(api: Api) -> None:
    # Tool output can hold anything; PostgreSQL's text cannot hold U+0000, its JSON escape can.
    turns = [*make_transcript(2), {"role": "user", "content": "a\x00b\x1b[31mred\x7f"}]
    assert put(api, "s1", snapshot(2) | {"messages": turns}).status_code == 200
    assert append(api, "s1", [{"role": "assistant", "content": "\x00"}]).status_code == 200
    r = api.client.get("/v1/sessions/s1/messages")
    assert r.json()["messages"] == [*turns, {"role": "assistant", "content": "\x00"}]


def test_after_a_compaction_the_gateway_reads_the_new_version(api: Api) -> None:
    job_id = put(api, "s1", snapshot(40)).json()["hygiene"]["job_id"]
    db = db_of(api)
    try:
        claim = claim_job(db, job_id=job_id)
        assert claim is not None
        append(api, "s1", [{"role": "user", "content": "typed while compacting"}])
        write_back(db, job_id=job_id, attempt=1, result=compaction_of(claim, keep_last=2))
    finally:
        db.dispose()
    r = api.client.get("/v1/sessions/s1/messages")
    body = r.json()
    assert body["version"] == 3 and r.headers["etag"] == '"3"'
    assert body["messages"][1]["content"].startswith("[CONTEXT SUMMARY]")
    assert body["messages"][-1] == {"role": "user", "content": "typed while compacting"}
    info = api.client.get("/v1/sessions/s1").json()
    assert info["compaction_count"] == 1 and info["last_job"]["status"] == "succeeded"
    archive = api.client.get("/v1/sessions/s1/archive", params={"limit": 500}).json()["messages"]
    assert [a["message"] for a in archive] == make_transcript(40)
    assert {(a["generation"], a["archived_by_job"]) for a in archive} == {(0, job_id)}


def test_stale_if_match_gets_412_with_the_current_version(api: Api) -> None:
    put(api, "s1", snapshot(2))
    assert (
        append(
            api, "s1", [{"role": "user", "content": "a"}], headers={"If-Match": '"1"'}
        ).status_code
        == 200
    )
    before = dump(api.settings.database_url)
    r = append(api, "s1", [{"role": "user", "content": "b"}], headers={"If-Match": '"1"'})
    assert r.status_code == 412 and r.headers["content-type"] == "application/problem+json"
    assert r.json()["current_version"] == 2 and r.headers["etag"] == '"2"'
    assert "current version is 2" in r.json()["detail"]
    assert put(api, "s1", snapshot(3), headers={"If-Match": "1"}).status_code == 412
    assert dump(api.settings.database_url) == before
    assert put(api, "s1", snapshot(3), headers={"If-Match": '"2"'}).json()["version"] == 3


def test_a_new_snapshot_archives_the_previous_transcript(api: Api) -> None:
    put(api, "s1", snapshot(2))
    put(api, "s1", snapshot(1))
    archive = api.client.get("/v1/sessions/s1/archive").json()
    assert [a["message"] for a in archive["messages"]] == make_transcript(2)
    assert all(a["generation"] == 0 and a["archived_by_job"] is None for a in archive["messages"])


def test_unknown_sessions_and_jobs_are_404_problems(api: Api) -> None:
    for r in (
        append(api, "ghost", [{"role": "user", "content": "x"}]),
        api.client.get("/v1/sessions/ghost"),
        api.client.get("/v1/sessions/ghost/messages"),
        api.client.get("/v1/sessions/ghost/archive"),
        api.client.post("/v1/sessions/ghost/compact", json={}),
        api.client.get("/v1/jobs/nope"),
    ):
        assert r.status_code == 404 and r.headers["content-type"] == "application/problem+json"
        assert "does not exist" in r.json()["detail"]


# --- manual compaction ---------------------------------------------------------------------------


def test_manual_compaction(api: Api) -> None:
    put(api, "s1", snapshot(3))
    r = api.client.post("/v1/sessions/s1/compact", json={"focus_topic": "the parser"})
    assert r.status_code == 202 and r.json()["status"] == "queued"
    job_id = r.json()["job_id"]
    assert api.queued_job_ids() == [job_id]
    job = api.client.get(f"/v1/jobs/{job_id}").json()
    assert (job["trigger"], job["focus_topic"], job["force"]) == ("manual", "the parser", False)
    again = api.client.post("/v1/sessions/s1/compact")  # no body at all is fine too
    assert again.status_code == 409 and again.json()["job_id"] == job_id


def test_manual_compaction_respects_a_cooldown_unless_forced(api: Api) -> None:
    put(api, "s1", snapshot(3))
    record_failure(
        api.broker, settings=api.settings, session_id="s1",
        endpoint=endpoint_id(api.settings), error_class="server_error",
    )  # fmt: skip
    r = api.client.post("/v1/sessions/s1/compact", json={})
    assert r.status_code == 409 and r.json()["decision"] == "cooldown"
    assert '"force": true' in r.json()["detail"]
    r = api.client.post("/v1/sessions/s1/compact", json={"force": True})
    assert r.status_code == 202
    assert api.client.get(f"/v1/jobs/{r.json()['job_id']}").json()["force"] is True


def test_a_manual_compaction_can_ask_for_a_size(api: Api) -> None:
    put(api, "s1", snapshot(3))
    r = api.client.post("/v1/sessions/s1/compact", json={"target_tokens": 1_000})
    assert r.status_code == 202, r.text
    job_id = r.json()["job_id"]
    job = api.client.get(f"/v1/jobs/{job_id}").json()
    assert (job["target_tokens"], job["focus_topic"], job["force"]) == (1_000, None, False)
    listed = api.client.get("/v1/jobs", params={"session_id": "s1"}).json()["jobs"]
    assert [j["target_tokens"] for j in listed] == [1_000]
    db = db_of(api)
    try:  # the job row holds it, and the claim hands it to the worker
        assert get_job(db, job_id=job_id).target_tokens == 1_000
        claim = claim_job(db, job_id=job_id)
        assert claim is not None and claim.target_tokens == 1_000
    finally:
        db.dispose()
    put(api, "s2", snapshot(3))
    r = api.client.post("/v1/sessions/s2/compact", json={"target_tokens": WINDOW})  # the bound
    assert r.status_code == 202, r.text
    put(api, "s3", snapshot(3))
    unasked = api.client.post("/v1/sessions/s3/compact", json={}).json()["job_id"]
    assert api.client.get(f"/v1/jobs/{unasked}").json()["target_tokens"] is None


@pytest.mark.parametrize(
    ("target", "detail"),
    [
        (255, "target_tokens: Input should be greater than or equal to 256"),
        (0, "target_tokens: Input should be greater than or equal to 256"),
        (WINDOW + 1, f"target_tokens: Input should be less than or equal to {WINDOW}, the session's context_length"),
        (99_999_999, f"target_tokens: Input should be less than or equal to {WINDOW}, the session's context_length"),
        # Past any window, and past what a 64-bit integer holds: never a database error.
        (10**30, "target_tokens: Input should be less than or equal to 100000000"),
        ("2000", "target_tokens: Input should be a valid integer"),
        (2000.0, "target_tokens: Input should be a valid integer"),
        (True, "target_tokens: Input should be a valid integer"),
    ],
    ids=["255", "0", "window+1", "under-the-maximum", "huge", "string", "float", "bool"],
)  # fmt: skip
def test_a_size_outside_the_window_is_refused_and_stores_nothing(
    api: Api, target: object, detail: str
) -> None:
    put(api, "s1", snapshot(3))
    before = dump(api.settings.database_url)
    r = api.client.post("/v1/sessions/s1/compact", json={"target_tokens": target})
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["detail"] == detail
    assert [e["loc"] for e in r.json()["errors"]] == ["target_tokens"]
    assert dump(api.settings.database_url) == before and api.queued_job_ids() == []


def test_a_size_is_checked_before_the_open_job_and_the_guards(api: Api) -> None:
    put(api, "s1", snapshot(3))
    assert api.client.post("/v1/sessions/s1/compact", json={}).status_code == 202
    r = api.client.post("/v1/sessions/s1/compact", json={"target_tokens": WINDOW + 1})
    assert r.status_code == 422, r.text  # not the 409 of the open job: the request is wrong
    assert (
        api.client.post("/v1/sessions/ghost/compact", json={"target_tokens": 300}).status_code
        == 404
    )


# --- broker down, readiness, metrics -------------------------------------------------------------


@pytest.fixture
def api_without_broker(database_url: str, tmp_path: Path) -> Any:
    dead = f"redis://127.0.0.1:{free_port()}/0"
    yield from open_api(api_settings(database_url, dead, tmp_path), None)


def test_broker_down_answers_what_was_stored_and_fails_the_job(api_without_broker: Api) -> None:
    api = api_without_broker
    r = put(api, "s1", snapshot(40))
    # Stored: never a 503 with Retry-After, which would make the gateway send the turns again.
    assert r.status_code == 200 and "retry-after" not in r.headers
    body = r.json()
    assert body["version"] == 1 and r.headers["etag"] == '"1"'
    hygiene = body["hygiene"]
    assert (hygiene["decision"], hygiene["job_status"], hygiene["error_class"]) == (
        "enqueued",
        "failed",
        "broker_unavailable",
    )
    assert "The turns are stored (version 1): do not send them again" in hygiene["detail"]
    assert "could not be queued (the broker is unreachable)" in r.headers["x-hygiene-reason"]
    info = api.client.get("/v1/sessions/s1").json()
    assert info["version"] == 1 and info["message_count"] == 81  # the data stayed
    db = db_of(api)
    try:
        job = get_job(db, job_id=hygiene["job_id"])
        assert (job.status, job.error_class) == ("failed", "broker_unavailable")
    finally:
        db.dispose()
    ready = api.client.get("/readyz")
    assert ready.status_code == 503 and "broker unreachable" in ready.json()["detail"]


def test_ready_and_healthy(api: Api) -> None:
    assert api.client.get("/healthz").json() == {"status": "ok"}
    assert api.client.get("/readyz").json() == {"status": "ready", "database": "ok", "broker": "ok"}


def test_metrics_count_requests_decisions_and_jobs(api: Api) -> None:
    put(api, "s1", snapshot(2))
    put(api, "s2", snapshot(40))
    text = api.client.get("/metrics").text
    assert 'compaction_hygiene_decisions_total{decision="below_threshold"} 1.0' in text
    assert 'compaction_hygiene_decisions_total{decision="enqueued"} 1.0' in text
    assert 'compaction_open_jobs{status="queued"} 1.0' in text
    assert (
        'compaction_api_requests_total{method="PUT",route="/v1/sessions/{session_id}",status="202"} 1.0'
        in text
    )


def test_openapi_docs_are_served(api: Api) -> None:
    assert api.client.get("/docs").status_code == 200
    paths = api.client.get("/openapi.json").json()["paths"]
    assert {"/v1/sessions/{session_id}", "/v1/sessions/{session_id}/messages", "/v1/jobs"} <= set(
        paths
    )


def test_readyz_names_an_unreachable_database(tmp_path: Path, broker_url: str) -> None:
    dead_db = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/nothing?connect_timeout=2"
    for api in open_api(api_settings(dead_db, broker_url, tmp_path), broker_url):
        r = api.client.get("/readyz")
        assert r.status_code == 503 and "database unreachable" in r.json()["detail"]
        assert "compaction_open_jobs" in api.client.get("/metrics").text  # a scrape still answers


def test_an_unreachable_database_is_a_503_to_retry_not_a_500(
    tmp_path: Path, broker_url: str
) -> None:
    dead_db = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/nothing?connect_timeout=2"
    for api in open_api(api_settings(dead_db, broker_url, tmp_path), broker_url):
        for r in (
            put(api, "s1", snapshot(2)),
            append(api, "s1", make_transcript(1)),
            api.client.get("/v1/sessions/s1"),
            api.client.get("/v1/jobs"),
        ):
            assert r.status_code == 503, r.text
            assert r.headers["retry-after"] == "5"
            assert r.json()["detail"] == (
                "the database is unavailable (OperationalError); nothing was stored, try again"
            )
        assert api.queued_job_ids() == []


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_write_that_waits_past_the_apis_busy_timeout_answers_503_and_stores_nothing(
    api: Api, database_url: str
) -> None:
    # Another process holds SQLite's write lock (an operator's shell, a stuck migration): the
    # request gives up within the client's bound, asks for a retry and stores nothing.
    assert put(api, "s1", snapshot(2)).status_code == 200
    before = dump(database_url)
    holder = sqlite3.connect(database_url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        r = api.client.post(
            "/v1/sessions/s1/messages", json={"messages": [{"role": "user", "content": "hi"}]}
        )
        waited_s = time.monotonic() - started
    finally:
        holder.rollback()
        holder.close()
    assert r.status_code == 503 and r.headers["retry-after"], r.text
    assert "nothing was stored" in r.json()["detail"]
    assert waited_s < API_SQLITE_BUSY_TIMEOUT_S + 2.0, waited_s  # a bound, with room for load
    assert dump(database_url) == before
