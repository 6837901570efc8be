"""Per-session locks against a real private redis-server."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import pytest
import redis

from worker import keys
from worker.errors import LockBusyError, LockLostError
from worker.locks import acquire, lock_holder, session_lock
from worker.redis_server import RedisServer

pytestmark = pytest.mark.integration


@pytest.fixture
def client(redis_server: RedisServer) -> Iterator[redis.Redis]:
    with redis.Redis.from_url(redis_server.url) as client:
        yield client


@pytest.fixture
def session_id() -> str:
    return f"s-{uuid.uuid4()}"


def test_second_holder_is_refused_and_told_who_holds_it(
    client: redis.Redis, session_id: str
) -> None:
    with session_lock(client, session_id, 5, owner="job-a") as lease:
        with pytest.raises(LockBusyError) as busy:
            acquire(client, session_id, ttl_s=5, owner="job-b")
        assert busy.value.holder == lease.token
        assert lease.token.startswith("job-a@")
    assert lock_holder(client, session_id) is None  # released on exit


def test_lock_is_free_again_after_the_block_even_when_it_raises(
    client: redis.Redis, session_id: str
) -> None:
    with pytest.raises(RuntimeError), session_lock(client, session_id, 5, owner="a"):
        raise RuntimeError("boom")
    acquire(client, session_id, ttl_s=5, owner="b").release()


def test_heartbeat_keeps_a_long_holder_past_its_ttl(client: redis.Redis, session_id: str) -> None:
    with session_lock(client, session_id, 0.6, owner="slow", heartbeat_s=0.15) as lease:
        time.sleep(1.8)  # three TTLs
        lease.ensure_held()
        assert not lease.lost
        with pytest.raises(LockBusyError):
            acquire(client, session_id, ttl_s=1, owner="other")


def test_without_heartbeat_the_lock_expires_and_another_holder_takes_it(
    client: redis.Redis, session_id: str
) -> None:
    lease = acquire(client, session_id, ttl_s=0.3, owner="stalled")
    time.sleep(0.5)
    assert lock_holder(client, session_id) is None
    other = acquire(client, session_id, ttl_s=5, owner="other")
    with pytest.raises(LockLostError):
        lease.ensure_held()
    assert lock_holder(client, session_id) == other.token
    other.release()


def test_a_lock_that_vanished_with_nobody_holding_it_is_taken_again(
    client: redis.Redis, session_id: str
) -> None:
    # Redis wiped (or unreachable past the TTL): nobody else ran the session meanwhile, so the
    # work in hand is still good; the next beat takes the lock back.
    with session_lock(client, session_id, 5, owner="a", heartbeat_s=0.05) as lease:
        client.delete(keys.session_lock(session_id))  # as a wipe would
        time.sleep(0.3)
        assert lock_holder(client, session_id) == lease.token
        assert not lease.lost
        lease.ensure_held()
    assert lock_holder(client, session_id) is None


def test_expired_holder_cannot_extend_or_release_the_new_holders_lock(
    client: redis.Redis, session_id: str
) -> None:
    stale = acquire(client, session_id, ttl_s=0.2, owner="stale")
    time.sleep(0.35)
    fresh = acquire(client, session_id, ttl_s=5, owner="fresh")
    assert stale.extend() is False and stale.lost
    assert stale.release() is False
    assert lock_holder(client, session_id) == fresh.token
    with pytest.raises(LockLostError):
        stale.ensure_held()
    fresh.ensure_held()
    fresh.release()


def test_heartbeat_marks_the_lease_lost_when_the_lock_is_taken_over(
    client: redis.Redis, session_id: str
) -> None:
    with session_lock(client, session_id, 5, owner="a", heartbeat_s=0.05) as lease:
        client.set(keys.session_lock(session_id), "intruder")
        deadline = time.monotonic() + 2
        while not lease.lost and time.monotonic() < deadline:
            time.sleep(0.02)
        assert lease.lost
        with pytest.raises(LockLostError):
            lease.ensure_held()
    assert lock_holder(client, session_id) == "intruder"  # not ours to delete
    client.delete(keys.session_lock(session_id))


def test_only_one_of_many_concurrent_contenders_wins(client: redis.Redis, session_id: str) -> None:
    winners: list[str] = []
    barrier = threading.Barrier(8)

    def contend(i: int) -> None:
        barrier.wait()
        try:
            acquire(client, session_id, ttl_s=5, owner=f"c{i}")
            winners.append(f"c{i}")
        except LockBusyError:
            pass  # the expected outcome for all but one

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(winners) == 1
    client.delete(keys.session_lock(session_id))
