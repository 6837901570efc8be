"""What we return in Anthropic Messages and OpenAI Responses form, validated by the providers'
own SDKs (``anthropic`` and ``openai``, in ``bench/.sdk-venv``, made on first use): their
typed request params, read by pydantic, every lazily validated iterable consumed.

Generated transcripts (tests/strategies.py) and a real agent session, written in each format
as a gateway holds them, validate before and after compaction, on the extractive path and
with an LLM summary.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.sdk_env import SdkValidator
from tests.strategies import Transcript, transcripts
from tests.support.summarizers import ScriptedSummarizer
from tests.support.wire_formats import to_anthropic, to_responses
from tests.support.worker_fixtures import sample_messages
from worker.compressor import formats
from worker.compressor.compress import compress
from worker.compressor.config import CompressConfig
from worker.compressor.extractive import ExtractiveSummarizer
from worker.compressor.messages import Message, parse_messages
from worker.compressor.summarizer import Summarizer
from worker.encodings import counter_for_model

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]  # the first run builds a venv

COUNTER = counter_for_model("gpt-4")
FORMATS = [formats.ANTHROPIC, formats.RESPONSES]


@pytest.fixture(scope="module")
def sdk() -> Iterator[SdkValidator]:
    with SdkValidator() as validator:
        yield validator


def written(fmt: formats.Format, tr_messages: Sequence[Message], seed: int) -> formats.Transcript:
    if fmt == formats.ANTHROPIC:
        system, turns = to_anthropic(tr_messages, seed)
        return formats.Transcript(fmt, turns, system)
    return formats.Transcript(fmt, to_responses(tr_messages, seed))


def compacted(
    wire: formats.Transcript, summarizer: Summarizer, context_length: int, target: int | None
) -> formats.Transcript:
    result = compress(
        formats.read(wire.format, wire.messages, wire.system),
        config=CompressConfig(context_length=context_length, target_tokens=target),
        summarizer=summarizer,
        counter=COUNTER,
        today=date(2026, 2, 2),
    )
    assert not result.report.aborted
    return formats.write(wire.format, result.messages)


def test_the_sdks_are_the_pinned_ones(sdk: SdkValidator) -> None:
    assert sdk.versions() == {"anthropic": "2.10.0", "openai": "3.51.0"}
    # And they refuse what the providers refuse: the check can fail.
    assert sdk.problems(formats.ANTHROPIC, [{"role": "user", "content": [{"type": "txt"}]}])
    assert sdk.problems(formats.RESPONSES, [{"type": "function_call", "call_id": "c"}])


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    tr=transcripts(max_turns=6),
    seed=st.integers(0, 2**16),
    context_length=st.integers(800, 6_000),
    llm=st.booleans(),
)
def test_generated_transcripts_validate_before_and_after_compaction(
    sdk: SdkValidator,
    fmt: formats.Format,
    tr: Transcript,
    seed: int,
    context_length: int,
    llm: bool,
) -> None:
    wire = written(fmt, tr.messages, seed)
    assert sdk.problems(fmt, wire.messages, wire.system) == []
    summarizer: Summarizer = ScriptedSummarizer() if llm else ExtractiveSummarizer()
    out = compacted(wire, summarizer, context_length, None)
    assert sdk.problems(fmt, out.messages, out.system) == []


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("target", [2_000, 6_000])
def test_a_compacted_real_session_validates(
    sdk: SdkValidator, fmt: formats.Format, target: int
) -> None:
    wire = written(fmt, parse_messages(sample_messages()), seed=11)
    out = compacted(wire, ExtractiveSummarizer(), 200_000, target)
    assert len(out.messages) < len(wire.messages)
    assert sdk.problems(fmt, out.messages, out.system) == []
