"""Factories for store and API tests: transcripts, and compaction results built from a claim."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from worker.compressor.messages import parse_messages
from worker.compressor.report import CompactionReport, CompactionResult
from worker.store.jobs import JobClaim


def make_transcript(turns: int, *, words: int = 20, tools: bool = False) -> list[dict[str, Any]]:
    """A system prompt then ``turns`` user/assistant exchanges (optionally with a tool call)."""
    filler = " ".join(f"word{i}" for i in range(words))
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful agent."}]
    for t in range(turns):
        out.append({"role": "user", "content": f"question {t}: {filler}"})
        if tools:
            call = {
                "id": f"call_{t}",
                "type": "function",
                "function": {"name": "ls", "arguments": "{}"},
            }
            out.append({"role": "assistant", "content": None, "tool_calls": [call]})
            out.append(
                {"role": "tool", "tool_call_id": f"call_{t}", "content": f"result {t} {filler}"}
            )
        out.append({"role": "assistant", "content": f"answer {t}: {filler}"})
    return out


def counts(messages: Sequence[dict[str, Any]], per_message: int = 10) -> list[int]:
    return [per_message] * len(messages)


def compaction_of(
    claim: JobClaim,
    *,
    keep_last: int = 2,
    summary: str = "the middle, summarized",
    summary_tokens: int = 5,
    savings_pct: float | None = None,
    tripped: bool = False,
    fallback_used: bool = False,
    dropped_count: int = 0,
) -> CompactionResult:
    """Keep the first message and the last ``keep_last``; a summary message stands for the rest."""
    head, tail = list(claim.messages[:1]), list(claim.messages[len(claim.messages) - keep_last :])
    wire = [*head, {"role": "user", "content": f"[CONTEXT SUMMARY] {summary}"}, *tail]
    token_counts = (
        claim.token_counts[0],
        summary_tokens,
        *claim.token_counts[len(claim.token_counts) - keep_last :],
    )
    before, after = sum(claim.token_counts), sum(token_counts)
    report = CompactionReport(
        tokens_before=before,
        tokens_after=after,
        messages_before=len(claim.messages),
        messages_after=len(wire),
        summarized_count=len(claim.messages) - 1 - keep_last,
        dropped_count=dropped_count,
        fallback_used=fallback_used,
        summarizer="extractive",
        summary_tokens=summary_tokens,
        summarizer_calls=1,
        savings_pct=savings_pct if savings_pct is not None else 100.0 * (before - after) / before,
        thrash_guard_tripped=tripped,
    )
    return CompactionResult(tuple(parse_messages(wire)), report, summary, token_counts)


def noop_result(claim: JobClaim, *, reason: str = "nothing_to_summarize") -> CompactionResult:
    n, tokens = len(claim.messages), sum(claim.token_counts)
    report = CompactionReport(tokens, tokens, n, n, noop_reason=reason, summarizer="extractive")
    return CompactionResult(
        tuple(parse_messages(list(claim.messages))), report, None, claim.token_counts
    )
