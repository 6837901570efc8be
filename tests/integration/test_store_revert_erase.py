"""Revert, erase and the operators' session list on a real database (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from tests.store_factories import compaction_of, counts, make_transcript
from worker.store.archive import archive_page, search_archive
from worker.store.db import Database
from worker.store.erase import erase_session
from worker.store.errors import (
    JobNotFoundError,
    OpenJobExistsError,
    RevertRefusedError,
    SessionNotFoundError,
    VersionConflictError,
)
from worker.store.idempotency import Scope, StoredAnswer, remember
from worker.store.jobs import claim_job, create_job, finish_job, write_back
from worker.store.models import utcnow
from worker.store.revert import revert_compaction
from worker.store.search_text import parse_query
from worker.store.session_list import SessionFilter, list_sessions
from worker.store.sessions import active_messages, append_messages, get_session, put_snapshot

pytestmark = pytest.mark.integration


def put(db: Database, session_id: str, messages: list[dict[str, Any]], **kw: Any) -> None:
    put_snapshot(
        db,
        session_id=session_id,
        model=kw.pop("model", "gpt-4"),
        context_length=kw.pop("context_length", 100_000),
        messages=messages,
        token_counts=counts(messages),
        **kw,
    )


def compact(db: Database, session_id: str = "s1", keep_last: int = 2, **kw: Any) -> str:
    job = create_job(db, session_id=session_id, trigger="manual", **kw)
    claim = claim_job(db, job_id=job.id)
    assert claim is not None
    result = compaction_of(claim, keep_last=keep_last, summary=f"summary by {job.id}")
    write_back(db, job_id=job.id, attempt=claim.attempt, result=result)
    return job.id


def transcript(db: Database, session_id: str = "s1") -> list[dict[str, Any]]:
    return [m.message for m in active_messages(db, session_id=session_id)]


def say(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


# --- revert ----------------------------------------------------------------------------------


def test_revert_restores_what_the_compaction_replaced_and_keeps_later_turns(db: Database) -> None:
    original = make_transcript(6)
    put(db, "s1", original)
    job = compact(db)
    compacted = transcript(db)
    append_messages(db, session_id="s1", messages=[say("after")], token_counts=[7])
    before = get_session(db, session_id="s1")

    reverted = revert_compaction(db, session_id="s1", job_id=job)

    assert transcript(db) == [*original, say("after")]
    after = get_session(db, session_id="s1")
    assert reverted.version == after.version == before.version + 1
    assert after.rewrite_count == before.rewrite_count + 1
    assert (after.token_total, after.message_count) == (10 * len(original) + 7, len(original) + 1)
    assert after.previous_summary is None and after.compaction_count == 1
    assert (reverted.restored, reverted.archived) == (len(original), len(compacted))
    # The reverted output is archived in turn (by no job, like a snapshot's), and searchable.
    page = archive_page(db, session_id="s1", limit=100)
    assert [m.message for m in page.messages] == compacted
    assert {(m.generation, m.archived_by_job) for m in page.messages} == {(1, None)}
    found = search_archive(db, session_id="s1", query=parse_query(f"summary by {job}"))
    assert [h.generation for h in found.hits] == [1]
    assert search_archive(db, session_id="s1", query=parse_query('"question 2:"')).hits == []


def test_reverts_stack_newest_first(db: Database) -> None:
    original = make_transcript(8)
    put(db, "s1", original)
    first = compact(db)
    after_first = transcript(db)
    second = compact(db, keep_last=1)
    with pytest.raises(RevertRefusedError, match="later compaction"):
        revert_compaction(db, session_id="s1", job_id=first)
    revert_compaction(db, session_id="s1", job_id=second)
    assert transcript(db) == after_first
    revert_compaction(db, session_id="s1", job_id=first)
    assert transcript(db) == original
    with pytest.raises(RevertRefusedError, match="already reverted"):
        revert_compaction(db, session_id="s1", job_id=first)
    third = compact(db)  # compaction goes on from the restored transcript
    assert transcript(db)[1]["content"] == f"[CONTEXT SUMMARY] summary by {third}"
    with db.read() as s:
        generations = {g for (g,) in s.execute(text("SELECT DISTINCT generation FROM messages"))}
    assert generations == {0, 1, 2, 3}  # the third compaction's output is generation 3


def test_revert_refuses_what_it_cannot_undo(db: Database) -> None:
    put(db, "s1", make_transcript(6))
    put(db, "s2", make_transcript(6))
    job = compact(db)
    other = compact(db, "s2")
    with pytest.raises(JobNotFoundError):
        revert_compaction(db, session_id="s1", job_id=other)  # another session's job
    with pytest.raises(JobNotFoundError):
        revert_compaction(db, session_id="s1", job_id="no-such-job")
    with pytest.raises(SessionNotFoundError):
        revert_compaction(db, session_id="ghost", job_id=job)
    version = get_session(db, session_id="s1").version
    with pytest.raises(VersionConflictError) as stale:
        revert_compaction(db, session_id="s1", job_id=job, if_match=version - 1)
    assert stale.value.current_version == version
    open_job = create_job(db, session_id="s1", trigger="hygiene")
    with pytest.raises(OpenJobExistsError) as caught:
        revert_compaction(db, session_id="s1", job_id=job)
    assert caught.value.job_id == open_job.id
    finish_job(db, job_id=open_job.id, attempt=0, status="failed", error="broker down")
    with pytest.raises(RevertRefusedError, match="failed"):
        revert_compaction(db, session_id="s1", job_id=open_job.id)
    put(db, "s1", make_transcript(2))  # a snapshot replaced the compacted transcript
    with pytest.raises(RevertRefusedError, match="snapshot"):
        revert_compaction(db, session_id="s1", job_id=job)
    assert get_session(db, session_id="s1").version == version + 1  # only the PUT changed it


def test_revert_with_the_current_version_in_if_match(db: Database) -> None:
    put(db, "s1", make_transcript(6))
    job = compact(db)
    version = get_session(db, session_id="s1").version
    assert revert_compaction(db, session_id="s1", job_id=job, if_match=version).version == (
        version + 1
    )


def test_revert_waits_for_the_open_job_then_stacks_on_it(db: Database) -> None:
    put(db, "s1", make_transcript(6))
    job = compact(db)
    late = create_job(db, session_id="s1", trigger="manual")
    claim = claim_job(db, job_id=late.id)
    assert claim is not None
    with pytest.raises(OpenJobExistsError):
        revert_compaction(db, session_id="s1", job_id=job)
    row = write_back(db, job_id=late.id, attempt=claim.attempt, result=compaction_of(claim))
    assert row.status == "succeeded"
    with pytest.raises(RevertRefusedError):
        revert_compaction(db, session_id="s1", job_id=job)
    revert_compaction(db, session_id="s1", job_id=late.id)
    revert_compaction(db, session_id="s1", job_id=job)
    assert transcript(db) == make_transcript(6)


# --- erase -----------------------------------------------------------------------------------

ERASED = "erase-me-7Q"
MARKS = ("SECRET-PLAN-a91", "FOCUS-TOPIC-zz8", "ERROR-TEXT-q1", "IDEM-KEY-77", "CALLBACK-h00k")


def every_row(url: str) -> list[tuple[str, str]]:
    """Every row of every table the database has (FTS5 shadow tables included), as text."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            if conn.dialect.name == "sqlite":
                names = conn.exec_driver_sql(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                ).scalars()
                return sorted(
                    (name, repr(tuple(_decoded(v) for v in row)))
                    for name in list(names)
                    for row in conn.exec_driver_sql(f'SELECT * FROM "{name}"')
                )
            names = conn.exec_driver_sql(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            ).scalars()
            return sorted(
                (name, row)
                for name in list(names)
                for (row,) in conn.exec_driver_sql(f'SELECT t::text FROM "{name}" AS t')
            )
    finally:
        engine.dispose()


