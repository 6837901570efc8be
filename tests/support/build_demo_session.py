"""Build ``worker/data/demo_session.json.gz``, the long session ``compaction demo`` posts.

Two real coding-agent sessions from tests/data/real-transcripts/ (mini-SWE-agent on SWE-bench,
MIT) become one long-lived conversation: one system prompt, then each task's turns in order.
Run: ``.venv/bin/python -m tests.support.build_demo_session``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from tests.data import real_transcripts

SOURCES = (
    "deepseek_chat_test_1-100__django__django-11179",
    "deepseek_chat_test_1-100__django__django-13658",
)
TARGET = Path(__file__).resolve().parents[2] / "worker" / "data" / "demo_session.json.gz"
MODEL = "gpt-4o"
CONTEXT_LENGTH = 49_152  # the sample holds ~44k tokens: about 90% of this window


def build() -> dict[str, Any]:
    by_id = dict(real_transcripts())
    messages: list[dict[str, Any]] = []
    for source in SOURCES:
        transcript = list(by_id[source])
        messages.extend(transcript if not messages else transcript[1:])  # one system prompt
    call_ids = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    assert len(call_ids) == len(set(call_ids)), "tool call ids must stay unique"
    return {
        "id": "demo-long-session",
        "model": MODEL,
        "context_length": CONTEXT_LENGTH,
        "sources": [f"SWE-agent/mini-swe-agent (MIT), output/: {s}" for s in SOURCES],
        "messages": messages,
    }


def main() -> None:
    data = json.dumps(build(), ensure_ascii=False, separators=(",", ":")).encode()
    TARGET.write_bytes(gzip.compress(data, mtime=0))
    print(f"wrote {TARGET} ({TARGET.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
