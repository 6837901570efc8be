"""The hygiene decision: should this session get an automatic compaction job now? Pure.

Shared by the API (after every PUT and append) and the nightly sweep (with its own threshold).
The checks run in the order that gives the caller the most useful answer: an open job first
(it has a job id to follow), then the session's size, then the guards, the longest-lasting
guard first, so the reason given is the one that will still hold when a shorter one lifts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, TypeAlias

from worker.cooldowns import Cooldown

DecisionName: TypeAlias = Literal[
    "enqueued", "already_queued", "below_threshold", "too_few_messages", "cooldown", "thrash_guard"
]
DECISIONS: tuple[DecisionName, ...] = (
    "enqueued",
    "already_queued",
    "below_threshold",
    "too_few_messages",
    "cooldown",
    "thrash_guard",
)


@dataclass(frozen=True, slots=True)
class Decision:
    decision: DecisionName
    reason: str
    threshold_tokens: int
    job_id: str | None = None  # the open job, for already_queued

    @property
    def enqueue(self) -> bool:
        """True when the caller should now create the job and enqueue it."""
        return self.decision == "enqueued"


def threshold_tokens(context_length: int, threshold: float) -> int:
    """Tokens at which a session qualifies: ``threshold`` of the window, rounded up."""
    return math.ceil(round(context_length * threshold, 6))  # round: 0.85 * n is inexact


def decide(
    *,
    tokens: int,
    context_length: int,
    threshold: float,
    active_messages: int,
    min_messages: int,
    open_job_id: str | None,
    cooldown: Cooldown | None,
    ineffective_count: int,
    thrash_until_tokens: int | None,
    thrash_strikes: int,
    auto_jobs_last_hour: int,
    max_auto_per_hour: int,
) -> Decision:
    """Decide; ``enqueued`` means the caller should create the job (nothing is done here)."""
    limit = threshold_tokens(context_length, threshold)

    def answer(name: DecisionName, reason: str) -> Decision:
        return Decision(name, reason, limit, open_job_id if name == "already_queued" else None)

    if open_job_id is not None:
        return answer("already_queued", f"compaction job {open_job_id} is already open")
    if tokens < limit:
        return answer("below_threshold", f"{tokens} tokens is under the threshold of {limit}")
    if active_messages < min_messages:
        return answer(
            "too_few_messages",
            f"{active_messages} active messages; compaction needs at least {min_messages}",
        )
    thrash = _thrash_reason(tokens, ineffective_count, thrash_until_tokens, thrash_strikes)
    if thrash is not None:
        return answer("thrash_guard", thrash)
    if auto_jobs_last_hour >= max_auto_per_hour:
        return answer(
            "thrash_guard",
            f"{auto_jobs_last_hour} automatic compactions in the last hour "
            f"(at most {max_auto_per_hour})",
        )
    if cooldown is not None:
        until = datetime.fromtimestamp(cooldown.until, UTC).isoformat(timespec="seconds")
        return answer(
            "cooldown", f"{cooldown.scope} on cooldown after {cooldown.error_class} until {until}"
        )
    return answer("enqueued", f"{tokens} tokens reached the threshold of {limit}")


def _thrash_reason(
    tokens: int, ineffective_count: int, thrash_until_tokens: int | None, strikes: int
) -> str | None:
    """Low-savings passes stop automatic compaction until the session grows past the mark."""
    if thrash_until_tokens is not None:
        if tokens <= thrash_until_tokens:
            return (
                f"recent compactions saved too little; waiting until the session grows past "
                f"{thrash_until_tokens} tokens"
            )
        return None
    if ineffective_count >= strikes:
        return f"the last {ineffective_count} compactions each saved too little"
    return None
