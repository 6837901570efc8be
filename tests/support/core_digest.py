"""One hash of everything the compressor core produces on a corpus: the compacted messages, the
report and every prompt handed to the summarizer, with the extractive summarizer and with an
instant LLM stand-in. Two builds of the core (compiled, interpreted) must give the same hash.

    python -m tests.support.core_digest     prints the hash and which core ran
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from bench.ours import BENCH_TODAY, StubSummarizer
from bench.retention.corpus import CORPUS_DIR, HELDOUT_DIR, HELDOUT_SPECS, load_corpus
from bench.retention.run import HYGIENE_THRESHOLD
from tests.data import real_transcripts
from worker import compiled
from worker.compressor import (
    CompressConfig,
    ExtractiveSummarizer,
    Summarizer,
    TokenCounter,
    compress,
    parse_messages,
    to_wire_list,
)
from worker.encodings import counter_for_model

SUMMARY = "## Goal\nCarry on.\n## Progress\nSome of it done."


def transcripts() -> Iterable[tuple[str, Sequence[dict[str, Any]]]]:
    """The 38 real sessions and both retention corpora (every agent format, multilingual chats)."""
    yield from real_transcripts()
    for doc in [*load_corpus(CORPUS_DIR), *load_corpus(HELDOUT_DIR, specs=HELDOUT_SPECS)]:
        yield doc["name"], doc["messages"]


def digest() -> str:
    counter = counter_for_model("gpt-4o")
    out = hashlib.sha256()
    for name, wire in transcripts():
        msgs = parse_messages(list(wire))
        counts = counter.count_messages(msgs)
        config = CompressConfig(context_length=math.ceil(sum(counts) / HYGIENE_THRESHOLD))
        llm = StubSummarizer(SUMMARY)  # an LLM's path, answered at once
        summarizer: Summarizer
        for summarizer in (ExtractiveSummarizer(), llm):
            result = compress(
                msgs,
                config=config,
                summarizer=summarizer,
                counter=TokenCounter(counter.encoding),
                today=BENCH_TODAY,
                token_counts=counts,
            )
            record = {
                "name": name,
                "messages": to_wire_list(result.messages),
                "report": result.report.to_dict(),
                "summary": result.summary,
            }
            out.update(json.dumps(record, sort_keys=True, ensure_ascii=False).encode())
        out.update(json.dumps(llm.prompts, ensure_ascii=False).encode())
    return out.hexdigest()


if __name__ == "__main__":
    print(json.dumps({"digest": digest(), "compiled": compiled.state.compiled}))
    sys.exit(0)
