"""Retries: ``Idempotency-Key`` on PUT and append, and answers that never ask for a stored write
again. On SQLite and PostgreSQL, the in-process app and a real ``compaction api`` process; the
failures are real: a stopped or frozen redis-server, a killed API process, a PostgreSQL
connection terminated while it waits on a lock another connection holds.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from sqlalchemy import Connection, create_engine, func, select, text, update

from tests.api_support import Api, api_settings, dump, open_api
from tests.store_factories import make_transcript
from tests.support.stack import api_process, stack_env, start_api, wait_api_ready
from tests.support.worker_fixtures import private_redis
from worker.redis_server import RedisServer, free_port
from worker.store import idempotency
from worker.store.db import Database
from worker.store.models import IdempotencyKeyRow, utcnow

pytestmark = pytest.mark.integration
__all__ = ["private_redis"]  # a fixture, imported for pytest

WINDOW = 2_000  # tokens: the threshold is 1,700; two turns of make_transcript() are ~300
BIG = " ".join(["lorem"] * 2_000)  # one user turn of ~2,000 tokens: crosses the threshold


def snapshot(turns: int = 2) -> dict[str, Any]:
    return {"model": "gpt-4", "context_length": WINDOW, "messages": make_transcript(turns)}


def turn(content: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": content}]}


def keyed(key: str) -> dict[str, str]:
    return {"Idempotency-Key": key}


def times_stored(client: httpx.Client, session_id: str, content: str) -> int:
    messages = client.get(f"/v1/sessions/{session_id}/messages").json()["messages"]
    return sum(1 for m in messages if m.get("content") == content)


def same_answer(first: httpx.Response, again: httpx.Response) -> None:
    """What the retry must repeat: status, body, ETag and X-Hygiene-Reason."""
    assert again.status_code == first.status_code, again.text
    assert again.json() == first.json()
    assert again.headers["etag"] == first.headers["etag"]
    assert again.headers["x-hygiene-reason"] == first.headers["x-hygiene-reason"]
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers


# --- the contract on the in-process app ----------------------------------------------------------


def test_a_retried_append_answers_the_first_result_and_stores_nothing(api: Api) -> None:
    api.client.put("/v1/sessions/s1", json=snapshot())
    first = api.client.post("/v1/sessions/s1/messages", json=turn(BIG), headers=keyed("k-1"))
    assert first.status_code == 202 and first.json()["hygiene"]["decision"] == "enqueued"
    before = dump(api.settings.database_url)
    again = api.client.post("/v1/sessions/s1/messages", json=turn(BIG), headers=keyed("k-1"))
    same_answer(first, again)
    assert dump(api.settings.database_url) == before  # nothing stored twice, nothing at all
    assert times_stored(api.client, "s1", BIG) == 1
    assert len(api.queued_job_ids()) == 1


def test_a_retried_put_answers_the_first_result_and_stores_nothing(api: Api) -> None:
    first = api.client.put("/v1/sessions/s1", json=snapshot(40), headers=keyed("put-1"))
    assert first.status_code == 202
    before = dump(api.settings.database_url)
    # Spelled differently (keys reordered), the same body: the same request.
    reordered = dict(reversed(list(snapshot(40).items())))
    again = api.client.put("/v1/sessions/s1", json=reordered, headers=keyed("put-1"))
    same_answer(first, again)
    assert dump(api.settings.database_url) == before
    assert api.client.get("/v1/sessions/s1").json()["version"] == 1


def test_a_retry_is_answered_even_when_its_if_match_is_no_longer_current(api: Api) -> None:
    api.client.put("/v1/sessions/s1", json=snapshot())
    headers = keyed("k-1") | {"If-Match": '"1"'}
    first = api.client.post("/v1/sessions/s1/messages", json=turn("hi"), headers=headers)
    assert first.status_code == 200 and first.headers["etag"] == '"2"'
    again = api.client.post("/v1/sessions/s1/messages", json=turn("hi"), headers=headers)
    same_answer(first, again)  # not 412: the retried request is the one that made version 2
    other = api.client.post(
        "/v1/sessions/s1/messages", json=turn("hi"), headers=keyed("k-2") | {"If-Match": '"1"'}
    )
    assert other.status_code == 412  # a new key is a new request


def test_the_same_key_with_another_body_is_a_422_and_stores_nothing(api: Api) -> None:
    api.client.put("/v1/sessions/s1", json=snapshot(), headers=keyed("k-1"))
    api.client.post("/v1/sessions/s1/messages", json=turn("first"), headers=keyed("k-1"))
    before = dump(api.settings.database_url)
    for method, url, body in [
        ("POST", "/v1/sessions/s1/messages", turn("second")),
        ("PUT", "/v1/sessions/s1", snapshot(3)),
    ]:
        r = api.client.request(method, url, json=body, headers=keyed("k-1"))
        assert r.status_code == 422 and r.headers["content-type"] == "application/problem+json"
        problem = r.json()
        assert problem["type"].endswith(":idempotency-key-reused")
        assert "Idempotency-Key 'k-1' was already used" in problem["detail"]
        assert "with another request body" in problem["detail"]
    assert dump(api.settings.database_url) == before


def test_keys_are_scoped_per_session_and_per_route(api: Api) -> None:
    for session_id in ("s1", "s2"):
        r = api.client.put(f"/v1/sessions/{session_id}", json=snapshot(), headers=keyed("k"))
        assert r.status_code == 200 and "idempotent-replayed" not in r.headers
    # The same key on the other route of the same session: its own request.
    r = api.client.post("/v1/sessions/s1/messages", json=turn("hi"), headers=keyed("k"))
    assert r.status_code == 200 and "idempotent-replayed" not in r.headers
    r = api.client.post("/v1/sessions/s2/messages", json=turn("hi"), headers=keyed("k"))
    assert r.status_code == 200 and "idempotent-replayed" not in r.headers
    # And each is remembered in its own scope: retried, each answers its own first result.
    for session_id in ("s1", "s2"):
        again = api.client.post(
            f"/v1/sessions/{session_id}/messages", json=turn("hi"), headers=keyed("k")
        )
        assert again.headers["idempotent-replayed"] == "true"
        assert again.json()["session_id"] == session_id and again.json()["version"] == 2
    assert times_stored(api.client, "s1", "hi") == times_stored(api.client, "s2", "hi") == 1


@pytest.mark.parametrize("key", ["", "has space", "tab\tinside", "é-accent", "x" * 256], ids=repr)
def test_a_malformed_key_is_a_400_and_stores_nothing(api: Api, key: str) -> None:
    r = api.client.put(
        "/v1/sessions/s1", json=snapshot(), headers={b"Idempotency-Key": key.encode()}
    )
    assert r.status_code == 400 and r.json()["type"].endswith(":bad-idempotency-key")
    assert "1 to 255 visible ASCII characters" in r.json()["detail"]
    assert api.client.get("/v1/sessions/s1").status_code == 404


def test_the_longest_key_and_any_visible_ascii_are_accepted(api: Api) -> None:
    for key in ("x" * 255, "".join(chr(c) for c in range(0x21, 0x7F))):
        r = api.client.put("/v1/sessions/s1", json=snapshot(), headers=keyed(key))
        assert r.status_code == 200, r.text
        assert (
            api.client.put("/v1/sessions/s1", json=snapshot(), headers=keyed(key)).headers[
                "idempotent-replayed"
            ]
            == "true"
        )


def test_a_refused_request_leaves_its_key_free(api: Api) -> None:
    api.client.put("/v1/sessions/s1", json=snapshot())
    bad = {"messages": [{"role": "tool", "content": "no call id"}]}
    assert (
        api.client.post("/v1/sessions/s1/messages", json=bad, headers=keyed("k")).status_code == 422
    )
    r = api.client.post("/v1/sessions/s1/messages", json=turn("fixed"), headers=keyed("k"))
    assert r.status_code == 200 and "idempotent-replayed" not in r.headers
    again = api.client.post("/v1/sessions/s1/messages", json=turn("fixed"), headers=keyed("k"))
    same_answer(r, again)
    assert times_stored(api.client, "s1", "fixed") == 1


def test_keys_expire_after_the_retention_and_are_swept(api: Api) -> None:
    api.client.put("/v1/sessions/s1", json=snapshot())
    api.client.post("/v1/sessions/s1/messages", json=turn("old"), headers=keyed("old"))
    api.client.post("/v1/sessions/s1/messages", json=turn("new"), headers=keyed("new"))
    db = Database(api.settings.database_url)
    try:
        with db.write() as s:
            s.execute(
                update(IdempotencyKeyRow)
                .where(IdempotencyKeyRow.idempotency_key == "old")
                .values(created_at=utcnow() - idempotency.RETENTION - timedelta(minutes=1))
            )
        # Past the retention a key is forgotten: the same request is a new one.
        r = api.client.post("/v1/sessions/s1/messages", json=turn("old"), headers=keyed("old"))
        assert r.status_code == 200 and "idempotent-replayed" not in r.headers
        assert times_stored(api.client, "s1", "old") == 2
        # The sweep removes what is past the retention and keeps the rest.
        later = utcnow() + idempotency.RETENTION + timedelta(minutes=1)
        assert idempotency.delete_expired(db, now=utcnow()) == 0
        assert idempotency.delete_expired(db, now=later, batch=1) == 2
        with db.read() as s:
            assert s.scalar(select(func.count()).select_from(IdempotencyKeyRow)) == 0
    finally:
        db.dispose()


def test_the_openapi_names_the_header_on_both_writes(api: Api) -> None:
    paths = api.client.get("/openapi.json").json()["paths"]
    for path, method in [("/v1/sessions/{session_id}", "put"),
                         ("/v1/sessions/{session_id}/messages", "post")]:  # fmt: skip
        params = {p["name"]: p for p in paths[path][method]["parameters"]}
        assert params["idempotency-key"]["in"] == "header"
        assert "answers the first result again" in params["idempotency-key"]["description"]


# --- concurrent retries ----------------------------------------------------------------------------


def race(n: int, send: Callable[[], httpx.Response]) -> list[httpx.Response]:
    start = threading.Barrier(n)

    def one() -> httpx.Response:
        start.wait()
        return send()

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(lambda _: one(), range(n)))


@pytest.mark.parametrize("n", [2, 6, 12])
def test_concurrent_retries_of_an_append_store_the_turn_once(api: Api, n: int) -> None:
    api.client.put("/v1/sessions/s1", json=snapshot())
    answers = race(n, lambda: api.client.post(
        "/v1/sessions/s1/messages", json=turn(BIG), headers=keyed("same")
    ))  # fmt: skip
    # One request wrote (the others waited on the session's row lock, then found the key).
    assert sorted("idempotent-replayed" in r.headers for r in answers) == [False] + [True] * (n - 1)
    assert len({(r.status_code, r.text, r.headers["etag"]) for r in answers}) == 1
    assert times_stored(api.client, "s1", BIG) == 1
    assert api.client.get("/v1/sessions/s1").json()["version"] == 2
    assert len(api.queued_job_ids()) == 1


@pytest.mark.parametrize("n", [2, 6])
def test_concurrent_retries_of_a_first_put_create_the_session_once(api: Api, n: int) -> None:
    answers = race(n, lambda: api.client.put(
        "/v1/sessions/new", json=snapshot(40), headers=keyed("same")
    ))  # fmt: skip
    assert {r.status_code for r in answers} == {202}
    assert len({r.text for r in answers}) == 1
    info = api.client.get("/v1/sessions/new").json()
    assert info["version"] == 1 and info["message_count"] == 81
    assert len(api.queued_job_ids()) == 1


# --- failures after (and before) the commit --------------------------------------------------------


@pytest.fixture
def api_process_env(
    database_url: str, private_redis: RedisServer, tmp_path: Path
) -> dict[str, str]:
    return stack_env(
        redis_url=private_redis.url, database_url=database_url, var_dir=tmp_path / "var",
        hygiene_threshold=0.85, min_messages=4,
    )  # fmt: skip


@contextmanager
def running_api(env: dict[str, str], log_dir: Path, port: int) -> Iterator[httpx.Client]:
    proc = start_api(env, log_dir, port=port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            yield client
    finally:
        proc.stop()


def test_with_redis_stopped_a_stored_append_answers_its_result_and_the_retry_repeats_it(
    api_process_env: dict[str, str], private_redis: RedisServer, tmp_path: Path
) -> None:
    with running_api(api_process_env, tmp_path, free_port()) as client:
        assert client.put("/v1/sessions/s1", json=snapshot()).status_code == 200
        private_redis.stop()

        first = client.post("/v1/sessions/s1/messages", json=turn(BIG), headers=keyed("k-1"))
        # The turn is stored: a 503 with Retry-After here made gateways store it twice.
        assert first.status_code == 200, first.text
        assert "retry-after" not in first.headers
        hygiene = first.json()["hygiene"]
        assert hygiene["decision"] == "enqueued"
        assert (hygiene["job_status"], hygiene["error_class"]) == ("failed", "broker_unavailable")
        assert "do not send them again" in hygiene["detail"]

        again = client.post("/v1/sessions/s1/messages", json=turn(BIG), headers=keyed("k-1"))
        same_answer(first, again)
        assert times_stored(client, "s1", BIG) == 1
        job = client.get(f"/v1/jobs/{hygiene['job_id']}").json()
        assert (job["status"], job["error_class"]) == ("failed", "broker_unavailable")


def wait_for(check: Callable[[], bool], *, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.02)
    raise AssertionError(f"no {what} after {timeout_s}s")


def turn_committed(conn: Connection, content: str) -> bool:
    """Seen from another connection: the turn's row is committed."""
    try:
        rows = conn.execute(text("SELECT data FROM messages WHERE role = 'user'")).scalars()
        return any(_content(data) == content for data in rows)
    finally:
        conn.rollback()  # a SQLite reader keeps its snapshot until its transaction ends


