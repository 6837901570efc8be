"""The archive on a real database (SQLite and PostgreSQL): search, pages, the messages around
a hit, and the search index kept in step with every path that archives or restores."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import func, select, text

from tests.store_factories import compaction_of, counts, make_transcript
from worker.store.archive import (
    ArchiveFilter,
    archive_page,
    archived_around,
    search_archive,
)
from worker.store.db import Database
from worker.store.errors import ArchivedMessageNotFoundError, SessionNotFoundError
from worker.store.jobs import claim_job, create_job, write_back
from worker.store.models import ArchiveTextRow, MessageRow
from worker.store.revert import revert_compaction
from worker.store.search_text import HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN, parse_query
from worker.store.sessions import append_messages, put_snapshot

pytestmark = pytest.mark.integration

TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/srv/app/worker/tasks.py", line 42, in run\n'
    "    job = jobs[job_id]\n"
    "KeyError: 'job-7f3a9c21'\n"
)


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


# A developer's session: commands, a traceback inside a JSON tool result, ids, and turns in
# Russian, Japanese and German.
DEV_SESSION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "The build fails on CI, see the log"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("c1", "terminal", command="pytest tests/unit -x -q --maxfail=1")],
    },
    {
        "role": "tool",
        "tool_call_id": "c1",
        "content": json.dumps({"output": TRACEBACK, "exit_code": 1}),
    },
    {"role": "assistant", "content": "The id job-7f3a9c21 is missing: `KeyError: 'job-7f3a9c21'`."},
    {"role": "user", "content": "Почему упала сборка? Проверь конфигурацию базы данных."},
    {"role": "assistant", "content": "Смотрю."},
    {"role": "user", "content": [{"type": "text", "text": "データベースの設定を確認してください"}]},
    {
        "role": "assistant",
        "content": "Reading the config.",
        "tool_calls": [call("c2", "read_file", path="/etc/nginx/conf.d/default.conf")],
    },
    {"role": "tool", "tool_call_id": "c2", "content": "server { listen 80; }"},
    {
        "role": "user",
        "content": "Die Größe der Datei überschreitet das Limit; Rabatt 100% für user_42",
    },
    {"role": "assistant", "content": "Noted."},
]


def put(db: Database, session_id: str, messages: list[dict[str, Any]]) -> None:
    put_snapshot(
        db,
        session_id=session_id,
        model="gpt-4",
        context_length=100_000,
        messages=messages,
        token_counts=counts(messages),
    )


def archived_dev_session(db: Database, session_id: str = "dev") -> None:
    """DEV_SESSION, archived by a second snapshot."""
    put(db, session_id, DEV_SESSION)
    put(db, session_id, [{"role": "user", "content": "start over"}])


def hits(db: Database, q: str, session_id: str = "dev", **kw: Any) -> list[tuple[int, str]]:
    page = search_archive(db, session_id=session_id, query=parse_query(q), **kw)
    return [(h.seq, h.role) for h in page.hits]


def compact(db: Database, session_id: str, keep_last: int = 2) -> str:
    job = create_job(db, session_id=session_id, trigger="manual")
    claim = claim_job(db, job_id=job.id)
    assert claim is not None
    write_back(
        db, job_id=job.id, attempt=claim.attempt, result=compaction_of(claim, keep_last=keep_last)
    )
    return job.id


def assert_index_in_step(db: Database) -> None:
    """archive_text has a row for exactly the archived messages, each distinct text of a
    session held by one of them; SQLite's FTS5 agrees with it."""
    with db.read() as s:
        archived = set(s.scalars(select(MessageRow.id).where(MessageRow.active.is_(False))))
        indexed = set(s.scalars(select(ArchiveTextRow.message_id)))
        assert indexed == archived
        rows = s.execute(
            select(ArchiveTextRow.session_id, ArchiveTextRow.digest, ArchiveTextRow.body)
        ).all()
        texts = {(sid, digest) for sid, digest, _ in rows}
        holders = [(sid, digest) for sid, digest, body in rows if body is not None]
        assert sorted(holders) == sorted(texts)  # one holder per text
        if db.dialect == "sqlite":
            s.execute(
                text("INSERT INTO archive_fts(archive_fts, rank) VALUES ('integrity-check', 1)")
            )


