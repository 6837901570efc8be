"""The typed client (sync and async) against the real app on SQLite and PostgreSQL, with a
private redis-server as its broker: typed answers, every error class, retries that resend the
same Idempotency-Key and never store a turn twice, and the archive, revert, delete and
session-list routes (compactions run by the worker's own code in this process). The failures are real: an answer lost
on the wire after the service stored the write, SQLite's write lock held by another
connection, a database that is not there, a broker that is not there.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.client import (
    AsyncCompactionClient,
    BadRequestError,
    CompactionClient,
    ConflictError,
    JobWaitTimeoutError,
    NotFoundError,
    RetryPolicy,
    ServiceUnavailableError,
    ServiceUnreachableError,
    UnauthorizedError,
    UnprocessableError,
    VersionConflictError,
)
from api.client.tools import ToolCallError, run_tool
from tests.api_support import TOKEN, Api, api_settings, open_api
from tests.store_factories import make_transcript
from tests.support.transports import AsyncWireTransport, Wire, WireTransport
from tests.support.worker_fixtures import close_runtime, runtime_for
from worker.compaction import run_job
from worker.redis_server import free_port
from worker.settings import Settings

pytestmark = pytest.mark.integration

WINDOW = 2_000  # tokens: the threshold is 1,700; two turns of make_transcript() are ~300
BIG = " ".join(["lorem"] * 2_000)  # one user turn of ~2,000 tokens: crosses the threshold
FAST = RetryPolicy(attempts=4, backoff_s=0.01, max_wait_s=0.05)
BASE = "http://testserver"


def user(content: str) -> dict[str, Any]:
    return {"role": "user", "content": content}


def times_stored(queue: CompactionClient, session_id: str, content: str) -> int:
    return sum(m.get("content") == content for m in queue.get_messages(session_id).messages)


@pytest.fixture
def wire() -> Wire:
    return Wire()


@pytest.fixture
def queue(api: Api, wire: Wire) -> Iterator[CompactionClient]:
    # The app in-process (tests/api_support.py), behind a wire that can lose answers.
    transport = WireTransport(api.client._transport, wire)
    with CompactionClient(BASE, transport=transport, retry=FAST) as client:
        yield client


def put_small(queue: CompactionClient, session_id: str = "s1") -> int:
    answer = queue.put_session(
        session_id, model="gpt-4", context_length=WINDOW, messages=make_transcript(2)
    )
    return answer.version


# --- typed answers -------------------------------------------------------------------------------


def test_a_session_round_trip_answers_typed_values(queue: CompactionClient) -> None:
    messages = make_transcript(2)
    first = queue.put_session("s1", model="gpt-4", context_length=WINDOW, messages=messages)
    assert (first.session_id, first.version, first.hygiene.decision) == ("s1", 1, "below_threshold")
    assert first.hygiene.job_id is None and not first.job_open and not first.replayed
    assert first.reason and first.threshold_tokens == 1_700 and 0 < first.utilization < 0.85

    second = queue.append("s1", [user("and now?")], prompt_tokens=400, if_match=1)
    assert second.version == 2 and second.tokens == 400  # the gateway's real usage counts

    session = queue.get_session("s1")
    assert (session.version, session.message_count, session.model) == (
        2,
        len(messages) + 1,
        "gpt-4",
    )
    assert session.last_job is None and session.last_activity_at.tzinfo is not None
    transcript = queue.get_messages("s1")
    assert transcript.version == 2 and transcript.messages == [*messages, user("and now?")]
    assert (transcript.format, transcript.system) == ("openai.chat", None)


def test_a_session_in_anthropic_form_comes_back_in_it(queue: CompactionClient) -> None:
    system = [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    turns = [
        {"role": "user", "content": "What is in the repo?"},
        {"role": "assistant", "content": [{"type": "text", "text": "A service."}]},
        {"role": "user", "content": [{"type": "text", "text": "And the tests?"}]},
    ]
    answer = queue.put_session(
        "a1", model="gpt-4", context_length=WINDOW, messages=turns,
        format="anthropic.messages", system=system,
    )  # fmt: skip
    assert answer.version == 1
    transcript = queue.get_messages("a1")
    assert (transcript.format, transcript.system, transcript.messages) == (
        "anthropic.messages",
        system,
        turns,
    )


def test_crossing_the_threshold_opens_a_job_that_a_manual_compaction_names(
    queue: CompactionClient,
) -> None:
    put_small(queue)
    answer = queue.append("s1", [user(BIG)])
    assert answer.hygiene.decision == "enqueued" and answer.job_open
    job_id = answer.hygiene.job_id
    assert job_id is not None
    job = queue.get_job(job_id)
    assert (job.id, job.session_id, job.trigger, job.status) == (job_id, "s1", "hygiene", "queued")
    assert not job.finished and job.enqueued_at.tzinfo is not None
    last_job = queue.get_session("s1").last_job
    assert last_job is not None and (last_job.id, last_job.status) == (job_id, "queued")
    with pytest.raises(ConflictError) as conflict:
        queue.compact("s1", focus_topic="the tests", force=True)
    assert conflict.value.job_id == job_id and job_id in conflict.value.detail
    with pytest.raises(JobWaitTimeoutError) as waited:  # no worker runs here: it stays queued
        queue.wait_for_job(job_id, timeout_s=0.3, poll_interval_s=0.05)
    assert waited.value.job.status == "queued"


def test_a_manual_compaction_asks_for_a_size_and_the_job_shows_it(queue: CompactionClient) -> None:
    put_small(queue)
    with pytest.raises(UnprocessableError, match="the session's context_length") as refused:
        queue.compact("s1", target_tokens=WINDOW + 1)
    assert "target_tokens" in refused.value.detail
    job_id = queue.compact("s1", focus_topic="the tests", target_tokens=1_000).job_id
    job = queue.get_job(job_id)
    assert (job.trigger, job.focus_topic, job.target_tokens) == ("manual", "the tests", 1_000)


# --- every error class ----------------------------------------------------------------------------


def test_every_refusal_comes_back_as_its_error_with_the_detail(queue: CompactionClient) -> None:
    with pytest.raises(NotFoundError, match="s-missing"):
        queue.get_session("s-missing")
    with pytest.raises(NotFoundError):
        queue.get_job("no-such-job")
    with pytest.raises(NotFoundError):
        queue.append("s-missing", [user("hi")])

    put_small(queue)
    queue.append("s1", [user("one")])
    with pytest.raises(VersionConflictError) as stale:
        queue.append("s1", [user("two")], if_match=1)
    assert stale.value.current_version == 2 and "current version is 2" in stale.value.detail

    orphan = [user("hi"), {"role": "tool", "content": "no call id"}]
    with pytest.raises(UnprocessableError) as invalid:
        queue.put_session("s2", model="gpt-4", context_length=WINDOW, messages=orphan)
    assert "messages[1]" in invalid.value.detail and "tool_call_id" in invalid.value.detail

    queue.append("s1", [user("three")], idempotency_key="k-1")
    with pytest.raises(UnprocessableError, match="already used") as reused:
        queue.append("s1", [user("another body")], idempotency_key="k-1")
    assert reused.value.type is not None and reused.value.type.endswith("idempotency-key-reused")

    with pytest.raises(BadRequestError, match="Idempotency-Key"):
        queue.append("s1", [user("four")], idempotency_key="has spaces")
    assert times_stored(queue, "s1", "four") == 0


def test_a_missing_or_wrong_token_is_an_unauthorized_error(authed_api: Api) -> None:
    transport = authed_api.client._transport
    for token in (None, "not-the-token"):
        with (
            CompactionClient(BASE, token=token, transport=transport) as queue,
            pytest.raises(UnauthorizedError, match="Bearer"),
        ):
            queue.get_session("s1")
    with CompactionClient(BASE, token=TOKEN, transport=transport) as queue:
        assert put_small(queue) == 1


def test_an_unreachable_database_is_a_service_unavailable_error_after_the_retries(
    tmp_path: Path, broker_url: str
) -> None:
    dead_db = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/nothing?connect_timeout=2"
    wire = Wire()
    policy = RetryPolicy(attempts=2, max_wait_s=0.05)
    for api in open_api(api_settings(dead_db, broker_url, tmp_path), broker_url):
        transport = WireTransport(api.client._transport, wire)
        with CompactionClient(BASE, transport=transport, retry=policy) as queue:
            with pytest.raises(ServiceUnavailableError) as busy:
                queue.append("s1", [user("hi")])
            assert busy.value.retry_after_s == 5.0 and "nothing was stored" in busy.value.detail
    keys = wire.keys("POST")
    assert len(keys) == 2 and keys[0] is not None and keys[0] == keys[1]  # one key, two tries


def test_without_a_broker_a_write_is_stored_and_a_manual_compaction_is_unavailable(
    database_url: str, tmp_path: Path
) -> None:
    no_broker = f"redis://127.0.0.1:{free_port()}/0"
    for api in open_api(api_settings(database_url, no_broker, tmp_path), no_broker):
        with CompactionClient(BASE, transport=api.client._transport, retry=FAST) as queue:
            put_small(queue)
            answer = queue.append("s1", [user(BIG)])
            # Stored, so a 200 that says the job failed, never a 503 asking for the turns again.
            assert not answer.job_open and answer.hygiene.decision == "enqueued"
            assert answer.hygiene.job_status == "failed"
            assert answer.hygiene.error_class == "broker_unavailable"
            assert answer.hygiene.detail and times_stored(queue, "s1", BIG) == 1
            with pytest.raises(ServiceUnavailableError) as down:
                queue.compact("s1", force=True)
            assert down.value.detail


# --- retries with the same key --------------------------------------------------------------------


def test_a_lost_answer_is_retried_with_the_same_key_and_the_turn_is_stored_once(
    queue: CompactionClient, wire: Wire
) -> None:
    put_small(queue)
    wire.lose = len(wire.exchanges) + 1  # the append's first answer never arrives
    answer = queue.append("s1", [user(BIG)])
    assert answer.replayed and answer.job_open and answer.hygiene.decision == "enqueued"
    first, again = wire.exchanges[-2:]
    assert first.status is None and again.status == 202
    assert first.idempotency_key == again.idempotency_key is not None
    assert times_stored(queue, "s1", BIG) == 1


def test_a_callers_key_is_the_one_sent_and_a_retry_gives_up_after_the_policys_tries(
    queue: CompactionClient, wire: Wire
) -> None:
    put_small(queue)
    wire.lose = len(wire.exchanges) + 100  # no answer ever arrives
    with pytest.raises(ServiceUnreachableError, match="no answer after 4 tries") as gone:
        queue.append("s1", [user("the turn")], idempotency_key="turn-7")
    assert gone.value.attempts == FAST.attempts
    assert wire.keys("POST") == ["turn-7"] * FAST.attempts
    wire.lose = 0
    assert times_stored(queue, "s1", "the turn") == 1  # four deliveries, one turn


def test_a_manual_compaction_whose_answer_is_lost_is_not_sent_again(
    queue: CompactionClient, wire: Wire
) -> None:
    put_small(queue)
    wire.lose = len(wire.exchanges) + 1
    with pytest.raises(ServiceUnreachableError) as lost:
        queue.compact("s1", force=True)
    assert lost.value.attempts == 1
    job = queue.get_session("s1").last_job
    assert job is not None and job.trigger == "manual"  # it was queued: one job, not two
    with pytest.raises(ConflictError) as open_job:
        queue.compact("s1", force=True)
    assert open_job.value.job_id == job.id


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_503_is_retried_with_the_same_key_until_the_write_is_stored(
    queue: CompactionClient, wire: Wire, database_url: str
) -> None:
    put_small(queue)
    # Another connection holds SQLite's write lock: the API gives up after its busy timeout
    # with 503 and Retry-After; the lock is released once that answer went by.
    holder = sqlite3.connect(
        database_url.removeprefix("sqlite:///"), isolation_level=None, check_same_thread=False
    )
    holder.execute("BEGIN IMMEDIATE")
    released = threading.Event()

    def release_after_a_503() -> None:
        while not any(e.status == 503 for e in wire.exchanges):
            time.sleep(0.02)
        holder.rollback()
        released.set()

    releaser = threading.Thread(target=release_after_a_503, daemon=True)
    releaser.start()
    try:
        answer = queue.append("s1", [user("the turn")])
    finally:
        releaser.join(30)
        holder.close()
    assert released.is_set() and not answer.replayed  # the 503 stored nothing
    posts = [e for e in wire.exchanges if e.method == "POST"]
    assert [e.status for e in posts] == [503, 200]
    assert posts[0].idempotency_key == posts[1].idempotency_key is not None
    assert times_stored(queue, "s1", "the turn") == 1


# --- the async client ------------------------------------------------------------------------------


def run_async(
    settings: Settings,
    body: Callable[[AsyncCompactionClient], Awaitable[None]],
    *,
    wire: Wire | None = None,
    token: str | None = None,
) -> None:
    """``body`` with an async client of the app (lifespan running), in an event loop."""
    from api.main import create_app

    async def main() -> None:
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            transport: httpx.AsyncBaseTransport = httpx.ASGITransport(app=app)
            if wire is not None:
                transport = AsyncWireTransport(transport, wire)
            async with AsyncCompactionClient(
                BASE, token=token, transport=transport, retry=FAST
            ) as queue:
                await body(queue)

    asyncio.run(main())


@pytest.fixture
def settings(database_url: str, broker_url: str, tmp_path: Path) -> Settings:
    return api_settings(database_url, broker_url, tmp_path)


def test_the_async_client_answers_typed_values(settings: Settings) -> None:
    async def body(queue: AsyncCompactionClient) -> None:
        put = await queue.put_session(
            "a1", model="gpt-4", context_length=WINDOW, messages=make_transcript(2)
        )
        assert put.version == 1 and put.hygiene.decision == "below_threshold"
        answer = await queue.append("a1", [user(BIG)], if_match=1)
        assert answer.job_open and answer.hygiene.job_id is not None
        job = await queue.get_job(answer.hygiene.job_id)
        assert job.status == "queued" and job.session_id == "a1"
        session = await queue.get_session("a1")
        assert session.version == 2 and session.last_job is not None
        assert session.last_job.id == job.id
        transcript = await queue.get_messages("a1")
        assert transcript.version == 2 and transcript.messages[-1] == user(BIG)
        with pytest.raises(JobWaitTimeoutError):
            await queue.wait_for_job(job.id, timeout_s=0.2, poll_interval_s=0.05)

    run_async(settings, body)


def test_the_async_client_raises_every_error_class(settings: Settings) -> None:
    async def body(queue: AsyncCompactionClient) -> None:
        with pytest.raises(NotFoundError):
            await queue.get_session("nobody")
        await queue.put_session("a1", model="gpt-4", context_length=WINDOW, messages=[])
        with pytest.raises(VersionConflictError) as stale:
            await queue.append("a1", [user("x")], if_match=7)
        assert stale.value.current_version == 1
        with pytest.raises(UnprocessableError, match="prompt_tokens"):
            await queue.append("a1", [user("x")], prompt_tokens=-1)
        with pytest.raises(BadRequestError):
            await queue.append("a1", [user("x")], idempotency_key="")  # "" is a key, not none
        with pytest.raises(UnprocessableError, match="target_tokens"):
            await queue.compact("a1", target_tokens=255)
        answer = await queue.append("a1", [*make_transcript(2)[1:], user(BIG)])
        with pytest.raises(ConflictError) as conflict:
            await queue.compact("a1", target_tokens=1_000)
        assert conflict.value.job_id == answer.hygiene.job_id

    run_async(settings, body)


def test_the_async_client_is_refused_without_the_token_and_unavailable_without_a_database(
    database_url: str, broker_url: str, tmp_path: Path
) -> None:
    from pydantic import SecretStr

    authed = api_settings(database_url, broker_url, tmp_path, api_token=SecretStr(TOKEN))

    async def refused(queue: AsyncCompactionClient) -> None:
        with pytest.raises(UnauthorizedError):
            await queue.get_job("j")

    run_async(authed, refused, token="wrong")

    dead_db = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/nothing?connect_timeout=2"
    wire = Wire()

    async def unavailable(queue: AsyncCompactionClient) -> None:
        with pytest.raises(ServiceUnavailableError) as busy:
            await queue.put_session("a1", model="gpt-4", context_length=WINDOW, messages=[])
        assert busy.value.retry_after_s == 5.0

    run_async(api_settings(dead_db, broker_url, tmp_path), unavailable, wire=wire)
    keys = wire.keys("PUT")
    assert len(keys) == FAST.attempts and len(set(keys)) == 1


def test_the_async_client_retries_a_lost_answer_with_the_same_key(settings: Settings) -> None:
    wire = Wire()

    async def body(queue: AsyncCompactionClient) -> None:
        await queue.put_session(
            "a1", model="gpt-4", context_length=WINDOW, messages=make_transcript(2)
        )
        wire.lose = len(wire.exchanges) + 2  # two answers lost in a row
        answer = await queue.append("a1", [user(BIG)])
        assert answer.replayed and answer.job_open
        messages = (await queue.get_messages("a1")).messages
        assert sum(m.get("content") == BIG for m in messages) == 1

    run_async(settings, body, wire=wire)
    posts = [e for e in wire.exchanges if e.method == "POST"]
    assert [e.status for e in posts] == [None, None, 202]
    assert len({e.idempotency_key for e in posts}) == 1


# --- the archive, revert, delete, the session list ---------------------------------------------

ERROR_LINE = "E   KeyError: 'session_id' in src/app/views.py:41"


def archived_once(queue: CompactionClient, session_id: str = "s1") -> None:
    """A transcript holding an error line, then replaced by a snapshot: the first is archived."""
    first = [user("run the tests"), {"role": "assistant", "content": f"They fail:\n{ERROR_LINE}"}]
    queue.put_session(session_id, model="gpt-4", context_length=WINDOW, messages=first)
    queue.put_session(session_id, model="gpt-4", context_length=WINDOW, messages=[user("again")])


def compacted(api: Api, queue: CompactionClient, session_id: str) -> str:
    """A session compacted by the worker's own code, run here; the job's id."""
    answer = queue.put_session(
        session_id, model="gpt-4", context_length=WINDOW, messages=make_transcript(40)
    )
    assert answer.hygiene.job_id is not None
    rt = runtime_for(api.settings)
    try:
        assert run_job(rt, answer.hygiene.job_id, worker="test")["status"] == "succeeded"
    finally:
        close_runtime(rt)
    return answer.hygiene.job_id


def test_the_archive_is_searched_read_and_paged(queue: CompactionClient) -> None:
    archived_once(queue)
    found = queue.search_archive("s1", "KeyError: 'session_id'", limit=5)
    assert found.hits is not None and len(found.hits) == 1 and found.messages == []
    hit = found.hits[0]
    assert hit.role == "assistant" and "KeyError" in hit.snippet and hit.generation == 0
    around = queue.get_archived_message("s1", hit.seq, before=1, after=0)
    assert [m.message for m in around.messages] == [
        user("run the tests"),
        {"role": "assistant", "content": f"They fail:\n{ERROR_LINE}"},
    ]
    first = queue.get_archive("s1", limit=1)
    assert first.hits is None and len(first.messages) == 1 and first.next_cursor is not None
    second = queue.get_archive("s1", limit=1, cursor=first.next_cursor)
    assert second.messages[0].seq > first.messages[0].seq and second.next_cursor is None

    with pytest.raises(NotFoundError):
        queue.search_archive("nobody", "x")
    with pytest.raises(NotFoundError):
        queue.get_archived_message("s1", 10_000)
    with pytest.raises(UnprocessableError, match="cursor"):
        queue.get_archive("s1", cursor="not-a-cursor")


def test_a_compaction_is_reverted_then_the_session_deleted_and_listed_no_more(
    api: Api, queue: CompactionClient
) -> None:
    job_id = compacted(api, queue, "s1")
    version = queue.get_session("s1").version
    with pytest.raises(VersionConflictError) as stale:
        queue.revert("s1", job_id, if_match=version - 1)
    assert stale.value.current_version == version
    undone = queue.revert("s1", job_id, if_match=version)
    assert (undone.job_id, undone.version) == (job_id, version + 1)
    assert undone.restored > 0 and undone.archived > 0
    assert len(queue.get_messages("s1").messages) == len(make_transcript(40))
    with pytest.raises(ConflictError, match="already"):
        queue.revert("s1", job_id)

    listed = queue.list_sessions(min_compactions=1)
    assert [s.session_id for s in listed.sessions] == ["s1"] and listed.next_cursor is None
    assert listed.sessions[0].open_job_id is None and listed.sessions[0].version == version + 1

    with pytest.raises(VersionConflictError):
        queue.delete("s1", if_match=1)
    queue.delete("s1", if_match=version + 1)
    with pytest.raises(NotFoundError):
        queue.get_session("s1")
    with pytest.raises(NotFoundError):
        queue.delete("s1")
    assert queue.list_sessions().sessions == []


def test_a_session_with_an_open_job_is_not_deleted_and_sessions_come_a_page_at_a_time(
    queue: CompactionClient,
) -> None:
    for session_id in ("a", "b", "c"):
        put_small(queue, session_id)
    answer = queue.append("b", [user(BIG)])
    with pytest.raises(ConflictError) as open_job:
        queue.delete("b")
    assert open_job.value.job_id == answer.hygiene.job_id
    first = queue.list_sessions(limit=2)
    assert [s.session_id for s in first.sessions] == ["a", "b"] and first.next_cursor
    assert first.sessions[1].open_job_id == answer.hygiene.job_id
    rest = queue.list_sessions(limit=2, cursor=first.next_cursor)
    assert [s.session_id for s in rest.sessions] == ["c"] and rest.next_cursor is None
    assert [s.session_id for s in queue.list_sessions(min_utilization=0.85).sessions] == ["b"]
    names = [t["function"]["name"] for t in queue.list_tools()]
    assert names == ["recall", "recall_message", "compaction_history"]


def test_the_async_client_searches_reverts_lists_and_deletes(settings: Settings) -> None:
    async def body(queue: AsyncCompactionClient) -> None:
        first = [user("run it"), {"role": "assistant", "content": ERROR_LINE}]
        await queue.put_session("a1", model="gpt-4", context_length=WINDOW, messages=first)
        await queue.put_session("a1", model="gpt-4", context_length=WINDOW, messages=[user("x")])
        found = await queue.search_archive("a1", "src/app/views.py:41")
        assert found.hits is not None and [h.role for h in found.hits] == ["assistant"]
        around = await queue.get_archived_message("a1", found.hits[0].seq, before=0, after=0)
        assert around.messages[0].message["content"] == ERROR_LINE
        assert len((await queue.get_archive("a1")).messages) == 2
        with pytest.raises(NotFoundError):
            await queue.revert("a1", "no-such-job")
        page = await queue.list_sessions(model="gpt-4")
        assert [s.session_id for s in page.sessions] == ["a1"]
        assert len(await queue.list_tools()) == 3
        assert await queue.list_jobs("a1") == []  # nothing compacted it
        await queue.delete("a1")
        with pytest.raises(NotFoundError):
            await queue.get_messages("a1")

    run_async(settings, body)


def test_a_tool_call_runs_through_the_client_and_bad_arguments_are_named(
    queue: CompactionClient,
) -> None:
    first = [user("run it"), {"role": "assistant", "content": ERROR_LINE}]
    queue.put_session("t1", model="gpt-4", context_length=WINDOW, messages=first)
    queue.put_session("t1", model="gpt-4", context_length=WINDOW, messages=[user("x")])
    found = run_tool(queue, "t1", "recall", {"query": "src/app/views.py:41", "limit": 2})
    assert [h["role"] for h in found["hits"]] == ["assistant"] and found["more"] is False
    whole = run_tool(queue, "t1", "recall_message", {"seq": found["hits"][0]["seq"], "after": 0})
    assert whole["messages"][-1]["message"]["content"] == ERROR_LINE
    assert run_tool(queue, "t1", "compaction_history", {}) == {"compactions": []}
    with pytest.raises(ToolCallError, match="recall: limit must be an integer, not '2'"):
        run_tool(queue, "t1", "recall", {"query": "x", "limit": "2"})
    with pytest.raises(ToolCallError, match="recall_message: seq is required"):
        run_tool(queue, "t1", "recall_message", {})
    with pytest.raises(ToolCallError, match="unknown tool 'shell'"):
        run_tool(queue, "t1", "shell", {})
