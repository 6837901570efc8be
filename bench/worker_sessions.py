"""The sessions the worker benchmark compacts, and how it seeds them.

- the sample: a real 64-message agent session (~15k tokens) in a window it fills past 85%,
  as the worker tests use it: the jobs in flight and the burst;
- the long one: the real sessions joined into one long-lived session, cut at 110,000 tokens:
  the per-job overhead.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import insert, update

from bench.cases import concatenated_session
from tests.data import real_transcripts
from tests.support.worker_fixtures import SAMPLE_WINDOW, sample_messages
from worker.compressor.messages import parse_messages
from worker.encodings import counter_for_model
from worker.store import jobs, sessions
from worker.store.db import Database
from worker.store.models import Base, SessionRow, utcnow

MODEL = "gpt-4o"
HYGIENE_THRESHOLD = 0.85
LONG_SESSION_TOKENS = 110_000


@dataclass(frozen=True, slots=True)
class Transcript:
    messages: list[dict[str, Any]]
    token_counts: list[int]
    context_length: int

    @property
    def tokens(self) -> int:
        return sum(self.token_counts)


def counted(messages: Sequence[dict[str, Any]], context_length: int) -> Transcript:
    counts = counter_for_model(MODEL).count_messages(parse_messages(list(messages)))
    return Transcript(list(messages), list(counts), context_length)


def sample() -> Transcript:
    return counted(sample_messages(), SAMPLE_WINDOW)


def long_session(tokens: int = LONG_SESSION_TOKENS) -> Transcript:
    """The joined real sessions up to ``tokens``, cut before an assistant turn (so every tool
    call before the cut has its result), in a window it fills to about 86%."""
    joined = concatenated_session([m for _, m in real_transcripts()])
    whole = counted(joined, 1)
    total, end = 0, len(joined)
    for i, count in enumerate(whole.token_counts):
        if total >= tokens and joined[i].get("role") == "assistant":
            end = i
            break
        total += count
    window = math.ceil(total / 0.86)
    return Transcript(joined[:end], whole.token_counts[:end], window)


def below_threshold(t: Transcript) -> tuple[Transcript, Transcript]:
    """``t`` split so that the first part sits below the hygiene threshold and the whole
    crosses it: the seed, and the turns whose append crosses."""
    limit = HYGIENE_THRESHOLD * t.context_length
    if t.tokens < limit:
        raise ValueError("the transcript does not cross the threshold")
    cut = len(t.messages) - 1
    while sum(t.token_counts[:cut]) >= limit or t.messages[cut].get("role") != "user":
        cut -= 1
    head = Transcript(t.messages[:cut], t.token_counts[:cut], t.context_length)
    return head, Transcript(t.messages[cut:], t.token_counts[cut:], t.context_length)


def seed(db: Database, t: Transcript, *, session_id: str | None = None, times: int = 1) -> str:
    """A stored session holding ``t`` (PUT ``times`` times: each PUT archives the one before,
    so its texts are in the archive's index already); its id."""
    session_id = session_id or f"bench-{uuid.uuid4().hex[:12]}"
    for _ in range(times):
        sessions.put_snapshot(
            db, session_id=session_id, model=MODEL, context_length=t.context_length,
            messages=t.messages, token_counts=t.token_counts,
        )  # fmt: skip
    return session_id


def seed_job(db: Database, t: Transcript, *, times: int = 1) -> str:
    """A seeded session and a queued hygiene job for it; the job's id."""
    return jobs.create_job(db, session_id=seed(db, t, times=times), trigger="hygiene").id


# ---------------------------------------------------------------------------------------------
# idle sessions for the sweep: rows only (the sweep's selection reads no message)

_SESSIONS = Base.metadata.tables[SessionRow.__tablename__]
_IDLE_WINDOW = 100_000
_QUALIFYING_TOKENS = 60_000  # 60% of the window: over the sweep's default 50%
_SMALL_TOKENS = 10_000
_CHUNK = 5_000


def add_idle_sessions(db: Database, *, start: int, count: int) -> None:
    """``count`` idle sessions below the sweep's threshold, numbered from ``start``."""
    idle_since = utcnow() - timedelta(days=1)
    for first in range(start, start + count, _CHUNK):
        rows = [_idle_row(n, idle_since) for n in range(first, min(first + _CHUNK, start + count))]
        with db.write() as s:
            s.connection().execute(insert(_SESSIONS), rows)


def set_qualifying(db: Database, *, count: int) -> None:
    """The first ``count`` idle sessions over the sweep's threshold, the others below it."""
    with db.write() as s:
        conn = s.connection()
        number = _SESSIONS.c.id
        conn.execute(update(_SESSIONS).values(token_total=_SMALL_TOKENS))
        conn.execute(
            update(_SESSIONS).where(number < _idle_id(count)).values(token_total=_QUALIFYING_TOKENS)
        )


def _idle_id(n: int) -> str:
    return f"idle-{n:07d}"  # ordered as the numbers are


def _idle_row(n: int, idle_since: Any) -> dict[str, Any]:
    return {
        "id": _idle_id(n), "model": MODEL, "context_length": _IDLE_WINDOW, "version": 2,
        "rewrite_count": 0, "next_seq": 51, "token_total": _SMALL_TOKENS, "message_count": 50,
        "compaction_count": 0, "ineffective_count": 0, "created_at": idle_since,
        "updated_at": idle_since, "last_activity_at": idle_since,
    }  # fmt: skip
