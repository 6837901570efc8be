"""The tools a gateway hands its model so that the agent can reach the archive.

Defined here once, in the OpenAI ``tools`` format; ``GET /v1/tools`` serves them as they are.
A gateway that receives a call runs it against this API for the session in question:

- ``recall(query, limit)``: ``GET /v1/sessions/{id}/archive?q=<query>&limit=<limit>``; give
  the model the answer's ``hits`` (seq, role, tool name, snippet) as the tool result.
- ``recall_message(seq, before, after)``: ``GET /v1/sessions/{id}/archive/{seq}?before=&after=``;
  give the model the answer's ``messages``.
- ``compaction_history(limit)``: ``GET /v1/jobs?session_id={id}&limit=<limit>``; give the model
  each job's trigger, status, times and sizes.

``api/client/tools.py`` runs a call so for a gateway (the Hermes engine, the MCP server and the
LangChain middleware use it); ``compaction mcp`` serves the same definitions as MCP tools.

The summary's reference-only prefix (worker/compressor/markers.py) tells the model that exact
earlier content can be found this way.
"""

from __future__ import annotations

from typing import Any

from worker.store.archive import DEFAULT_AROUND, MAX_AROUND
from worker.store.search_text import HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN

RECALL_LIMIT_DEFAULT, RECALL_LIMIT_MAX = 5, 20

RECALL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "recall",
        "description": (
            "Search the earlier, exact messages of this conversation that were compacted into "
            "the summary: user and assistant text, tool calls and tool output. Use it when you "
            "need a detail the summary does not give word for word: a file path, a command, an "
            "error message, an id, a number. Returns the newest matches first, each with its "
            f"seq and a snippet with the match marked {HIGHLIGHT_OPEN}like this{HIGHLIGHT_CLOSE}; "
            "read a whole message with recall_message."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": (
                        "What to find, as it was written (any case): an exact string such as "
                        "'src/app/main.py', 'KeyError: session_id' or 'req-42', or a few words "
                        'that must all appear. Put "double quotes" around words that must '
                        "appear side by side."
                    ),
                },
                "limit": {
                    "type": "integer",
                    "description": "How many matches to return.",
                    "minimum": 1,
                    "maximum": RECALL_LIMIT_MAX,
                    "default": RECALL_LIMIT_DEFAULT,
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
}

RECALL_MESSAGE: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "recall_message",
        "description": (
            "Read a compacted message in full, by the seq a recall match gave, with the "
            "messages around it (for a tool result, the call that made it)."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "seq": {"type": "integer", "description": "The seq of a recall match."},
                "before": {
                    "type": "integer",
                    "description": "How many earlier messages to include.",
                    "minimum": 0,
                    "maximum": MAX_AROUND,
                    "default": DEFAULT_AROUND,
                },
                "after": {
                    "type": "integer",
                    "description": "How many later messages to include.",
                    "minimum": 0,
                    "maximum": MAX_AROUND,
                    "default": DEFAULT_AROUND,
                },
            },
            "required": ["seq"],
            "additionalProperties": False,
        },
    },
}

HISTORY_LIMIT_DEFAULT, HISTORY_LIMIT_MAX = 10, 50

COMPACTION_HISTORY: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "compaction_history",
        "description": (
            "List the compactions of this conversation, newest first: when each ran, what "
            "started it, how many messages it summarized and the size before and after, and "
            "whether its summary is a fallback. Use it to tell how much of the conversation "
            "the summary stands for, or whether an earlier pass failed."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "limit": {
                    "type": "integer",
                    "description": "How many compactions to list.",
                    "minimum": 1,
                    "maximum": HISTORY_LIMIT_MAX,
                    "default": HISTORY_LIMIT_DEFAULT,
                },
            },
            "additionalProperties": False,
        },
    },
}

TOOLS: tuple[dict[str, Any], ...] = (RECALL, RECALL_MESSAGE, COMPACTION_HISTORY)
