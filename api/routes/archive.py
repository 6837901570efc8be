"""``/v1/sessions/{id}/archive``: a session's archived messages, a page at a time or searched,
and the messages around one of them. Paged by ``seq`` cursors (worker/store/archive.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from api.deps import Context, SessionId, require_token
from api.errors import ApiProblem
from api.openapi import V1_RESPONSES, problem
from api.schemas import MAX_BIGINT, MAX_INTEGER, FreeText, Name
from api.schemas_archive import ArchivedAroundOut, ArchivedMessageOut, ArchiveOut, SearchHitOut
from worker.store import archive
from worker.store.archive import ArchiveFilter, SearchHit
from worker.store.search_text import MAX_QUERY_CHARS, MAX_QUERY_TERMS, parse_query
from worker.store.sessions import StoredMessage

router = APIRouter(
    prefix="/v1/sessions",
    tags=["archive"],
    dependencies=[Depends(require_token)],
    responses=V1_RESPONSES,
)

SESSION_NOT_FOUND = problem("no session with this id")
_CURSOR_DIGITS = 19  # a seq is a BIGINT


def parse_cursor(
    cursor: Annotated[
        str | None,
        Query(
            max_length=_CURSOR_DIGITS,
            description="next_cursor of the previous page; absent for the first",
        ),
    ] = None,
) -> int | None:
    if not cursor:  # absent, or sent empty: the first page
        return None
    if not cursor.isascii() or not cursor.isdigit() or int(cursor) > MAX_BIGINT:
        raise ApiProblem(
            422, "bad-cursor", f"cursor must be a next_cursor this route gave; got {cursor!r}"
        )
    return int(cursor)


Cursor = Annotated[int | None, Depends(parse_cursor)]


@router.get(
    "/{session_id}/archive",
    operation_id="getArchive",
    response_model=ArchiveOut,
    responses={404: SESSION_NOT_FOUND},
)
def get_archive(
    session_id: SessionId,
    context: Context,
    cursor: Cursor,
    q: Annotated[
        FreeText | None,
        Query(
            min_length=1,
            max_length=MAX_QUERY_CHARS,
            description=(
                "search the archived messages' text (user and assistant text, tool calls and "
                "tool output): a hit holds every space-separated term, in any case, as written "
                '(paths, error lines, commands, ids); "double quotes" keep a phrase\'s spaces. '
                f"At most {MAX_QUERY_TERMS} terms."
            ),
        ),
    ] = None,
    limit: Annotated[
        int | None,
        Query(
            ge=1,
            le=archive.MAX_PAGE,
            description=(
                f"messages a page (default {archive.DEFAULT_PAGE}, at most {archive.MAX_PAGE}); "
                f"with q, hits (default {archive.DEFAULT_HITS}, at most {archive.MAX_HITS})"
            ),
        ),
    ] = None,
    generation: Annotated[
        int | None,
        Query(ge=0, le=MAX_INTEGER, description="only messages of this generation"),
    ] = None,
    job_id: Annotated[
        Name | None, Query(min_length=1, max_length=36, description="only what this job archived")
    ] = None,
) -> ArchiveOut:
    """Archived messages with their generation: without q a page of them, oldest first
    (cursor: seq); with q the hits of a search, newest first, each with a snippet (read a
    whole hit with ``GET …/archive/{seq}``). Pages stay stable while compactions run."""
    only = ArchiveFilter(generation=generation, job_id=job_id)
    if q is None:
        page = archive.archive_page(
            context.db, session_id=session_id, after_seq=cursor or 0,
            limit=limit or archive.DEFAULT_PAGE, only=only,
        )  # fmt: skip
        return ArchiveOut(
            session_id=session_id,
            messages=[archived_message_out(m) for m in page.messages],
            hits=None,
            next_cursor=_cursor_out(page.next_cursor),
        )
    # A search answers at most MAX_HITS hits a page (a larger limit is taken as that many; the
    # cursor goes on from there).
    found = archive.search_archive(
        context.db, session_id=session_id, query=parse_query(q), before_seq=cursor,
        limit=min(limit or archive.DEFAULT_HITS, archive.MAX_HITS), only=only,
    )  # fmt: skip
    return ArchiveOut(
        session_id=session_id,
        messages=[],
        hits=[_hit_out(h) for h in found.hits],
        next_cursor=_cursor_out(found.next_cursor),
    )


@router.get(
    "/{session_id}/archive/{seq}",
    operation_id="getArchivedMessage",
    response_model=ArchivedAroundOut,
    responses={404: problem("no session with this id, or no archived message at this seq")},
)
def get_archived_message(
    session_id: SessionId,
    seq: Annotated[
        int,
        Path(ge=0, le=MAX_BIGINT, description="the seq of an archived message (a hit's seq)"),
    ],
    context: Context,
    before: Annotated[
        int, Query(ge=0, le=archive.MAX_AROUND, description="earlier messages to include")
    ] = archive.DEFAULT_AROUND,
    after: Annotated[
        int, Query(ge=0, le=archive.MAX_AROUND, description="later messages to include")
    ] = archive.DEFAULT_AROUND,
) -> ArchivedAroundOut:
    """The archived message at seq, verbatim, with up to ``before``/``after`` of the messages
    archived together with it (one snapshot, compaction or revert), in order."""
    around = archive.archived_around(
        context.db, session_id=session_id, seq=seq, before=before, after=after
    )
    return ArchivedAroundOut(
        session_id=session_id, seq=seq, messages=[archived_message_out(m) for m in around]
    )


def archived_message_out(m: StoredMessage) -> ArchivedMessageOut:
    return ArchivedMessageOut(
        seq=m.seq,
        generation=m.generation,
        archived_by_job=m.archived_by_job,
        archived_at=m.archived_at.isoformat() if m.archived_at else None,
        message=m.message,
    )


def _hit_out(h: SearchHit) -> SearchHitOut:
    return SearchHitOut(
        seq=h.seq,
        generation=h.generation,
        role=h.role,
        tool_name=h.tool_name,
        snippet=h.snippet,
        archived_by_job=h.archived_by_job,
        archived_at=h.archived_at.isoformat() if h.archived_at else None,
    )


def _cursor_out(seq: int | None) -> str | None:
    return None if seq is None else str(seq)