def _decoded(value: object) -> object:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def plant_everything(db: Database, session_id: str) -> list[str]:
    """A session with every kind of row: messages, archive, search text, jobs with texts,
    a remembered Idempotency-Key answer. Returns its texts (each names the session)."""
    plan, focus, error, key, hook = (f"{mark}-{session_id}" for mark in MARKS)
    messages = [*make_transcript(6), say(f"the plan is {plan}")]
    put(db, session_id, messages, callback_url=f"https://gw.test/{hook}")
    put(db, session_id, [*messages, say("more")])
    compact(db, session_id, focus_topic=focus)
    failed = create_job(db, session_id=session_id, trigger="manual")
    finish_job(db, job_id=failed.id, attempt=0, status="failed", error=error)
    with db.write() as s:
        scope = Scope(session_id, "append", key, "0" * 64)
        remember(s, scope, StoredAnswer(200, {"session_id": session_id}, plan))
    return [plan, focus, error, key, hook]


def test_erase_leaves_nothing_of_the_session_in_any_table(db: Database) -> None:
    texts = plant_everything(db, ERASED)
    kept_texts = plant_everything(db, "kept")
    before = every_row(db.url)
    for planted in [ERASED, *texts]:
        assert any(planted in row for _, row in before), planted
    kept_before = [r for r in before if "kept" in r[1]]

    erase_session(db, session_id=ERASED)

    after = every_row(db.url)
    assert [(t, row) for t, row in after if ERASED in row] == []  # every text names it
    assert [r for r in after if "kept" in r[1]] == kept_before
    with pytest.raises(SessionNotFoundError):
        get_session(db, session_id=ERASED)
    with db.read() as s:
        tables = {t for t, _ in after}
        if "archive_fts" in tables:  # SQLite: the FTS5 index forgot the words as well
            match = f'"{texts[0]}"'
            found = s.execute(text("SELECT rowid FROM archive_fts WHERE archive_fts MATCH :m"),
                              {"m": match}).all()  # fmt: skip
            assert found == []
    hits = search_archive(db, session_id="kept", query=parse_query(kept_texts[0])).hits
    assert hits  # the other session's search index is intact


