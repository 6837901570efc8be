"""Concurrent writers: SQLite's BEGIN IMMEDIATE and PostgreSQL's row locks keep counters exact."""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

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


def test_reads_answer_while_writers_wait_on_a_locked_sqlite_file(
    sqlite_template: Path, tmp_path: Path
) -> None:
    # Another process holds the write lock past the busy timeout (a stuck migration, an
    # operator's sqlite3 shell). Writers wait it out and fail; reads must not wait with them.
    path = tmp_path / "locked.db"
    shutil.copyfile(sqlite_template, path)
    db = Database(f"sqlite:///{path}", busy_timeout_s=BUSY_S)
    msgs = make_transcript(1)
    put_snapshot(
        db, session_id="s1", model="gpt-4", context_length=10_000, messages=msgs,
        token_counts=counts(msgs),
    )  # fmt: skip
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("UPDATE sessions SET model = 'held'")
    failures: list[BaseException] = []

    def writer(n: int) -> None:
        message = {"role": "user", "content": f"turn {n}"}
        try:
            append_messages(db, session_id="s1", messages=[message], token_counts=[1])
        except OperationalError as exc:
            failures.append(exc)

    # More writers than the pool has connections (5 + 10 overflow): each holds one while it waits.
    writers = [threading.Thread(target=writer, args=(n,)) for n in range(WAITING_WRITERS)]
    try:
        for t in writers:
            t.start()
        time.sleep(0.5)  # every writer is waiting on the lock or for a connection by now
        started = time.monotonic()
        row = get_session(db, session_id="s1")
        waited_s = time.monotonic() - started
        assert row.model == "gpt-4" and len(active_messages(db, session_id="s1")) == len(msgs)
        assert waited_s < 0.5, f"a read waited {waited_s:.1f}s behind writers"
    finally:
        for t in writers:
            t.join(60)
        holder.rollback()
        holder.close()
        db.dispose()
    assert len(failures) == WAITING_WRITERS
    assert all("database is locked" in str(f) for f in failures)


BUSY_S, WAITING_WRITERS = 2.0, 20


def test_a_writer_queued_behind_this_processs_writer_gives_up_at_the_busy_timeout(
    sqlite_template: Path, tmp_path: Path
) -> None:
    # A process's SQLite writers queue for the write lock among themselves: one that waits
    # behind a writer of its own process fails as it would behind another process's.
    path = tmp_path / "queued.db"
    shutil.copyfile(sqlite_template, path)
    db = Database(f"sqlite:///{path}", busy_timeout_s=0.3)
    msgs = make_transcript(1)
    put_snapshot(
        db, session_id="s1", model="gpt-4", context_length=10_000, messages=msgs,
        token_counts=counts(msgs),
    )  # fmt: skip
    holding, release = threading.Event(), threading.Event()

    def holder() -> None:
        with db.write() as s:
            s.connection()  # BEGIN IMMEDIATE: the database's write lock is taken
            holding.set()
            release.wait(30)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert holding.wait(30)
        with pytest.raises(OperationalError, match="database is locked"):
            append_messages(db, session_id="s1", messages=[{"role": "user", "content": "x"}],
                            token_counts=[1])  # fmt: skip
    finally:
        release.set()
        thread.join(30)
    row = append_messages(db, session_id="s1", messages=[{"role": "user", "content": "y"}],
                          token_counts=[1])  # fmt: skip
    assert row.version == 2  # the refused write stored nothing; the queue is free again
    db.dispose()
