"""The contract between the core and whoever writes summaries.

The core renders the prompt (already redacted) and hands it over with the structured window
and its tool uses, so an LLM summarizer sends ``prompt`` and the extractive one reads
``window`` and ``uses``. A summarizer
either returns a non-empty summary or raises a ``SummarizerError`` subclass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol

from worker.compressor.messages import Message
from worker.compressor.prose import Prose
from worker.compressor.salience import Ranked
from worker.compressor.tooluse import ToolUse


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    prompt: str  # the full rendered prompt, redacted
    window: Sequence[Message]  # the messages this call covers, as the summarizer sees them
    previous_summary: str | None  # the running summary this call updates, if any
    focus_topic: str | None
    budget_tokens: int  # the summary length to aim for
    max_output_tokens: int  # hard cap to request from the model (budget x 1.3)
    today: date
    chunk_index: int = 0
    chunk_count: int = 1
    # The tool uses of ``window`` as the core read them (from the messages before any cut);
    # a rule-based summarizer reads these. None: read ``window`` itself.
    uses: Sequence[ToolUse] | None = None
    prose: Prose | None = None  # what was said in ``window``, likewise
    # A rule-based summarizer's share of the room the compacted transcript leaves under its
    # target: it quotes instead of condensing, so it is sized by the room, not by
    # ``budget_tokens`` (which only stands in when no room is given).
    room_tokens: int | None = None
    # The window's own UTF-8 bytes per token, for a rule-based summary to size its text by
    # (None: the cautious rate of ``cuts.bytes_for``).
    bytes_per_token: float | None = None
    # What the user said in the window (and an earlier summary quoted), ranked as one session
    # (``salience.user_statements``): a rule-based summarizer quotes it. None: read it itself.
    said: Sequence[Ranked] | None = None

    @property
    def rule_based_tokens(self) -> int:
        """What a rule-based summary may take (``rule_based_budget``)."""
        return rule_based_budget(self.budget_tokens, self.room_tokens)


def rule_based_budget(budget_tokens: int, room_tokens: int | None) -> int:
    """A rule-based summary quotes instead of condensing: it takes its share of the room under
    the target (the ledger completes it from the rest); without one, the summary's budget."""
    return room_tokens if room_tokens is not None else budget_tokens


@dataclass(frozen=True, slots=True)
class SummaryResponse:
    text: str
    model: str  # the model that wrote it, or "extractive"
    input_tokens: int | None = None  # provider-reported usage, when there is one
    output_tokens: int | None = None
    latency_ms: float | None = None
    # Set when the summary model failed and the main model stood in: the first error, as
    # "<error_class>: <message>" (the class first, so it can be split off).
    aux_model_failed: str | None = None


class Summarizer(Protocol):
    @property
    def name(self) -> str:
        """Model name, or "extractive"."""
        ...

    @property
    def is_llm(self) -> bool:
        """True for a language-model summarizer; False for the deterministic extractive one."""
        ...

    def summarize(self, request: SummaryRequest) -> SummaryResponse: ...
