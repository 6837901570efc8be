"""The OpenAPI document is a contract a generated client can trust.

Every route is driven through its success and error answers on the real app (a real database,
a private Redis; a dead database for the 503s; no broker for a compaction that cannot be
queued), and every answer is checked against the document the app serves: its status is
documented for that operation, its body validates against the documented schema under the
documented media type, and its documented headers are there. ``/docs`` works offline.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, get_args

import httpx
import pytest
from openapi_spec_validator import validate
from pydantic import SecretStr

from api.errors import PROBLEM_JSON
from tests.api_support import TOKEN, Api, api_settings, open_api
from tests.store_factories import compaction_of, make_transcript
from tests.support.openapi_check import (
    HttpxRequest,
    Recorder,
    WebhookRequest,
    check_answer,
    openapi_for,
    operation_id,
)
from worker import callbacks
from worker.redis_server import free_port
from worker.store import jobs
from worker.store.db import Database
from worker.store.models import JOB_STATUSES, JOB_TRIGGERS

pytestmark = pytest.mark.integration

AUTH = {"Authorization": f"Bearer {TOKEN}"}
MAX_MESSAGES = 30
OPERATION_IDS = {
    ("get", "/healthz"): "getHealth",
    ("get", "/readyz"): "getReadiness",
    ("get", "/metrics"): "getMetrics",
    ("put", "/v1/sessions/{session_id}"): "putSession",
    ("get", "/v1/sessions/{session_id}"): "getSession",
    ("post", "/v1/sessions/{session_id}/messages"): "appendMessages",
    ("get", "/v1/sessions/{session_id}/messages"): "getMessages",
    ("post", "/v1/sessions/{session_id}/compact"): "compactSession",
    ("get", "/v1/sessions/{session_id}/archive"): "getArchive",
    ("get", "/v1/sessions/{session_id}/archive/{seq}"): "getArchivedMessage",
    ("post", "/v1/sessions/{session_id}/revert"): "revertCompaction",
    ("delete", "/v1/sessions/{session_id}"): "deleteSession",
    ("get", "/v1/sessions"): "listSessions",
    ("get", "/v1/tools"): "listTools",
    ("get", "/v1/jobs/{job_id}"): "getJob",
    ("get", "/v1/jobs"): "listJobs",
}


def snapshot(*, prompt_tokens: int | None = None, turns: int = 2) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "gpt-4",
        "context_length": 8000,
        "messages": make_transcript(turns),
    }
    if prompt_tokens is not None:
        body["prompt_tokens"] = prompt_tokens
    return body


APPEND = {"messages": [{"role": "user", "content": "and then?"}]}


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def open_recorded(settings: Any, broker_url: str | None, recorder: Recorder) -> Iterator[Api]:
    for api in open_api(settings, broker_url):
        recorder.record(api.client)
        yield api


@pytest.fixture
def live(database_url: str, broker_url: str, tmp_path: Path, recorder: Recorder) -> Iterator[Api]:
    """The API with a token and a small message limit, on a real database and Redis."""
    settings = api_settings(
        database_url,
        broker_url,
        tmp_path,
        api_token=SecretStr(TOKEN),
        max_messages_per_request=MAX_MESSAGES,
    )
    yield from open_recorded(settings, broker_url, recorder)


def document_of(api: Api) -> dict[str, Any]:
    r = api.client.get("/openapi.json")
    assert r.status_code == 200
    doc: dict[str, Any] = r.json()
    return doc


def documented_statuses(document: dict[str, Any]) -> dict[str, set[int]]:
    return {
        op["operationId"]: {int(status) for status in op["responses"]}
        for item in document["paths"].values()
        for op in item.values()
    }


# --- the drive: every operation through every answer it documents ----------------------------


def drive_successes(api: Api) -> str:
    """2xx answers of every operation; returns the id of a queued job."""
    c = api.client
    assert c.get("/healthz").status_code == 200
    assert c.get("/readyz").status_code == 200
    assert c.get("/metrics").status_code == 200
    key = {**AUTH, "Idempotency-Key": "first-put"}
    assert c.put("/v1/sessions/s1", json=snapshot(), headers=key).status_code == 200
    replay = c.put("/v1/sessions/s1", json=snapshot(), headers=key)
    assert replay.headers["Idempotent-Replayed"] == "true"
    # A second snapshot archives the first one's messages.
    assert c.put("/v1/sessions/s1", json=snapshot(turns=3), headers=AUTH).status_code == 200
    assert c.post("/v1/sessions/s1/messages", json=APPEND, headers=AUTH).status_code == 200
    over = c.put("/v1/sessions/s2", json=snapshot(prompt_tokens=7_900), headers=AUTH)
    assert over.status_code == 202, over.text
    job_id = over.json()["hygiene"]["job_id"]
    assert c.post("/v1/sessions/s2/messages", json=APPEND, headers=AUTH).status_code == 202
    sized = {"focus_topic": "db", "target_tokens": 2_000}
    manual = c.post("/v1/sessions/s1/compact", json=sized, headers=AUTH)
    assert manual.status_code == 202, manual.text
    shown = c.get(f"/v1/jobs/{manual.json()['job_id']}", headers=AUTH)
    assert shown.json()["target_tokens"] == 2_000, shown.text
    for path in ("/v1/sessions/s1", "/v1/sessions/s1/messages", "/v1/sessions/s1/archive"):
        assert c.get(path, headers=AUTH).status_code == 200
    assert c.get("/v1/sessions/s1/archive", headers=AUTH).json()["messages"]
    assert c.get("/v1/sessions/s2", headers=AUTH).json()["last_job"]["id"] == job_id
    assert c.get(f"/v1/jobs/{job_id}", headers=AUTH).status_code == 200
    assert c.get("/v1/jobs", params={"session_id": "s2", "limit": 1}, headers=AUTH).json()["jobs"]
    drive_archive_successes(api, manual.json()["job_id"])
    return str(job_id)


def drive_archive_successes(api: Api, manual_job: str) -> None:
    """Search, a hit in full, a page with a cursor, a revert, a delete, the list, the tools."""
    c = api.client
    search = c.get("/v1/sessions/s1/archive", params={"q": "question 1", "limit": 1}, headers=AUTH)
    assert search.json()["hits"] and search.json()["next_cursor"], search.text
    assert c.get("/v1/sessions/s1/archive/1", headers=AUTH).status_code == 200
    page = c.get("/v1/sessions/s1/archive", params={"limit": 2, "cursor": "1"}, headers=AUTH)
    assert page.json()["next_cursor"] == "3", page.text
    db = Database(api.settings.database_url)
    try:  # the manual job, run here: a compaction to revert
        claim = jobs.claim_job(db, job_id=manual_job)
        assert claim is not None
        jobs.write_back(db, job_id=manual_job, attempt=claim.attempt, result=compaction_of(claim))
    finally:
        db.dispose()
    revert = c.post("/v1/sessions/s1/revert", json={"job_id": manual_job}, headers=AUTH)
    assert revert.status_code == 200, revert.text
    assert c.put("/v1/sessions/gone", json=snapshot(), headers=AUTH).status_code == 200
    assert c.delete("/v1/sessions/gone", headers=AUTH | {"If-Match": '"1"'}).status_code == 204
    listed = c.get("/v1/sessions", params={"limit": 1, "model": "gpt-4"}, headers=AUTH)
    assert listed.json()["next_cursor"] == "s1", listed.text
    assert c.get("/v1/tools", headers=AUTH).json()["tools"][0]["function"]["name"] == "recall"


def every_v1_request(session: str, job_id: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    """One request of each /v1 operation: method, path, JSON body."""
    return [
        ("PUT", f"/v1/sessions/{session}", snapshot()),
        ("GET", f"/v1/sessions/{session}", None),
        ("POST", f"/v1/sessions/{session}/messages", APPEND),
        ("GET", f"/v1/sessions/{session}/messages", None),
        ("POST", f"/v1/sessions/{session}/compact", {"force": True}),
        ("GET", f"/v1/sessions/{session}/archive", None),
        ("GET", f"/v1/jobs/{job_id}", None),
        ("GET", "/v1/jobs", None),
        ("GET", f"/v1/sessions/{session}/archive/1", None),
        ("POST", f"/v1/sessions/{session}/revert", {"job_id": job_id}),
        ("DELETE", f"/v1/sessions/{session}", None),
        ("GET", "/v1/sessions", None),
    ]


def drive_refusals(api: Api, job_id: str) -> None:
    """4xx answers: 400, 401, 404, 409, 412, 413, 415, 422."""
    c = api.client
    for method, path, body in [*every_v1_request("s1", job_id), ("GET", "/v1/tools", None)]:
        r = c.request(method, path, json=body)  # no token
        assert r.status_code == 401, (path, r.text)
    for method, path, body in every_v1_request("nope", "no-such-job")[1:11]:
        if path != "/v1/jobs":
            r = c.request(method, path, json=body, headers=AUTH)
            assert r.status_code == 404, (path, r.text)
    assert c.post("/v1/sessions/s2/compact", json={}, headers=AUTH).status_code == 409
    for method, path, body in every_v1_request("s2", job_id)[9:11]:  # revert, delete
        r = c.request(method, path, json=body, headers=AUTH)
        assert r.status_code == 409 and r.json()["job_id"] == job_id, (path, r.text)
        for headers, status in [({"If-Match": "three"}, 400), ({"If-Match": '"99"'}, 412)]:
            r = c.request(method, path, json=body, headers=AUTH | headers)
            assert r.status_code == status, (path, headers, r.text)
    writes = [("PUT", "/v1/sessions/s1", snapshot()), ("POST", "/v1/sessions/s1/messages", APPEND)]
    too_many = {"messages": make_transcript(MAX_MESSAGES)}
    for method, path, body in writes:
        for headers, status in [
            ({"If-Match": "three"}, 400),
            ({"Idempotency-Key": "has spaces"}, 400),
            ({"If-Match": '"99"'}, 412),
        ]:
            r = c.request(method, path, json=body, headers=AUTH | headers)
            assert r.status_code == status, (path, headers, r.text)
        assert c.request(method, path, json=body | too_many, headers=AUTH).status_code == 413
        reused = {**AUTH, "Idempotency-Key": f"reused-{method}"}
        assert c.request(method, path, json=body, headers=reused).status_code in (200, 202)
        other = body | {"prompt_tokens": 1}
        assert c.request(method, path, json=other, headers=reused).status_code == 422
    for method, path, body in every_v1_request("s1", job_id):
        if body is not None:
            r = c.request(
                method, path, content=repr(body), headers=AUTH | {"content-type": "text/plain"}
            )
            assert r.status_code == 415, (path, r.text)
            not_utf8 = b'{"x": "\xff"}'
            r = c.request(method, path, content=not_utf8, headers=AUTH | JSON_TYPE)
            assert r.status_code == 400, (path, r.text)
    assert c.get("/v1/jobs", params={"before": "no-such-job"}, headers=AUTH).status_code == 404
    drive_invalid(api)


JSON_TYPE = {"content-type": "application/json"}


def drive_invalid(api: Api) -> None:
    """422: a bad body, a bad path parameter, a bad query parameter."""
    c = api.client
    long_id = "x" * 300
    bad_bodies = [
        ("PUT", "/v1/sessions/s1", {"model": "gpt-4", "context_length": 0, "messages": []}),
        ("POST", "/v1/sessions/s1/messages", {}),
        ("POST", "/v1/sessions/s1/compact", {"force": "yes"}),
        ("POST", "/v1/sessions/s1/compact", {"target_tokens": 255}),
        ("POST", "/v1/sessions/s1/compact", {"target_tokens": 8_001}),  # over s1's window
    ]
    for method, path, body in bad_bodies:
        assert c.request(method, path, json=body, headers=AUTH).status_code == 422, path
    for method, path, body in every_v1_request(long_id, long_id)[:11]:
        if path != "/v1/jobs":
            assert c.request(method, path, json=body, headers=AUTH).status_code == 422, path
    assert c.get("/v1/jobs", params={"limit": 0}, headers=AUTH).status_code == 422
    assert c.get("/v1/sessions", params={"limit": 0}, headers=AUTH).status_code == 422


def drive_unavailable(
    database_url: str, tmp_path: Path, broker_url: str, recorder: Recorder
) -> None:
    """503: a database that does not answer (every /v1 operation, /readyz); no broker to take
    a manual compaction; and the 200 of a stored write whose job the broker could not take."""
    dead = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/nothing?connect_timeout=2"
    settings = api_settings(dead, broker_url, tmp_path / "dead", api_token=SecretStr(TOKEN))
    for api in open_recorded(settings, broker_url, recorder):
        assert api.client.get("/readyz").status_code == 503
        for method, path, body in every_v1_request("s1", "some-job"):
            r = api.client.request(method, path, json=body, headers=AUTH)
            assert r.status_code == 503, (path, r.text)
    settings = api_settings(database_url, None, tmp_path / "nobroker", api_token=SecretStr(TOKEN))
    for api in open_recorded(settings, None, recorder):
        r = api.client.put("/v1/sessions/s3", json=snapshot(prompt_tokens=7_900), headers=AUTH)
        assert r.status_code == 200 and r.json()["hygiene"]["job_status"] == "failed", r.text
        r = api.client.post("/v1/sessions/s3/compact", json={"force": True}, headers=AUTH)
        assert r.status_code == 503 and r.json()["job_id"], r.text


def test_every_answer_of_every_route_is_documented(
    live: Api, recorder: Recorder, database_url: str, broker_url: str, tmp_path: Path
) -> None:
    document = document_of(live)
    validate(document)  # a valid OpenAPI 3.1 document first
    job_id = drive_successes(live)
    drive_refusals(live, job_id)
    drive_unavailable(database_url, tmp_path, broker_url, recorder)

    openapi = openapi_for(document)
    answers = [a for a in recorder.answers if a.request.url.path != "/openapi.json"]
    problems = [p for p in (check_answer(openapi, document, a) for a in answers) if p]
    assert problems == []

    seen: dict[str, set[int]] = {}
    for answer in answers:
        seen.setdefault(operation_id(document, answer), set()).add(answer.status_code)
    # Each documented answer was produced here, save a failure of ours (500).
    expected = {op: statuses - {500} for op, statuses in documented_statuses(document).items()}
    assert seen == expected


def test_a_client_request_for_each_operation_matches_the_document(
    live: Api, recorder: Recorder
) -> None:
    """What a generated client sends (documented parameters, bodies, the bearer token) is what
    the routes accept."""
    document = document_of(live)
    drive_successes(live)
    openapi = openapi_for(document)
    for answer in recorder.answers:
        if answer.request.url.path != "/openapi.json":
            openapi.validate_request(HttpxRequest(answer.request))


# --- the document itself -----------------------------------------------------------------------


def test_operations_have_stable_camel_case_ids(api: Api) -> None:
    paths = document_of(api)["paths"]
    ids = {(m, p): op["operationId"] for p, item in paths.items() for m, op in item.items()}
    assert ids == OPERATION_IDS


def test_every_error_answer_is_a_problem_in_problem_json(api: Api) -> None:
    document = document_of(api)
    assert "HTTPValidationError" not in document["components"]["schemas"]
    problem = document["components"]["schemas"]["Problem"]
    assert {"type", "title", "status", "detail"} <= set(problem["required"])
    for item in document["paths"].values():
        for op in item.values():
            for status, answer in op["responses"].items():
                if status.startswith(("4", "5")):
                    assert answer["content"] == {
                        PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}
                    }, (op["operationId"], status)


def test_v1_needs_the_bearer_token_and_says_so(api: Api) -> None:
    document = document_of(api)
    scheme = document["components"]["securitySchemes"]["bearerAuth"]
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer"
    for path, item in document["paths"].items():
        for op in item.values():
            if path.startswith("/v1/"):
                assert op["security"] == [{"bearerAuth": []}], path
                assert "401" in op["responses"]
                assert "WWW-Authenticate" in op["responses"]["401"]["headers"]
            else:  # probes and scrapers carry no token
                assert "security" not in op, path


def test_reads_document_404_503_and_the_etag(api: Api) -> None:
    paths = document_of(api)["paths"]
    for path in ("/v1/sessions/{session_id}", "/v1/sessions/{session_id}/messages"):
        answers = paths[path]["get"]["responses"]
        assert {"404", "503"} <= set(answers)
        assert answers["200"]["headers"]["ETag"]["required"] is True
        assert "Retry-After" in answers["503"]["headers"]
    for verb, path in [("put", "/v1/sessions/{session_id}"),
                       ("post", "/v1/sessions/{session_id}/messages")]:  # fmt: skip
        answers = paths[path][verb]["responses"]
        for status in ("200", "202"):
            assert {"ETag", "X-Hygiene-Reason", "Idempotent-Replayed"} <= set(
                answers[status]["headers"]
            )


def test_the_size_a_compaction_asks_for_is_documented(api: Api) -> None:
    schemas = document_of(api)["components"]["schemas"]
    asked = schemas["CompactIn"]["properties"]["target_tokens"]
    integer = next(a for a in asked["anyOf"] if a.get("type") == "integer")
    assert (integer["minimum"], integer["maximum"]) == (256, 100_000_000)
    assert {"type": "null"} in asked["anyOf"] and "context_length" in asked["description"]
    assert "target_tokens" not in schemas["CompactIn"].get("required", [])
    shown = schemas["JobOut"]["properties"]["target_tokens"]
    assert {a.get("type") for a in shown["anyOf"]} == {"integer", "null"}


def test_job_enums_match_the_store() -> None:
    from api.schemas import JobStatus, JobTrigger

    assert get_args(JobStatus) == JOB_STATUSES
    assert get_args(JobTrigger) == JOB_TRIGGERS


# --- the callback webhook ----------------------------------------------------------------------


def test_the_callback_webhook_describes_what_the_worker_sends(live: Api, database_url: str) -> None:
    document = document_of(live)
    webhook = document["webhooks"][callbacks.EVENT]["post"]
    headers = {p["name"] for p in webhook["parameters"] if p["in"] == "header"}
    assert headers == {
        callbacks.EVENT_HEADER, callbacks.TIMESTAMP_HEADER, callbacks.SIGNATURE_HEADER,
    }  # fmt: skip
    job_id = drive_successes(live)
    db = Database(database_url)
    try:
        row = jobs.get_job(db, job_id=job_id)
    finally:
        db.dispose()
    openapi = openapi_for(document)
    sent_at = int(time.time())
    body = callbacks.callback_body(
        jobs.job_telemetry(row), session_id=row.session_id, version=7, sent_at=sent_at
    )
    for secret in ("k3y", None):
        request = httpx.Request(
            "POST",
            "http://gateway.test/hooks/compaction",
            content=body,
            headers=callbacks.callback_headers(body, secret=secret, sent_at=sent_at),
        )
        openapi.validate_request(WebhookRequest(request, callbacks.EVENT))


# --- /docs, offline ----------------------------------------------------------------------------


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [v for k, v in attrs if k in ("src", "href") and v is not None]


def test_docs_load_only_local_assets(api: Api) -> None:
    page = api.client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    links = _Links()
    links.feed(page.text)
    assert len(links.urls) >= 3  # script, stylesheet, icon
    for url in links.urls:
        assert url.startswith("/"), url  # nothing from another host
        asset = api.client.get(url)
        assert asset.status_code == 200 and asset.content, url
    assert re.findall(r"https?://", page.text) == []  # no CDN, no online validator
    assert "'/openapi.json'" in page.text
    assert api.client.get("/redoc").status_code == 404  # ReDoc would need a CDN
