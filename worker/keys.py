"""Every Redis key, queue name and task name, spelled once."""

from __future__ import annotations

# Celery. Compactions wait on an LLM for minutes; callbacks, the sweep and the reaper take
# milliseconds and must not wait behind a backlog of compactions, so they have a queue of their
# own (every worker consumes both unless told otherwise).
QUEUE = "compaction"
SERVICE_QUEUE = "compaction.service"
COMPACT_TASK = "compaction.compact_session"
SWEEP_TASK = "compaction.sweep_idle_sessions"
REAP_TASK = "compaction.reap_stuck_jobs"
CALLBACK_TASK = "compaction.deliver_callback"

# kombu's Redis transport keeps a queue's waiting messages in a list named after the queue and
# every delivered, not yet acknowledged message in this hash (the reaper looks in both).
BROKER_UNACKED = "unacked"

_PREFIX = "compaction:"


def session_lock(session_id: str) -> str:
    """Held by the one worker compacting this session."""
    return f"{_PREFIX}lock:session:{session_id}"


def session_cooldown(session_id: str) -> str:
    """Set after a summarizer failure on this session; value: error class and until."""
    return f"{_PREFIX}cooldown:session:{session_id}"


def endpoint_cooldown(endpoint: str) -> str:
    """Set after provider-wide failures (auth, no provider, rate limit) on one endpoint/model."""
    return f"{_PREFIX}cooldown:endpoint:{endpoint}"


def timeout_streak(endpoint: str) -> str:
    """Consecutive summarizer timeouts on one endpoint: the step on the cooldown ladder."""
    return f"{_PREFIX}timeouts:endpoint:{endpoint}"
