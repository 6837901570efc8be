"""Reading a session's archive: pages, search, and the messages around one hit.

Every read pages by ``seq`` (a cursor, never an offset). An archived message keeps its seq for
good, so a page read while a compaction archives more messages shows no message twice and
skips none that was archived before the reading began: the newly archived ones sort where
their seqs put them.

Pages run oldest first (``seq`` above the cursor), search hits newest first (``seq`` below the
cursor): an agent recalling a detail wants the latest mention.

Search: a hit holds every term of the query (search_text.parse_query), case-insensitively, as
written. A text archived more than once (each snapshot PUT archives the whole previous
transcript) is one hit: its first archived copy, the one that holds the text
(models.ArchiveTextRow); the generation and job filters apply to that copy. SQLite looks the terms up in its FTS5 trigram table over the session's id range;
PostgreSQL with ILIKE through its pg_trgm GIN index. Terms under three characters cannot use
either index: they narrow what the longer terms found, in Python, and a query of short terms
only scans the session's archive newest first, at most ``MAX_SCANNED`` messages a request
(the answer's cursor continues the scan).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeAlias

from sqlalchemy import BigInteger, ColumnElement, Select, column, func, select, table, text
from sqlalchemy.orm import Session, aliased

from worker.store.archive_index import SEQ_BITS, find_archive_key
from worker.store.db import Database
from worker.store.errors import ArchivedMessageNotFoundError, SessionNotFoundError
from worker.store.models import ArchiveTextRow, MessageRow, SessionRow
from worker.store.search_text import Query, snippet
from worker.store.sessions import StoredMessage

DEFAULT_PAGE, MAX_PAGE = 50, 500
DEFAULT_HITS, MAX_HITS = 20, 100
DEFAULT_AROUND, MAX_AROUND = 2, 20
MAX_SCANNED = 5_000  # candidates a search checks in Python, per request
_BATCH = 500
RECENT_WINDOW = 2_000  # PostgreSQL: the newest messages a search reads in order first

_fts = table("archive_fts", column("rowid", BigInteger))
_STORED = (  # StoredMessage's fields, in order
    MessageRow.seq,
    MessageRow.data,
    MessageRow.tokens,
    MessageRow.generation,
    MessageRow.archived_by_job,
    MessageRow.archived_at,
)
_HitRows: TypeAlias = Select[int, str, str | None, str, int, str | None, datetime | None]


@dataclass(frozen=True, slots=True)
class ArchiveFilter:
    generation: int | None = None  # only messages of this generation
    job_id: str | None = None  # only messages this compaction archived


@dataclass(frozen=True, slots=True)
class ArchivePage:
    messages: list[StoredMessage]
    next_cursor: int | None  # the last seq of this page, when there is more


@dataclass(frozen=True, slots=True)
class SearchHit:
    seq: int
    generation: int
    role: str
    tool_name: str | None
    snippet: str
    archived_by_job: str | None
    archived_at: datetime | None


@dataclass(frozen=True, slots=True)
class SearchPage:
    hits: list[SearchHit]
    next_cursor: int | None  # hits continue below this seq


def archive_page(
    db: Database,
    *,
    session_id: str,
    after_seq: int = 0,
    limit: int = DEFAULT_PAGE,
    only: ArchiveFilter = ArchiveFilter(),
) -> ArchivePage:
    """Archived messages with ``seq > after_seq``, oldest first, at most ``limit``."""
    with db.read() as s:
        _require_session(s, session_id)
        query = (
            select(*_STORED)  # columns, not ORM objects: a page may hold hundreds
            .where(
                MessageRow.session_id == session_id,
                MessageRow.active.is_(False),
                MessageRow.seq > after_seq,
                *_filters(only),
            )
            .order_by(MessageRow.seq)
            .limit(limit + 1)
        )
        rows = [StoredMessage(*row) for row in s.execute(query)]
    more = len(rows) > limit
    rows = rows[:limit]
    return ArchivePage(rows, rows[-1].seq if more else None)


def search_archive(
    db: Database,
    *,
    session_id: str,
    query: Query,
    before_seq: int | None = None,
    limit: int = DEFAULT_HITS,
    only: ArchiveFilter = ArchiveFilter(),
) -> SearchPage:
    """Archived messages holding every term of ``query``, newest first, below ``before_seq``."""
    with db.read() as s:
        _require_session(s, session_id)
        if not query.terms:
            return SearchPage([], None)
        candidates = _Candidates(s, session_id, query, only)
        return _collect(candidates, query, before_seq, limit)


def archived_around(
    db: Database,
    *,
    session_id: str,
    seq: int,
    before: int = DEFAULT_AROUND,
    after: int = DEFAULT_AROUND,
) -> list[StoredMessage]:
    """The archived message at ``seq`` with up to ``before``/``after`` of its neighbours, in
    order: the messages archived with it (one snapshot, compaction or revert), nearest by seq."""
    with db.read() as s:
        _require_session(s, session_id)
        hit = s.scalars(
            select(MessageRow).where(
                MessageRow.session_id == session_id,
                MessageRow.seq == seq,
                MessageRow.active.is_(False),
            )
        ).one_or_none()
        if hit is None:
            raise ArchivedMessageNotFoundError(session_id, seq)
        batch = [
            MessageRow.session_id == session_id,
            MessageRow.active.is_(False),
            MessageRow.archived_at == hit.archived_at,
        ]
        earlier = s.scalars(
            select(MessageRow)
            .where(*batch, MessageRow.seq < seq)
            .order_by(MessageRow.seq.desc())
            .limit(before)
        ).all()
        later = s.scalars(
            select(MessageRow)
            .where(*batch, MessageRow.seq > seq)
            .order_by(MessageRow.seq)
            .limit(after)
        ).all()
        return [_stored(m) for m in [*reversed(earlier), hit, *later]]


# ---------------------------------------------------------------------------------------------


def _collect(
    candidates: _Candidates, query: Query, before_seq: int | None, limit: int
) -> SearchPage:
    """Hits from batches of candidates until ``limit`` (and one more, to know there are more),
    the end, or ``MAX_SCANNED`` candidates checked in Python."""
    exact = candidates.exact  # the database matched every term: no candidate needs a check
    hits: list[SearchHit] = []
    cursor, scanned, batch_size = before_seq, 0, min(2 * (limit + 1), _BATCH)
    while True:
        want = limit + 1 - len(hits) if exact else batch_size
        batch_size = min(2 * batch_size, _BATCH)  # a rare short term: larger batches next
        batch = candidates.below(cursor, want)
        scanned += len(batch)
        hits += [_hit(row, query) for row in batch if exact or query.matches(row.body)]
        if len(hits) > limit:
            return SearchPage(hits[:limit], hits[limit - 1].seq)
        if len(batch) < want:
            return SearchPage(hits, None)
        cursor = batch[-1].seq
        if scanned >= MAX_SCANNED:
            return SearchPage(hits, cursor)  # more may lie below: the cursor goes on from here


class _Candidates:
    """Archived messages of one session that hold the query's terms, newest first.

    ``exact``: the database checks every term. SQLite's FTS5 takes the long terms (its trigram
    tokenizer finds nothing shorter), PostgreSQL's ILIKE all of them once one can use the
    index. Otherwise the candidates still need ``Query.matches``.
    """

    def __init__(self, s: Session, session_id: str, query: Query, only: ArchiveFilter) -> None:
        self.s, self.session_id, self.query, self.only = s, session_id, query, only
        self.dialect = s.get_bind().dialect.name
        self.key = find_archive_key(s, session_id)
        self.exact = not query.short or (self.dialect != "sqlite" and bool(query.indexed))

    def below(self, before_seq: int | None, n: int) -> Sequence[Any]:
        if self.key is None:
            return []
        if not self.query.indexed:
            return self.s.execute(self._scan(before_seq).limit(n)).all()
        if self.dialect == "sqlite":
            return self.s.execute(self._fts(before_seq).limit(n)).all()
        return self._postgres(before_seq, n)

    def _fts(self, before_seq: int | None) -> _HitRows:
        """FTS5 over the session's id range, newest first: it seeks, and stops at the limit."""
        assert self.key is not None
        low = self.key << SEQ_BITS
        high = low + (before_seq if before_seq is not None else 1 << SEQ_BITS)
        match = " ".join(_fts_string(t) for t in self.query.indexed)
        return (
            _columns()
            .select_from(
                _fts.join(ArchiveTextRow, ArchiveTextRow.id == _fts.c.rowid).join(
                    MessageRow, MessageRow.id == ArchiveTextRow.message_id
                )
            )
            .where(
                text("archive_fts MATCH :match").bindparams(match=match),
                _fts.c.rowid >= low,
                _fts.c.rowid < high,
                *_filters(self.only),
            )
            .order_by(_fts.c.rowid.desc())
        )

    def _postgres(self, before_seq: int | None, n: int) -> Sequence[Any]:
        """The newest ``RECENT_WINDOW`` messages first, read in seq order; then the GIN index
        for what lies below them.

        A GIN index cannot hand its matches over in seq order: a common term makes it fetch
        and sort thousands of rows (hundreds of ms in a 100,000-message session), while the
        newest few hundred messages hold enough hits. A rare term is the other way round.
        PostgreSQL's estimate of how common ILIKE terms are is no guide (it multiplies the
        terms' guesses), so the order is ours: the window answers common terms in a few ms, and
        the index then only looks for terms the window found rare.
        """
        terms = [ArchiveTextRow.body.ilike(_like(t), escape="\\") for t in self.query.terms]
        below = self._below(before_seq)
        newest = (
            select(ArchiveTextRow)
            .where(*below)
            .order_by(ArchiveTextRow.seq.desc())
            .limit(RECENT_WINDOW)
            .subquery()
        )
        window = aliased(ArchiveTextRow, newest)
        found = self.s.execute(
            _columns(window)
            .select_from(newest)
            .join(MessageRow, MessageRow.id == window.message_id)
            .where(*[window.body.ilike(_like(t), escape="\\") for t in self.query.terms])
            .where(*_filters(self.only))
            .order_by(window.seq.desc())
            .limit(n)
        ).all()
        if len(found) == n:
            return found
        seqs = (
            select(ArchiveTextRow.seq)
            .where(*below)
            .order_by(ArchiveTextRow.seq.desc())
            .limit(RECENT_WINDOW)
            .subquery()
        )  # the window's seqs alone: read from the index
        floor, seen = self.s.execute(select(func.min(seqs.c.seq), func.count())).one()
        if seen < RECENT_WINDOW:
            return found  # the window held the whole rest of the session
        # Materialized, unordered: the planner must collect the matches through the GIN index,
        # not walk the session's seq index past a hundred thousand rows for a rare term.
        older = (
            select(ArchiveTextRow)
            .where(*self._below(floor), *terms)
            .cte("older")
            .prefix_with("MATERIALIZED")
        )
        rest = aliased(ArchiveTextRow, older)
        return [
            *found,
            *self.s.execute(
                _columns(rest)
                .select_from(older)
                .join(MessageRow, MessageRow.id == rest.message_id)
                .where(*_filters(self.only))
                .order_by(rest.seq.desc())
                .limit(n - len(found))
            ).all(),
        ]

    def _below(self, before_seq: int | None) -> list[ColumnElement[bool]]:
        where: list[ColumnElement[bool]] = [ArchiveTextRow.session_id == self.session_id]
        if before_seq is not None:
            where.append(ArchiveTextRow.seq < before_seq)
        return where

    def _scan(self, before_seq: int | None) -> _HitRows:
        """A query of short terms only: the session's archive, newest first (checked in
        Python by the caller, a bounded stretch per request)."""
        return (
            _columns()
            .select_from(ArchiveTextRow)
            .join(MessageRow, MessageRow.id == ArchiveTextRow.message_id)
            .where(*self._below(before_seq), ArchiveTextRow.body.is_not(None), *_filters(self.only))
            .order_by(ArchiveTextRow.seq.desc())
        )