def test_erase_refuses_an_open_job_and_a_stale_if_match(db: Database) -> None:
    put(db, "s1", make_transcript(3))
    version = get_session(db, session_id="s1").version
    with pytest.raises(VersionConflictError):
        erase_session(db, session_id="s1", if_match=version + 1)
    job = create_job(db, session_id="s1", trigger="manual")
    with pytest.raises(OpenJobExistsError):
        erase_session(db, session_id="s1")
    finish_job(db, job_id=job.id, attempt=0, status="failed")
    erase_session(db, session_id="s1", if_match=version)
    with pytest.raises(SessionNotFoundError):
        erase_session(db, session_id="s1")
    put(db, "s1", make_transcript(1))  # the id is free again: a new session
    assert get_session(db, session_id="s1").version == 1


# --- listing ---------------------------------------------------------------------------------


def test_sessions_page_in_id_order_with_filters(db: Database) -> None:
    for i in range(7):
        put(db, f"s{i}", make_transcript(i + 1), model="gpt-4" if i % 2 else "llama-3")
    put(db, "big", make_transcript(5), context_length=200, prompt_tokens=190)
    compact(db, "s3")
    seen: list[str] = []
    cursor = None
    while True:
        page = list_sessions(db, after_id=cursor, limit=3)
        seen += [row.id for row, _ in page.sessions]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == sorted(["big", *(f"s{i}" for i in range(7))])

    def ids(**only: Any) -> list[str]:
        return [row.id for row, _ in list_sessions(db, only=SessionFilter(**only)).sessions]

    assert ids(model="llama-3") == ["s0", "s2", "s4", "s6"]
    assert ids(min_compactions=1) == ["s3"]
    assert ids(min_utilization=0.9) == ["big"]  # the gateway's prompt_tokens: 190 of 200
    assert ids(idle_since=utcnow() - timedelta(hours=1)) == []
    assert len(ids(idle_since=utcnow())) == 8
    job = create_job(db, session_id="s1", trigger="manual")
    page = list_sessions(db, only=SessionFilter(model="gpt-4"))
    assert [(row.id, open_id) for row, open_id in page.sessions] == [
        ("big", None), ("s1", job.id), ("s3", None), ("s5", None),
    ]  # fmt: skip
