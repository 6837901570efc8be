"""Which of the service's sessions a LangChain agent's model call belongs to.

One compiled agent serves many conversations, and LangGraph tells them apart by the run's
``thread_id``; the service's session is ``<prefix><thread_id>``, so a checkpointed thread keeps
its session across runs and processes. Without a thread (an agent invoked with its whole
history each time), the conversation is the middleware's own: one per middleware instance,
as a Hermes engine is one per agent.

A graph run inside another graph's node (a deep agent's subagent, started by its ``task``
tool, inherits the parent's ``thread_id``) is a conversation of its own. LangGraph names each
node's run by its namespace, ``parent-node:task|...|node:task``; everything before the last
``|`` is the same for every node of one run of the inner graph (its model calls and its tool
calls alike) and differs between runs, so it becomes a suffix of the session id.
"""

from __future__ import annotations

import hashlib

NS_SEPARATOR = "|"  # LangGraph's checkpoint namespace separator (langgraph.constants.NS_SEP)
NESTED_MARK = ":sub-"


def session_id_for(
    *,
    prefix: str,
    own: str,
    fixed: str | None = None,
    thread_id: str | None = None,
    checkpoint_ns: str | None = None,
) -> str:
    """The session of a node run with ``thread_id`` and ``checkpoint_ns``.

    Args:
        own: the middleware instance's id, for runs without a thread.
        fixed: a session id the application chose; it replaces the thread's (and ``prefix``).
    """
    base = fixed or prefix + (thread_id or own)
    outer = outer_namespace(checkpoint_ns)
    if not outer:
        return base
    return base + NESTED_MARK + hashlib.sha256(outer.encode()).hexdigest()[:16]


def outer_namespace(checkpoint_ns: str | None) -> str:
    """The namespace of the graph run a node belongs to: empty for the outermost graph."""
    if not checkpoint_ns or NS_SEPARATOR not in checkpoint_ns:
        return ""
    return checkpoint_ns.rsplit(NS_SEPARATOR, 1)[0]
