"""What compress() returns: the new transcript and a report of what it did."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from worker.compressor.messages import Message


@dataclass(frozen=True, slots=True)
class CompactionReport:
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    summarized_count: int = 0  # messages whose content went into the summary window
    dropped_count: int = 0  # messages removed whose content reached no LLM summary
    fallback_used: bool = False  # the LLM failed and the deterministic fallback stood in
    aborted: bool = False  # transcript deliberately left unchanged (e.g. auth failure)
    noop_reason: str | None = None  # "too_few_messages", "nothing_to_summarize", ...
    summarizer: str | None = None  # model name or "extractive"
    summary_tokens: int = 0
    summarizer_calls: int = 0
    summarizer_input_tokens: int = 0  # largest single call's input, by our count
    summarizer_input_tokens_total: int = 0
    llm_ms: float = 0.0
    aux_model_failed: str | None = None
    error_class: str | None = None
    error: str | None = None
    retry_after_s: float | None = None  # the provider's Retry-After on a rate-limit failure
    redactions: int = 0
    pruned_tool_outputs: int = 0
    deduplicated_tool_outputs: int = 0
    shrunk_tool_args: int = 0
    stripped_images: int = 0
    ledger_items: int = 0  # artifacts found deterministically in the window
    ledger_appended: int = 0  # of those, ones the summarizer left out and we appended
    head_end: int = 0
    tail_start: int = 0
    savings_pct: float = 0.0
    # The size this pass aimed for: the one asked for, or its share of the window (grown, when
    # none was asked for, to hold the short things the user said).
    target_tokens: int = 0
    thrash_guard_tripped: bool = False  # with this pass, automatic compaction should stop
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def changed(self) -> bool:
        return not self.aborted and self.noop_reason is None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True, slots=True)
class CompactionResult:
    messages: tuple[Message, ...]
    report: CompactionReport
    summary: str | None = None  # the summary body (no prefix), state for the next pass
    token_counts: tuple[int, ...] = ()  # per output message, so callers need not recount