def _content(data: Any) -> Any:
    if isinstance(data, str):  # SQLite's JSON comes back as text through a raw query
        data = json.loads(data)
    return data.get("content")


def test_an_api_killed_after_its_commit_is_retried_without_storing_twice(
    api_process_env: dict[str, str], private_redis: RedisServer, database_url: str, tmp_path: Path
) -> None:
    """The gateway never got an answer (the process died after the commit): its retry with the
    same key must find the write, not repeat it."""
    port = free_port()
    proc = start_api(api_process_env, tmp_path, port=port)
    base = f"http://127.0.0.1:{port}"
    engine = create_engine(database_url)
    watcher = engine.connect()
    admin = redis.Redis.from_url(private_redis.url)
    try:
        assert httpx.put(f"{base}/v1/sessions/s1", json=snapshot()).status_code == 200
        # Redis answers reads (the cooldown, before the commit) and holds writes (the job's
        # message, after it): the request waits after its commit.
        admin.execute_command("CLIENT", "PAUSE", 60_000, "WRITE")
        outcome: list[object] = []

        def send() -> None:
            try:
                outcome.append(httpx.post(f"{base}/v1/sessions/s1/messages", json=turn(BIG),
                                          headers=keyed("k-1"), timeout=120))  # fmt: skip
            except httpx.TransportError as exc:
                outcome.append(exc)

        sender = threading.Thread(target=send)
        sender.start()
        wait_for(lambda: turn_committed(watcher, BIG), timeout_s=60, what="committed turn")
        proc.kill_hard()
        sender.join(30)
        assert len(outcome) == 1 and isinstance(outcome[0], httpx.TransportError), outcome
    finally:
        admin.execute_command("CLIENT", "UNPAUSE")
        admin.close()
        proc.stop()
        watcher.close()
        engine.dispose()

    restarted = api_process(api_process_env, tmp_path, port=port).start()
    try:
        wait_api_ready(restarted, port)
        again = httpx.post(f"{base}/v1/sessions/s1/messages", json=turn(BIG), headers=keyed("k-1"))
        assert again.status_code == 202, again.text  # as committed: its job is open
        assert again.headers["idempotent-replayed"] == "true"
        job_id = again.json()["hygiene"]["job_id"]
        messages = httpx.get(f"{base}/v1/sessions/s1/messages").json()["messages"]
        assert sum(m.get("content") == BIG for m in messages) == 1
        job = httpx.get(f"{base}/v1/jobs/{job_id}").json()
        assert job["status"] == "queued"  # never sent: the reaper sends it now the broker is back
    finally:
        restarted.stop()


