"""Hermes' own ContextCompressor on the bench cases. Runs under ``bench/.hermes-venv``'s python.

    python hermes_side.py IN.json OUT.json

IN is written by ``compress_vs_hermes.py``: ``{"model", "repeats", "summary_text", "cases":
[{"name", "context_length", "messages"}]}``. OUT gets, per case, the wall times of ``compress``,
Hermes' derived settings, the output of the last run and every prompt its summary call was given.

Only the summary LLM call is replaced: ``agent.context_compressor`` calls ``call_llm`` (imported
from ``agent.auxiliary_client``) once per compaction with the rendered prompt as the one user
message; our stand-in records that prompt and answers at once with the fixed summary text. Every
other line of Hermes' compress (pruning, boundaries, serialization, assembly, sanitizing) runs as
shipped. This file imports nothing of ours: the hermes venv does not have our dependencies.
"""

from __future__ import annotations

import copy
import gc
import importlib
import json
import logging
import sys
import time
from importlib.metadata import version
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any


class StubLLM:
    """Stands in for ``call_llm``: records each prompt, answers instantly with a fixed text."""

    def __init__(self, summary_text: str) -> None:
        self.summary_text = summary_text
        self.prompts: list[str] = []

    def __call__(self, **kwargs: Any) -> SimpleNamespace:
        self.prompts.append("\n".join(str(m.get("content", "")) for m in kwargs["messages"]))
        message = SimpleNamespace(content=self.summary_text, role="assistant")
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=None)


def new_compressor(cc: ModuleType, *, model: str, context_length: int) -> Any:
    """Hermes' defaults, the window given explicitly (so nothing is looked up over the network)."""
    return cc.ContextCompressor(model=model, config_context_length=context_length, quiet_mode=True)


def settings_of(compressor: Any) -> dict[str, Any]:
    names = (
        "context_length",
        "threshold_percent",
        "threshold_tokens",
        "tail_token_budget",
        "max_summary_tokens",
        "protect_first_n",
        "protect_last_n",
        "summary_target_ratio",
    )
    return {name: getattr(compressor, name) for name in names}


def run_case(
    cc: ModuleType, stub: StubLLM, case: dict[str, Any], *, model: str, repeats: int
) -> dict[str, Any]:
    times_s: list[float] = []
    output: list[dict[str, Any]] = []
    compressor: Any = None
    for _ in range(repeats):
        # A fresh compressor and input each run: every run is a first compaction of this session.
        messages = copy.deepcopy(case["messages"])
        compressor = new_compressor(cc, model=model, context_length=case["context_length"])
        stub.prompts.clear()
        gc.collect()
        started = time.perf_counter()
        output = compressor.compress(messages)
        times_s.append(time.perf_counter() - started)
    return {
        "name": case["name"],
        "times_s": times_s,
        "settings": settings_of(compressor),
        "messages": output,
        "prompts": list(stub.prompts),
        "fallback_used": compressor._last_summary_fallback_used,
        "aborted": compressor._last_compress_aborted,
        "dropped_count": compressor._last_summary_dropped_count,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    job = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    logging.basicConfig(level=logging.ERROR)
    cc = importlib.import_module("agent.context_compressor")
    stub = StubLLM(job["summary_text"])
    cc.call_llm = stub  # the one outside call replaced; see the module docstring
    results = [
        run_case(cc, stub, case, model=job["model"], repeats=job["repeats"])
        for case in job["cases"]
    ]
    doc = {"hermes_version": version("hermes-agent"), "cases": results}
    Path(argv[2]).write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
