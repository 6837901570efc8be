"""Our side of the bench: ``worker.compressor.compress`` with the same instant stub summarizer."""

from __future__ import annotations

import gc
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from worker.compressor.compress import compress
from worker.compressor.config import CompressConfig
from worker.compressor.messages import parse_messages, to_wire_list
from worker.compressor.report import CompactionReport
from worker.compressor.summarizer import SummaryRequest, SummaryResponse
from worker.compressor.tokens import Encoding, TokenCounter

# The core has no clock; a fixed date keeps both runs of a case byte-identical.
BENCH_TODAY = date(2026, 1, 15)


@dataclass
class StubSummarizer:
    """Answers at once with a fixed text and records every prompt it was handed."""

    summary_text: str
    prompts: list[str] = field(default_factory=list)
    reserved_output_tokens: list[int] = field(default_factory=list)  # per call

    @property
    def name(self) -> str:
        return "stub"

    @property
    def is_llm(self) -> bool:
        # It stands in for the LLM, so the core takes its LLM path (prompt rendering and all).
        return True

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        self.prompts.append(request.prompt)
        self.reserved_output_tokens.append(request.max_output_tokens)
        return SummaryResponse(text=self.summary_text, model="stub")


@dataclass(frozen=True, slots=True)
class OurRun:
    seconds: float
    messages: list[dict[str, Any]]  # the wire output
    prompts: tuple[str, ...]  # what the summarizer was handed
    reserved_output_tokens: tuple[int, ...]  # the answer room each call asked for
    report: CompactionReport


def run_once(
    wire: Sequence[dict[str, Any]],
    *,
    config: CompressConfig,
    encoding: Encoding,
    summary_text: str,
    token_counts: Sequence[int] | None,
) -> OurRun:
    """Time wire-in to wire-out (parse, compress, serialize), as the worker does per job.

    A fresh TokenCounter each run, so its memo starts empty: with ``token_counts=None`` that is
    the cold path; with the store's per-message counts it is the path the worker takes.
    """
    stub = StubSummarizer(summary_text)
    counter = TokenCounter(encoding)
    gc.collect()
    started = time.perf_counter()
    result = compress(
        parse_messages(list(wire)),
        config=config,
        summarizer=stub,
        counter=counter,
        today=BENCH_TODAY,
        token_counts=token_counts,
    )
    out = to_wire_list(result.messages)
    elapsed = time.perf_counter() - started
    reserved = tuple(stub.reserved_output_tokens)
    return OurRun(elapsed, out, tuple(stub.prompts), reserved, result.report)
