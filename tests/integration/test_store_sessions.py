"""Sessions and messages on a real database (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.store_factories import counts, make_transcript
from worker.store.db import Database
from worker.store.errors import SessionNotFoundError, VersionConflictError
from worker.store.models import SessionRow
from worker.store.sessions import (
    active_messages,
    append_messages,
    archived_messages,
    callback_url,
    effective_tokens,
    get_session,
    put_snapshot,
)

pytestmark = pytest.mark.integration


def put(db: Database, session_id: str = "s1", turns: int = 3, **kw: Any) -> SessionRow:
    msgs = make_transcript(turns)
    return put_snapshot(
        db,
        session_id=session_id,
        model="gpt-4",
        context_length=8000,
        messages=msgs,
        token_counts=counts(msgs),
        **kw,
    )


def test_first_snapshot_creates_the_session(db: Database) -> None:
    row = put(db, turns=3, callback_url="http://gw.local/done")
    assert (row.version, row.rewrite_count, row.message_count, row.token_total) == (1, 0, 7, 70)
    stored = get_session(db, session_id="s1")
    assert stored.model == "gpt-4" and stored.callback_url == "http://gw.local/done"
    assert stored.created_at.tzinfo is not None
    assert callback_url(db, session_id="s1") == "http://gw.local/done"
    assert [m.message for m in active_messages(db, session_id="s1")] == make_transcript(3)
    assert [m.seq for m in active_messages(db, session_id="s1")] == list(range(1, 8))


def test_a_new_snapshot_archives_the_old_one_and_deletes_nothing(db: Database) -> None:
    put(db, turns=3)
    replacement = [{"role": "system", "content": "fresh"}, {"role": "user", "content": "hi"}]
    row = put_snapshot(
        db,
        session_id="s1",
        model="gpt-4o",
        context_length=16000,
        messages=replacement,
        token_counts=[3, 4],
    )
    assert (row.version, row.rewrite_count, row.message_count, row.token_total) == (2, 1, 2, 7)
    assert row.model == "gpt-4o" and row.context_length == 16000
    assert [m.message for m in active_messages(db, session_id="s1")] == replacement
    archived = archived_messages(db, session_id="s1")
    assert [m.message for m in archived] == make_transcript(3)
    assert all(m.generation == 0 and m.archived_at is not None for m in archived)
    assert all(m.archived_by_job is None for m in archived)  # replaced by the gateway, not a job


def test_callback_url_without_one_and_of_an_unknown_session(db: Database) -> None:
    put(db, session_id="plain")
    assert callback_url(db, session_id="plain") is None
    with pytest.raises(SessionNotFoundError):
        callback_url(db, session_id="nobody")


def test_append_bumps_version_but_not_the_rewrite_counter(db: Database) -> None:
    put(db, turns=1)
    more = [{"role": "user", "content": "and then?"}, {"role": "assistant", "content": "this"}]
    row = append_messages(db, session_id="s1", messages=more, token_counts=[6, 4])
    assert (row.version, row.rewrite_count, row.message_count, row.token_total) == (2, 0, 5, 40)
    assert [m.message for m in active_messages(db, session_id="s1")][-2:] == more
    assert active_messages(db, session_id="s1", upto_seq=3)[-1].seq == 3


def test_append_to_an_unknown_session_is_refused(db: Database) -> None:
    with pytest.raises(SessionNotFoundError):
        append_messages(
            db, session_id="nope", messages=[{"role": "user", "content": "x"}], token_counts=[1]
        )
    with pytest.raises(SessionNotFoundError):
        get_session(db, session_id="nope")
    with pytest.raises(SessionNotFoundError):
        active_messages(db, session_id="nope")


def test_stale_if_match_is_refused_with_the_current_version(db: Database) -> None:
    put(db)
    append_messages(
        db, session_id="s1", messages=[{"role": "user", "content": "x"}], token_counts=[1]
    )
    with pytest.raises(VersionConflictError) as caught:
        append_messages(
            db,
            session_id="s1",
            messages=[{"role": "user", "content": "y"}],
            token_counts=[1],
            if_match=1,
        )
    assert caught.value.current_version == 2
    with pytest.raises(VersionConflictError):
        put(db, if_match=1)
    assert get_session(db, session_id="s1").version == 2  # nothing changed
    assert put(db, if_match=2).version == 3


def test_if_match_on_a_session_that_does_not_exist(db: Database) -> None:
    with pytest.raises(VersionConflictError) as caught:
        put(db, session_id="new", if_match=1)
    assert caught.value.current_version is None
    with pytest.raises(SessionNotFoundError):
        get_session(db, session_id="new")


def test_reported_prompt_tokens_describe_only_their_version(db: Database) -> None:
    row = put(db, turns=1, prompt_tokens=1234)
    assert effective_tokens(row) == 1234
    row = append_messages(
        db, session_id="s1", messages=[{"role": "user", "content": "x"}], token_counts=[5]
    )
    assert effective_tokens(row) == row.token_total == 35
    row = append_messages(
        db,
        session_id="s1",
        messages=[{"role": "user", "content": "y"}],
        token_counts=[5],
        prompt_tokens=99,
    )
    assert effective_tokens(row) == 99


def test_token_counts_must_match_the_messages(db: Database) -> None:
    with pytest.raises(ValueError, match="token counts"):
        put_snapshot(
            db,
            session_id="s1",
            model="m",
            context_length=10,
            messages=make_transcript(1),
            token_counts=[1],
        )
