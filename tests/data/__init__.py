"""Test data loaders."""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

REAL_TRANSCRIPTS_DIR = Path(__file__).parent / "real-transcripts"


@cache
def real_transcripts() -> tuple[tuple[str, tuple[dict[str, Any], ...]], ...]:
    """The 38 real agent sessions (mini-swe-agent on SWE-bench, MIT): (id, wire messages)."""
    out = []
    for path in sorted(REAL_TRANSCRIPTS_DIR.glob("*.json.gz")):
        doc = json.loads(gzip.decompress(path.read_bytes()))
        out.append((doc["id"], tuple(doc["messages"])))
    return tuple(out)
