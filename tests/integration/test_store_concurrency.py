"""Concurrent writers: SQLite's BEGIN IMMEDIATE and PostgreSQL's row locks keep counters exact."""

from __future__ import annotations

import threading

import pytest

from tests.store_factories import counts, make_transcript
from worker.store.db import Database
from worker.store.sessions import active_messages, append_messages, get_session, put_snapshot

pytestmark = pytest.mark.integration

WRITERS, APPENDS = 4, 25


def test_concurrent_writers_never_hit_database_is_locked(database_url: str) -> None:
    setup = Database(database_url)
    msgs = make_transcript(1)
    put_snapshot(
        setup,
        session_id="s1",
        model="gpt-4",
        context_length=10_000,
        messages=msgs,
        token_counts=counts(msgs),
    )
    start, errors = threading.Barrier(WRITERS), []

    def writer(n: int) -> None:
        own = Database(database_url)  # its own engine and connections, like another process
        try:
            start.wait()
            for i in range(APPENDS):
                # Each append reads the session row, then writes: with a deferred BEGIN two
                # writers would both read, and one would fail to upgrade to a write lock.
                message = {"role": "user", "content": f"writer {n} turn {i}"}
                append_messages(own, session_id="s1", messages=[message], token_counts=[1])
        except BaseException as exc:  # collected and asserted on below
            errors.append(exc)
        finally:
            own.dispose()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    row = get_session(setup, session_id="s1")
    total = WRITERS * APPENDS
    assert row.version == 1 + total
    assert row.message_count == len(msgs) + total and row.token_total == 30 + total
    seqs = [m.seq for m in active_messages(setup, session_id="s1")]
    assert seqs == list(range(1, len(msgs) + total + 1))  # no seq lost or taken twice
    setup.dispose()
