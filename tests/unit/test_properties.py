"""DESIGN.md invariants 1-5 and 9, over generated transcripts (tests/strategies.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.strategies import SECRET_CONTEXTS, SECRETS, Transcript, transcripts
from tests.support.invariants import violations
from tests.support.summarizers import ScriptedSummarizer
from worker.compressor.compress import compress
from worker.compressor.config import CompressConfig
from worker.compressor.errors import (
    SummarizerAuthError,
    SummarizerContextTooLongError,
    SummarizerError,
    SummarizerServerError,
)
from worker.compressor.extractive import ExtractiveSummarizer
from worker.compressor.markers import BRIEF, FULL, NOTE_TAG, is_summary, summary_body
from worker.compressor.messages import Message, content_text
from worker.compressor.redact import redact_text
from worker.compressor.report import CompactionResult
from worker.compressor.summarizer import Summarizer
from worker.compressor.tokens import TokenCounter
from worker.encodings import counter_for_model

TODAY = date(2026, 2, 2)
COUNTER = counter_for_model("gpt-4")

configs = st.builds(
    lambda ctx, tail, head, summarizer_ctx: CompressConfig(
        context_length=ctx,
        min_tail_messages=tail,
        protect_first_n=head,
        summarizer_context_tokens=summarizer_ctx,
        min_summary_tokens=300,
    ),
    st.integers(1_500, 40_000),
    st.integers(1, 4),
    st.integers(0, 3),
    st.sampled_from((3_000, 8_000, 32_000)),
)


def leaky(secret: str) -> ScriptedSummarizer:
    """An LLM that writes a secret into its summary (as models sometimes echo them)."""
    return ScriptedSummarizer(default=f"## Active Task\nUser asked to use {secret}\n")


summarizers = st.one_of(
    st.builds(ScriptedSummarizer),
    st.builds(ExtractiveSummarizer),
    st.sampled_from(SECRETS).map(leaky),
)


# ---------------------------------------------------------------------------------------------
# the invariants, as checks that name what is wrong


def check_invariants(before: Sequence[Message], result: CompactionResult) -> None:
    out = result.messages
    assert violations(before, out) == []
    original, kept = content_text(before[0].content), content_text(out[0].content)
    # one compaction note, in either wording (a small window gets the brief one)
    assert kept.count(NOTE_TAG) == (1 if result.report.changed else original.count(NOTE_TAG))
    # never larger; counts are exact and belong to the output
    assert result.report.tokens_after <= result.report.tokens_before
    assert list(result.token_counts) == COUNTER.count_messages(out)
    assert result.report.tokens_after == sum(result.token_counts)


def check_no_secrets(case: Transcript, summarizer: Summarizer, result: CompactionResult) -> None:
    """4. no recognized secret reaches the summarizer or the stored summary."""
    texts: list[str] = []
    if isinstance(summarizer, ScriptedSummarizer):
        for request in summarizer.requests:
            texts.append(request.prompt)
            texts += [content_text(m.content) for m in request.window]
            texts += [c.arguments for m in request.window for c in m.tool_calls]
    texts.append(result.summary or "")
    # Only the summary: a message it was merged into keeps its own text, as the tail does.
    texts += [summary_body(m) or "" for m in result.messages if is_summary(m)]
    for text in texts:
        leaked = [secret for secret in SECRETS if secret in text]
        assert not leaked, f"{leaked} in {text!r}"
        assert redact_text(text).count == 0, text


def run(
    msgs: Sequence[Message],
    config: CompressConfig,
    summarizer: Summarizer,
    *,
    token_counts: Sequence[int] | None = None,
    compaction_count: int = 0,
    previous_summary: str | None = None,
    recent_savings_pct: Sequence[float] = (),
) -> CompactionResult:
    return compress(
        msgs,
        config=config,
        summarizer=summarizer,
        counter=COUNTER,
        today=TODAY,
        token_counts=token_counts,
        compaction_count=compaction_count,
        previous_summary=previous_summary,
        recent_savings_pct=recent_savings_pct,
    )


# ---------------------------------------------------------------------------------------------
# properties


@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("context", SECRET_CONTEXTS)
def test_every_planted_secret_is_one_the_redactor_recognizes(secret: str, context: str) -> None:
    assert secret not in redact_text(context.format(s=secret)).text


# Generous: CI runs 1,500 examples of each on 2 shared cores.
slow = pytest.mark.timeout(900)


@slow
@given(transcripts(), configs, summarizers)
def test_one_pass_keeps_every_invariant(
    case: Transcript, config: CompressConfig, summarizer: Summarizer
) -> None:
    result = run(case.messages, config, summarizer)
    check_invariants(case.messages, result)
    check_no_secrets(case, summarizer, result)
    if not result.report.changed:
        assert result.messages == tuple(case.messages)
    if not summarizer.is_llm:
        assert not result.report.fallback_used and result.report.dropped_count == 0


@slow
@given(transcripts(), configs, summarizers)
def test_a_second_pass_is_stable(
    case: Transcript, config: CompressConfig, summarizer: Summarizer
) -> None:
    first = run(case.messages, config, summarizer)
    count = int(first.report.changed)
    second = run(
        list(first.messages),
        config,
        summarizer,
        token_counts=first.token_counts,
        compaction_count=count,
        previous_summary=first.summary,
        recent_savings_pct=[first.report.savings_pct],
    )
    check_invariants(first.messages, second)
    check_no_secrets(case, summarizer, second)
    if isinstance(summarizer, ScriptedSummarizer):
        # The earlier summary is state, never a turn to summarize again. (People's messages
        # may start with our tag, pasted; only our summaries carry the whole prefix.)
        for request in summarizer.requests:
            turns = request.prompt.rpartition("TURNS")[2]
            assert FULL.prefix not in turns and BRIEF.prefix not in turns


failures = st.sampled_from(
    (
        SummarizerServerError("bad gateway", status=502),
        SummarizerContextTooLongError("never fits"),
    )
)


@slow
@given(transcripts(), configs, failures)
def test_a_failed_summary_leaves_an_explicit_marker_and_counts(
    case: Transcript, config: CompressConfig, error: SummarizerError
) -> None:
    summarizer = ScriptedSummarizer(default=error)
    result = run(case.messages, config, summarizer)
    check_invariants(case.messages, result)
    check_no_secrets(case, summarizer, result)
    report = result.report
    if report.changed:
        assert report.fallback_used and report.error_class is not None
        assert report.dropped_count == report.summarized_count > 0
        assert result.summary is not None
        assert result.summary.startswith(f"Summary generation failed ({report.error_class})")
        assert f"{report.dropped_count} messages were removed" in result.summary
    else:
        assert result.messages == tuple(case.messages) and report.dropped_count == 0


@slow
@given(transcripts(), configs)
def test_an_auth_failure_never_changes_the_transcript(
    case: Transcript, config: CompressConfig
) -> None:
    summarizer = ScriptedSummarizer(default=SummarizerAuthError("401"))
    result = run(case.messages, config, summarizer)
    assert result.messages == tuple(case.messages)
    assert result.report.aborted or result.report.noop_reason is not None
    assert result.report.summarizer_calls <= 1


def test_counter_is_the_one_the_fixture_uses(counter: TokenCounter) -> None:
    assert counter.encoding_name == COUNTER.encoding_name
