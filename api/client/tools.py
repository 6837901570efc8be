"""Running a call of the service's tools (``GET /v1/tools``: api/tools.py defines them) for a
session, through the client: what a gateway does when its model calls one. The Hermes engine,
the MCP server (``compaction mcp``) and the LangChain middleware all run calls here.

Each answer is a JSON object for the model: ``recall`` the hits (seq, role, tool name, marked
snippet) and whether there are more; ``recall_message`` the archived messages around a seq;
``compaction_history`` the session's compactions, newest first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.client.errors import CompactionClientError
from api.client.models import Job
from api.client.sync import CompactionClient

TOOL_NAMES = ("recall", "recall_message", "compaction_history")


class ToolCallError(CompactionClientError):
    """The call names no tool of ours, or its arguments are not the tool's."""


def run_tool(
    client: CompactionClient, session_id: str, name: str, args: Mapping[str, Any]
) -> dict[str, Any]:
    """The answer of the tool ``name`` called with ``args`` for ``session_id``. Errors of the
    service (``CompactionClientError``) pass through; bad arguments are a ``ToolCallError``."""
    try:
        if name == "recall":
            found = client.search_archive(
                session_id, _text(args, "query"), limit=_count(args, "limit")
            )
            return {
                "hits": [
                    {"seq": h.seq, "role": h.role, "tool_name": h.tool_name, "snippet": h.snippet}
                    for h in found.hits or []
                ],
                "more": found.next_cursor is not None,
            }
        if name == "recall_message":
            around = client.get_archived_message(
                session_id,
                _required_count(args, "seq"),
                before=_count(args, "before"),
                after=_count(args, "after"),
            )
            return {"messages": [{"seq": m.seq, "message": m.message} for m in around.messages]}
        if name == "compaction_history":
            jobs = client.list_jobs(session_id, limit=_count(args, "limit"))
            return {"compactions": [_compaction(job) for job in jobs]}
    except (TypeError, ValueError) as exc:
        raise ToolCallError(f"{name}: {exc}") from exc
    raise ToolCallError(f"unknown tool {name!r}: one of {', '.join(TOOL_NAMES)}")


def _compaction(job: Job) -> dict[str, Any]:
    return {
        "job_id": job.id,
        "trigger": job.trigger,
        "status": job.status,
        "skip_reason": job.skip_reason,
        "enqueued_at": job.enqueued_at.isoformat(),
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        "messages_before": job.messages_before,
        "messages_after": job.messages_after,
        "summarized_count": job.summarized_count,
        "tokens_before": job.tokens_before,
        "tokens_after": job.tokens_after,
        "summarizer": job.summarizer,
        "fallback_used": job.fallback_used,
    }


def _text(args: Mapping[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key} must be a non-empty string")
    return value


def _count(args: Mapping[str, Any], key: str) -> int | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key} must be an integer, not {value!r}")
    return value


def _required_count(args: Mapping[str, Any], key: str) -> int:
    value = _count(args, key)
    if value is None:
        raise ValueError(f"{key} is required")
    return value