# --- PostgreSQL: a connection terminated while it waits on a lock ---------------------------------


def blocked_by(admin: Connection, holder_pid: int) -> list[int]:
    query = text("SELECT pid FROM pg_stat_activity WHERE :holder = ANY(pg_blocking_pids(pid))")
    return list(admin.execute(query, {"holder": holder_pid}).scalars())


@contextmanager
def terminating_who_waits(url: str, lock_sql: str) -> Iterator[Callable[[float], int]]:
    """Holds the lock ``lock_sql`` takes (a SELECT ... FOR UPDATE once it finds a row: the row
    may not be committed yet when this is called); yields ``cut(timeout_s)``, which waits for a backend to block on that
    lock and terminates it (its pid). The lock is released at the end."""
    engine = create_engine(url)
    try:
        with engine.connect() as holder, engine.connect() as admin:
            admin.execution_options(isolation_level="AUTOCOMMIT")
            holder_pid = holder.execute(text("SELECT pg_backend_pid()")).scalar_one()

            def locked() -> bool:
                result = holder.execute(text(lock_sql))
                if not result.returns_rows or result.first() is not None:
                    return True
                holder.rollback()
                return False

            wait_for(locked, timeout_s=60, what=f"lock ({lock_sql})")

            def cut(timeout_s: float) -> int:
                found: list[int] = []

                def waiting() -> bool:
                    found.extend(blocked_by(admin, holder_pid))
                    return bool(found)

                wait_for(waiting, timeout_s=timeout_s, what="backend waiting on the lock")
                admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": found[0]})
                return found[0]

            yield cut
            holder.rollback()
    finally:
        engine.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_connection_cut_mid_request_is_a_503_only_when_nothing_was_stored(api: Api) -> None:
    """The append's connection dies while it waits on the jobs table: the answer must match what
    is stored (503 only when nothing is), and the retry with the same key stores the turn once."""
    api.client.put("/v1/sessions/s1", json=snapshot())
    answers: list[httpx.Response] = []
    url = api.settings.database_url
    with terminating_who_waits(url, "LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE") as cut:
        sender = threading.Thread(target=lambda: answers.append(api.client.post(
            "/v1/sessions/s1/messages", json=turn("the turn"), headers=keyed("k-1")
        )))  # fmt: skip
        sender.start()
        cut(30)
    sender.join(30)
    first = answers[0]
    stored = times_stored(api.client, "s1", "the turn")
    if first.status_code == 503:
        assert first.headers["retry-after"] and stored == 0, "503 'nothing was stored', but it was"
    else:
        assert first.is_success and stored == 1, first.text
    again = api.client.post("/v1/sessions/s1/messages", json=turn("the turn"), headers=keyed("k-1"))
    assert again.is_success, again.text
    assert times_stored(api.client, "s1", "the turn") == 1


