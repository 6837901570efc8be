"""Hermes' own ContextCompressor, served one run at a time. Runs under ``bench/.hermes-venv``.

    python hermes_side.py        # JSON lines: requests on stdin, one answer line each on stdout

The first line is ``{"model", "summary_text"}``, optionally with ``"summary_fails": true``:
then the summary call raises instead of answering (it still records the prompt), so Hermes
takes its own failure path and inserts its deterministic fallback summary (the retention
bench uses this; the speed bench does not). Then ``{"op": "load", "name", "context_length",
"messages"}`` stores a case, and ``{"op": "run", "name", "keep"}`` compresses it once on a fresh
compressor and answers ``{"time_s", "settings", "fallback_used", "aborted", "dropped_count"}``,
plus ``messages`` (the output) and ``prompts`` (what the summary call was given) when ``keep``.
One run per request lets the bench interleave Hermes' runs with ours, so that whatever else
the machine is doing weighs on both sides alike.

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
from types import SimpleNamespace
from typing import Any, TextIO


class SummaryCallFailed(RuntimeError):
    """What the stub raises under ``summary_fails``: an error Hermes treats as a plain failure
    (not auth, quota, network or a missing provider, which would make it abort instead)."""


class StubLLM:
    """Stands in for ``call_llm``: records each prompt, answers instantly with a fixed text
    (or, with ``fails``, raises after recording it)."""

    def __init__(self, summary_text: str, *, fails: bool = False) -> None:
        self.summary_text = summary_text
        self.fails = fails
        self.prompts: list[str] = []

    def __call__(self, **kwargs: Any) -> SimpleNamespace:
        self.prompts.append("\n".join(str(m.get("content", "")) for m in kwargs["messages"]))
        if self.fails:
            raise SummaryCallFailed("summary call failed (scripted by the bench)")
        message = SimpleNamespace(content=self.summary_text, role="assistant")
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=None)


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


def freeze_heap() -> None:
    """Move everything alive now out of the collector's sight (gc.freeze).

    Each run starts with a gc.collect(); without this it walks every case the bench holds,
    which evicts the CPU caches right before the timed code (about half a millisecond on
    every run, of either side). Our side does the same after building its cases.
    """
    gc.collect()
    gc.freeze()


class Server:
    def __init__(self, cc: Any, *, model: str, stub: StubLLM) -> None:
        self.cc = cc
        self.model = model
        self.stub = stub
        self.cases: dict[str, dict[str, Any]] = {}

    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        self.cases[request["name"]] = request
        freeze_heap()
        return {"ok": True}

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        case = self.cases[request["name"]]
        # A fresh compressor and input each run: every run is a first compaction of the session.
        # Hermes' defaults, the window given explicitly (so nothing is looked up over a network).
        messages = copy.deepcopy(case["messages"])
        compressor = self.cc.ContextCompressor(
            model=self.model, config_context_length=case["context_length"], quiet_mode=True
        )
        self.stub.prompts.clear()
        gc.collect()
        started = time.perf_counter()
        output = compressor.compress(messages)
        elapsed = time.perf_counter() - started
        answer: dict[str, Any] = {
            "time_s": elapsed,
            "settings": settings_of(compressor),
            "fallback_used": compressor._last_summary_fallback_used,
            "aborted": compressor._last_compress_aborted,
            "dropped_count": compressor._last_summary_dropped_count,
        }
        if request.get("keep"):
            answer["messages"] = output
            answer["prompts"] = list(self.stub.prompts)
        return answer


def serve(requests: TextIO, answers: TextIO) -> None:
    header = json.loads(requests.readline())
    cc: Any = importlib.import_module("agent.context_compressor")
    stub = StubLLM(header["summary_text"], fails=bool(header.get("summary_fails", False)))
    cc.call_llm = stub  # the one outside call replaced; see the module docstring
    server = Server(cc, model=header["model"], stub=stub)
    _answer(answers, {"hermes_version": version("hermes-agent")})
    for line in requests:
        request = json.loads(line)
        handler = server.load if request["op"] == "load" else server.run
        _answer(answers, handler(request))


def _answer(answers: TextIO, doc: dict[str, Any]) -> None:
    answers.write(json.dumps(doc, ensure_ascii=False) + "\n")
    answers.flush()


def main() -> int:
    logging.basicConfig(level=logging.ERROR)
    answers = sys.stdout
    # Anything Hermes prints goes to stderr, so stdout carries only our answer lines.
    sys.stdout = sys.stderr
    serve(sys.stdin, answers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