# --- search ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ("/srv/app/worker/tasks.py", [(4, "tool")]),  # a path, inside a JSON tool result
        ('File "/srv/app/worker/tasks.py", line 42, in run', [(4, "tool")]),  # as printed
        ("KeyError: 'job-7f3a9c21'", [(5, "assistant"), (4, "tool")]),  # an error line
        ("job-7f3a9c21", [(5, "assistant"), (4, "tool")]),  # an id
        ("pytest tests/unit -x -q --maxfail=1", [(3, "assistant")]),  # a command (arguments)
        ("/etc/nginx/conf.d/default.conf", [(9, "assistant")]),
        ("listen 80;", [(10, "tool")]),
        ("сборка", [(6, "user")]),  # a word inside Russian text
        ("СБОРКА базы", [(6, "user")]),  # any case
        ("データベース", [(8, "user")]),  # Japanese, no spaces between words
        ("größe ÜBERSCHREITET", [(11, "user")]),
        ("100%", [(11, "user")]),  # LIKE's wildcards are plain characters
        ("user_42", [(11, "user")]),
        ("tasks.pyc", []),
        ("1000", []),
        ("userX42", []),
    ],
)
def test_search_finds_what_a_developer_types(
    db: Database, q: str, expected: list[tuple[int, str]]
) -> None:
    archived_dev_session(db)
    assert hits(db, q) == expected


def test_short_terms_are_matched_too(db: Database) -> None:
    archived_dev_session(db)
    assert hits(db, "設定") == [(8, "user")]  # a two-character word: no trigram to look up
    assert hits(db, "-x --maxfail=1") == [(3, "assistant")]  # a short term narrows a long one
    assert hits(db, "80 -q") == []


def test_a_hit_names_its_tool_and_marks_the_match(db: Database) -> None:
    archived_dev_session(db)
    page = search_archive(db, session_id="dev", query=parse_query("KeyError"))
    tool_hit = next(h for h in page.hits if h.role == "tool")
    assert (tool_hit.tool_name, tool_hit.generation, tool_hit.archived_by_job) == (
        "terminal", 0, None,
    )  # fmt: skip
    assert f"{HIGHLIGHT_OPEN}KeyError{HIGHLIGHT_CLOSE}: 'job-7f3a9c21'" in tool_hit.snippet
    call_hit = search_archive(db, session_id="dev", query=parse_query("maxfail")).hits[0]
    assert call_hit.tool_name == "terminal"


def test_search_stays_inside_its_session(db: Database) -> None:
    archived_dev_session(db, "dev")
    archived_dev_session(db, "other")
    put(db, "active-only", DEV_SESSION)  # never archived: nothing to find
    assert hits(db, "job-7f3a9c21", "dev") == [(5, "assistant"), (4, "tool")]
    assert hits(db, "job-7f3a9c21", "active-only") == []
    with pytest.raises(SessionNotFoundError):
        hits(db, "job", "ghost")


def test_search_pages_newest_first_with_a_cursor(db: Database) -> None:
    put(db, "s1", [{"role": "user", "content": f"deploy step {i} failed"} for i in range(25)])
    put(db, "s1", [{"role": "user", "content": "fresh"}])
    seen: list[int] = []
    cursor = None
    while True:
        page = search_archive(
            db, session_id="s1", query=parse_query("step failed"), limit=10, before_seq=cursor
        )
        seen += [h.seq for h in page.hits]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == list(range(25, 0, -1))