@pytest.fixture
def api_with_private_redis(
    database_url: str, private_redis: RedisServer, tmp_path: Path
) -> Iterator[Api]:
    settings = api_settings(database_url, private_redis.url, tmp_path)
    yield from open_api(settings, private_redis.url)


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_broker_then_database_lost_after_the_commit_still_answers_the_stored_result(
    api_with_private_redis: Api, private_redis: RedisServer
) -> None:
    """After the commit the broker dies, and recording the job's failure loses its connection:
    the write is stored, so the answer is its committed result (not a 503), and so is the retry."""
    api = api_with_private_redis
    assert private_redis.process is not None
    redis_process = private_redis.process
    url = api.settings.database_url
    api.client.put("/v1/sessions/s1", json=snapshot())
    answers: list[httpx.Response] = []
    # Redis answers reads (the cooldown, before the commit) and holds writes: the enqueue
    # hangs after the commit.
    with redis.Redis.from_url(private_redis.url) as admin:
        admin.execute_command("CLIENT", "PAUSE", 60_000, "WRITE")
    sender = threading.Thread(target=lambda: answers.append(api.client.post(
        "/v1/sessions/s1/messages", json=turn(BIG), headers=keyed("k-1")
    )))  # fmt: skip
    sender.start()
    # Taken the moment the job's row is committed, while its publish hangs.
    lock_job = "SELECT id FROM jobs WHERE session_id = 's1' FOR UPDATE"
    with terminating_who_waits(url, lock_job) as cut:
        redis_process.kill()  # a stopped process dies too: the broker is gone
        cut(60)  # the API, marking the job failed, waits on the job row: cut it off
    sender.join(60)
    first = answers[0]
    assert first.status_code == 202, first.text  # as committed: the job is still queued
    assert set(first.json()["hygiene"]) == {"decision", "job_id"}
    again = api.client.post("/v1/sessions/s1/messages", json=turn(BIG), headers=keyed("k-1"))
    same_answer(first, again)
    assert times_stored(api.client, "s1", BIG) == 1
    job = api.client.get(f"/v1/jobs/{first.json()['hygiene']['job_id']}").json()
    assert job["status"] == "queued"  # the reaper sends it once the broker is back
