"""The client's rules without a server: which calls are retried and how long it waits, which
status becomes which error, that its typed answers match the API's bodies, and the callback
verifier. (The client against the real app and a real API process: tests/integration.)"""

from __future__ import annotations

import json
import time
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any, get_args

import httpx
import pytest

from api import schemas_archive
from api.client import calls, errors, models
from api.client.models import Decision, Job, JobStatus, JobTrigger, Session
from api.client.webhooks import verify_callback
from api.schemas import JobOut, SessionOut
from api.schemas import JobStatus as ServerJobStatus
from api.schemas import JobTrigger as ServerJobTrigger
from worker.callbacks import callback_body, callback_headers
from worker.hygiene import DECISIONS

SECRET = "whsec-test"


def answer(status: int, body: object = None, **headers: str) -> httpx.Response:
    request = httpx.Request("POST", "http://service/v1/sessions/s1/messages")
    content = (
        b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    )
    return httpx.Response(status, content=content, headers=headers, request=request)


def keyed_write() -> calls.Call[Any]:
    return calls.append("s1", [], prompt_tokens=None, if_match=None, idempotency_key="k-1")


# --- retries -----------------------------------------------------------------------------------


def test_a_keyed_write_is_retried_after_no_answer_and_after_a_503_only() -> None:
    policy = calls.RetryPolicy(attempts=3, backoff_s=0.5, max_wait_s=10.0)
    call = keyed_write()
    assert call.retryable and call.headers["Idempotency-Key"] == "k-1"
    assert 0.0 <= calls.retry_wait(policy, call, 1, None) <= 0.5  # type: ignore[operator]
    assert 0.0 <= calls.retry_wait(policy, call, 2, None) <= 1.0  # type: ignore[operator]
    assert calls.retry_wait(policy, call, 1, answer(503, {}, **{"Retry-After": "5"})) == 5.0
    for status in (200, 202, 400, 401, 404, 409, 412, 422, 500, 502):
        assert calls.retry_wait(policy, call, 1, answer(status, {})) is None, status


def test_retries_are_bounded_and_retry_after_is_capped() -> None:
    policy = calls.RetryPolicy(attempts=3, max_wait_s=2.0)
    call = keyed_write()
    assert calls.retry_wait(policy, call, 3, None) is None  # three tries in all
    assert calls.retry_wait(policy, call, 1, answer(503, {}, **{"Retry-After": "60"})) == 2.0
    assert calls.retry_wait(calls.NO_RETRIES, call, 1, None) is None


def test_a_manual_compaction_has_no_key_and_is_never_retried() -> None:
    call = calls.compact("s1", focus_topic=None, force=False, target_tokens=None)
    assert not call.retryable and "Idempotency-Key" not in call.headers
    assert call.json == {"force": False}  # what was not asked for is not sent
    sized = calls.compact("s1", focus_topic=None, force=True, target_tokens=4_000)
    assert sized.json == {"force": True, "target_tokens": 4_000}
    assert calls.retry_wait(calls.RetryPolicy(), call, 1, None) is None
    assert calls.retry_wait(calls.RetryPolicy(), call, 1, answer(503, {})) is None


def test_reads_are_retried_and_every_write_builder_asks_for_a_key() -> None:
    for read in (calls.get_session("s1"), calls.get_messages("s1"), calls.get_job("j")):
        assert read.retryable and read.method == "GET"
    put = calls.put_session(
        "s/1", model="m", context_length=1, messages=[], prompt_tokens=None,
        callback_url=None, if_match=3, idempotency_key="k",
    )  # fmt: skip
    assert put.path == "/v1/sessions/s%2F1"  # ids are one path segment, whatever they hold
    assert put.headers == {"Idempotency-Key": "k", "If-Match": '"3"'}
    assert calls.new_idempotency_key() != calls.new_idempotency_key()


# --- statuses to errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, errors.BadRequestError),
        (401, errors.UnauthorizedError),
        (404, errors.NotFoundError),
        (409, errors.ConflictError),
        (412, errors.VersionConflictError),
        (413, errors.ProblemError),
        (422, errors.UnprocessableError),
        (500, errors.ProblemError),
        (503, errors.ServiceUnavailableError),
    ],
)
def test_each_status_becomes_its_error_with_the_problems_detail(
    status: int, cls: type[errors.ProblemError]
) -> None:
    problem = {"type": "urn:x:problem:y", "title": "t", "status": status, "detail": "what broke"}
    error = errors.problem_error(answer(status, problem))
    assert type(error) is cls
    assert (error.status, error.detail, error.type) == (status, "what broke", "urn:x:problem:y")
    assert str(error) == f"{status} what broke"


def test_every_problem_class_has_a_status() -> None:
    mapped = set(errors._BY_STATUS.values())
    subclasses = {c for c in vars(errors).values() if isinstance(c, type)}
    subclasses = {c for c in subclasses if issubclass(c, errors.ProblemError)}
    assert subclasses - mapped == {errors.ProblemError}  # the root: every other status


def test_problem_fields_are_typed_on_their_errors() -> None:
    conflict = errors.problem_error(answer(409, {"detail": "open", "job_id": "j-1"}))
    assert isinstance(conflict, errors.ConflictError) and conflict.job_id == "j-1"
    stale = errors.problem_error(answer(412, {"detail": "stale", "current_version": 7}))
    assert isinstance(stale, errors.VersionConflictError) and stale.current_version == 7
    invalid = errors.problem_error(answer(422, {"detail": "d", "errors": [{"loc": "x"}]}))
    assert isinstance(invalid, errors.UnprocessableError) and invalid.errors == [{"loc": "x"}]
    busy = errors.problem_error(answer(503, {"detail": "later"}, **{"Retry-After": "5"}))
    assert isinstance(busy, errors.ServiceUnavailableError) and busy.retry_after_s == 5.0


