"""Tunables of one compress() call. Defaults follow Hermes' measured constants."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CompressConfig:
    context_length: int  # the main model's window, in tokens
    # Tail budget = context_length x compress_threshold_ratio x summary_target_ratio.
    compress_threshold_ratio: float = 0.50
    summary_target_ratio: float = 0.20
    tail_soft_ceiling: float = 1.5  # one oversized recent message may stay whole
    min_tail_messages: int = 3
    protect_first_n: int = 3  # extra head messages after the system prompt; first pass only
    min_messages: int = 4  # fewer active messages than this: nothing to do
    # Summary length: proportional to the summarized content, within [min, max].
    summary_ratio: float = 0.20
    min_summary_tokens: int = 2_000
    max_summary_tokens_ceiling: int = 12_000
    max_summary_context_fraction: float = 0.05
    # The summarizer's own window; its input (prompt + window) never exceeds what fits.
    summarizer_context_tokens: int = 32_000
    # Pre-pass.
    prune_min_chars: int = 200  # tool outputs shorter than this are left alone
    tool_arg_max_chars: int = 200  # longer string leaves in old tool-call arguments are cut
    # Serialization for the summarizer (per message). A tool result is shown as its one-line
    # account and an excerpt of whole lines: its error lines first, then its first and last
    # lines, within these sizes (an output with error lines gets the larger one).
    serialize_result_chars: int = 1_500
    serialize_ok_result_chars: int = 0  # a result that went well: its account says enough
    serialize_tool_args_head_chars: int = 1_200
    serialize_message_max_chars: int = 12_000
    # After a compaction the transcript should take at most this share of the window. The
    # ledger uses the room the summary leaves under it (an LLM summary is asked to leave it at
    # least ``ledger_min_tokens``, or an eighth of ``ledger_max_ratio`` of a small window); so
    # may the extractive summary, which quotes.
    target_ratio: float = 0.25
    # A size the caller asked for (``compress --target-tokens``, ``target_tokens`` on a manual
    # compaction): it replaces ``target_ratio`` of the window.
    target_tokens: int | None = None
    # With no size asked for, the target grows up to this share of the window to hold the short
    # things the user said (a quarter of a small window cannot).
    said_max_ratio: float = 0.5
    # Under a target this small, the text around the summary is said briefly (``markers.BRIEF``).
    brief_framing_below_tokens: int = 3_000
    ledger_min_tokens: int = 800
    ledger_max_ratio: float = 0.15
    # Anti-thrash: this many consecutive passes under ``ineffective_savings_pct`` stop
    # automatic compaction until the session grows.
    ineffective_savings_pct: float = 10.0
    thrash_strikes: int = 2

    @property
    def tail_budget_tokens(self) -> int:
        return int(self.context_length * self.compress_threshold_ratio * self.summary_target_ratio)

    @property
    def target(self) -> int:
        """The compacted transcript's size to aim for, in tokens."""
        if self.target_tokens is not None:
            return self.target_tokens
        return int(self.context_length * self.target_ratio)

    @property
    def max_summary_tokens(self) -> int:
        by_context = int(self.context_length * self.max_summary_context_fraction)
        return max(self.min_summary_tokens, min(by_context, self.max_summary_tokens_ceiling))