def _columns(text_row: Any = ArchiveTextRow) -> _HitRows:
    return select(
        text_row.seq,
        text_row.body,
        text_row.tool_name,
        MessageRow.role,
        MessageRow.generation,
        MessageRow.archived_by_job,
        MessageRow.archived_at,
    )


def _hit(row: Any, query: Query) -> SearchHit:
    return SearchHit(
        seq=row.seq,
        generation=row.generation,
        role=row.role,
        tool_name=row.tool_name,
        snippet=snippet(row.body, query),
        archived_by_job=row.archived_by_job,
        archived_at=row.archived_at,
    )


def _filters(only: ArchiveFilter) -> list[ColumnElement[bool]]:
    out: list[ColumnElement[bool]] = []
    if only.generation is not None:
        out.append(MessageRow.generation == only.generation)
    if only.job_id is not None:
        out.append(MessageRow.archived_by_job == only.job_id)
    return out


def _fts_string(term: str) -> str:
    """An FTS5 string: matched as written, operators and punctuation included."""
    return '"' + term.replace('"', '""') + '"'


def _like(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _stored(m: MessageRow) -> StoredMessage:
    return StoredMessage(m.seq, m.data, m.tokens, m.generation, m.archived_by_job, m.archived_at)


def _require_session(s: Session, session_id: str) -> None:
    if s.get(SessionRow, session_id) is None:
        raise SessionNotFoundError(session_id)