def test_an_error_body_that_is_no_json_becomes_the_detail() -> None:
    error = errors.problem_error(answer(502, b"<html>Bad Gateway</html>"))
    assert type(error) is errors.ProblemError and error.detail == "<html>Bad Gateway</html>"
    assert errors.problem_error(answer(502)).detail == "Bad Gateway"  # empty: the reason phrase


def test_retry_after_as_an_http_date() -> None:
    later = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    waited = errors.retry_after_s(answer(503, {}, **{"Retry-After": later}))
    assert waited is not None and 25 <= waited <= 31
    assert errors.retry_after_s(answer(503, {}, **{"Retry-After": "soon"})) is None


def test_a_success_with_an_unreadable_body_is_an_unexpected_answer() -> None:
    with pytest.raises(errors.UnexpectedAnswerError, match="cannot read"):
        calls.get_job("j").answer(answer(200, b"<html>a captive portal</html>"))
    with pytest.raises(errors.UnexpectedAnswerError):
        calls.get_job("j").answer(answer(200, {"id": "j"}))


# --- the typed answers match the API's bodies --------------------------------------------------


def test_the_typed_answers_have_the_apis_fields() -> None:
    assert {f.name for f in fields(Job)} - {"extra"} == set(JobOut.model_fields)
    assert {f.name for f in fields(Session)} == set(SessionOut.model_fields)
    assert set(get_args(Decision)) == set(DECISIONS)
    assert set(get_args(JobStatus)) == set(get_args(ServerJobStatus))
    assert set(get_args(JobTrigger)) == set(get_args(ServerJobTrigger))


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (models.ArchivedMessage, schemas_archive.ArchivedMessageOut),
        (models.SearchHit, schemas_archive.SearchHitOut),
        (models.ArchivePage, schemas_archive.ArchiveOut),
        (models.ArchivedAround, schemas_archive.ArchivedAroundOut),
        (models.Reverted, schemas_archive.RevertOut),
        (models.SessionSummary, schemas_archive.SessionListItem),
        (models.SessionPage, schemas_archive.SessionPage),
    ],
)
def test_the_archive_and_list_answers_have_the_apis_fields(ours: type, theirs: Any) -> None:
    assert {f.name for f in fields(ours)} == set(theirs.model_fields)


def test_revert_and_delete_are_sent_once_and_queries_keep_only_what_was_given() -> None:
    revert = calls.revert("s1", "j-1", if_match=4)
    delete = calls.delete("s1", if_match=None)
    assert not revert.retryable and not delete.retryable and delete.headers == {}
    assert revert.json == {"job_id": "j-1"} and revert.headers == {"If-Match": '"4"'}
    page = calls.get_archive("s1", q="KeyError: x", cursor=None, limit=5, generation=0, job_id=None)
    assert page.retryable and page.params == {"q": "KeyError: x", "limit": "5", "generation": "0"}
    listed = calls.list_sessions(
        cursor=None, limit=None, min_utilization=0.5, model=None, min_compactions=None,
        idle_since=datetime(2026, 3, 1, tzinfo=UTC),
    )  # fmt: skip
    assert listed.params == {"min_utilization": "0.5", "idle_since": "2026-03-01T00:00:00+00:00"}


def test_a_job_keeps_fields_it_does_not_know() -> None:
    job = Job.from_json(
        {"id": "j", "session_id": "s", "trigger": "manual", "status": "queued",
         "enqueued_at": "2026-01-02T03:04:05+00:00", "a_new_field": 1}
    )  # fmt: skip
    assert job.extra == {"a_new_field": 1} and job.enqueued_at.tzinfo is not None
    assert not job.finished


# --- callbacks ---------------------------------------------------------------------------------


def signed_callback(*, sent_at: int, secret: str = SECRET) -> tuple[bytes, dict[str, str]]:
    telemetry = {"id": "j-1", "session_id": "s1", "trigger": "hygiene", "status": "succeeded",
                 "enqueued_at": "2026-01-02T03:04:05+00:00", "tokens_after": 900}  # fmt: skip
    body = callback_body(telemetry, session_id="s1", version=4, sent_at=sent_at)
    return body, callback_headers(body, secret=secret, sent_at=sent_at)


def test_a_callback_signed_by_the_worker_verifies() -> None:
    now = int(time.time())
    body, headers = signed_callback(sent_at=now)
    event = verify_callback(body, headers, secret=SECRET)
    assert (event.session_id, event.version, event.sent_at) == ("s1", 4, now)
    assert event.job.id == "j-1" and event.job.tokens_after == 900
    lowered = {k.lower(): v for k, v in headers.items()}  # header names match without case
    assert verify_callback(body, lowered, secret=SECRET) == event


@pytest.mark.parametrize("case", ["other secret", "altered", "unsigned", "stale", "restamped"])
def test_a_callback_that_does_not_check_out_is_refused(case: str) -> None:
    now = int(time.time())
    body, headers = signed_callback(sent_at=now - 3600 if case == "stale" else now)
    if case == "other secret":
        body, headers = signed_callback(sent_at=now, secret="another")
    elif case == "altered":
        body = body.replace(b'"version":4', b'"version":5')
    elif case == "unsigned":
        del headers["X-Compaction-Signature"]
    elif case == "restamped":
        headers["X-Compaction-Timestamp"] = str(now + 1)
    with pytest.raises(errors.CallbackSignatureError):
        verify_callback(body, headers, secret=SECRET)


def test_a_callbacks_age_limit_can_be_lifted() -> None:
    body, headers = signed_callback(sent_at=int(time.time()) - 3600)
    assert verify_callback(body, headers, secret=SECRET, max_age_s=None).version == 4
