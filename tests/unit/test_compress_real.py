"""compress() over the 38 real agent sessions, and over one long session made of all of them."""

from __future__ import annotations

import math
from datetime import date

import pytest

from tests.data import real_transcripts
from tests.support.invariants import violations
from tests.support.summarizers import ScriptedSummarizer
from worker.compressor.compress import compress
from worker.compressor.config import CompressConfig
from worker.compressor.errors import SummarizerServerError
from worker.compressor.extractive import ExtractiveSummarizer
from worker.compressor.messages import Message, parse_messages
from worker.compressor.redact import redact_text
from worker.compressor.summarizer import Summarizer
from worker.compressor.tokens import TokenCounter

TODAY = date(2026, 4, 4)
SESSIONS = real_transcripts()


def summarizer_named(kind: str) -> Summarizer:
    if kind == "extractive":
        return ExtractiveSummarizer()
    if kind == "failing":
        return ScriptedSummarizer(default=SummarizerServerError("upstream down", status=503))
    return ScriptedSummarizer()


@pytest.mark.parametrize("kind", ["llm", "extractive", "failing"])
@pytest.mark.parametrize("scale", [1.0, 0.35])  # at 85% of the window, and far over it
def test_every_real_session_compacts_within_the_invariants(
    counter: TokenCounter, kind: str, scale: float
) -> None:
    for name, wire in SESSIONS:
        msgs = parse_messages(list(wire))
        counts = counter.count_messages(msgs)
        window = math.ceil(sum(counts) / 0.85 * scale)
        config = CompressConfig(context_length=window, summarizer_context_tokens=16_000)
        summarizer = summarizer_named(kind)
        result = compress(
            msgs,
            config=config,
            summarizer=summarizer,
            counter=counter,
            today=TODAY,
            token_counts=counts,
        )
        report = result.report
        assert violations(msgs, result.messages) == [], name
        assert report.changed, (name, report.noop_reason)
        assert report.tokens_after < report.tokens_before, name
        assert report.fallback_used == (kind == "failing"), name
        if isinstance(summarizer, ScriptedSummarizer):
            for request in summarizer.requests:
                assert counter.count_text(request.prompt) + request.max_output_tokens <= 16_000
                assert redact_text(request.prompt).count == 0
        # A second pass over the result keeps the invariants (it may have nothing left to do).
        again = compress(
            list(result.messages),
            config=config,
            summarizer=summarizer_named(kind),
            counter=counter,
            today=TODAY,
            token_counts=result.token_counts,
            compaction_count=1,
            previous_summary=result.summary,
        )
        assert violations(list(result.messages), again.messages) == [], name


def test_a_long_lived_session_stays_under_its_window(counter: TokenCounter) -> None:
    """All 38 sessions, one after another, as successive tasks of one gateway conversation.

    Compaction runs the way the service runs it: at 85% of the window, with the state the store
    keeps between passes (counts, compaction count, previous summary, recent savings).
    """
    window = 60_000
    config = CompressConfig(context_length=window)
    first = parse_messages(list(SESSIONS[0][1]))
    msgs: list[Message] = [first[0]]
    counts: list[int] = counter.count_messages(msgs)
    summary: str | None = None
    savings: list[float] = []
    passes = 0
    for _, wire in SESSIONS:
        for msg in parse_messages([m for m in wire if m["role"] != "system"]):
            msgs.append(msg)
            counts.append(counter.count_message(msg))
            if sum(counts) < 0.85 * window or len(msgs) < 4:
                continue
            result = compress(
                msgs,
                config=config,
                summarizer=ScriptedSummarizer(),
                counter=counter,
                today=TODAY,
                token_counts=counts,
                previous_summary=summary,
                compaction_count=passes,
                recent_savings_pct=savings,
            )
            assert violations(msgs, result.messages) == []
            if not result.report.changed:
                continue  # e.g. one huge tool output in the tail: nothing to summarize yet
            passes += 1
            msgs, counts = list(result.messages), list(result.token_counts)
            summary, savings = result.summary, [*savings, result.report.savings_pct]
            assert not result.report.thrash_guard_tripped
            assert sum(counts) < 0.85 * window
    assert passes >= 15
    assert sum(counts) <= window