def test_a_search_of_short_terms_scans_a_bounded_stretch_then_hands_back_a_cursor(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from worker.store import archive

    monkeypatch.setattr(archive, "MAX_SCANNED", 40)  # the bound, small enough to reach here
    monkeypatch.setattr(archive, "_BATCH", 20)
    put(db, "s1", [{"role": "user", "content": "needle 設定"}] + [
        {"role": "user", "content": f"hay {i}"} for i in range(100)
    ])  # fmt: skip
    put(db, "s1", [{"role": "user", "content": "fresh"}])
    page = search_archive(db, session_id="s1", query=parse_query("設定"))
    assert page.hits == [] and page.next_cursor == 62  # 40 scanned: seq 101 down to 62
    while page.next_cursor is not None and not page.hits:
        page = search_archive(
            db, session_id="s1", query=parse_query("設定"), before_seq=page.next_cursor
        )
    assert [h.seq for h in page.hits] == [1]


def test_hits_beyond_the_newest_stretch_are_found_in_order(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from worker.store import archive

    monkeypatch.setattr(archive, "RECENT_WINDOW", 4)  # PostgreSQL reads 4 in order, then the index
    texts = [
        f"line {i}: " + ("OperationalError: locked" if i % 7 == 0 else "fine") for i in range(40)
    ]
    put(db, "s1", [{"role": "user", "content": t} for t in texts])
    put(db, "s1", [{"role": "user", "content": "fresh"}])
    expected = [i + 1 for i in range(39, -1, -1) if i % 7 == 0]  # seqs, newest first
    seen: list[int] = []
    cursor = None
    while True:
        page = search_archive(
            db, session_id="s1", query=parse_query("operationalerror: LOCKED"), limit=2,
            before_seq=cursor,
        )  # fmt: skip
        seen += [h.seq for h in page.hits]
        if (cursor := page.next_cursor) is None:
            break
    assert seen == expected
    rare = search_archive(db, session_id="s1", query=parse_query('"line 0:"'))
    assert [h.seq for h in rare.hits] == [1]


def test_search_filters_by_generation_and_job(db: Database) -> None:
    put(db, "s1", make_transcript(6))
    first = compact(db, "s1")
    second = compact(db, "s1", keep_last=1)
    everything = search_archive(db, session_id="s1", query=parse_query("word3"), limit=100)
    assert {h.archived_by_job for h in everything.hits} == {first}  # its copies hold no text
    only_second = search_archive(
        db, session_id="s1", query=parse_query("word3"), only=ArchiveFilter(job_id=second)
    )
    assert only_second.hits == []  # a filter applies to the copy that holds the text
    summary = search_archive(
        db, session_id="s1", query=parse_query("summarized"), only=ArchiveFilter(generation=1)
    )
    assert [(h.generation, h.archived_by_job) for h in summary.hits] == [(1, second)]


# --- pages -----------------------------------------------------------------------------------


def test_pages_run_oldest_first_and_filter(db: Database) -> None:
    original = make_transcript(6)
    put(db, "s1", original)
    job = compact(db, "s1")
    page = archive_page(db, session_id="s1", limit=5)
    assert [m.message for m in page.messages] == original[:5] and page.next_cursor == 5
    rest = archive_page(db, session_id="s1", after_seq=5, limit=100)
    assert [m.message for m in rest.messages] == original[5:] and rest.next_cursor is None
    compact(db, "s1", keep_last=1)
    by_job = archive_page(db, session_id="s1", limit=100, only=ArchiveFilter(job_id=job))
    assert [m.message for m in by_job.messages] == original
    gen1 = archive_page(db, session_id="s1", limit=100, only=ArchiveFilter(generation=1))
    assert gen1.messages and {m.generation for m in gen1.messages} == {1}


def test_pages_stay_stable_while_a_compaction_archives_more(db: Database) -> None:
    put(db, "s1", make_transcript(10))  # seqs 1..21
    put(db, "s1", make_transcript(10))  # archives 1..21; active 22..42
    first_run = {m.seq: m.message for m in archive_page(db, session_id="s1", limit=1000).messages}
    job = create_job(db, session_id="s1", trigger="manual")
    claim = claim_job(db, job_id=job.id)
    assert claim is not None
    seen: list[int] = []
    page = archive_page(db, session_id="s1", limit=7)
    seen += [m.seq for m in page.messages]
    # The compaction lands between two pages; the gateway appends meanwhile.
    append_messages(
        db, session_id="s1", messages=[{"role": "user", "content": "x"}], token_counts=[1]
    )
    write_back(db, job_id=job.id, attempt=claim.attempt, result=compaction_of(claim))
    while page.next_cursor is not None:
        page = archive_page(db, session_id="s1", after_seq=page.next_cursor, limit=7)
        seen += [m.seq for m in page.messages]
    assert len(seen) == len(set(seen)) and seen == sorted(seen)
    assert set(first_run) <= set(seen)  # nothing archived before the reading was skipped
    assert set(seen) - set(first_run) == set(range(22, 43))  # and the job's batch follows


def test_the_messages_around_a_hit_come_from_its_own_batch(db: Database) -> None:
    archived_dev_session(db)
    around = archived_around(db, session_id="dev", seq=4, before=1, after=1)
    assert [m.seq for m in around] == [3, 4, 5]
    assert around[1].message == DEV_SESSION[3]  # the original message, verbatim
    assert [m.seq for m in archived_around(db, session_id="dev", seq=1, before=3, after=0)] == [1]
    put(db, "dev", [{"role": "user", "content": "again"}])  # archives seq 13 in a batch of its own
    assert [m.seq for m in archived_around(db, session_id="dev", seq=13, before=5, after=5)] == [13]
    with pytest.raises(ArchivedMessageNotFoundError):
        archived_around(db, session_id="dev", seq=14)  # active, not archived


# --- the index follows every write -----------------------------------------------------------


def test_a_text_archived_again_is_indexed_and_found_once(db: Database) -> None:
    turns: list[dict[str, Any]] = [{"role": "user", "content": "deploy failed: exit 137"}]
    for i in range(5):  # a gateway that PUTs its whole transcript every turn
        turns.append({"role": "assistant" if i % 2 == 0 else "user", "content": f"turn {i}"})
        put(db, "s1", turns)
    # Four PUTs archived 2 + 3 + 4 + 5 = 14 messages: 5 distinct texts.
    with db.read() as s:
        held = s.scalars(
            select(ArchiveTextRow.seq)
            .where(ArchiveTextRow.body.is_not(None))
            .order_by(ArchiveTextRow.seq)
        )
        assert list(held) == [1, 2, 5, 9, 14]
        assert s.scalar(select(func.count()).where(ArchiveTextRow.body.is_(None))) == 9
    assert hits(db, "exit 137", "s1") == [(1, "user")]  # the first archived copy, once
    assert hits(db, "turn 1", "s1") == [(5, "user")]
    assert_index_in_step(db)


def test_a_restored_holder_hands_its_text_to_an_archived_copy(db: Database) -> None:
    original = make_transcript(6)  # seqs 1..13
    put(db, "s1", original)
    first = compact(db, "s1")  # archives 1..13; its output (14..17) copies 1, 12 and 13
    second = compact(db, "s1", keep_last=1)  # archives 14..17: copies of held texts
    assert hits(db, '"answer 5:"', "s1") == [(13, "assistant")]
    revert_compaction(db, session_id="s1", job_id=second)
    revert_compaction(db, session_id="s1", job_id=first)  # 1..13 active again; 14..17 archived
    assert_index_in_step(db)
    assert hits(db, '"answer 5:"', "s1") == [(17, "assistant")]  # the copy took the text over


def test_the_index_follows_snapshots_and_compactions(db: Database) -> None:
    put(db, "s1", make_transcript(5, tools=True))
    assert_index_in_step(db)
    put(db, "s1", make_transcript(6, tools=True))
    compact(db, "s1")
    append_messages(
        db, session_id="s1", messages=[{"role": "user", "content": "y"}], token_counts=[1]
    )
    compact(db, "s1", keep_last=1)
    assert_index_in_step(db)
    with db.read() as s:
        names = set(s.scalars(select(ArchiveTextRow.tool_name).where(ArchiveTextRow.seq > 0)))
    assert "ls" in names  # a tool result names the tool its call ran
