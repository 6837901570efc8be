"""Turn one side's raw run into comparable numbers, measured the same way for both sides."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.invariants import Violation, check_transcript, latest_user_is_still_last
from worker.compressor.errors import InvalidTranscriptError
from worker.compressor.messages import parse_messages
from worker.compressor.tokens import TokenCounter


@dataclass(frozen=True, slots=True)
class SummarizerInput:
    calls: int
    max_chars: int  # the largest single call
    max_tokens: int
    total_chars: int
    total_tokens: int


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one compressor made of one case (times are medians over the repeats)."""

    median_s: float
    tokens_after: int | None  # None: the output is not a parseable transcript
    messages_after: int
    summarizer_input: SummarizerInput
    violations: tuple[Violation, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)  # fallback, no-op, abort...


def median(times_s: Sequence[float]) -> float:
    return statistics.median(times_s)


def summarizer_input(prompts: Sequence[str], counter: TokenCounter) -> SummarizerInput:
    tokens = [counter.count_text(p) for p in prompts]
    chars = [len(p) for p in prompts]
    return SummarizerInput(
        calls=len(prompts),
        max_chars=max(chars, default=0),
        max_tokens=max(tokens, default=0),
        total_chars=sum(chars),
        total_tokens=sum(tokens),
    )


def tokens_of(wire: Sequence[dict[str, Any]], counter: TokenCounter) -> int | None:
    """Tokens of a wire transcript by our tiktoken accounting; the same function for both sides."""
    try:
        return sum(counter.count_messages(parse_messages(list(wire))))
    except InvalidTranscriptError:
        return None


def outcome(
    *,
    before: Sequence[dict[str, Any]],
    after: Sequence[dict[str, Any]],
    times_s: Sequence[float],
    prompts: Sequence[str],
    counter: TokenCounter,
    notes: Sequence[str] = (),
) -> Outcome:
    tokens_after = tokens_of(after, counter)
    violations = check_transcript(before, after)
    if not latest_user_is_still_last(before, after):
        notes = [*notes, "a user-role summary follows the latest user message"]
    if tokens_after is None:
        violations.append(Violation("unparseable_output", None, "not a valid wire transcript"))
    return Outcome(
        median_s=median(times_s),
        tokens_after=tokens_after,
        messages_after=len(after),
        summarizer_input=summarizer_input(prompts, counter),
        violations=tuple(violations),
        notes=tuple(notes),
    )


@dataclass(frozen=True, slots=True)
class CaseResult:
    name: str
    group: str  # "generated", "real" or "long"
    messages_before: int
    tokens_before: int
    context_length: int
    hermes: Outcome
    ours: Outcome  # the cached-counts run (the worker's path); its median time
    ours_cold_s: float  # median of the cold runs (fresh counter, no token_counts)
    ours_budget_tokens: int  # the summarizer input budget our config enforces
    tail_budget_tokens: int  # ours; Hermes' is hermes_settings["tail_token_budget"]
    hermes_settings: dict[str, Any]  # what Hermes derived for this window
