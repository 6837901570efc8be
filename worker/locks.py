"""Per-session Redis locks: one holder at a time, a TTL, a heartbeat, compare-and-delete release.

The lock's value is a token unique to one acquisition (job id, host, pid, nonce), so a holder
can only extend or release its own lease: a worker that stalled past the TTL finds another
token and learns it lost the lock instead of deleting someone else's. The TTL bounds how long
a crashed worker blocks its session; while a job runs, a heartbeat thread keeps extending it.

A lease is lost only to another holder. A lock that vanished with nobody else holding it (Redis
was wiped, or it stayed unreachable past the TTL) is taken again on the next beat: no one else
can have run the session meanwhile without holding it, so the work in hand is still good.
A lock is only half the fence: the write-back also refuses when the session was rewritten
since the job's snapshot or another attempt claimed the job, so a worker whose lease expired
cannot overwrite newer state.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import redis

from worker import keys
from worker.errors import LockBusyError, LockLostError

log = logging.getLogger(__name__)

# Both scripts act only when the key holds our token (or, to extend, holds nothing): atomic.
_EXTEND_SCRIPT = """
local holder = redis.call('get', KEYS[1])
if holder == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
if not holder then
  redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""
_RELEASE_SCRIPT = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


def lock_token(owner: str) -> str:
    """A value unique to one acquisition that still tells ops who holds the lock."""
    return f"{owner}@{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def lock_holder(client: redis.Redis, session_id: str) -> str | None:
    """The token of whoever holds the session's lock, if anyone."""
    raw = client.get(keys.session_lock(session_id))
    return raw.decode() if isinstance(raw, bytes) else raw


@dataclass
class Lease:
    """One acquisition of a session's lock."""

    client: redis.Redis
    session_id: str
    token: str
    ttl_s: float
    _lost: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def key(self) -> str:
        return keys.session_lock(self.session_id)

    @property
    def lost(self) -> bool:
        """True once the heartbeat found the lease gone (it never comes back)."""
        return self._lost.is_set()

    def mark_lost(self) -> None:
        self._lost.set()

    def extend(self) -> bool:
        """Reset the TTL if we hold the lock, or take it again if nobody does; False (and
        lost) if someone else holds it."""
        ok = bool(self.client.eval(_EXTEND_SCRIPT, 1, self.key, self.token, int(self.ttl_s * 1000)))
        if not ok:
            self.mark_lost()
        return ok

    def release(self) -> bool:
        """Delete the lock if it is still ours; someone else's lock is left alone."""
        return bool(self.client.eval(_RELEASE_SCRIPT, 1, self.key, self.token))

    def ensure_held(self) -> None:
        """Raise ``LockLostError`` unless the lock is ours right now (checked in Redis)."""
        if self.lost or not self.extend():
            raise LockLostError(self.session_id)


def acquire(client: redis.Redis, session_id: str, *, ttl_s: float, owner: str) -> Lease:
    """Take the session's lock or raise ``LockBusyError`` naming the current holder."""
    token = lock_token(owner)
    if client.set(keys.session_lock(session_id), token, nx=True, px=int(ttl_s * 1000)):
        return Lease(client=client, session_id=session_id, token=token, ttl_s=ttl_s)
    raise LockBusyError(session_id, lock_holder(client, session_id))


class Heartbeat(threading.Thread):
    """Extends a lease every ``interval_s`` until stopped or the lease is found lost."""

    def __init__(self, lease: Lease, *, interval_s: float) -> None:
        super().__init__(name=f"lock-heartbeat-{lease.session_id}", daemon=True)
        self.lease = lease
        self.interval_s = interval_s
        self._stop_event = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval_s):
            try:
                if not self.lease.extend():
                    log.warning("lock on session %s was lost", self.lease.session_id)
                    return
            except redis.RedisError as exc:
                # Redis is away: nobody can take the lock meanwhile; the next beat tells.
                log.info("lock heartbeat failed, will retry: %s", exc)


@contextmanager
def session_lock(
    client: redis.Redis,
    session_id: str,
    ttl_s: float,
    *,
    owner: str,
    heartbeat_s: float | None = None,
) -> Iterator[Lease]:
    """Hold the session's lock for the block, extended by a heartbeat; release it after.

    Args:
        heartbeat_s: seconds between extensions; a third of the TTL by default, so two
            missed beats still leave the lease alive.
    """
    with held(acquire(client, session_id, ttl_s=ttl_s, owner=owner), heartbeat_s) as lease:
        yield lease


@contextmanager
def held(lease: Lease, heartbeat_s: float | None = None) -> Iterator[Lease]:
    """Keep an acquired lease for the block (see ``session_lock``); release it after."""
    beat = Heartbeat(lease, interval_s=heartbeat_s or lease.ttl_s / 3)
    beat.start()
    try:
        yield lease
    finally:
        beat.stop()
        beat.join()
        _release_quietly(lease)


def _release_quietly(lease: Lease) -> None:
    try:
        lease.release()
    except redis.RedisError as exc:
        # The TTL frees it anyway; failing the job over a release would be worse.
        log.warning("could not release the lock on %s (it expires by TTL): %s", lease.key, exc)
