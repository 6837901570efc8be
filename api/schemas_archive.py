"""Bodies of the archive, recall, revert, erase and session-list routes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from api.schemas import Name, _Body
from worker.store.search_text import HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN

MAX_JOB_ID_CHARS = 36


class ArchivedMessageOut(BaseModel):
    seq: int
    generation: int = Field(description="0: as the gateway sent it; k: written by compaction k")
    archived_by_job: str | None = Field(
        description="the compaction that archived it; null for a snapshot PUT or a revert"
    )
    archived_at: str | None
    message: dict[str, Any] = Field(description="the message as it was, verbatim")


class SearchHitOut(BaseModel):
    seq: int
    generation: int
    role: str
    tool_name: str | None = Field(description="the tool it calls, or whose result it is")
    snippet: str = Field(
        description=f"text around the first match, every match marked {HIGHLIGHT_OPEN}like "
        f"this{HIGHLIGHT_CLOSE}; … where text was cut"
    )
    archived_by_job: str | None
    archived_at: str | None


class ArchiveOut(BaseModel):
    """Without ``q``: ``messages``, oldest first. With ``q``: ``hits``, newest first (and no
    ``messages``)."""

    session_id: str
    messages: list[ArchivedMessageOut]
    hits: list[SearchHitOut] | None = Field(description="the search's hits; null without q")
    next_cursor: str | None = Field(
        description="pass as ?cursor= (with the same q and filters) for the next page; null "
        "on the last one"
    )


class ArchivedAroundOut(BaseModel):
    session_id: str
    seq: int
    messages: list[ArchivedMessageOut] = Field(
        description="the message at seq and its neighbours archived with it, in order"
    )


class RevertIn(_Body):
    """``POST /v1/sessions/{id}/revert``: the compaction to undo."""

    job_id: Name = Field(min_length=1, max_length=MAX_JOB_ID_CHARS)


class RevertOut(BaseModel):
    session_id: str
    job_id: str
    version: int = Field(description="the session's new version (also the ETag)")
    restored: int = Field(description="messages the compaction had replaced, active again")
    archived: int = Field(description="messages the compaction wrote, archived now")


class SessionListItem(BaseModel):
    session_id: str
    model: str
    context_length: int
    version: int
    tokens: int
    utilization: float
    message_count: int
    compaction_count: int
    last_activity_at: str
    last_compacted_at: str | None
    open_job_id: str | None = Field(description="the queued or running job, if any")


class SessionPage(BaseModel):
    sessions: list[SessionListItem]
    next_cursor: str | None = Field(
        description="pass as ?cursor= (with the same filters) for the next page; null on the "
        "last one"
    )


class ToolsOut(BaseModel):
    tools: list[dict[str, Any]] = Field(
        description="OpenAI tool definitions (type function), to pass on as the model's tools"
    )
