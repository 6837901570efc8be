"""The claim reads the transcript outside the write transaction, and a write that lands between
its read and its UPDATE is neither lost nor compacted from a stale snapshot.

Statements are watched with SQLAlchemy's engine events (every engine of the process, for the
test's length), and the gateway's write runs on engines of its own, as another process would.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import Engine, event, select

from tests.store_factories import compaction_of, counts, make_transcript
from worker.compressor.messages import to_wire_list
from worker.store.archive_index import SearchText, search_texts
from worker.store.db import Database
from worker.store.jobs import JobClaim, claim_job, create_job, get_job, write_back
from worker.store.models import ArchiveTextRow
from worker.store.sessions import active_messages, append_messages, get_session, put_snapshot

pytestmark = pytest.mark.integration

# Long enough for any write that does not wait on the claim; one that does waits for the
# claim to end, and the claim waits here for it: the claim held its lock while reading.
WRITE_WAIT_S = 10.0


def seeded(db: Database, turns: int = 3) -> tuple[list[dict[str, Any]], str]:
    msgs = make_transcript(turns)
    put_snapshot(
        db, session_id="s1", model="gpt-4", context_length=1000, messages=msgs,
        token_counts=counts(msgs),
    )  # fmt: skip
    return msgs, create_job(db, session_id="s1", trigger="hygiene").id


def reads_messages(statement: str) -> bool:
    return statement.lstrip().upper().startswith("SELECT") and "FROM messages" in statement


class Transactions:
    """The statements of every transaction on any engine, grouped by connection and BEGIN."""

    def __init__(self) -> None:
        self.open: dict[int, list[str]] = {}
        self.ended: list[list[str]] = []

    def begin(self, conn: Any) -> None:
        self.open[id(conn)] = []

    def statement(self, conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        self.open.setdefault(id(conn), []).append(statement)

    def end(self, conn: Any) -> None:
        self.ended.append(self.open.pop(id(conn), []))


@contextmanager
def listening(*hooks: tuple[str, Callable[..., None]]) -> Iterator[None]:
    for name, fn in hooks:
        event.listen(Engine, name, fn)
    try:
        yield
    finally:
        for name, fn in hooks:
            event.remove(Engine, name, fn)


@contextmanager
def after_the_transcript_read(write: Callable[[], object]) -> Iterator[dict[str, Any]]:
    """Runs ``write`` (in a thread, on its own engine) right after the claim's first read of
    the transcript, and waits up to WRITE_WAIT_S for it; the box says how it went."""
    box: dict[str, Any] = {}
    claimer = threading.current_thread()

    def run() -> None:
        try:
            box["result"] = write()
        except BaseException as exc:  # handed to the test, which asserts on it
            box["error"] = exc

    def hook(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "thread" in box or threading.current_thread() is not claimer:
            return
        if reads_messages(statement):
            box["thread"] = threading.Thread(target=run)
            box["thread"].start()
            box["thread"].join(WRITE_WAIT_S)
            box["done_during_claim"] = not box["thread"].is_alive()

    with listening(("after_cursor_execute", hook)):
        try:
            yield box
        finally:
            if "thread" in box:
                box["thread"].join(60)


def test_the_claims_write_transaction_does_not_read_the_transcript(db: Database) -> None:
    _, job_id = seeded(db)
    seen = Transactions()
    with listening(("begin", seen.begin), ("before_cursor_execute", seen.statement),
                   ("commit", seen.end), ("rollback", seen.end)):  # fmt: skip
        claim = claim_job(db, job_id=job_id, worker="w1")
    assert claim is not None
    claiming = [t for t in seen.ended if any(s.startswith("UPDATE jobs") for s in t)]
    reading = [t for t in seen.ended if any(reads_messages(s) for s in t)]
    assert len(claiming) == 1 and reading
    assert not any(reads_messages(s) for s in claiming[0]), claiming[0]


def test_an_append_between_the_claims_read_and_its_update_survives_the_write_back(
    db: Database, database_url: str
) -> None:
    msgs, job_id = seeded(db)
    late = {"role": "user", "content": "a turn sent while the job was being claimed"}
    gateway = Database(database_url)

    def append() -> object:
        return append_messages(gateway, session_id="s1", messages=[late], token_counts=[7])

    try:
        with after_the_transcript_read(append) as box:
            claim = claim_job(db, job_id=job_id, worker="w1")
    finally:
        gateway.dispose()
    assert box.get("done_during_claim"), "the append waited for the claim's transaction"
    assert "error" not in box, box.get("error")
    assert claim is not None
    assert list(claim.messages) == msgs and claim.upto_seq == len(msgs)  # not in the snapshot

    result = compaction_of(claim, keep_last=2)
    assert write_back(db, job_id=job_id, attempt=1, result=result).status == "succeeded"
    active = [m.message for m in active_messages(db, session_id="s1")]
    assert active == [*to_wire_list(result.messages), late]  # kept, after the compacted part
    assert get_session(db, session_id="s1").token_total == sum(result.token_counts) + 7


def test_a_snapshot_put_between_the_claims_read_and_its_update_is_claimed_afresh(
    db: Database, database_url: str
) -> None:
    _, job_id = seeded(db)
    replacement = make_transcript(2, words=5)
    gateway = Database(database_url)

    def put() -> object:
        return put_snapshot(
            gateway, session_id="s1", model="gpt-4", context_length=1000,
            messages=replacement, token_counts=counts(replacement),
        )  # fmt: skip

    try:
        with after_the_transcript_read(put) as box:
            claim = claim_job(db, job_id=job_id, worker="w1")
    finally:
        gateway.dispose()
    assert box.get("done_during_claim"), "the PUT waited for the claim's transaction"
    assert "error" not in box, box.get("error")
    assert claim is not None
    # The snapshot read before the PUT was not claimed: the claim read the new transcript.
    assert list(claim.messages) == replacement and claim.snapshot_rewrite_count == 1
    assert claim.attempt == 1 and get_job(db, job_id=job_id).attempt == 1

    result = compaction_of(claim, keep_last=2)
    assert write_back(db, job_id=job_id, attempt=1, result=result).status == "succeeded"
    active = [m.message for m in active_messages(db, session_id="s1")]
    assert active == to_wire_list(result.messages)


def test_a_claim_that_lost_a_race_for_the_attempt_reads_again(db: Database) -> None:
    # Two deliveries of one job claim it at once (a redelivery while the first still runs):
    # each claim is a distinct attempt, and the later one fences the earlier one out.
    _, job_id = seeded(db)
    first: dict[str, Any] = {}

    def claim_first() -> None:
        first["claim"] = claim_job(db, job_id=job_id, worker="w1")

    with after_the_transcript_read(claim_first) as box:
        second = claim_job(db, job_id=job_id, worker="w2")
    assert box.get("done_during_claim") and "error" not in box, box.get("error")
    assert first["claim"] is not None and second is not None
    assert (first["claim"].attempt, second.attempt) == (1, 2)
    job = get_job(db, job_id=job_id)
    assert (job.attempt, job.worker, job.status) == (2, "w2", "running")


# --- the archive's search text, made from the claim before the write-back ------------------------


def indexed(db: Database, session_id: str) -> list[tuple[int, str | None, str, str | None]]:
    with db.read() as s:
        rows = s.scalars(
            select(ArchiveTextRow)
            .where(ArchiveTextRow.session_id == session_id)
            .order_by(ArchiveTextRow.seq)
        )
        return [(r.seq, r.tool_name, r.digest, r.body) for r in rows]


def claimed_session(db: Database, session_id: str) -> JobClaim:
    msgs = make_transcript(4, tools=True)
    put_snapshot(
        db, session_id=session_id, model="gpt-4", context_length=1000, messages=msgs,
        token_counts=counts(msgs),
    )  # fmt: skip
    claim = claim_job(db, job_id=create_job(db, session_id=session_id, trigger="manual").id)
    assert claim is not None
    return claim


def test_the_claims_search_texts_index_what_the_write_back_would_read(db: Database) -> None:
    prepared, read = claimed_session(db, "s1"), claimed_session(db, "s2")
    texts = search_texts(zip(prepared.seqs, prepared.messages, strict=True))
    for claim, given in ((prepared, texts), (read, None)):
        row = write_back(db, job_id=claim.job_id, attempt=1, result=compaction_of(claim),
                         archive_texts=given)  # fmt: skip
        assert row.status == "succeeded"
    assert indexed(db, "s1") == indexed(db, "s2")
    assert any(tool for _, tool, _, _ in indexed(db, "s1"))  # tool results named by their call


@pytest.mark.parametrize("mismatch", ["one missing", "one extra"])
def test_search_texts_that_do_not_match_the_archived_messages_are_not_used(
    db: Database, mismatch: str
) -> None:
    claim, reference = claimed_session(db, "s1"), claimed_session(db, "s2")
    wrong = {seq: SearchText(None, f"bogus{seq}", "bogus") for seq in claim.seqs}
    if mismatch == "one missing":
        del wrong[claim.seqs[-1]]
    else:
        wrong[claim.seqs[-1] + 1] = SearchText(None, "bogus", "bogus")
    write_back(db, job_id=claim.job_id, attempt=1, result=compaction_of(claim),
               archive_texts=wrong)  # fmt: skip
    write_back(db, job_id=reference.job_id, attempt=1, result=compaction_of(reference))
    assert indexed(db, "s1") == indexed(db, "s2")
