"""A compaction leaves the transcript under its target share of the window, however small the
window and whatever language fills it: the chats of both retention corpora (6,000 to 47,000
tokens, Spanish, Chinese, mixed), compacted at 85% of their window on both of our paths."""

from __future__ import annotations

import math
from typing import Any

import pytest

from bench.ours import BENCH_TODAY
from bench.retention import corpus
from bench.retention.run import HYGIENE_THRESHOLD, MODEL, PoorSummarizer
from worker.compressor.compress import compress
from worker.compressor.config import CompressConfig
from worker.compressor.extractive import ExtractiveSummarizer
from worker.compressor.messages import assistant, parse_messages, user
from worker.compressor.summarizer import Summarizer
from worker.encodings import counter_for_model

CHATS = [
    (which, doc)
    for which, (directory, specs) in corpus.CORPORA.items()
    for doc in corpus.load_corpus(directory, "chat-*", specs)
]


@pytest.mark.parametrize("path", ["extractive", "poor-llm"])
@pytest.mark.parametrize(("which", "doc"), CHATS, ids=[f"{w}-{d['name']}" for w, d in CHATS])
def test_a_chat_ends_under_its_target_share(which: str, doc: dict[str, Any], path: str) -> None:
    counter = counter_for_model(MODEL)
    msgs = parse_messages(doc["messages"])
    counts = counter.count_messages(msgs)
    config = CompressConfig(context_length=math.ceil(sum(counts) / HYGIENE_THRESHOLD))
    summarizer: Summarizer = ExtractiveSummarizer() if path == "extractive" else PoorSummarizer()
    result = compress(
        msgs,
        config=config,
        summarizer=summarizer,
        counter=counter,
        today=BENCH_TODAY,
        token_counts=counts,
    )
    assert result.report.tokens_after is not None
    assert result.report.tokens_after <= config.context_length * config.target_ratio


def test_a_ledger_of_latin_text_fills_the_room_it_is_given() -> None:
    """Sized in bytes at CJK's rate, a ledger of English comes out a quarter under its token
    budget; when that left entries out, it is fitted again to the room under the target."""
    counter = counter_for_model(MODEL)
    msgs = []
    for i in range(120):
        msgs += [
            user(f"Note for later: locker bank {i} on level {i % 7} opens at {7 + i % 5}:30."),
            assistant(f"Noted, bank {i} will be in the plan."),
        ]
    counts = counter.count_messages(msgs)
    config = CompressConfig(context_length=math.ceil(sum(counts) / HYGIENE_THRESHOLD))
    result = compress(
        msgs,
        config=config,
        summarizer=PoorSummarizer(),
        counter=counter,
        today=BENCH_TODAY,
        token_counts=counts,
    )
    target = config.context_length * config.target_ratio
    assert result.report.tokens_after is not None
    assert 0.95 * target <= result.report.tokens_after <= target
